package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"concord/internal/testutil"
	"concord/reports"
)

// fitForReport fits the first 40 sirt essays (criterion k1) with a short
// run and returns the result file.
func fitForReport(t *testing.T) string {
	t.Helper()
	out, _, _ := runOut(t, "k1.json", "fit", "--labels", "testdata/agreement_sirt_k1.csv", "--where", "criterion=k1", "--scheme", "ordinal:0..3",
		"--engine", "gibbs", "--chains", "2", "--samples", "100", "--burnin", "50", "--keep-draws", "20", "--seed", "3")
	return out
}

func TestReportCommand(t *testing.T) {
	fit := fitForReport(t)
	dir := t.TempDir()
	ctx := context.Background()

	// xlsx, format from the extension; agreement from the fit's labels.
	book := filepath.Join(dir, "k1.xlsx")
	f, printed := reportBook(t, "xlsx", book, "report", "--fit", fit, "--bootstrap", "20")
	if !strings.Contains(printed, book) || !strings.Contains(printed, "Report of k1 (ordinal model, 40 items, 7 raters") {
		t.Errorf("xlsx: output %q", printed)
	}
	want := "Summary,Review,Items,Raters,Thresholds,Agreement,Agreement matrix,Item agreement,Rater agreement,Diagnostics,Flags,Glossary,Charts"
	if got := strings.Join(f.GetSheetList(), ","); got != want {
		t.Errorf("sheets %s, want %s", got, want)
	}
	if v, _ := f.GetCellValue("Agreement", "A2"); !strings.HasPrefix(v, "Krippendorff's alpha") {
		t.Errorf("Agreement!A2 = %q: no agreement analysis from the fit's labels", v)
	}

	// json to standard output, labels from the label file.
	e, stdout, errb := testEnv()
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
		{[]string{"report", "--fit", bad, "--out", "x.json"}, "is a report (concord.report/v1), not a fit result: give the file written by concord fit --out"},
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

// TestFitFlagGivenAReport: a report JSON given to --fit (of report and
// predict) is named for what it is, with the file to give instead.
func TestFitFlagGivenAReport(t *testing.T) {
	fit := fitForReport(t)
	dir := t.TempDir()
	rep := filepath.Join(dir, "k1-report.json")
	e, _, errb := testEnv()
	if code := run(context.Background(), e, []string{"report", "--fit", fit, "--format", "json", "--bootstrap", "20", "--out", rep}); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errb)
	}
	items := writeFile(t, dir, "new.csv", "item_id,text\nn1,a new essay\n")
	notJSON := writeFile(t, dir, "ratings.csv", "item_id,rater_id,label\na,r,1\n")
	want := rep + " is a report (concord.report/v1), not a fit result: give the file written by concord fit --out (schema concord.fit/v1)"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--fit", rep, "--out", filepath.Join(dir, "x.xlsx")}, want},
		{[]string{"predict", "--fit", rep, "--items", items}, want},
		{[]string{"report", "--fit", notJSON, "--out", filepath.Join(dir, "x.xlsx")}, notJSON + ": not a fit result: not JSON"},
		{[]string{"predict", "--fit", notJSON, "--items", items}, notJSON + ": not a fit result: not JSON"},
	} {
		e, _, errb := testEnv()
		if code := run(context.Background(), e, tc.args); code != 1 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errb, tc.want)
		}
	}
}

