package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestJudge: concord judge prints the alternative annotator test's verdict
// per model rater, and its JSON document (numbers checked against scipy in
// analysis.TestJudgeReport).
func TestJudge(t *testing.T) {
	labels := filepath.Join("testdata", "judges.csv")
	out := mustCLI(t, "judge", "--labels", labels, "--scheme", "nominal:a,b,c", "--judges", "good,coin")
	for _, want := range []string{"good: passes", "coin: fails", "winning rate 0.75", "Each human's agreement"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out = mustCLI(t, "judge", "--labels", labels, "--scheme", "nominal:a,b,c", "--judges", "good", "--min-instances", "100", "--json")
	var doc struct {
		Schema string `json:"schema"`
		Judges []struct {
			Judge       string   `json:"judge"`
			WinningRate *float64 `json:"winning_rate"`
			Verdict     string   `json:"verdict"`
		} `json:"judges"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Schema != "concord.judges/v1" || len(doc.Judges) != 1 || doc.Judges[0].WinningRate != nil || !strings.HasPrefix(doc.Judges[0].Verdict, "no test") {
		t.Errorf("json: %v\n%s", err, out)
	}
	if _, errb, code := cli(t, "judge", "--labels", labels, "--scheme", "nominal:a,b,c"); code == 0 || !strings.Contains(errb, "--judges") {
		t.Errorf("no judges: exit %d %s", code, errb)
	}
}
