package raters

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestIrrCACPopulation checks the finite-population correction
// (Options.Population, TableOptions.Population) against irrCAC 1.0's own
// raw-data, table and distribution functions run with their argument N
// (testdata/reference_irrcac_population.csv, made by
// make_reference_irrcac_population.R at full precision) on irrCAC's example
// data, at N = n (f = 1), 2n + 3 and 1000: value, SE and interval to
// 1e-12; the p-value to 1e-12 against the distribution functions' (irrCAC
// 1.0, two-sided 2(1 - F_t(c/SE)), checked for positive coefficients) and
// twice the raw functions' (irrCAC 1.4, one-sided 1 - F_t(c/SE)), to
// the table functions' 4 printed significant digits.
func TestIrrCACPopulation(t *testing.T) {
	byDataset := map[string][]map[string]string{}
	for _, r := range readCSV(t, "testdata/gwet_irrcac_ratings.csv") {
		byDataset[r["dataset"]] = append(byDataset[r["dataset"]], r)
	}
	reports := map[string]*Report{}
	get := func(input, weights string, pop int) *Report {
		key := input + "/" + weights + "/" + strconv.Itoa(pop)
		if rep, ok := reports[key]; ok {
			return rep
		}
		w, err := ParseWeights(weights)
		if err != nil {
			t.Fatal(err)
		}
		var rep *Report
		if strings.HasSuffix(input, ".csv") {
			m := readMatrix(t, "testdata/"+input)
			analyze := AnalyzeTable
			if input == "irrcac_distrib.6raters.csv" || input == "irrcac_cac.dist4cat.csv" {
				analyze = AnalyzeCounts
			}
			rep, err = analyze(m, TableOptions{Weights: []Weights{w}, Population: pop})
		} else {
			rows := byDataset[input]
			if len(rows) == 0 {
				t.Fatalf("no ratings for %s", input)
			}
			if input == "cac.raw2raters" {
				rows = blanksAsCategory(rows)
			}
			r, _, _, _ := longTable(rows, "item_id", "rater_id", "label")
			o := Options{Level: Nominal, Bootstrap: -1, Only: OnlyCoefficients, Population: pop}
			if w != Unweighted {
				o.Level, o.Weights = Ordinal, []Weights{w}
			}
			rep, err = Analyze(r, o)
		}
		if err != nil {
			t.Fatal(key, err)
		}
		if rep.Population != pop {
			t.Errorf("%s: report's population %d", key, rep.Population)
		}
		reports[key] = rep
		return rep
	}
	n := 0
	for _, ref := range readCSV(t, "testdata/reference_irrcac_population.csv") {
		label := ref["input"] + " " + ref["coefficient"] + " " + ref["weights"] + " N=" + ref["population"]
		pop, err := strconv.Atoi(ref["population"])
		if err != nil {
			t.Fatal(label, err)
		}
		rep := get(ref["input"], ref["weights"], pop)
		var e *Estimate
		if s, ok := rep.Weighted[ref["weights"]]; ok {
			e = s.coefficient(ref["coefficient"])
		} else if ref["coefficient"] == "krippendorff_alpha" {
			k := rep.KrippendorffAlpha[NominalMetric.String()]
			e = &k
		} else {
			e = named(rep.Coefficients(), ref["coefficient"], "gwet_ac1")
		}
		if e == nil {
			t.Fatalf("%s: no such coefficient in the report", label)
		}
		const tol = 1e-12
		value, se := parseF(t, ref["value"]), parseF(t, ref["se"])
		lo, hi, p := parseF(t, ref["lcb"]), parseF(t, ref["ucb"]), parseF(t, ref["p_value"])
		if !near(e.Value, value, tol) || !near(e.SE, se, tol) {
			t.Errorf("%s: got %.15g (SE %.15g), irrCAC %.15g (SE %.15g)", label, e.Value, e.SE, value, se)
		}
		if !near(e.CILow, lo, tol) || !near(e.CIHigh, hi, tol) {
			t.Errorf("%s: interval [%.15g, %.15g], irrCAC [%.15g, %.15g]", label, e.CILow, e.CIHigh, lo, hi)
		}
		switch {
		case math.IsNaN(p):
			if !math.IsNaN(e.P) {
				t.Errorf("%s: p-value %g with SE 0", label, e.P)
			}
		case !strings.HasSuffix(ref["input"], ".csv"): // raw: one-sided
			if value < 0 {
				p = 1 - p
			}
			if !near(e.P, 2*p, tol) {
				t.Errorf("%s: p-value %.15g, twice irrCAC's one-sided %.15g", label, e.P, p)
			}
		case value <= 0:
		case ref["input"] == "irrcac_distrib.6raters.csv" || ref["input"] == "irrcac_cac.dist4cat.csv":
			if !near(e.P, p, tol) {
				t.Errorf("%s: p-value %.15g, irrCAC %.15g", label, e.P, p)
			}
		default:
			if math.Abs(e.P-p) > 5e-4*p+1e-15 {
				t.Errorf("%s: p-value %.6g, irrCAC %.4g", label, e.P, p)
			}
		}
		n++
	}
	if n != 294 {
		t.Errorf("%d reference rows, want 294", n)
	}
}

// TestPopulationTooSmall checks that a population smaller than the sample
// is an error naming both numbers, for each kind of input.
func TestPopulationTooSmall(t *testing.T) {
	rows := readCSV(t, "testdata/gwet_irrcac_ratings.csv")
	var raw []map[string]string
	for _, r := range rows {
		if r["dataset"] == "cac.raw4raters" {
			raw = append(raw, r)
		}
	}
	r, _, _, _ := longTable(raw, "item_id", "rater_id", "label")
	tab := readMatrix(t, "testdata/irrcac_cont3x3abstractors.csv")
	counts := readMatrix(t, "testdata/irrcac_distrib.6raters.csv")
	for _, c := range []struct {
		name string
		pop  int
		run  func(pop int) error
		want string
	}{
		{"ratings", 11, func(pop int) error {
			_, err := Analyze(r, Options{Bootstrap: -1, Only: OnlyCoefficients, Population: pop})
			return err
		}, "population 11 is smaller than the sample's 12 items"},
		{"table", 99, func(pop int) error {
			_, err := AnalyzeTable(tab, TableOptions{Population: pop})
			return err
		}, "population 99 is smaller than the sample's 100 subjects"},
		{"counts", 14, func(pop int) error {
			_, err := AnalyzeCounts(counts, TableOptions{Population: pop})
			return err
		}, "population 14 is smaller than the sample's 15 items with counts"},
	} {
		err := c.run(c.pop)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if err := c.run(c.pop + 1); err != nil {
			t.Errorf("%s: population %d: %v", c.name, c.pop+1, err)
		}
	}
}
