package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"concord/internal/testutil"

	"github.com/xuri/excelize/v2"
)

// The round trip with annotation tools (issue 20): real exports import with
// at most one flag, and the consensus goes back as Label Studio predictions
// with the original task ids and control names. The fixtures are those of
// annotations/testdata (see its README).

const exportsDir = "../../annotations/testdata"

func cli(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	e, out, errb := testEnv()
	code := run(context.Background(), e, args)
	return out.String(), errb.String(), code
}

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errb, code := cli(t, args...)
	if code != 0 {
		t.Fatalf("concord %s: exit %d: %s", strings.Join(args, " "), code, errb)
	}
	return out
}

// runFails runs the command line args and checks that it fails with a
// message that contains want.
func runFails(t *testing.T, args []string, want string) {
	t.Helper()
	e, _, errb := testEnv()
	if code := run(context.Background(), e, args); code == 0 || !strings.Contains(errb.String(), want) {
		t.Errorf("%v: exit %d, stderr %q; want a message with %q", args, code, errb, want)
	}
}

// csvToXLSX writes a CSV file's rows as the first sheet of a workbook.
func csvToXLSX(t *testing.T, in, out string) {
	t.Helper()
	rows := testutil.ReadCSV(t, in)
	x := excelize.NewFile()
	for r, row := range rows {
		for c, v := range row {
			cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
			x.SetCellValue("Sheet1", cell, v)
		}
	}
	if err := x.SaveAs(out); err != nil {
		t.Fatal(err)
	}
}

