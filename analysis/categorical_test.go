package analysis

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"concord/annotations"
)

// TestCategorical: a categorical column becomes one-hot indicators that the
// ARD kernel reads (and standardisation leaves 0 or 1), so that the robust
// classifier learns a class that depends on the category; new items are
// predicted from their category, an unseen one with every indicator 0, and
// an item without a value is refused naming the column.
func TestCategorical(t *testing.T) {
	sc, err := annotations.ParseScheme("binary:no,yes,pos=yes")
	if err != nil {
		t.Fatal(err)
	}
	ds := &annotations.Dataset{Scheme: sc}
	groups := []string{"north", "south", "east"}
	for i := 0; i < 45; i++ {
		g := groups[i%3]
		id := fmt.Sprintf("i%d", i)
		ds.Items = append(ds.Items, annotations.Item{ID: id, Covariates: map[string]float64{"x": float64(i%7) - 3}, Attrs: map[string]string{"group": g}})
		y := "no"
		if g == "north" {
			y = "yes"
		}
		ds.Labels = append(ds.Labels, annotations.Label{Item: id, Rater: "r", Value: y})
	}
	spec := FitSpec{Model: ModelRobust, Kernel: "ard+const", Categorical: []string{"group"}, Standardize: true, Seed: 1}
	res, err := Fit(context.Background(), ds, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	ft := res.Features
	want := []string{"group=east", "group=north", "group=south", "x"}
	if ft == nil || !slices.Equal(ft.Covariates, want) || !slices.Equal(ft.Categorical, []string{"group"}) {
		t.Fatalf("features: %+v, want covariates %v", ft, want)
	}
	for i, row := range ft.X {
		for j, v := range row[:3] {
			if v != 0 && v != 1 {
				t.Fatalf("item %d indicator %s = %v after standardisation", i, want[j], v)
			}
		}
	}
	for _, it := range res.Items {
		if want := map[bool]string{true: "yes", false: "no"}[it.Labels["r"] == "yes"]; it.Class != want {
			t.Errorf("item %s: class %s, labelled %s", it.ID, it.Class, it.Labels["r"])
		}
	}
	p, err := NewPredictor(res)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := p.Predict([]annotations.Item{
		{ID: "n", Covariates: map[string]float64{"x": 0}, Attrs: map[string]string{"group": "north"}},
		{ID: "s", Covariates: map[string]float64{"x": 0}, Attrs: map[string]string{"group": "south"}},
		{ID: "w", Covariates: map[string]float64{"x": 0}, Attrs: map[string]string{"group": "west"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if q := pr.Items[0].ClassProbs["yes"]; !(q > 0.9) {
		t.Errorf("new north item: P(yes) = %v", q)
	}
	if q := pr.Items[1].ClassProbs["yes"]; !(q < 0.1) {
		t.Errorf("new south item: P(yes) = %v", q)
	}
	if q := pr.Items[2].ClassProbs["yes"]; math.IsNaN(q) {
		t.Errorf("new west item: P(yes) = %v", q)
	}
	ds.Items[4].Attrs = nil
	if _, err := Fit(context.Background(), ds, spec, nil); err == nil || annotations.ErrorMessage(err) != `categorical column "group" needs a value for every item: item "i4" has no value` {
		t.Errorf("item without a category: %v", err)
	}
}
