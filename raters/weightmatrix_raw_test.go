package raters

import (
	"math"
	"testing"
)

// expandTable turns a two-rater contingency table into raw labels: one
// item per count, rater 0 the row category and rater 1 the column one.
func expandTable(tab [][]float64) *Ratings {
	n := 0
	for _, row := range tab {
		for _, v := range row {
			n += int(v)
		}
	}
	r := NewRatings(n, 2, len(tab))
	i := 0
	for k, row := range tab {
		for l, v := range row {
			for c := 0; c < int(v); c++ {
				r.Add(i, 0, float64(k))
				r.Add(i, 1, float64(l))
				i++
			}
		}
	}
	return r
}

// TestWeightMatrixRawLabels: Options.WeightMatrix on raw labels. (1)
// Against irrCAC 1.4's raw-data functions with the same weight matrix
// (testdata/reference_irrcac_custom_raw.csv, made by
// make_reference_irrcac_custom_raw.R): percent agreement, Fleiss',
// Conger's, Gwet's, Brennan-Prediger's and Krippendorff's weighted
// coefficients, value and SE to 1e-12 and the t interval to 1e-9, on
// the two-rater labels of irrCAC's 3 x 3 and 4 x 4 tables and on
// cac.raw4raters (4 raters, missing ratings), with matrices that no named
// weighting gives. On the two-rater labels the values equal the table
// path's (AnalyzeTable with the same matrix) to 1e-12, Fleiss' kappa
// (raw) being Scott's pi (table) and Conger's kappa Cohen's; their
// standard errors differ by definition (irrCAC's raw functions estimate
// the variance from the subjects' linearised terms over n - 1, its table
// functions from the cell proportions over n). (2) A matrix equal to a
// named weighting gives that weighting's values and SEs (raw labels,
// several raters, all categories or the observed ones only).
func TestWeightMatrixRawLabels(t *testing.T) {
	custom := map[string][][]float64{
		"irrcac_cont3x3abstractors.csv": {{1, 0.9, 0.2}, {0.9, 1, 0.5}, {0.2, 0.5, 1}},
		"irrcac_cont4x4diagnosis.csv":   {{1, 0.8, 0.1, 0}, {0.8, 1, 0.3, 0.1}, {0.1, 0.3, 1, 0.6}, {0, 0.1, 0.6, 1}},
		"cac.raw4raters":                {{1, 0.7, 0.4, 0.1, 0}, {0.7, 1, 0.7, 0.3, 0.1}, {0.4, 0.7, 1, 0.6, 0.2}, {0.1, 0.3, 0.6, 1, 0.9}, {0, 0.1, 0.2, 0.9, 1}},
	}
	var raw4 []map[string]string
	for _, r := range readCSV(t, "testdata/gwet_irrcac_ratings.csv") {
		if r["dataset"] == "cac.raw4raters" {
			raw4 = append(raw4, r)
		}
	}
	reports := map[string]WeightedSet{}
	for input, w := range custom {
		var r *Ratings
		if input == "cac.raw4raters" {
			r, _, _, _ = longTable(raw4, "item_id", "rater_id", "label")
		} else {
			tab := readMatrix(t, "testdata/"+input)
			r = expandTable(tab)
			tb, err := AnalyzeTable(tab, TableOptions{WeightMatrix: w})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Analyze(r, Options{Level: Ordinal, Weights: []Weights{}, WeightMatrix: w, Only: OnlyCoefficients, Bootstrap: -1})
			if err != nil {
				t.Fatal(err)
			}
			a, b := rep.Weighted[CustomWeightsName], tb.Weighted[CustomWeightsName]
			for _, p := range []struct {
				coef     string
				raw, tab float64
			}{
				{"percent agreement", a.PercentAgreement.Value, b.PercentAgreement.Value},
				{"gwet ac2", a.GwetAC2.Value, b.GwetAC2.Value},
				{"brennan-prediger", a.BrennanPrediger.Value, b.BrennanPrediger.Value},
				{"krippendorff alpha", a.KrippendorffAlpha.Value, b.KrippendorffAlpha.Value},
				{"fleiss (raw) = scott (table)", a.FleissKappa.Value, b.ScottPi.Value},
				{"conger (raw) = cohen (table)", a.CongerKappa.Value, b.CohenKappa.Value},
			} {
				if !(math.Abs(p.raw-p.tab) <= 1e-12) {
					t.Errorf("%s %s: raw labels %.15g, table %.15g", input, p.coef, p.raw, p.tab)
				}
			}
		}
		rep, err := Analyze(r, Options{Level: Ordinal, Weights: []Weights{}, WeightMatrix: w, Only: OnlyCoefficients, Bootstrap: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Weighted) != 1 {
			t.Errorf("%s: weightings %v, want custom only", input, rep.Weighted)
		}
		reports[input] = rep.Weighted[CustomWeightsName]
	}
	n := 0
	for _, ref := range readCSV(t, "testdata/reference_irrcac_custom_raw.csv") {
		s, ok := reports[ref["input"]]
		if !ok {
			t.Fatalf("no input %s", ref["input"])
		}
		e := map[string]Estimate{"percent_agreement": s.PercentAgreement, "fleiss_kappa": s.FleissKappa, "conger_kappa": s.CongerKappa,
			"gwet": s.GwetAC2, "brennan_prediger": s.BrennanPrediger, "krippendorff_alpha": s.KrippendorffAlpha}[ref["coefficient"]]
		label := ref["input"] + " " + ref["coefficient"]
		for _, c := range []struct {
			what      string
			got, want float64
			tol       float64
		}{{"value", e.Value, parseF(t, ref["value"]), 1e-12}, {"se", e.SE, parseF(t, ref["se"]), 1e-12},
			{"lcb", e.CILow, parseF(t, ref["lcb"]), 1e-9}, {"ucb", e.CIHigh, parseF(t, ref["ucb"]), 1e-9}} {
			if !(math.Abs(c.got-c.want) <= c.tol) {
				t.Errorf("%s %s: %.15g, irrCAC %.15g", label, c.what, c.got, c.want)
			}
		}
		n++
	}
	if n != 18 {
		t.Errorf("%d reference rows, want 18", n)
	}

	// (2) Named weightings written out as matrices, on the sirt writing
	// ratings (7 raters, scores 0-3, missing ratings).
	r, _, _, _ := longTable(readCSV(t, "testdata/sirt1_k1_ratings.csv"), "item_id", "rater_id", "label")
	vals := make([]float64, r.K)
	for k := range vals {
		vals[k] = r.Value(k)
	}
	for _, w := range []Weights{QuadraticWeights, OrdinalWeights, CircularWeights} {
		named, err := newWeightMat(w, vals)
		if err != nil {
			t.Fatal(err)
		}
		m := make([][]float64, r.K)
		for k := range m {
			m[k] = make([]float64, r.K)
			for l := range m[k] {
				m[k][l] = named.at(k, l)
			}
		}
		rep, err := Analyze(r, Options{Level: Ordinal, Weights: []Weights{w}, WeightMatrix: m, Only: OnlyCoefficients, Bootstrap: -1})
		if err != nil {
			t.Fatal(err)
		}
		sameWeighted(t, w.String(), rep.Weighted[w.String()], rep.Weighted[CustomWeightsName])
	}

	// (3) Observed categories only: the matrix's rows and columns of the
	// categories that occur. Category 2 of 4 unused = the 3-category
	// ratings with row and column 2 struck out.
	m4 := custom["irrcac_cont4x4diagnosis.csv"]
	m3 := [][]float64{{m4[0][0], m4[0][1], m4[0][3]}, {m4[1][0], m4[1][1], m4[1][3]}, {m4[3][0], m4[3][1], m4[3][3]}}
	tab3 := readMatrix(t, "testdata/irrcac_cont3x3abstractors.csv")
	r3 := expandTable(tab3)
	r4 := NewRatings(r3.Items, 2, 4)
	for x := 0; x < r3.Len(); x++ {
		i, j, v := r3.Label(x)
		if v == 2 {
			v = 3
		}
		r4.Add(i, j, v)
	}
	a, err := Analyze(r4, Options{Level: Nominal, WeightMatrix: m4, Only: OnlyCoefficients, Bootstrap: -1, ObservedCategoriesOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Analyze(r3, Options{Level: Nominal, WeightMatrix: m3, Only: OnlyCoefficients, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	sameWeighted(t, "observed only", b.Weighted[CustomWeightsName], a.Weighted[CustomWeightsName])
}

// sameWeighted fails unless two weighted sets agree to 1e-12 (values and
// standard errors).
func sameWeighted(t *testing.T, label string, x, y WeightedSet) {
	t.Helper()
	for _, p := range []struct {
		coef string
		x, y Estimate
	}{{"pa", x.PercentAgreement, y.PercentAgreement}, {"fleiss", x.FleissKappa, y.FleissKappa}, {"conger", x.CongerKappa, y.CongerKappa},
		{"gwet", x.GwetAC2, y.GwetAC2}, {"bp", x.BrennanPrediger, y.BrennanPrediger}, {"alpha", x.KrippendorffAlpha, y.KrippendorffAlpha}} {
		if !(math.Abs(p.x.Value-p.y.Value) <= 1e-12 && math.Abs(p.x.SE-p.y.SE) <= 1e-12) || math.IsNaN(p.y.Value) {
			t.Errorf("%s %s: %v (SE %v), want %v (SE %v)", label, p.coef, p.y.Value, p.y.SE, p.x.Value, p.x.SE)
		}
	}
}