// TestReportCommandBounded fits bounded ratings and reports them: the
// plots are the consensus values and the rater dispersions, the workbook
// has no Thresholds or Classes sheet, the report is of kind values, also
// for a fit file that does not name its scheme.
func TestReportCommandBounded(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	labels := filepath.Join(dir, "sliders.csv")
	var b strings.Builder
	b.WriteString("item_id,rater_id,label\n")
	for i, vs := range [][]string{{"42.5", "40", "55"}, {"90", "85", "100"}, {"10", "0", "20"}, {"60", "70", "30"}, {"75", "80", "65"}} {
		for r, v := range vs {
			b.WriteString("i" + string(rune('0'+i)) + ",r" + string(rune('0'+r)) + "," + v + "\n")
		}
	}
	if err := os.WriteFile(labels, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fit := filepath.Join(dir, "sliders.json")
	e, _, errb := testEnv()
	if code := run(ctx, e, []string{"fit", "--labels", labels, "--scheme", "bounded:0..100", "--model", "bounded", "--out", fit}); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, errb)
	}

	plots := filepath.Join(dir, "plots")
	e, stdout, errb := testEnv()
	if code := run(ctx, e, []string{"report", "--fit", fit, "--format", "png", "--out", plots}); code != 0 {
		t.Fatalf("png: exit %d: %s", code, errb)
	}
	for _, p := range []string{"dispersion.png", "consensus.png", "agreement.png"} {
		if st, err := os.Stat(filepath.Join(plots, p)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", p, err)
		}
	}
	if ents, _ := os.ReadDir(plots); len(ents) != 3 {
		t.Errorf("plots: %d files, want dispersion.png, consensus.png and agreement.png", len(ents))
	}
	if !strings.Contains(stdout.String(), "Report of sliders (bounded model, 5 items, 3 raters, 15 labels") {
		t.Errorf("png: output %q", stdout)
	}

	f, _ := reportBook(t, "xlsx", filepath.Join(dir, "sliders.xlsx"), "report", "--fit", fit, "--bootstrap", "20")
	if got, want := strings.Join(f.GetSheetList(), ","), "Summary,Review,Items,Raters,Agreement,Agreement matrix,Item agreement,Rater agreement,Diagnostics,Flags,Glossary,Charts"; got != want {
		t.Errorf("sheets %s, want %s", got, want)
	}
	if v, _ := f.GetCellValue("Raters", "C1"); v != "Dispersion" {
		t.Errorf("Raters!C1 = %q, want Dispersion", v)
	}

	// A fit file without its scheme: the fit's range makes it.
	var doc map[string]any
	testutil.ReadJSON(t, fit, &doc)
	delete(doc["model"].(map[string]any), "scheme")
	raw, _ := json.Marshal(doc)
	noScheme := filepath.Join(dir, "noscheme.json")
	if err := os.WriteFile(noScheme, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	e, stdout, errb = testEnv()
	if code := run(ctx, e, []string{"report", "--fit", noScheme, "--format", "json", "--out", "-", "--no-agreement"}); code != 0 {
		t.Fatalf("json: exit %d: %s", code, errb)
	}
	rep, err := reports.ReadReport(strings.NewReader(stdout.String()))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != reports.KindValues || rep.Project.Scheme != "bounded:0..100" || len(rep.Items) != 5 || rep.Raters[0].Dispersion == nil {
		t.Errorf("json: kind %q, scheme %q, %d items", rep.Kind, rep.Project.Scheme, len(rep.Items))
	}
}

// TestReportCommandRobust: a robust fit's CSV tables add the label errors
// (every label by p_error), and --format all writes them too.
func TestReportCommandRobust(t *testing.T) {
	ctx := context.Background()
	fit := filepath.Join("..", "..", "reports", "testdata", "fit_snow_rte40_robust.json")
	dir := t.TempDir()
	e, _, errb := testEnv()
	if code := run(ctx, e, []string{"report", "--fit", fit, "--format", "csv", "--out", dir + "/rte.csv", "--no-agreement"}); code != 0 {
		t.Fatalf("csv: exit %d: %s", code, errb)
	}
	b, err := os.ReadFile(filepath.Join(dir, "rte-label-errors.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 401 || !strings.HasPrefix(lines[0], "Rank,Item,Rater,Label,P(error),Flagged,Consensus class,P(class),Item position") {
		t.Errorf("label errors CSV: %d lines, header %q", len(lines), lines[0])
	}
	e, _, errb = testEnv()
	if code := run(ctx, e, []string{"report", "--fit", fit, "--format", "all", "--out", filepath.Join(dir, "all"), "--no-agreement", "--no-charts"}); code != 0 {
		t.Fatalf("all: exit %d: %s", code, errb)
	}
	for _, p := range []string{"fit_snow_rte40_robust-label-errors.csv", "fit_snow_rte40_robust-plots/error-rates.svg"} {
		if _, err := os.Stat(filepath.Join(dir, "all", p)); err != nil {
			t.Errorf("all: %v", err)
		}
	}
}

// reportBook runs args (a report command) writing the workbook book and
// opens it (closed when the test ends); what names the run in failures.
func reportBook(t *testing.T, what, book string, args ...string) (f *excelize.File, stdout string) {
	t.Helper()
	e, out, errb := testEnv()
	if code := run(context.Background(), e, append(args[:len(args):len(args)], "--out", book)); code != 0 {
		t.Fatalf("%s: exit %d: %s", what, code, errb)
	}
	f, err := excelize.OpenFile(book)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, out.String()
}
