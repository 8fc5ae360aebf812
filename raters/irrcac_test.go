package raters

import (
	"strings"
	"testing"
)

// TestIrrCACReference checks Gwet's family of coefficients against the
// reference values that irrCAC 1.4's own functions (agree.coeff3.raw.r)
// produced for the textbook tables (testdata/gwet_irrcac_reference.csv, see
// testdata/README.md). p_a and p_e are stored to full precision, the
// coefficient and its standard error rounded to 5 decimals.
func TestIrrCACReference(t *testing.T) {
	ratings := readCSV(t, "testdata/gwet_irrcac_ratings.csv")
	byDataset := map[string][]map[string]string{}
	for _, r := range ratings {
		byDataset[r["dataset"]] = append(byDataset[r["dataset"]], r)
	}
	fleiss := readCSV(t, "testdata/fleiss1971_ratings.csv")
	refs := readCSV(t, "testdata/gwet_irrcac_reference.csv")
	checked := 0
	for _, ref := range refs {
		name := ref["dataset"]
		var rows []map[string]string
		if strings.HasPrefix(name, "fleiss_1971") {
			rows = fleiss
		} else {
			rows = byDataset[name]
		}
		if len(rows) == 0 {
			t.Fatalf("no ratings for %s", name)
		}
		want := parseF(t, ref["value"])
		if want != want { // NA in irrCAC (ratio weights with a 0 category)
			continue
		}
		if name == "cac.raw2raters" {
			rows = blanksAsCategory(rows)
		}
		rt, _, _, _ := longTable(rows, "item_id", "rater_id", "label")
		w, err := ParseWeights(ref["weights"])
		if err != nil {
			t.Fatal(err)
		}
		o := CoefOptions{Weights: w}
		var got Estimate
		switch ref["coefficient"] {
		case "Percent Agreement":
			got, err = PercentAgreement(rt, o)
		case "Fleiss' Kappa":
			got, err = FleissKappa(rt, o)
		case "Conger's Kappa":
			got, err = CongerKappa(rt, o)
		case "AC1", "AC2":
			got, err = GwetAC(rt, o)
		case "Brennan-Prediger":
			got, err = BrennanPrediger(rt, o)
		case "Krippendorff's Alpha":
			got, err = KrippendorffAlphaWeights(rt, o)
		default:
			t.Fatalf("unknown coefficient %q", ref["coefficient"])
		}
		if err != nil {
			t.Fatalf("%s %s %s: %v", name, ref["coefficient"], ref["weights"], err)
		}
		label := name + " / " + ref["coefficient"] + " / " + ref["weights"]
		pa, pe, se := parseF(t, ref["pa"]), parseF(t, ref["pe"]), parseF(t, ref["se"])
		if !near(got.Pa, pa, 1e-12) {
			t.Errorf("%s: pa = %.15g, want %.15g", label, got.Pa, pa)
		}
		if !near(got.Pe, pe, 1e-12) {
			t.Errorf("%s: pe = %.15g, want %.15g", label, got.Pe, pe)
		}
		// The coefficient from the full-precision pa and pe, and the
		// rounded published value.
		exact := (pa - pe) / (1 - pe)
		if !near(got.Value, exact, 1e-12) {
			t.Errorf("%s: value = %.15g, want %.15g", label, got.Value, exact)
		}
		if !near(got.Value, want, 5e-6) {
			t.Errorf("%s: value = %.7f, irrCAC %.5f", label, got.Value, want)
		}
		if !near(got.SE, se, 5e-6+1e-12) {
			t.Errorf("%s: se = %.7f, irrCAC %.5f", label, got.SE, se)
		}
		checked++
	}
	if checked < 100 {
		t.Errorf("checked only %d reference values", checked)
	}
}

// blanksAsCategory adds the two empty cells of cac.raw2raters (items 9 and
// 11) as a category of their own. The reference values in
// gwet_irrcac_reference.csv were made from a copy of the table in which the
// blanks were read as a label (irrCAC then counts 12 items with two ratings
// and q = 4 categories: p_e(BP) = 1/4, p_a = 8/12); every one of its six
// values is reproduced exactly with this encoding. The same table with the
// blanks as missing ratings is checked in TestRMissingData.
func blanksAsCategory(rows []map[string]string) []map[string]string {
	out := append([]map[string]string(nil), rows...)
	out = append(out,
		map[string]string{"item_id": "9", "rater_id": "rater2", "label": "(blank)"},
		map[string]string{"item_id": "11", "rater_id": "rater1", "label": "(blank)"})
	return out
}
