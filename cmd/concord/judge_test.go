package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"concord/internal/testutil"
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
	// Raters marked as models are the judges by default.
	byMark := mustCLI(t, "judge", "--labels", labels, "--scheme", "nominal:a,b,c", "--model-raters", "good,coin")
	if named := mustCLI(t, "judge", "--labels", labels, "--scheme", "nominal:a,b,c", "--judges", "coin,good", "--model-raters", "good,coin"); byMark != named {
		t.Errorf("--model-raters and --judges differ:\n%s\n%s", byMark, named)
	}
	// The fit's rater table flags them.
	dir := t.TempDir()
	fit := filepath.Join(dir, "fit.json")
	out = mustCLI(t, "fit", "--labels", labels, "--scheme", "nominal:a,b,c", "--model", "confusion", "--model-raters", "good,coin", "--seed", "1", "--out", fit)
	if strings.Count(out, "MODEL") != 2 {
		t.Errorf("fit summary does not flag the two model raters:\n%s", out)
	}
	var res struct {
		Raters []struct {
			ID    string `json:"id"`
			Model bool   `json:"model"`
		} `json:"raters"`
	}
	testutil.ReadJSON(t, fit, &res)
	for _, r := range res.Raters {
		if r.Model != (r.ID == "good" || r.ID == "coin") {
			t.Errorf("rater %s: model %v", r.ID, r.Model)
		}
	}
}

// Model raters and probabilities survive concord import and export: the
// export holds the file's labels, probabilities and marks, and a later
// import with --model-raters marks a stored rater.
func TestImportExportModelRaters(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "c.db")
	in := "item_id,rater_id,label,prob,is_model\n1,h1,0,,false\n1,m,1,0.75,true\n2,h1,1,,false\n2,m,1,0.5,true\n"
	src := writeFile(t, dir, "in.csv", in)
	out := mustCLI(t, "import", "--db", db, "--project", "p", "--scheme", "nominal:0,1", src)
	if !strings.Contains(out, "model raters: m (0 stored raters newly marked)") {
		t.Errorf("import output:\n%s", out)
	}
	exp := filepath.Join(dir, "out.csv")
	mustCLI(t, "export", "--db", db, "--project", "p", "--format", "csv-long", "--out", exp)
	if b, _ := os.ReadFile(exp); string(b) != in {
		t.Errorf("export:\n%s\nwant\n%s", b, in)
	}
	h := writeFile(t, dir, "h.csv", "item_id,rater_id,label\n3,h1,0\n")
	out = mustCLI(t, "import", "--db", db, "--project", "p", "--model-raters", "h1", h)
	if !strings.Contains(out, "model raters: h1 (1 stored raters newly marked)") {
		t.Errorf("marking import output:\n%s", out)
	}
	mustCLI(t, "export", "--db", db, "--project", "p", "--format", "csv-long", "--out", exp)
	if b, _ := os.ReadFile(exp); !strings.Contains(string(b), "1,h1,0,,true\n") {
		t.Errorf("h1 not a model after the marking import:\n%s", b)
	}
}