func TestImportRealExports(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "concord.db")
	zipPath := filepath.Join(dir, "doccano-export.zip")
	if err := os.WriteFile(zipPath, testutil.ZipFixture(t, filepath.Join(exportsDir, "doccano_rte_export.zip.d")), 0o644); err != nil {
		t.Fatal(err)
	}
	xlsx := filepath.Join(dir, "grades.xlsx")
	csvToXLSX(t, filepath.Join(exportsDir, "essays_graders.csv"), xlsx)
	tests := []struct {
		project string
		args    []string
		want    []string
	}{
		{"ls-json", []string{filepath.Join(exportsDir, "labelstudio_rte.json")}, []string{"(labelstudio)", "labels: 40 added", "items:  4 added", "raters: 10 added"}},
		{"ls-min", []string{filepath.Join(exportsDir, "labelstudio_rte_min.json")}, []string{"(labelstudio)", "labels: 40 added", "raters: 10 added", "Columns not used: hypothesis"}},
		{"ls-min-rating", []string{filepath.Join(exportsDir, "labelstudio_anaesthesia_min.json")}, []string{"(labelstudio)", "labels: 30 added", "items:  6 added"}},
		{"ls-csv", []string{filepath.Join(exportsDir, "labelstudio_rte.csv")}, []string{"(labelstudio)", "labels: 40 added"}},
		{"doccano-zip", []string{zipPath}, []string{"(doccano)", "labels: 15 added", "items:  5 added", "raters: 3 added"}},
		{"essays-csv", []string{filepath.Join(exportsDir, "essays_graders.csv")}, []string{"(csv-long)", "labels: 18 added"}},
		{"essays-xlsx", []string{xlsx}, []string{"(xlsx)", "labels: 18 added"}},
		{"doccano-one", []string{"--rater", "alice", filepath.Join(exportsDir, "doccano_rte_export.zip.d", "amt004.jsonl")}, []string{"labels: 5 added", "raters: 1 added"}},
		{"doccano-files", []string{filepath.Join(exportsDir, "doccano_rte_export.zip.d", "amt004.jsonl"), filepath.Join(exportsDir, "doccano_rte_export.zip.d", "amt005.jsonl")}, []string{"labels: 10 added", "raters: 2 added"}},
	}
	for _, tt := range tests {
		t.Run(tt.project, func(t *testing.T) {
			out := mustCLI(t, append([]string{"import", "--db", db, "--project", tt.project, "--yes"}, tt.args...)...)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	// The raters of doccano's per-annotator files are named after the
	// files, or by --rater.
	out := mustCLI(t, "export", "--db", db, "--project", "doccano-zip", "--out", "-")
	for _, r := range []string{",amt004,", ",amt005,", ",amt006,"} {
		if !strings.Contains(out, r) {
			t.Errorf("export lacks rater %s:\n%s", r, out)
		}
	}
	if out := mustCLI(t, "export", "--db", db, "--project", "doccano-one", "--out", "-"); !strings.Contains(out, ",alice,") {
		t.Errorf("--rater: %s", out)
	}

	// A sheet whose rater column has no known name: the message names the
	// column that is missing and the flag, and the flag reads it.
	sheet := filepath.Join(dir, "teachers.csv")
	os.WriteFile(sheet, []byte("Essay,Teacher,Score\nE1,ann,3\nE1,bob,2\nE2,ann,1\nE2,bob,1\n"), 0o644)
	_, errb, code := cli(t, "import", "--db", db, "--project", "teachers", "--yes", sheet)
	if code == 0 || !strings.Contains(errb, "no rater id column") || !strings.Contains(errb, "--rater-col COLUMN") || strings.Contains(errb, "wide") {
		t.Errorf("exit %d: %s", code, errb)
	}
	mustCLI(t, "import", "--db", db, "--project", "teachers", "--yes", "--rater-col", "Teacher", sheet)

	// Several Label Studio controls: the flag that picks one, and the list.
	two := filepath.Join(dir, "two.json")
	os.WriteFile(two, []byte(`[{"id": 1, "data": {"text": "a"}, "annotations": [{"completed_by": 1, "result": [
 {"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": ["pos"]}},
 {"from_name": "quality", "to_name": "text", "type": "rating", "value": {"rating": 3}}]}]}]`), 0o644)
	_, errb, code = cli(t, "import", "--db", db, "--project", "two", "--yes", two)
	if code == 0 || !strings.Contains(errb, `labels come from 2 controls ("quality", "sentiment"); pick one with --label-col quality`) {
		t.Errorf("exit %d: %s", code, errb)
	}
	mustCLI(t, "import", "--db", db, "--project", "two", "--scheme", "nominal:pos,neg", "--label-col", "sentiment", two)

	// The same flags on the other commands that read label files.
	out = mustCLI(t, "agreement", "--labels", sheet, "--rater-col", "Teacher", "--bootstrap", "0")
	if !strings.Contains(out, "Krippendorff") {
		t.Errorf("agreement:\n%s", out)
	}
}

type lsTaskOut struct {
	ID          json.RawMessage `json:"id"`
	Data        map[string]any  `json:"data"`
	Predictions []struct {
		ModelVersion string   `json:"model_version"`
		Score        *float64 `json:"score"`
		Result       []struct {
			FromName string                     `json:"from_name"`
			ToName   string                     `json:"to_name"`
			Type     string                     `json:"type"`
			Value    map[string]json.RawMessage `json:"value"`
		} `json:"result"`
	} `json:"predictions"`
}

func readLSTasks(t *testing.T, path string) []lsTaskOut {
	t.Helper()
	var tasks []lsTaskOut
	testutil.ReadJSON(t, path, &tasks)
	return tasks
}

// lsExportTasks returns the task ids of a Label Studio JSON export and its
// controls' names.
func lsExportTasks(t *testing.T, path string) (ids []string, from, to string) {
	t.Helper()
	var tasks []struct {
		ID          json.RawMessage `json:"id"`
		Annotations []struct {
			Result []struct {
				FromName string `json:"from_name"`
				ToName   string `json:"to_name"`
			} `json:"result"`
		} `json:"annotations"`
	}
	testutil.ReadJSON(t, path, &tasks)
	for _, tk := range tasks {
		ids = append(ids, string(tk.ID))
		for _, a := range tk.Annotations {
			for _, r := range a.Result {
				from, to = r.FromName, r.ToName
			}
		}
	}
	return ids, from, to
}

func TestLabelStudioRoundTrip(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "concord.db")
	export := filepath.Join(exportsDir, "labelstudio_rte.json")
	wantIDs, wantFrom, wantTo := lsExportTasks(t, export)
	var exported []struct {
		ID   json.RawMessage `json:"id"`
		Data map[string]any  `json:"data"`
	}
	testutil.ReadJSON(t, export, &exported)
	wantData := map[string]map[string]any{}
	for _, tk := range exported {
		wantData[string(tk.ID)] = tk.Data // text and hypothesis
	}
	mustCLI(t, "import", "--db", db, "--project", "rte", "--yes", export)
	fit := filepath.Join(dir, "rte-fit.json")
	mustCLI(t, "fit", "--db", db, "--project", "rte", "--model", "classification", "--kernel", "identity",
		"--chains", "2", "--samples", "100", "--burnin", "100", "--seed", "3", "--out", fit)

	check := func(t *testing.T, path string) {
		t.Helper()
		tasks := readLSTasks(t, path)
		var ids []string
		for _, tk := range tasks {
			ids = append(ids, string(tk.ID))
			if len(tk.Predictions) != 1 || len(tk.Predictions[0].Result) != 1 {
				t.Fatalf("task %s: %+v", tk.ID, tk)
			}
			p := tk.Predictions[0]
			r := p.Result[0]
			if r.FromName != wantFrom || r.ToName != wantTo || r.Type != "choices" {
				t.Errorf("task %s: result %+v, want from_name %q, to_name %q, choices", tk.ID, r, wantFrom, wantTo)
			}
			var choices []string
			json.Unmarshal(r.Value["choices"], &choices)
			if len(choices) != 1 || (choices[0] != "entailment" && choices[0] != "no entailment") {
				t.Errorf("task %s: value %s", tk.ID, r.Value["choices"])
			}
			if p.Score == nil || *p.Score <= 0.5 || *p.Score > 1 {
				t.Errorf("task %s: score %v", tk.ID, p.Score)
			}
			if !strings.Contains(p.ModelVersion, "rte-fit.json") || !strings.Contains(p.ModelVersion, "classification") || !strings.Contains(p.ModelVersion, "seed 3") {
				t.Errorf("model_version %q", p.ModelVersion)
			}
			if want := wantData[string(tk.ID)]; !reflect.DeepEqual(tk.Data, want) {
				t.Errorf("task %s: data %v, want the export's %v", tk.ID, tk.Data, want)
			}
		}
		slices.Sort(ids)
		w := slices.Clone(wantIDs)
		slices.Sort(w)
		if !slices.Equal(ids, w) {
			t.Errorf("task ids %v, want %v", ids, w)
		}
	}
	// From the project (the database keeps the task ids and controls) and
	// from the export itself.
	pred := filepath.Join(dir, "predictions.json")
	out := mustCLI(t, "report", "--fit", fit, "--db", db, "--project", "rte", "--format", "labelstudio", "--out", pred)
	if !strings.Contains(out, "Wrote the consensus of 4 items") {
		t.Errorf("report: %s", out)
	}
	check(t, pred)
	pred2 := filepath.Join(dir, "predictions2.json")
	mustCLI(t, "report", "--fit", fit, "--labels", export, "--format", "labelstudio", "--out", pred2)
	check(t, pred2)

	// The fit alone knows no control names: the message says which flags
	// give them, and they do.
	_, errb, code := cli(t, "report", "--fit", fit, "--format", "labelstudio", "--out", filepath.Join(dir, "x.json"))
	if code == 0 || !strings.Contains(errb, "--from-name NAME and --to-name NAME") {
		t.Errorf("exit %d: %s", code, errb)
	}
	pred3 := filepath.Join(dir, "predictions3.json")
	mustCLI(t, "report", "--fit", fit, "--format", "labelstudio", "--from-name", "label", "--to-name", "doc", "--out", pred3)
	for _, tk := range readLSTasks(t, pred3) {
		if r := tk.Predictions[0].Result[0]; r.FromName != "label" || r.ToName != "doc" {
			t.Errorf("flags: %+v", r)
		}
	}

	// doccano JSON Lines and crowd-kit's table.
	dc := filepath.Join(dir, "consensus.jsonl")
	mustCLI(t, "report", "--fit", fit, "--db", db, "--project", "rte", "--format", "doccano", "--out", dc)
	b, _ := os.ReadFile(dc)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 {
		t.Fatalf("doccano: %d lines:\n%s", len(lines), b)
	}
	var doc struct {
		ID    int      `json:"id"`
		Text  string   `json:"text"`
		Label []string `json:"label"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &doc); err != nil || doc.Text == "" || len(doc.Label) != 1 {
		t.Errorf("doccano line %s: %v", lines[0], err)
	}
	ck := filepath.Join(dir, "consensus.csv")
	mustCLI(t, "report", "--fit", fit, "--format", "crowdkit", "--out", ck)
	b, _ = os.ReadFile(ck)
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(recs) != 5 || !slices.Equal(recs[0], []string{"task", "label", "prob"}) {
		t.Errorf("crowdkit: %v\n%s", err, b)
	}
}

// An ordinal Rating control whose item ids (data.item_id) are not the task
// ids: the predictions carry the task ids and a rating value.
func TestLabelStudioRoundTripRating(t *testing.T) {
	dir := t.TempDir()
	export := filepath.Join(exportsDir, "labelstudio_anaesthesia.json")
	wantIDs, wantFrom, wantTo := lsExportTasks(t, export)
	fit := filepath.Join(dir, "fit.json")
	mustCLI(t, "fit", "--labels", export, "--scheme", "ordinal:1..4", "--engine", "ep", "--out", fit)
	pred := filepath.Join(dir, "pred.json")
	mustCLI(t, "report", "--fit", fit, "--labels", export, "--format", "labelstudio", "--out", pred)
	var ids []string
	for _, tk := range readLSTasks(t, pred) {
		ids = append(ids, string(tk.ID))
		r := tk.Predictions[0].Result[0]
		if r.FromName != wantFrom || r.ToName != wantTo || r.Type != "rating" {
			t.Errorf("task %s: %+v", tk.ID, r)
		}
		var v int
		if err := json.Unmarshal(r.Value["rating"], &v); err != nil || v < 1 || v > 4 {
			t.Errorf("task %s: rating %s", tk.ID, r.Value["rating"])
		}
	}
	slices.Sort(ids)
	slices.Sort(wantIDs)
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("task ids %v, want %v", ids, wantIDs)
	}
}

// failCase is a command's arguments and what its error message says.
type failCase struct {
	args []string
	want string
}

// runFailsAll runs runFails on prefix followed by each case's arguments.
func runFailsAll(t *testing.T, prefix []string, cases []failCase) {
	t.Helper()
	for _, c := range cases {
		runFails(t, append(prefix[:len(prefix):len(prefix)], c.args...), c.want)
	}
}
