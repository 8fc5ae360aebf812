package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestNext: concord next fits with concord fit's flags (the summary on
// stderr, the ranking on stdout) or ranks a fit file, and refuses mixes.
func TestNext(t *testing.T) {
	dir := t.TempDir()
	labels := filepath.Join("testdata", "fit_rte40_ratings.csv")
	out, errb, code := cli(t, "next", "--labels", labels, "--scheme", "binary:0,1,pos=1", "--model", "confusion", "--seed", "2", "--n", "5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var doc struct {
		Schema string `json:"schema"`
		Items  []struct {
			ID    string  `json:"id"`
			Score float64 `json:"score"`
			Why   string  `json:"why"`
		} `json:"items"`
		Total int `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not the JSON document: %v\n%s", err, out)
	}
	if doc.Schema != "concord.next/v1" || len(doc.Items) != 5 || doc.Total != 40 || !strings.Contains(errb, "Done in") {
		t.Errorf("doc %+v; stderr %s", doc, errb)
	}
	for i := 1; i < len(doc.Items); i++ {
		if doc.Items[i].Score > doc.Items[i-1].Score {
			t.Errorf("not best first: %+v", doc.Items)
		}
	}
	// The same from a fit file.
	fit := filepath.Join(dir, "fit.json")
	mustCLI(t, "fit", "--labels", labels, "--scheme", "binary:0,1,pos=1", "--model", "confusion", "--seed", "2", "--out", fit)
	table := mustCLI(t, "next", "--fit", fit, "--n", "5")
	if !strings.Contains(table, "The 5 of 40 items to label next") || !strings.Contains(table, doc.Items[0].ID) {
		t.Errorf("table:\n%s", table)
	}
	csv := mustCLI(t, "next", "--fit", fit, "--n", "3", "--csv")
	if !strings.HasPrefix(csv, "id,score,consensus,prob,n_labels,why\n"+doc.Items[0].ID+",") {
		t.Errorf("csv:\n%s", csv)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"next", "--fit", fit, "--labels", labels}, "ranks a fit already made"},
		{[]string{"next", "--fit", fit, "--by", "luck"}, "information or accuracy"},
		{[]string{"next", "--fit", fit, "--pool", "nobody"}, `rater "nobody"`},
		{[]string{"next", "--fit", fit, "--json", "--csv"}, "not both"},
		{[]string{"next"}, "give the labels to fit"},
	} {
		if _, errb, code := cli(t, c.args...); code == 0 || !strings.Contains(errb, c.want) {
			t.Errorf("%v: exit %d: %s", c.args, code, errb)
		}
	}
}
