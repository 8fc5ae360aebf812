package main

import (
	"concord/analysis"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runCmd runs one command line and returns its exit status, stdout and
// stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	e, out, errb := testEnv()
	code := run(context.Background(), e, args)
	return code, out.String(), errb.String()
}

// runOut runs the command line args with --out a file called name in a
// fresh folder, fails the test unless it exits 0, and returns the file's
// path, the summary on stdout and stderr.
func runOut(t *testing.T, name string, args ...string) (out, stdout, stderr string) {
	t.Helper()
	out = filepath.Join(t.TempDir(), name)
	code, stdout, stderr := runCmd(t, append(slices.Clip(args), "--out", out)...)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", args[0], code, stdout, stderr)
	}
	return out, stdout, stderr
}

// summaryHas fails the test for each of want that the summary lacks.
func summaryHas(t *testing.T, summary string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(summary, w) {
			t.Errorf("summary lacks %q:\n%s", w, summary)
		}
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type projectRow struct {
	Name   string `json:"name"`
	Scheme string `json:"scheme"`
	Items  int    `json:"items"`
	Raters int    `json:"raters"`
	Labels int    `json:"labels"`
}

func listProjects(t *testing.T, dbPath string) []projectRow {
	t.Helper()
	code, out, errb := runCmd(t, "projects", "list", "--db", dbPath, "--json")
	if code != 0 {
		t.Fatalf("projects list: %d %s", code, errb)
	}
	var rows []projectRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("projects list --json: %v\n%s", err, out)
	}
	return rows
}

func findRow(t *testing.T, dbPath, name string) projectRow {
	t.Helper()
	for _, r := range listProjects(t, dbPath) {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no project %q", name)
	return projectRow{}
}

// The sirt fixture: the first essays of sirt data.ratings1, criterion k1
// (testdata/README.md names the source).
const sirtK1 = "testdata/agreement_sirt_k1.csv"

func TestImportExportProjects(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "c.db")

	code, out, errb := runCmd(t, "import", "--db", dbPath, "--project", "k1", "--scheme", "ordinal:0..3", sirtK1)
	if code != 0 {
		t.Fatalf("import: %d %s", code, errb)
	}
	if !strings.Contains(out, "labels: ") || !strings.Contains(out, "into new project \"k1\"") {
		t.Errorf("import output:\n%s", out)
	}
	rows := listProjects(t, dbPath)
	if len(rows) != 1 || rows[0].Name != "k1" || rows[0].Scheme != "ordinal:0..3" || rows[0].Labels == 0 {
		t.Fatalf("projects after import: %+v", rows)
	}
	want := rows[0]

	// Re-importing the same file adds nothing.
	code, out, errb = runCmd(t, "import", "--db", dbPath, "--project", "k1", sirtK1)
	if code != 0 || !strings.Contains(out, "0 added, 0 replaced") {
		t.Fatalf("re-import: %d\n%s%s", code, out, errb)
	}
	if got := findRow(t, dbPath, "k1"); got != want {
		t.Fatalf("re-import changed the project: %+v, want %+v", got, want)
	}

	// Export in every format and import each export into a new project:
	// the labels come back exactly.
	code, _, errb = runCmd(t, "export", "--db", dbPath, "--project", "k1", "--format", "csv-long", "--out", filepath.Join(dir, "ref.csv"))
	if code != 0 {
		t.Fatalf("export: %s", errb)
	}
	ref, _ := os.ReadFile(filepath.Join(dir, "ref.csv"))
	for _, f := range []string{"csv-long", "csv-wide", "xlsx"} {
		path := filepath.Join(dir, "k1."+f)
		if code, _, errb := runCmd(t, "export", "--db", dbPath, "--project", "k1", "--format", f, "--out", path); code != 0 {
			t.Fatalf("export %s: %s", f, errb)
		}
		if code, _, errb := runCmd(t, "import", "--db", dbPath, "--project", "back-"+f, "--scheme", "ordinal:0..3", path); code != 0 {
			t.Fatalf("import %s: %s", f, errb)
		}
		back := filepath.Join(dir, "back-"+f+".csv")
		if code, _, errb := runCmd(t, "export", "--db", dbPath, "--project", "back-"+f, "--format", "csv-long", "--out", back); code != 0 {
			t.Fatalf("export back-%s: %s", f, errb)
		}
		got, _ := os.ReadFile(back)
		if string(got) != string(ref) {
			t.Errorf("%s round trip differs", f)
		}
	}

	// A conflicting label is an error and writes nothing; --replace takes it.
	lines := strings.Split(strings.TrimSpace(string(ref)), "\n")
	first := strings.Split(lines[1], ",")
	newValue := "0"
	if first[2] == "0" {
		newValue = "1"
	}
	conflict := writeFile(t, dir, "conflict.csv", "item_id,rater_id,label\n"+first[0]+","+first[1]+","+newValue+"\nnew-item,new-rater,2\n")
	code, _, errb = runCmd(t, "import", "--db", dbPath, "--project", "k1", conflict)
	if code == 0 || !strings.Contains(errb, first[0]) {
		t.Fatalf("conflicting import: %d %s", code, errb)
	}
	if got := findRow(t, dbPath, "k1"); got != want {
		t.Fatalf("a rejected import changed the project: %+v, want %+v", got, want)
	}
	code, out, errb = runCmd(t, "import", "--db", dbPath, "--project", "k1", "--replace", conflict)
	if code != 0 || !strings.Contains(out, "1 added, 1 replaced") {
		t.Fatalf("--replace: %d\n%s%s", code, out, errb)
	}

	// Projects: create, list, delete.
	if code, _, errb := runCmd(t, "projects", "create", "empty", "--db", dbPath, "--scheme", "nominal:a,b,c"); code != 0 {
		t.Fatalf("create: %s", errb)
	}
	if code, _, _ := runCmd(t, "projects", "create", "empty", "--db", dbPath, "--scheme", "nominal:a,b,c"); code == 0 {
		t.Error("creating a project twice succeeded")
	}
	if code, _, errb := runCmd(t, "projects", "delete", "empty", "--db", dbPath); code != 0 {
		t.Fatalf("delete: %s", errb)
	}
	if code, _, _ := runCmd(t, "projects", "delete", "empty", "--db", dbPath); code == 0 {
		t.Error("deleting a missing project succeeded")
	}
}

