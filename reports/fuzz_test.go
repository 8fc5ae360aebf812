package reports

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"concord/annotations"
	"concord/internal/testutil"
)

// FuzzReadFit feeds fit result documents to ReadFit; whatever it accepts
// must build into a report that every writer renders without panicking.
// The seeds are the test fixtures.
func FuzzReadFit(f *testing.F) {
	f.Add(smallOrdinalSeed(f))
	f.Add([]byte(nominalFixture))
	f.Add([]byte(`{"schema":"concord.fit/v1","model":{"model":"classification"},"levels":["a","b"],"raters":[{"id":"r"}],"items":[{"id":"i","class":1,"class_probs":[0.25,0.75],"labels":{"r":"a"}}],"flags":[{"item":"i","rater":"r","label":"a","prob":0.01}]}`))
	f.Add([]byte(`{"schema":"concord.fit/v1","levels":["0","1"],"raters":[{"id":"r","thresholds":[{"mean":0}]}],"items":[{"id":"i","score":{"mean":1},"rank":{"mean":1},"grade_probs":{"0":0.5,"1":0.5},"rater_grade_probs":{"r":[0.5]}}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		fit, err := ReadFit(bytes.NewReader(doc))
		if err != nil {
			return
		}
		rep, err := BuildFit(annotations.Project{Name: "fuzz"}, fit, nil, nil)
		if err != nil {
			return
		}
		renderAll(t, rep, true)
	})
}

// renderAll renders a report as JSON and, when it is small (to keep the
// iterations fast), as a workbook, its plots and (withCSV) the items CSV
// table: none may fail.
func renderAll(t *testing.T, rep *Report, withCSV bool) {
	t.Helper()
	if err := WriteJSON(io.Discard, rep); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	if len(rep.Items) > 20 || len(rep.Raters) > 10 || len(rep.Levels) > 10 {
		return
	}
	if err := WriteXLSX(io.Discard, rep, XLSXOptions{NoCharts: true}); err != nil {
		t.Fatalf("WriteXLSX: %v", err)
	}
	if withCSV {
		if err := WriteItemsCSV(io.Discard, rep); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range Plots(rep) {
		if err := WritePlot(io.Discard, rep, p.Name, SVG); err != nil {
			t.Fatalf("plot %s: %v", p.Name, err)
		}
	}
}

// FuzzReadReport feeds report documents to ReadReport and renders what it
// accepts.
func FuzzReadReport(f *testing.F) {
	for _, name := range []string{"nominal", "degenerate-classification"} {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		rep, err := ReadReport(bytes.NewReader(doc))
		if err != nil {
			return
		}
		renderAll(t, rep, false)
	})
}

// smallOrdinalSeed cuts the real fit result of testdata/fit_sirt_k1.json
// down to its first 4 items, 3 trace points and 2 draws, and drops the
// flags and parameters of the other items: a seed small enough to mutate.
func smallOrdinalSeed(f *testing.F) []byte {
	var doc map[string]any
	testutil.ReadJSON(f, filepath.Join("testdata", "fit_sirt_k1.json"), &doc)
	items := doc["items"].([]any)[:4]
	keep := map[string]bool{}
	for _, it := range items {
		keep["m["+it.(map[string]any)["id"].(string)+"]"] = true
	}
	doc["items"] = items
	doc["flags"] = []any{}
	diag := doc["diagnostics"].(map[string]any)
	var params []any
	for _, p := range diag["parameters"].([]any) {
		name := p.(map[string]any)["name"].(string)
		if !strings.HasPrefix(name, "m[") || keep[name] {
			params = append(params, p)
		}
	}
	diag["parameters"] = params
	for id, acf := range diag["autocorrelation"].(map[string]any) {
		diag["autocorrelation"].(map[string]any)[id] = acf.([]any)[:3]
	}
	tr := doc["traces"].(map[string]any)["alpha"].(map[string]any)
	for id, chains := range tr {
		for c := range chains.([]any) {
			chains.([]any)[c] = chains.([]any)[c].([]any)[:8]
		}
		tr[id] = chains
	}
	draws := doc["draws"].(map[string]any)
	draws["n"] = 2
	draws["alpha"] = draws["alpha"].([]any)[:2]
	draws["thresholds"] = draws["thresholds"].([]any)[:2]
	m := draws["m"].([]any)[:2]
	for s := range m {
		m[s] = m[s].([]any)[:4]
	}
	draws["m"] = m
	out, err := json.Marshal(doc)
	if err != nil {
		f.Fatal(err)
	}
	return out
}
