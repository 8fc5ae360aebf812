package bounded

import (
	"context"
	"math"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat"

	"concord/internal/testutil"
	"concord/multirater"
)

// snowDimension reads one dimension of Snow et al.'s affect ratings
// (testdata/snow_affect_*.csv, copied from shared/data/snow2008_affect) as
// Data on [0, 100] ([-100, 100] for valence), with the expert (gold)
// scores in item order.
func snowDimension(t testing.TB, dim string) (*Data, []float64) {
	t.Helper()
	items := testutil.ReadCSV(t, "testdata/snow_affect_items.csv")
	col := -1
	for k, h := range items[0] {
		if h == "gold_"+dim {
			col = k
		}
	}
	d := &Data{Lo: 0, Hi: 100}
	if dim == "valence" {
		d.Lo = -100
	}
	idx := map[string]int{}
	var gold []float64
	for _, r := range items[1:] {
		idx[r[0]] = len(d.ItemIDs)
		d.ItemIDs = append(d.ItemIDs, r[0])
		g, _ := strconv.ParseFloat(r[col], 64)
		gold = append(gold, g)
	}
	raters := map[string]int{}
	for _, r := range testutil.ReadCSV(t, "testdata/snow_affect_ratings.csv")[1:] {
		if r[3] != dim {
			continue
		}
		l := testutil.IndexOf(raters, &d.RaterIDs, r[1])
		v, err := strconv.ParseFloat(r[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		d.Ratings = append(d.Ratings, Rating{Item: idx[r[0]], Rater: l, Value: v})
	}
	return d, gold
}

// TestSnowValence fits Snow et al.'s valence ratings (100 headlines, 38
// raters, 10 ratings each, 7.7% at +-100) with the default settings and
// checks the fit document: every value and interval on the rating scale,
// the consensus correlated with the expert scores (0.77 at this commit, the
// raters' mean 0.85: docs/scripts/snow prints the whole table), dispersions
// with intervals, flags least probable first.
func TestSnowValence(t *testing.T) {
	d, gold := snowDimension(t, "valence")
	res, err := Fit(context.Background(), d, Options{Priors: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Model.Output != multirater.OutputValues || res.Model.Likelihood != Beta || *res.Model.Lo != -100 || *res.Model.Hi != 100 {
		t.Fatalf("model settings %+v", res.Model)
	}
	cons := make([]float64, len(res.Items))
	for i, it := range res.Items {
		v := it.Value
		if v == nil || !(v.Q025 >= -100 && v.Q025 <= v.Q50 && v.Q50 <= v.Q975 && v.Q975 <= 100 && v.Mean > v.Q025 && v.Mean < v.Q975) {
			t.Fatalf("item %s: value %+v", it.ID, v)
		}
		cons[i] = v.Mean
	}
	if r := stat.Correlation(cons, gold, nil); r < 0.7 || math.IsNaN(r) {
		t.Errorf("consensus correlates %.4f with the expert scores", r)
	}
	for _, r := range res.Raters {
		if r.Dispersion == nil || !(r.Dispersion.Q025 < r.Dispersion.Mean && r.Dispersion.Mean < r.Dispersion.Q975) {
			t.Errorf("rater %s: dispersion %+v", r.ID, r.Dispersion)
		}
	}
	for i := 1; i < len(res.Flags); i++ {
		if res.Flags[i].Prob < res.Flags[i-1].Prob {
			t.Fatalf("flags not sorted")
		}
	}
	if len(res.Flags) == 0 || len(res.Flags) > 100 {
		t.Errorf("%d flags of 1000 ratings at 0.05", len(res.Flags))
	}
}