// TestImportBadRow: one bad row anywhere rejects the whole file, names the
// row, and leaves no project behind.
func TestImportBadRow(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "c.db")
	good := "item_id,rater_id,label\na,r1,1\nb,r1,2\nc,r2,3\nd,r2,4\n"
	rows := strings.Split(strings.TrimSpace(good), "\n")
	for i := 1; i < len(rows); i++ {
		bad := append([]string(nil), rows...)
		bad[i] = strings.Split(bad[i], ",")[0] + "," + strings.Split(bad[i], ",")[1] + ",6"
		path := writeFile(t, dir, "bad.csv", strings.Join(bad, "\n")+"\n")
		code, _, errb := runCmd(t, "import", "--db", dbPath, "--project", "p", "--scheme", "ordinal:1..5", path)
		if code == 0 {
			t.Fatalf("bad row %d accepted", i)
		}
		wantPos := "bad.csv:" + string(rune('0'+i+1)) + `, column "label": unknown level "6"`
		if !strings.Contains(errb, wantPos) {
			t.Errorf("bad row %d: error %q does not contain %q", i, errb, wantPos)
		}
		if got := listProjects(t, dbPath); len(got) != 0 {
			t.Fatalf("bad row %d left projects behind: %+v", i, got)
		}
	}
}

func TestCommandErrors(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "c.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "--db", dbPath, sirtK1}, "--project is required"},
		{[]string{"import", "--db", dbPath, "--project", "x"}, "expected a label file"},
		{[]string{"import", "--db", dbPath, "--project", "x", "--scheme", "ordinal:3..1", sirtK1}, "range"},
		{[]string{"import", "--db", dbPath, "--project", "x", "--scheme", "ordinal:0..3", filepath.Join(dir, "missing.csv")}, "missing.csv"},
		{[]string{"export", "--db", dbPath, "--project", "nope", "--out", filepath.Join(dir, "x.csv")}, `no project named "nope"`},
		{[]string{"export", "--db", dbPath, "--project", "nope", "--format", "pdf", "--out", "x"}, "unknown export format"},
		{[]string{"projects", "frobnicate", "--db", dbPath}, "unknown projects action"},
		{[]string{"nosuchcommand"}, "unknown command"},
	} {
		code, _, errb := runCmd(t, tc.args...)
		if code == 0 || !strings.Contains(errb, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want an error containing %q", tc.args, code, errb, tc.want)
		}
	}
	for _, c := range commands() {
		if code, out, _ := runCmd(t, c.name, "--help"); code != 0 || !strings.Contains(out, "Usage: concord "+c.name) {
			t.Errorf("%s --help: exit %d\n%s", c.name, code, out)
		}
	}
}

