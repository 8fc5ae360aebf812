package raters

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// TestStatsmodelsWeightMatrix checks TableOptions.WeightMatrix ("custom")
// against statsmodels 0.13.5's cohens_kappa with a 2-D weight matrix or a
// toeplitz vector (testdata/reference_statsmodels_weights.csv, made by
// make_reference_statsmodels_weights.py): kappa, its SE, the SE under H0,
// z and the two-sided p-value, to 1e-9. statsmodels' weights d are
// disagreements, concord's agreements: w = 1 - d.
func TestStatsmodelsWeightMatrix(t *testing.T) {
	const tol = 1e-9
	n := 0
	for _, ref := range readCSV(t, "testdata/reference_statsmodels_weights.csv") {
		label := fmt.Sprintf("%s %s %s %s", ref["case"], ref["weights"], ref["wt"], ref["stat"])
		var tab [][]float64
		if err := json.Unmarshal([]byte(ref["input"]), &tab); err != nil {
			t.Fatal(label, err)
		}
		q := len(tab)
		w := make([][]float64, q)
		switch ref["wt"] {
		case "toeplitz":
			var v []float64
			if err := json.Unmarshal([]byte(ref["weights"]), &v); err != nil {
				t.Fatal(label, err)
			}
			for k := range w {
				w[k] = make([]float64, q)
				for l := range w[k] {
					w[k][l] = 1 - v[absInt(k-l)]
				}
			}
		case "matrix":
			if err := json.Unmarshal([]byte(ref["weights"]), &w); err != nil {
				t.Fatal(label, err)
			}
			for k := range w {
				for l := range w[k] {
					w[k][l] = 1 - w[k][l]
				}
			}
		default:
			t.Fatalf("%s: unknown wt", label)
		}
		rep, err := AnalyzeTable(tab, TableOptions{CI: CINormal, WeightMatrix: w})
		if err != nil {
			t.Fatal(label, err)
		}
		set, ok := rep.Weighted[CustomWeightsName]
		if !ok || set.CohenKappa == nil {
			t.Fatalf("%s: no custom weighted Cohen's kappa", label)
		}
		got, want := smStat(t, set.CohenKappa, ref["stat"]), parseF(t, ref["value"])
		if math.Abs(got-want) > tol {
			t.Errorf("%s: got %.12g, want %.12g", label, got, want)
		}
		n++
	}
	if n != 50 {
		t.Errorf("%d reference values, want 50", n)
	}
}

// TestWeightMatrixMatchesNamed checks that a custom matrix equal to a named
// weighting gives the same weighted coefficients, on tables and counts.
func TestWeightMatrixMatchesNamed(t *testing.T) {
	tab := [][]float64{{0, 4, 1}, {0, 8, 0}, {0, 1, 5}}
	for _, tc := range []struct {
		name string
		w    Weights
	}{{"linear", LinearWeights}, {"quadratic", QuadraticWeights}, {"ordinal", OrdinalWeights}} {
		wm, err := newWeightMat(tc.w, []float64{1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		m := make([][]float64, 3)
		for k := range m {
			m[k] = make([]float64, 3)
			for l := range m[k] {
				m[k][l] = wm.at(k, l)
			}
		}
		for _, analyze := range []struct {
			kind string
			f    func([][]float64, TableOptions) (*Report, error)
		}{{"table", AnalyzeTable}, {"counts", AnalyzeCounts}} {
			rep, err := analyze.f(tab, TableOptions{Weights: []Weights{tc.w}, WeightMatrix: m})
			if err != nil {
				t.Fatal(err)
			}
			a, b := rep.Weighted[tc.name], rep.Weighted[CustomWeightsName]
			for _, p := range []struct {
				coef string
				x, y Estimate
			}{{"gwet", a.GwetAC2, b.GwetAC2}, {"bp", a.BrennanPrediger, b.BrennanPrediger}, {"alpha", a.KrippendorffAlpha, b.KrippendorffAlpha}, {"pa", a.PercentAgreement, b.PercentAgreement}} {
				if math.Abs(p.x.Value-p.y.Value) > 1e-12 || math.Abs(p.x.SE-p.y.SE) > 1e-12 {
					t.Errorf("%s %s %s: custom %v (SE %v), named %v (SE %v)", analyze.kind, tc.name, p.coef, p.y.Value, p.y.SE, p.x.Value, p.x.SE)
				}
			}
		}
	}
}

// TestWeightMatrixPanics checks that malformed matrices are caller bugs.
func TestWeightMatrixPanics(t *testing.T) {
	tab := [][]float64{{1, 2}, {3, 4}}
	for _, tc := range []struct {
		name string
		m    [][]float64
	}{
		{"rows", [][]float64{{1, 0}}},
		{"cols", [][]float64{{1, 0}, {0}}},
		{"diag", [][]float64{{1, 0}, {0, 0.5}}},
		{"asym", [][]float64{{1, 0.2}, {0.3, 1}}},
		{"nan", [][]float64{{1, math.NaN()}, {math.NaN(), 1}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			_, _ = AnalyzeTable(tab, TableOptions{WeightMatrix: tc.m})
		}()
	}
}
