package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"concord/internal/testutil"
)

// TestAgreementWeightsFile runs --table with --weights-file on statsmodels'
// custom weight cases (raters/testdata/reference_statsmodels_weights.csv,
// made by make_reference_statsmodels_weights.py): the agreement weights
// 1 - d written as a matrix file, or as a toeplitz row, give statsmodels'
// cohens_kappa kappa, SE, SE under H0, z and p to 1e-9 under "custom".
func TestAgreementWeightsFile(t *testing.T) {
	dir := t.TempDir()
	stats := map[string]string{"kappa": "value", "std_kappa": "se", "std_kappa0": "se_null", "z_value": "z", "pvalue_two_sided": "p_value"}
	n := 0
	for x, r := range testutil.ReadCSV(t, "../../raters/testdata/reference_statsmodels_weights.csv")[1:] {
		label := strings.Join(r[:5], " ")
		var tab [][]float64
		if err := json.Unmarshal([]byte(r[1]), &tab); err != nil {
			t.Fatal(label, err)
		}
		var lines []string
		switch r[3] {
		case "toeplitz":
			var v []float64
			if err := json.Unmarshal([]byte(r[2]), &v); err != nil {
				t.Fatal(label, err)
			}
			cells := make([]string, len(v))
			for i, d := range v {
				cells[i] = strconv.FormatFloat(1-d, 'g', -1, 64)
			}
			lines = append(lines, strings.Join(cells, ","))
		case "matrix":
			var m [][]float64
			if err := json.Unmarshal([]byte(r[2]), &m); err != nil {
				t.Fatal(label, err)
			}
			for _, row := range m {
				cells := make([]string, len(row))
				for i, d := range row {
					cells[i] = strconv.FormatFloat(1-d, 'g', -1, 64)
				}
				lines = append(lines, strings.Join(cells, ","))
			}
		}
		var tl []string
		for _, row := range tab {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = strconv.FormatFloat(c, 'g', -1, 64)
			}
			tl = append(tl, strings.Join(cells, ","))
		}
		tp, wp := filepath.Join(dir, fmt.Sprintf("t%d.csv", x)), filepath.Join(dir, fmt.Sprintf("w%d.csv", x))
		if err := os.WriteFile(tp, []byte(strings.Join(tl, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(wp, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		e, out, errb := testEnv()
		if code := run(context.Background(), e, []string{"agreement", "--table", tp, "--weights-file", wp, "--ci", "normal", "--json"}); code != 0 {
			t.Fatalf("%s: exit %d: %s", label, code, errb)
		}
		var doc struct {
			Weighted map[string]struct {
				CohenKappa map[string]any `json:"cohen_kappa"`
			} `json:"weighted"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(label, err)
		}
		got, ok := doc.Weighted["custom"].CohenKappa[stats[r[4]]].(float64)
		want, _ := strconv.ParseFloat(r[5], 64)
		if !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: got %v (%v), statsmodels %v", label, got, ok, want)
		}
		n++
	}
	if n != 50 {
		t.Errorf("%d statsmodels values, want 50", n)
	}
}

// TestAgreementWeightsFileErrors checks that bad weights files are named
// with the row and column, and that --weights-file on labels needs a
// categorical scheme.
func TestAgreementWeightsFileErrors(t *testing.T) {
	write := tempWriter(t)
	tab := write("tab.csv", "0,4,1\n0,8,0\n0,1,5\n")
	for _, c := range []struct {
		name, text, want string
	}{
		{"nan.csv", "1,x,0\n", `nan.csv: row 1, column 2: "x" is not a finite number`},
		{"short.csv", "1,0.5\n", "short.csv: row 1 has 2 weights; a toeplitz weights row has one per distance 0..2 (3 categories)"},
		{"v0.csv", "0,1,2\n", "v0.csv: row 1, column 1: the weight of distance 0 is 0; agreement weights are 1 there"},
		{"rows.csv", "1,0,0\n0,1,0\n", "rows.csv: 2 rows of weights for 3 categories"},
		{"cols.csv", "1,0,0\n0,1\n0,0,1\n", "cols.csv: row 2 has 2 weights; expected 3"},
		{"diag.csv", "1,0,0\n0,0.9,0\n0,0,1\n", "diag.csv: row 2, column 2: diagonal weight 0.9; agreement weights are 1 on the diagonal"},
		{"asym.csv", "1,0.5,0\n0.4,1,0\n0,0,1\n", "asym.csv: row 2, column 1: weight 0.4 differs from row 1, column 2: 0.5; the weights must be symmetric"},
	} {
		runFails(t, []string{"agreement", "--table", tab, "--weights-file", write(c.name, c.text)}, c.want)
	}
	e, _, errb := testEnv()
	labels := write("labels.csv", "item_id,rater_id,label\n1,a,0.5\n1,b,0.25\n")
	if code := run(context.Background(), e, []string{"agreement", "--labels", labels, "--scheme", "bounded:0..1", "--weights-file", tab}); code == 0 ||
		!strings.Contains(errb.String(), "tab.csv: custom agreement weights go with categorical schemes (one row and column per category); bounded:0..1 is not one") {
		t.Errorf("bounded labels: exit %d, stderr %q", code, errb)
	}
}

// tempWriter returns a function that writes a file of a test's temporary
// folder and returns its path.
func tempWriter(t *testing.T) func(name, text string) string {
	dir := t.TempDir()
	return func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// TestAgreementWeightsFileLabels: --weights-file on labels (--labels) is
// the table's --weights-file on the same data: the two-rater labels of
// the table give its custom coefficients' values (percent agreement,
// Gwet's AC2, Brennan-Prediger, Krippendorff's alpha; Fleiss' kappa of
// the labels is the table's Scott's pi and Conger's its Cohen's kappa) to
// 1e-12; the standard errors are those of irrCAC's raw-data functions
// (raters' TestWeightMatrixRawLabels checks them against irrCAC).
func TestAgreementWeightsFileLabels(t *testing.T) {
	write := tempWriter(t)
	tab := [][]int{{0, 4, 1}, {0, 8, 0}, {0, 1, 5}}
	var tabCSV, labels strings.Builder
	labels.WriteString("item_id,rater_id,label\n")
	item := 0
	for k, row := range tab {
		for l, n := range row {
			fmt.Fprintf(&tabCSV, "%d", n)
			if l < 2 {
				tabCSV.WriteString(",")
			}
			for c := 0; c < n; c++ {
				item++
				fmt.Fprintf(&labels, "%d,a,%d\n%d,b,%d\n", item, k+1, item, l+1)
			}
		}
		tabCSV.WriteString("\n")
	}
	wf := write("w.csv", "1,0.9,0.2\n0.9,1,0.5\n0.2,0.5,1\n")
	doc := func(args ...string) map[string]any {
		e, out, errb := testEnv()
		if code := run(context.Background(), e, append(append([]string{"agreement"}, args...), "--weights-file", wf, "--json")); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb)
		}
		var d map[string]any
		if err := json.Unmarshal(out.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		return d["weighted"].(map[string]any)["custom"].(map[string]any)
	}
	tb := doc("--table", write("tab.csv", tabCSV.String()))
	raw := doc("--labels", write("labels.csv", labels.String()), "--scheme", "ordinal:1..3", "--bootstrap", "0", "--only", "coefficients")
	value := func(set map[string]any, coef string) float64 {
		v, ok := set[coef].(map[string]any)["value"].(float64)
		if !ok {
			t.Fatalf("no %s value", coef)
		}
		return v
	}
	for _, c := range [][2]string{{"percent_agreement", "percent_agreement"}, {"gwet_ac2", "gwet_ac2"}, {"brennan_prediger", "brennan_prediger"},
		{"krippendorff_alpha", "krippendorff_alpha"}, {"fleiss_kappa", "scott_pi"}, {"conger_kappa", "cohen_kappa"}} {
		if a, b := value(raw, c[0]), value(tb, c[1]); math.Abs(a-b) > 1e-12 {
			t.Errorf("labels %s %v, table %s %v", c[0], a, c[1], b)
		}
	}
}