// TestDemoLoad: the demo loads its embedded data once; a second run adds
// nothing.
func TestDemoLoad(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "demo.db")
	code, out, errb := runCmd(t, "demo", "--db", dbPath, "--no-fit")
	if code != 0 {
		t.Fatalf("demo: %d %s", code, errb)
	}
	for _, want := range []string{"== rte:", "800 items (800 labelled), 164 raters, 8000 labels", "== sirt-writing-k1:", "135 items (135 labelled), 7 raters, 274 labels", "label distribution: 0: 37 (13.5%)", "== snow-valence:", "100 items (100 labelled), 38 raters, 1000 labels"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	rows := listProjects(t, dbPath)
	if len(rows) != 7 {
		t.Fatalf("demo projects: %+v", rows)
	}
	code, out, errb = runCmd(t, "demo", "--db", dbPath, "--no-fit")
	if code != 0 {
		t.Fatalf("second demo: %d %s", code, errb)
	}
	if n := strings.Count(out, "already loaded: nothing added"); n != 7 {
		t.Errorf("second demo run: %d projects already loaded, want 7:\n%s", n, out)
	}
	if got := listProjects(t, dbPath); len(got) != 7 || got[0] != rows[0] {
		t.Errorf("second demo run changed the projects: %+v", got)
	}
}

// TestMistypedFlag: an unknown flag is answered with the flag meant (a
// missing plural s first), not the whole usage; a flag that nothing is
// close to gets the pointer to --help alone.
func TestMistypedFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", "--sample", "10", "--project", "p", "--out", "-"}, "concord fit: unknown flag --sample (did you mean --samples or --sampler?)\n"},
		{[]string{"fit", "--sigma_b", "2"}, "unknown flag --sigma_b (did you mean --sigma-b or --sigma?)"},
		{[]string{"fit", "--seeed", "2"}, "unknown flag --seeed (did you mean --seed?)"},
		{[]string{"fit", "--burn-in", "2"}, "unknown flag --burn-in (did you mean --burnin?)"},
		{[]string{"import", "--projet", "p", "x.csv"}, "concord import: unknown flag --projet (did you mean --project?)"},
		{[]string{"report", "--fit", "f.json", "--ot", "x"}, "concord report: unknown flag --ot (did you mean --out?)"},
		{[]string{"fit", "--zzz"}, "concord fit: unknown flag --zzz\n"},
		{[]string{"fit", "--samples", "many"}, `concord fit: invalid value "many" for flag --samples`},
	} {
		code, out, errb := runCmd(t, tc.args...)
		if code != 2 || !strings.Contains(errb, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errb, tc.want)
		}
		name := "concord " + tc.args[0]
		if !strings.HasSuffix(errb, "Run \""+name+" --help\" for its flags.\n") || strings.Contains(errb, "Usage:") || out != "" {
			t.Errorf("%v: stderr %q (want the pointer to --help, not the usage), stdout %q", tc.args, errb, out)
		}
	}
}

// TestDemoWritesFitResults: next to the reports of a demo fit, the demo
// writes the fit result (NAME-fit.json), which concord report reads with
// --fit.
func TestDemoWritesFitResults(t *testing.T) {
	ctx := context.Background()
	e, _, _ := testEnv()
	st, err := openStore(ctx, e, filepath.Join(t.TempDir(), "demo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dp := demoProjects()[0] // sirt-writing-k1
	p, _, err := loadDemoProject(ctx, st, dp)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := st.Dataset(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := analysis.Fit(ctx, ds, analysis.FitSpec{Engine: "gibbs", Chains: 2, Samples: 60, Burnin: 40, KeepDraws: 20, Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, _, _, err := demoReport(ctx, st, p, res, dir)
	if err != nil {
		t.Fatal(err)
	}
	fit := filepath.Join(dir, "sirt-writing-k1-fit.json")
	if len(paths) == 0 || paths[0] != fit || !slices.Contains(paths, filepath.Join(dir, "sirt-writing-k1.json")) {
		t.Fatalf("demo report paths %v, want the fit result %s first and the report", paths, fit)
	}
	if got, err := readFitResult(fit); err != nil || len(got.Items) != len(res.Items) {
		t.Fatalf("reading the demo's fit result: %v", err)
	}
	if code, _, errb := runCmd(t, "report", "--fit", fit, "--format", "json", "--bootstrap", "20", "--out", filepath.Join(dir, "again.json")); code != 0 {
		t.Errorf("concord report --fit %s: exit %d: %s", fit, code, errb)
	}
}
