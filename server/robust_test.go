package server

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"
)

// TestRobustFitsAPI fits the robust model through the API (error rates
// learnt, model selection by the evidence) on the RTE subset and gets what
// it adds in every form: the label errors and error rates of the fit
// document and of report.json, the workbook's Label errors sheet, the
// label-errors table, the error-rates plot and the dashboard's table of
// the labels most probably wrong.
func TestRobustFitsAPI(t *testing.T) {
	e, id, key := binaryEnv(t, "rte-robust")
	fid := e.doneSpec(id, key, map[string]any{"model": "robust", "kernel": "identity", "select": true, "em": "tilted", "seed": 5})
	base := fmt.Sprintf("/api/v1/fits/%d", fid)

	f := e.call("GET", base, key, nil, 200)
	spec := f["spec"].(map[string]any)
	if spec["model"] != "robust" || spec["select"] != true || spec["em"] != "tilted" || spec["epsilon"] != nil {
		t.Errorf("stored spec %v", spec)
	}
	res := e.call("GET", base+"/result", key, nil, 200)
	les, _ := res["label_errors"].([]any)
	if len(les) != 400 {
		t.Fatalf("result: %d label errors, want 400", len(les))
	}
	if d := res["diagnostics"].(map[string]any); d["selected"] == nil || d["evidence"] == nil || d["log_evidence"] == nil {
		t.Errorf("result diagnostics: selected %v, evidence %v, log evidence %v", d["selected"], d["evidence"], d["log_evidence"])
	}

	rep := e.call("GET", base+"/report.json", key, nil, 200)
	rles, _ := rep["label_errors"].([]any)
	if len(rles) != 400 {
		t.Fatalf("report.json: %d label errors", len(rles))
	}
	first := rles[0].(map[string]any)
	for _, k := range []string{"item", "rater", "label", "p_error", "consensus", "consensus_prob", "position", "flagged"} {
		if _, ok := first[k]; !ok {
			t.Errorf("report.json: label error %v has no %q", first, k)
		}
	}
	if first["p_error"].(float64) < rles[len(rles)-1].(map[string]any)["p_error"].(float64) {
		t.Errorf("report.json: label errors not by decreasing p_error")
	}
	// With 40 items the evidence keeps the plain model (each of the many
	// raters' error rates costs its Occam factor); a robust choice must
	// come with learnt error rates.
	robustKept := rep["diagnostics"].(map[string]any)["selected"] == "robust"
	for _, r := range rep["raters"].([]any) {
		if eps, _ := r.(map[string]any)["epsilon"].(map[string]any); eps == nil || (eps["learnt"] == true) != robustKept {
			t.Errorf("report.json: rater %v: epsilon %v with the %v model kept", r.(map[string]any)["id"], eps, rep["diagnostics"].(map[string]any)["selected"])
		}
	}
	if d := rep["diagnostics"].(map[string]any); d["selected"] == nil || len(d["evidence"].(map[string]any)) != 3 || d["log_evidence"] == nil {
		t.Errorf("report.json diagnostics: selected %v, evidence %v", d["selected"], d["evidence"])
	}
	if s := rep["summary"].(map[string]any); s["error_rates"] != "learnt" && s["error_rates"] != "none" {
		t.Errorf("report.json summary: error rates %v", s["error_rates"])
	}

	book := e.fitWorkbook(base, key)
	if got := strings.Join(book.GetSheetList(), ","); got != "Summary,Review,Items,Raters,Classes,Agreement,Agreement matrix,Item agreement,Rater agreement,Diagnostics,Flags,Label errors,Glossary,Charts" {
		t.Errorf("report.xlsx: sheets %s", got)
	}
	if rows, err := book.GetRows("Label errors"); err != nil || len(rows) < 401 || !strings.HasPrefix(strings.Join(rows[0], ","), "Rank,Item,Rater,Label,P(error)") {
		t.Errorf("report.xlsx: Label errors %d rows (%v), header %v", len(rows), err, rows[0])
	}
	if rows, err := book.GetRows("Raters"); err != nil || !strings.Contains(strings.Join(rows[0], ","), "Error rate ε,EM steps") {
		t.Errorf("report.xlsx: Raters header %v (%v)", rows[0], err)
	}

	resp, b := e.request("GET", base+"/tables/label-errors.csv", key, nil)
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if resp.StatusCode != 200 || err != nil || len(recs) != 401 || recs[0][4] != "P(error)" {
		t.Errorf("tables/label-errors.csv: %d %v %q", resp.StatusCode, err, clipText(string(b), 200))
	}
	e.wantPlots(base, key, "error-rates.svg", "error-rates.png")

	br := newBrowser(t, e)
	br.login(key)
	page := br.fitPage(fid, `id="label-errors-table"`, "Labels most probably wrong", `id="epsilon-col"`, `id="selection"`,
		"plots/error-rates.svg", "tables/label-errors.csv", `href="#item-`, `<tr id="item-`)
	table := between(page, `id="label-errors-table"`, "</table>")
	if n := strings.Count(table, "<tr"); n != 51 {
		t.Errorf("dashboard: the label errors table has %d rows, want 50 and the header", n)
	}
	// The item links lead to rows of the consensus table.
	first0 := first["item"].(string)
	if !strings.Contains(table, fmt.Sprintf(`href="#item-%s"`, first0)) || !strings.Contains(page, fmt.Sprintf(`<tr id="item-%s"`, first0)) {
		t.Errorf("dashboard: no link and anchor for item %s", first0)
	}
}

// TestRobustFitRequest: the robust model's settings in a fit request, and
// what is refused.
func TestRobustFitRequest(t *testing.T) {
	e, id, key := binaryEnv(t, "rte-robust-req")
	path := fmt.Sprintf("/api/v1/projects/%d/fits", id)
	for _, tc := range []struct {
		body     map[string]any
		fragment string
	}{
		{map[string]any{"model": "robust", "epsilon": nil}, `"epsilon" is null`},
		{map[string]any{"model": "robust", "epsilon": 0.5}, "epsilon"},
		{map[string]any{"model": "robust", "epsilon": -0.1}, "epsilon"},
		{map[string]any{"model": "robust", "epsilon": 0.1, "select": true}, "select"},
		{map[string]any{"model": "robust", "em": "bogus"}, "em"},
		{map[string]any{"model": "classification", "epsilon": 0.1}, "robust model"},
		{map[string]any{"model": "classification", "select": true}, "robust model"},
		{map[string]any{"model": "robust", "chains": 2}, "chains"},
	} {
		e.wantError("POST", path, key, tc.body, 400, "invalid", tc.fragment)
	}
	// epsilon 0 is the plain classifier, and is stored as given.
	fid := e.doneSpec(id, key, map[string]any{"model": "robust", "kernel": "identity", "epsilon": 0})
	f := e.call("GET", fmt.Sprintf("/api/v1/fits/%d", fid), key, nil, 200)
	if eps, ok := f["spec"].(map[string]any)["epsilon"]; !ok || eps != 0.0 {
		t.Errorf("stored spec epsilon %v (present %v)", eps, ok)
	}
	rep := e.call("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), key, nil, 200)
	if s := rep["summary"].(map[string]any); s["error_rates"] != "none" {
		t.Errorf("epsilon 0: summary error rates %v", s["error_rates"])
	}
}
