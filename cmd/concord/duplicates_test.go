package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"concord/internal/testutil"
)

// adultRepeats is a piece of AdultContent2 with 7 repeated (site, worker)
// pairs (../../annotations/testdata/README.md).
const adultRepeats = "../../annotations/testdata/adultcontent2_repeats.csv"

// TestDuplicatesFlag runs --duplicates through import (each setting),
// export and re-import, agreement and fit.
func TestDuplicatesFlag(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "c.db")
	scheme := "nominal:G,P,R,X"

	code, _, errb := runCmd(t, "import", "--db", dbPath, "--project", "refused", "--scheme", scheme, adultRepeats)
	if code == 0 || !strings.Contains(errb, `duplicate label for item "143" by rater "w002"`) || !strings.Contains(errb, "--duplicates keep|first") {
		t.Fatalf("import without --duplicates: %d %s", code, errb)
	}
	if rows := listProjects(t, dbPath); len(rows) != 0 {
		t.Fatalf("a refused import left %+v", rows)
	}
	code, _, errb = runCmd(t, "import", "--db", dbPath, "--project", "x", "--duplicates", "some", adultRepeats)
	if code == 0 || !strings.Contains(errb, "expected keep, first or error") {
		t.Errorf("--duplicates some: %d %s", code, errb)
	}

	code, out, errb := runCmd(t, "import", "--db", dbPath, "--project", "first", "--scheme", scheme, "--duplicates", "first", adultRepeats)
	if code != 0 || !strings.Contains(out, "repeated labels: 7 dropped") {
		t.Fatalf("import --duplicates first: %d\n%s%s", code, out, errb)
	}
	if r := findRow(t, dbPath, "first"); r.Labels != 93 || r.Items != 13 || r.Raters != 56 {
		t.Errorf("first: %+v, want 93 labels of 13 items by 56 raters", r)
	}

	code, out, errb = runCmd(t, "import", "--db", dbPath, "--project", "keep", "--scheme", scheme, "--duplicates", "keep", adultRepeats)
	if code != 0 || !strings.Contains(out, "repeated labels: 7 kept") || !strings.Contains(out, "100 added") {
		t.Fatalf("import --duplicates keep: %d\n%s%s", code, out, errb)
	}
	code, out, _ = runCmd(t, "import", "--db", dbPath, "--project", "keep", "--duplicates", "keep", adultRepeats)
	if code != 0 || !strings.Contains(out, "0 added, 0 replaced, 100 unchanged") {
		t.Errorf("re-import --duplicates keep: %d\n%s", code, out)
	}

	// Round trip through a long CSV export.
	exp := filepath.Join(dir, "keep.csv")
	if code, _, errb := runCmd(t, "export", "--db", dbPath, "--project", "keep", "--format", "csv-long", "--out", exp); code != 0 {
		t.Fatalf("export: %s", errb)
	}
	if code, _, errb := runCmd(t, "import", "--db", dbPath, "--project", "back", "--scheme", scheme, "--duplicates", "keep", exp); code != 0 {
		t.Fatalf("import of the export: %s", errb)
	}
	back := filepath.Join(dir, "back.csv")
	if code, _, errb := runCmd(t, "export", "--db", dbPath, "--project", "back", "--format", "csv-long", "--out", back); code != 0 {
		t.Fatalf("export back: %s", errb)
	}
	a, _ := os.ReadFile(exp)
	b, _ := os.ReadFile(back)
	if string(a) != string(b) || strings.Count(string(a), "\n") != 101 || !strings.Contains(string(a), "143,w002,X\n143,w002,G\n") {
		t.Errorf("round trip: export %d bytes, again %d bytes; want the same 100 labels, repeats in order", len(a), len(b))
	}
	code, _, errb = runCmd(t, "export", "--db", dbPath, "--project", "keep", "--format", "csv-wide", "--out", filepath.Join(dir, "wide.csv"))
	if code == 0 || !strings.Contains(errb, "export in long form") {
		t.Errorf("wide export of repeats: %d %s", code, errb)
	}

	// Agreement from the file: the first label of each pair, said so.
	code, out, errb = runCmd(t, "agreement", "--labels", adultRepeats, "--scheme", scheme, "--duplicates", "keep", "--bootstrap", "0", "--json")
	if code != 0 {
		t.Fatalf("agreement: %d %s", code, errb)
	}
	var rep struct{ Notes []string }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "7 repeated labels") || !strings.Contains(errb, "7 repeated labels kept") {
		t.Errorf("agreement notes %q, stderr %s", rep.Notes, errb)
	}

	// Fit from the file and from the project: every label counts.
	code, _, errb = runCmd(t, "fit", "--labels", adultRepeats, "--scheme", scheme, "--model", "classification", "--out", filepath.Join(dir, "r.json"))
	if code == 0 || !strings.Contains(errb, "--duplicates keep|first") {
		t.Errorf("fit without --duplicates: %d %s", code, errb)
	}
	for _, src := range [][]string{{"--labels", adultRepeats, "--scheme", scheme, "--duplicates", "keep"}, {"--db", dbPath, "--project", "keep"}} {
		res := filepath.Join(dir, "fit.json")
		args := append([]string{"fit", "--model", "classification", "--chains", "2", "--samples", "100", "--burnin", "50", "--out", res}, src...)
		if code, _, errb := runCmd(t, args...); code != 0 {
			t.Fatalf("fit %v: %s", src, errb)
		}
		var fit struct {
			Raters []struct {
				ID      string `json:"id"`
				NLabels int    `json:"n_labels"`
			} `json:"raters"`
		}
		testutil.ReadJSON(t, res, &fit)
		total := 0
		for _, r := range fit.Raters {
			total += r.NLabels
		}
		if total != 100 {
			t.Errorf("fit %v: %d labels over the raters, want 100", src, total)
		}
	}
}
