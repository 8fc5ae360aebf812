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
// with the row and column, and that --weights-file needs a table input.
func TestAgreementWeightsFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
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
	labels := write("labels.csv", "item_id,rater_id,label\n1,a,x\n1,b,x\n")
	if code := run(context.Background(), e, []string{"agreement", "--labels", labels, "--weights-file", tab}); code == 0 || !strings.Contains(errb.String(), "--weights-file goes with --table or --counts") {
		t.Errorf("labels: exit %d, stderr %q", code, errb)
	}
}
