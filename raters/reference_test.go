package raters

import (
	"fmt"
	"testing"
)

// referenceTables returns the tables of make_reference.py by name.
func referenceTables(t *testing.T) map[string]struct {
	r      *Ratings
	raters []string
} {
	out := map[string]struct {
		r      *Ratings
		raters []string
	}{}
	add := func(name string, rows []map[string]string, continuous bool) {
		if continuous {
			r, raters := continuousTable(t, rows)
			out[name] = struct {
				r      *Ratings
				raters []string
			}{r, raters}
			return
		}
		r, _, raters, _ := longTable(rows, "item_id", "rater_id", "label")
		out[name] = struct {
			r      *Ratings
			raters []string
		}{r, raters}
	}
	var kripp []map[string]string
	for _, r := range readCSV(t, "testdata/gwet_irrcac_ratings.csv") {
		if r["dataset"] == "cac.raw4raters" {
			kripp = append(kripp, r)
		}
	}
	add("kripp2011", kripp, false)
	add("fleiss1971", readCSV(t, "testdata/fleiss1971_ratings.csv"), false)
	add("face4", readCSV(t, "testdata/face4_ratings.csv"), false)
	add("sirt1_k1", readCSV(t, "testdata/sirt1_k1_ratings.csv"), false)
	add("anger", readCSV(t, "testdata/affect_anger_ratings.csv"), true)
	return out
}

// TestPythonReference checks the coefficients against NLTK, statsmodels and
// scikit-learn (testdata/reference_python.csv, made by make_reference.py) on
// nominal, ordinal and bounded data with missing ratings, to 1e-9.
func TestPythonReference(t *testing.T) {
	tables := referenceTables(t)
	metrics := map[string]Metric{"nominal": NominalMetric, "ordinal": OrdinalMetric, "interval": IntervalMetric, "ratio": RatioMetric}
	counts := map[string]int{}
	for _, ref := range readCSV(t, "testdata/reference_python.csv") {
		tb, ok := tables[ref["dataset"]]
		if !ok {
			t.Fatalf("unknown dataset %q", ref["dataset"])
		}
		label := fmt.Sprintf("%s %s %s %s-%s (%s)", ref["dataset"], ref["coefficient"], ref["variant"], ref["a"], ref["b"], ref["tool"])
		want, wantSE := parseF(t, ref["value"]), parseF(t, ref["se"])
		var got Estimate
		var err error
		switch ref["coefficient"] {
		case "krippendorff_alpha":
			got, err = KrippendorffAlpha(tb.r, metrics[ref["variant"]], CoefOptions{})
		case "fleiss_kappa":
			got, err = FleissKappa(tb.r, CoefOptions{})
		case "randolph_kappa":
			got, err = RandolphKappa(tb.r, CoefOptions{})
		case "scott_pi":
			got, err = ScottPi(tb.r, CoefOptions{})
		case "fleiss_category_kappa":
			// Categories of fleiss1971 are 1..5 in order.
			got = FleissCategoryKappas(tb.r, CoefOptions{})[int(parseF(t, ref["variant"]))-1]
		case "percent_agreement":
			got, err = PercentAgreement(tb.r, CoefOptions{})
		case "cohen_kappa":
			a, b := indexOf(tb.raters, ref["a"]), indexOf(tb.raters, ref["b"])
			if a < 0 || b < 0 {
				t.Fatalf("%s: unknown rater", label)
			}
			w, _ := ParseWeights(ref["variant"])
			got, err = CohenKappa(tb.r, a, b, CoefOptions{Weights: w})
		default:
			t.Fatalf("unknown coefficient %q", ref["coefficient"])
		}
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if !near(got.Value, want, 1e-9) {
			t.Errorf("%s: %.12g, want %.12g", label, got.Value, want)
		}
		if wantSE == wantSE && !near(got.SE, wantSE, 1e-9) {
			t.Errorf("%s: se %.12g, want %.12g", label, got.SE, wantSE)
		}
		counts[ref["dataset"]]++
	}
	t.Logf("reference values checked per dataset: %v", counts)
	for _, ds := range []string{"kripp2011", "fleiss1971", "face4", "sirt1_k1", "anger"} {
		if counts[ds] == 0 {
			t.Errorf("no reference values checked for %s", ds)
		}
	}
}

// TestKrippendorff2011 checks the four alphas that Krippendorff (2011,
// "Computing Krippendorff's Alpha-Reliability", sec. E) publishes for his
// 4 observers x 12 units example with missing values.
func TestKrippendorff2011(t *testing.T) {
	r := referenceTables(t)["kripp2011"].r
	for _, c := range []struct {
		m    Metric
		want float64
	}{{NominalMetric, 0.743}, {OrdinalMetric, 0.815}, {IntervalMetric, 0.849}, {RatioMetric, 0.797}} {
		got, err := KrippendorffAlpha(r, c.m, CoefOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !near(got.Value, c.want, 0.0005) {
			t.Errorf("%v alpha = %.5f, published %.3f", c.m, got.Value, c.want)
		}
	}
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}
