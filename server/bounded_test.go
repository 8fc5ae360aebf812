package server

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBoundedReports fits a bounded project (beta likelihood, a bias per
// rater) and gets its report in every form: the JSON report of kind
// values, the workbook, the CSV tables, the consensus and dispersion
// plots; the plots of MCMC fits are not found. The dashboard's fit page
// shows the values, the plots and a rater table of dispersions.
func TestBoundedReports(t *testing.T) {
	e := newEnv(t)
	id, key := e.boundedProject("sliders", 5)
	f := e.call("POST", fmt.Sprintf("/api/v1/projects/%d/fits", id), key, map[string]any{"likelihood": "beta", "bias": true}, 202)
	fid := int64(f["id"].(float64))
	if done := e.waitFit(fid, key, 60*time.Second); done["state"] != "done" {
		t.Fatalf("bounded fit: %v", done)
	}
	base := fmt.Sprintf("/api/v1/fits/%d", fid)

	rep := e.call("GET", base+"/report.json", key, nil, 200)
	if rep["kind"] != "values" || len(rep["levels"].([]any)) != 0 || rep["thresholds"] != nil || rep["classes"] != nil {
		t.Errorf("report.json: kind %v, levels %v, thresholds %v, classes %v", rep["kind"], rep["levels"], rep["thresholds"], rep["classes"])
	}
	items := rep["items"].([]any)
	if len(items) != 5 {
		t.Fatalf("report.json: %d items", len(items))
	}
	it := items[0].(map[string]any)
	if it["id"] != "i1" || it["value"] == nil || it["baselines"].(map[string]any)["median"] == nil {
		t.Errorf("report.json: first item %v (want i1 with a value and the raters' median)", it)
	}
	for _, r := range rep["raters"].([]any) {
		if m := r.(map[string]any); m["dispersion"] == nil || m["bias"] == nil {
			t.Errorf("report.json: rater %v has no dispersion or bias", m)
		}
	}

	book := e.fitWorkbook(base, key)
	if got := strings.Join(book.GetSheetList(), ","); got != "Summary,Review,Items,Raters,Agreement,Agreement matrix,Item agreement,Rater agreement,Diagnostics,Flags,Glossary,Charts" {
		t.Errorf("report.xlsx: sheets %s", got)
	}
	for sheet, want := range map[string]string{"Items": "Value", "Raters": "Dispersion"} {
		if rows, err := book.GetRows(sheet); err != nil || len(rows) < 2 || !strings.Contains(strings.Join(rows[0], ","), want) {
			t.Errorf("report.xlsx: %s header %v (%v), want %q", sheet, rows, err, want)
		}
	}

	for table, want := range map[string]string{"items": "Value 97.5%", "raters": "Dispersion 97.5%"} {
		resp, b := e.request("GET", base+"/tables/"+table+".csv", key, nil)
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if resp.StatusCode != 200 || err != nil || len(recs) < 4 || !strings.Contains(strings.Join(recs[0], ","), want) {
			t.Errorf("tables/%s.csv: %d %v %q", table, resp.StatusCode, err, clipText(string(b), 200))
		}
	}

	e.wantPlots(base, key, "consensus.svg", "consensus.png", "dispersion.svg", "dispersion.png")
	for _, plot := range []string{"precision.svg", "thresholds.svg", "trace.png", "variance-density.svg", "convergence.svg"} {
		e.wantError("GET", base+"/plots/"+plot, key, nil, 404, "not_found", "")
	}

	br := newBrowser(t, e)
	br.login(key)
	page := br.fitPage(fid, "plots/consensus.svg", "plots/dispersion.svg", `id="raters-table"`, ">Dispersion ν</th>", ">Bias</th>",
		">Value 95% (predictive)</th>", ">Raters' mean</th>", "dispersion ν (estimate and 95% interval)", "tables/items.csv", "report.xlsx")
	for _, unwanted := range []string{">Precision</th>", ">Variance</th>", ">Severity</th>", ">Grade</th>", "plots/precision", "plots/trace", "plots/thresholds"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("dashboard fit page of a bounded fit: %q", unwanted)
		}
	}
}
