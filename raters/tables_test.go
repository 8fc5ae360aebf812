package raters

import (
	"math"
	"strconv"
	"testing"

	"concord/internal/testutil"
)

// readMatrix reads a CSV with a header row and a label column into its
// numbers.
func readMatrix(t *testing.T, path string) [][]float64 {
	t.Helper()
	var m [][]float64
	for _, rec := range testutil.ReadCSV(t, path)[1:] {
		var row []float64
		for _, s := range rec[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(path, err)
			}
			row = append(row, v)
		}
		m = append(m, row)
	}
	return m
}

// TestIrrCACTables checks AnalyzeTable and AnalyzeCounts under every
// weighting against irrCAC 1.0's own table and distribution functions
// (kappa2.table, scott2.table, gwet.ac1.table, bp2.table, krippen2.table,
// pa2.table; fleiss.kappa.dist, gwet.ac1.dist, bp.coeff.dist,
// krippen.alpha.dist, pa.coeff.dist) on irrCAC's example tables
// (testdata/reference_irrcac_tables.csv, made by
// make_reference_irrcac_tables.R): value and SE to 1e-12, the t interval
// to irrCAC's 3 printed decimals, the p-value to its 4 significant
// digits (irrCAC's 2(1 - F_t(c/SE)) is concord's two-sided one for
// positive coefficients; the negative ones are skipped).
func TestIrrCACTables(t *testing.T) {
	reports := map[string]*Report{}
	get := func(input, weights string) *Report {
		key := input + "/" + weights
		if rep, ok := reports[key]; ok {
			return rep
		}
		w, err := ParseWeights(weights)
		if err != nil {
			t.Fatal(err)
		}
		o := TableOptions{Weights: []Weights{w}}
		m := readMatrix(t, "testdata/"+input)
		analyze := AnalyzeTable
		if input == "irrcac_distrib.6raters.csv" || input == "irrcac_cac.dist4cat.csv" {
			analyze = AnalyzeCounts
		}
		rep, err := analyze(m, o)
		if err != nil {
			t.Fatal(key, err)
		}
		reports[key] = rep
		return rep
	}
	n := 0
	for _, ref := range readCSV(t, "testdata/reference_irrcac_tables.csv") {
		label := ref["input"] + " " + ref["coefficient"] + " " + ref["weights"]
		s := get(ref["input"], ref["weights"]).Weighted[ref["weights"]]
		e := s.coefficient(ref["coefficient"])
		if e == nil {
			t.Fatalf("%s: unknown coefficient", label)
		}
		value, se := parseF(t, ref["value"]), parseF(t, ref["se"])
		if !near(e.Value, value, 1e-12) || !near(e.SE, se, 1e-12) {
			t.Errorf("%s: got %.15g (SE %.15g), irrCAC %.15g (SE %.15g)", label, e.Value, e.SE, value, se)
		}
		if lo, hi := parseF(t, ref["lcb"]), parseF(t, ref["ucb"]); !near(e.CILow, lo, 5e-4+1e-12) || !near(e.CIHigh, hi, 5e-4+1e-12) {
			t.Errorf("%s: interval [%.5f, %.5f], irrCAC [%g, %g]", label, e.CILow, e.CIHigh, lo, hi)
		}
		if p := parseF(t, ref["p_value"]); value > 0 && math.Abs(e.P-p) > 5e-4*p+1e-15 {
			t.Errorf("%s: p-value %.6g, irrCAC %.6g", label, e.P, p)
		}
		n++
	}
	if n != 176 {
		t.Errorf("%d reference rows, want 176", n)
	}
}

// coefficient is the weighted coefficient named as in the reference
// tables (cohen_kappa, gwet for AC2, ...), nil for another name.
func (s WeightedSet) coefficient(name string) *Estimate {
	switch name {
	case "cohen_kappa":
		return s.CohenKappa
	case "scott_pi":
		return s.ScottPi
	}
	return named(s.Coefficients(), name, "gwet_ac2")
}

// named is the coefficient of cs under key, the reference tables' "gwet"
// under gwetKey; nil when there is none.
func named(cs []NamedEstimate, key, gwetKey string) *Estimate {
	if key == "gwet" {
		key = gwetKey
	}
	for _, c := range cs {
		if c.Key == key {
			return c.Estimate
		}
	}
	return nil
}
