package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"concord/reports"
)

// fitForReport fits the first 40 sirt essays (criterion k1) with a short
// run and returns the result file.
func fitForReport(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "k1.json")
	e, _, errb := testEnv()
	args := []string{"fit", "--labels", "testdata/agreement_sirt_k1.csv", "--where", "criterion=k1", "--scheme", "ordinal:0..3",
		"--chains", "2", "--samples", "100", "--burnin", "50", "--keep-draws", "20", "--seed", "3", "--out", out}
	if code := run(context.Background(), e, args); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, errb)
	}
	return out
}

func TestReportCommand(t *testing.T) {
	fit := fitForReport(t)
	dir := t.TempDir()
	ctx := context.Background()

	// xlsx, format from the extension; agreement from the fit's labels.
	book := filepath.Join(dir, "k1.xlsx")
	e, stdout, errb := testEnv()
	if code := run(ctx, e, []string{"report", "--fit", fit, "--out", book, "--bootstrap", "20"}); code != 0 {
		t.Fatalf("xlsx: exit %d: %s", code, errb)
	}
	if !strings.Contains(stdout.String(), book) || !strings.Contains(stdout.String(), "Report of k1 (ordinal model, 40 items, 7 raters") {
		t.Errorf("xlsx: output %q", stdout)
	}
	f, err := excelize.OpenFile(book)
	if err != nil {
		t.Fatal(err)
	}
	want := "Summary,Items,Raters,Thresholds,Agreement,Agreement matrix,Item agreement,Rater agreement,Diagnostics,Flags,Charts"
	if got := strings.Join(f.GetSheetList(), ","); got != want {
		t.Errorf("sheets %s, want %s", got, want)
	}
	if v, _ := f.GetCellValue("Agreement", "A2"); !strings.HasPrefix(v, "Krippendorff's alpha") {
		t.Errorf("Agreement!A2 = %q: no agreement analysis from the fit's labels", v)
	}
	f.Close()

	// json to standard output, labels from the label file.
	e, stdout, errb = testEnv()
	if code := run(ctx, e, []string{"report", "--fit", fit, "--labels", "testdata/agreement_sirt_k1.csv", "--where", "criterion=k1",
		"--name", "essays", "--format", "json", "--out", "-", "--bootstrap", "0"}); code != 0 {
		t.Fatalf("json: exit %d: %s", code, errb)
	}
	var doc struct {
		Schema  string `json:"schema"`
		Project struct {
			Name   string `json:"name"`
			Scheme string `json:"scheme"`
		} `json:"project"`
		Agreement *struct {
			Labels int `json:"labels"`
		} `json:"agreement"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("json: %v\n%s", err, stdout)
	}
	if doc.Schema != reports.Schema || doc.Project.Name != "essays" || doc.Project.Scheme != "ordinal:0..3" || doc.Agreement == nil || len(doc.Items) != 40 {
		t.Errorf("json: %+v", doc)
	}
	if errb.Len() > 0 {
		t.Errorf("json: stderr %q", errb)
	}

	// csv into a directory and with a prefix.
	for _, tc := range []struct{ out, items, raters string }{
		{dir + "/tables/", dir + "/tables/k1-items.csv", dir + "/tables/k1-raters.csv"},
		{dir + "/pre.csv", dir + "/pre-items.csv", dir + "/pre-raters.csv"},
	} {
		e, _, errb = testEnv()
		if code := run(ctx, e, []string{"report", "--fit", fit, "--format", "csv", "--out", tc.out, "--no-agreement"}); code != 0 {
			t.Fatalf("csv %s: exit %d: %s", tc.out, code, errb)
		}
		for _, p := range []string{tc.items, tc.raters} {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("csv %s: %v", tc.out, err)
				continue
			}
			if !strings.HasPrefix(string(b), "Rank,Item,") && !strings.HasPrefix(string(b), "Rater,Labels,") {
				t.Errorf("%s starts %q", p, b[:min(40, len(b))])
			}
		}
	}

	// png and svg plots.
	for _, format := range []string{"png", "svg"} {
		pdir := filepath.Join(dir, format)
		e, _, errb = testEnv()
		if code := run(ctx, e, []string{"report", "--fit", fit, "--format", format, "--out", pdir, "--no-agreement"}); code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errb)
		}
		files, _ := filepath.Glob(filepath.Join(pdir, "*."+format))
		if len(files) != 6 {
			t.Errorf("%s: %d plots %v, want 6", format, len(files), files)
		}
	}

	// all.
	e, _, errb = testEnv()
	if code := run(ctx, e, []string{"report", "--fit", fit, "--format", "all", "--out", filepath.Join(dir, "all"), "--bootstrap", "0"}); code != 0 {
		t.Fatalf("all: exit %d: %s", code, errb)
	}
	for _, p := range []string{"k1.json", "k1.xlsx", "k1-items.csv", "k1-raters.csv", "k1-plots/precision.png", "k1-plots/precision.svg"} {
		if _, err := os.Stat(filepath.Join(dir, "all", p)); err != nil {
			t.Errorf("all: %v", err)
		}
	}
}

// TestReportCommandProject takes the labels and the scheme from a project.
func TestReportCommandProject(t *testing.T) {
	fit := fitForReport(t)
	dbPath := filepath.Join(t.TempDir(), "r.db")
	e, _, errb := testEnv()
	if code := run(context.Background(), e, []string{"import", "--db", dbPath, "--project", "essays-k1", "--scheme", "ordinal:0..3", "--where", "criterion=k1", "--yes", "testdata/agreement_sirt_k1.csv"}); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errb)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	e, _, errb = testEnv()
	if code := run(context.Background(), e, []string{"report", "--fit", fit, "--db", dbPath, "--project", "essays-k1", "--bootstrap", "0", "--out", out}); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errb)
	}
	if errb.Len() > 0 {
		t.Errorf("stderr %q", errb)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := reports.ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Project.Name != "essays-k1" || rep.Agreement == nil || rep.Agreement.Labels != rep.Summary.Labels {
		t.Errorf("project %+v, agreement %+v", rep.Project, rep.Agreement)
	}
}

func TestReportCommandErrors(t *testing.T) {
	fit := fitForReport(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"schema":"concord.report/v1"}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--out", "x.xlsx"}, "--fit is required"},
		{[]string{"report", "--fit", fit}, "--out is required"},
		{[]string{"report", "--fit", fit, "--out", "x.pdf"}, "give --format"},
		{[]string{"report", "--fit", fit, "--format", "pdf", "--out", "x"}, `unknown --format "pdf"`},
		{[]string{"report", "--fit", fit, "--format", "csv", "--out", "-"}, "writes several files"},
		{[]string{"report", "--fit", "nosuch.json", "--out", "x.json"}, "nosuch.json: no such file"},
		{[]string{"report", "--fit", bad, "--out", "x.json"}, `fit result schema "concord.report/v1"`},
		{[]string{"report", "--fit", fit, "--scheme", "ordinal:0..3", "--out", "x.json"}, "go with --labels"},
		{[]string{"report", "--fit", fit, "--labels", "testdata/agreement_sirt_k1.csv", "--scheme", "ordinal:1..5", "--out", filepath.Join(t.TempDir(), "x.json")}, ""},
	} {
		e, _, errb := testEnv()
		code := run(context.Background(), e, tc.args)
		if code == 0 {
			t.Errorf("%v: exit 0", tc.args)
			continue
		}
		if !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: stderr %q, want %q", tc.args, errb, tc.want)
		}
	}
}
