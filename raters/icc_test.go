package raters

import (
	"fmt"
	"math"
	"testing"
)

// TestICCPsych checks ICC against R psych::ICC 2.2.9 (testdata/reference_icc.csv,
// made by make_reference_icc.R): the default REML fit (lmer = TRUE, every
// rating, missing ones too) and the classical ANOVA on the complete rows
// (lmer = FALSE). The ANOVA rows are closed forms on both sides and agree to
// 1e-9. For the REML rows the script runs lme4 with tight optimiser
// tolerances (lme4's defaults, ftol_abs = xtol_abs = 1e-8, stop where the
// REML criterion is flat, up to 7e-6 from the optimum in the ICCs); they
// agree to 1e-7, and our REML criterion must be no worse than lme4's.
func TestICCPsych(t *testing.T) {
	tables := referenceTables(t)
	all := readCSV(t, "testdata/gwet_irrcac_ratings.csv")
	for _, name := range []string{"x.raw10x4", "cac.raw5obser"} {
		var rows []map[string]string
		for _, r := range all {
			if r["dataset"] == name {
				rows = append(rows, r)
			}
		}
		r, _, raters, _ := longTable(rows, "item_id", "rater_id", "label")
		tables[name] = struct {
			r      *Ratings
			raters []string
		}{r, raters}
	}
	// ICC on the anger table must use the values: it is continuous already.
	results := map[string]*ICCResult{}
	// The F tests (testdata/reference_icc_ftest.csv: psych::ICC's
	// definitions on psych's mean squares, p by scipy's F distribution).
	ftests := map[string]map[string]string{}
	for _, ref := range readCSV(t, "testdata/reference_icc_ftest.csv") {
		ftests[ref["dataset"]+"/"+ref["method"]+" "+ref["type"]] = ref
	}
	checked := 0
	for _, ref := range readCSV(t, "testdata/reference_icc.csv") {
		key := ref["dataset"] + "/" + ref["method"]
		res, ok := results[key]
		if !ok {
			tb, found := tables[ref["dataset"]]
			if !found {
				t.Fatalf("unknown dataset %q", ref["dataset"])
			}
			var err error
			res, err = ICC(tb.r, ICCOptions{CompleteCasesOnly: ref["method"] == "anova"})
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			results[key] = res
		}
		tol := 1e-9 // the ANOVA rows: closed forms on both sides
		if ref["method"] == "reml" {
			tol = 1e-7
			// Where the fit needed the optimiser, its optimum must be at
			// least as good as lme4's.
			if crit := parseF(t, ref["remlcrit"]); res.REMLCriterion == res.REMLCriterion && res.REMLCriterion > crit+1e-9 {
				t.Errorf("%s: REML criterion %.12f, lme4 reached %.12f", key, res.REMLCriterion, crit)
			}
		}
		if res.N != int(parseF(t, ref["n"])) || res.K != int(parseF(t, ref["k"])) {
			t.Errorf("%s: n, k = %d, %d, want %s, %s", key, res.N, res.K, ref["n"], ref["k"])
		}
		e := map[string]Estimate{"ICC1": res.ICC1, "ICC2": res.ICC2, "ICC3": res.ICC3,
			"ICC1k": res.ICC1k, "ICC2k": res.ICC2k, "ICC3k": res.ICC3k}[ref["type"]]
		label := fmt.Sprintf("%s %s", key, ref["type"])
		msTol := tol
		for _, c := range []struct {
			name      string
			got, want float64
			tol       float64
		}{
			{"icc", e.Value, parseF(t, ref["icc"]), tol},
			{"lower", e.CILow, parseF(t, ref["lower"]), tol},
			{"upper", e.CIHigh, parseF(t, ref["upper"]), tol},
			{"MSB", res.MSB / res.MSB, parseF(t, ref["msb"]) / res.MSB, msTol},
			{"MSE", res.MSE / res.MSB, parseF(t, ref["mse"]) / res.MSB, msTol},
			{"MSW", res.MSW / res.MSB, parseF(t, ref["msw"]) / res.MSB, msTol},
		} {
			if !near(c.got, c.want, c.tol) {
				t.Errorf("%s %s: %.10g, psych %.10g", label, c.name, c.got, c.want)
			}
		}
		// F follows the mean squares (to their tolerance, relative);
		// p, a steep function of F, to 100 times that, relative.
		fr, ok := ftests[label]
		if !ok {
			t.Fatalf("%s: no F test reference", label)
		}
		ft := res.FTests()[ref["type"]]
		for _, c := range []struct {
			name      string
			got, want float64
			rtol      float64
		}{{"F", float64(ft.F), parseF(t, fr["f"]), tol}, {"df1", float64(ft.DF1), parseF(t, fr["df1"]), 0}, {"df2", float64(ft.DF2), parseF(t, fr["df2"]), 0},
			{"p", float64(ft.P), parseF(t, fr["p"]), 100 * tol}} {
			if !(math.Abs(c.got-c.want) <= c.rtol*math.Abs(c.want)) {
				t.Errorf("%s %s: %.10g, psych/scipy %.10g", label, c.name, c.got, c.want)
			}
		}
		checked++
	}
	if checked != 60 {
		t.Errorf("checked %d rows, want 60", checked)
	}
}
