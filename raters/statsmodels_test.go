package raters

import (
	"encoding/json"
	"fmt"
	"testing"
)

// smStat picks the statsmodels statistic stat of an estimate.
func smStat(t *testing.T, e *Estimate, stat string) float64 {
	t.Helper()
	switch stat {
	case "kappa", "fleiss", "randolph":
		return e.Value
	case "std_kappa":
		return e.SE
	case "kappa_low":
		return e.CILow
	case "kappa_upp":
		return e.CIHigh
	case "std_kappa0":
		return e.SENull
	case "z_value":
		return e.Z
	case "pvalue_two_sided":
		return e.P
	}
	t.Fatalf("unknown statsmodels statistic %q", stat)
	return 0
}

// TestStatsmodelsReference checks the table input (AnalyzeTable), the
// counts input (AnalyzeCounts) and the raw-label pairs (Analyze), each
// with CINormal, against statsmodels 0.13.5's cohens_kappa and
// fleiss_kappa on its own test suite's tables
// (testdata/reference_statsmodels.csv, made by
// make_reference_statsmodels.py): kappa, its SE, the normal 95% interval,
// the SE under H0, z and the two-sided p-value, to 1e-9 (statsmodels'
// tests use 4 decimals against SAS's printout).
func TestStatsmodelsReference(t *testing.T) {
	weights := map[string][]Weights{"unweighted": nil, "linear": {LinearWeights}, "quadratic": {QuadraticWeights}}
	rows, _, raterIDs, _ := longTable(readCSV(t, "testdata/fleiss1971_ratings.csv"), "item_id", "rater_id", "label")
	diag, err := Analyze(rows, Options{Bootstrap: -1, CI: CINormal, Pairs: PairOptions{All: true}, RaterNames: raterIDs})
	if err != nil {
		t.Fatal(err)
	}
	pair := func(a, b string) *Estimate {
		for i := range diag.CohenKappa {
			p := &diag.CohenKappa[i]
			if (p.A == a && p.B == b) || (p.A == b && p.B == a) {
				return p.Unweighted
			}
		}
		t.Fatalf("no pair %s-%s", a, b)
		return nil
	}
	n := 0
	for _, ref := range readCSV(t, "testdata/reference_statsmodels.csv") {
		label := fmt.Sprintf("%s %s %s %s", ref["case"], ref["kind"], ref["weights"], ref["stat"])
		want := parseF(t, ref["value"])
		var e *Estimate
		switch ref["kind"] {
		case "table", "counts":
			var in [][]float64
			if err := json.Unmarshal([]byte(ref["input"]), &in); err != nil {
				t.Fatal(label, err)
			}
			o := TableOptions{CI: CINormal, Weights: weights[ref["weights"]]}
			analyze := AnalyzeTable
			if ref["kind"] == "counts" {
				analyze = AnalyzeCounts
			}
			rep, err := analyze(in, o)
			if err != nil {
				t.Fatal(label, err)
			}
			switch {
			case ref["kind"] == "counts" && ref["stat"] == "randolph":
				e = rep.RandolphKappa
			case ref["kind"] == "counts":
				e = rep.FleissKappa
			case ref["weights"] == "unweighted":
				e = rep.CohenKappa[0].Unweighted
			default:
				e = rep.Weighted[ref["weights"]].CohenKappa
			}
		case "pairs":
			var ids []int
			if err := json.Unmarshal([]byte(ref["input"]), &ids); err != nil {
				t.Fatal(label, err)
			}
			e = pair(fmt.Sprint(ids[0]), fmt.Sprint(ids[1]))
			label += fmt.Sprint(ids)
		default:
			t.Fatalf("%s: unknown kind", label)
		}
		if got := smStat(t, e, ref["stat"]); !near(got, want, 1e-9) {
			t.Errorf("%s: got %.12g, statsmodels %.12g", label, got, want)
		}
		n++
	}
	if n < 150 {
		t.Errorf("only %d reference numbers", n)
	}
}
