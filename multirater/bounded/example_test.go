package bounded_test

import (
	"context"
	"fmt"

	"concord/multirater/bounded"
)

// ExampleFit fits three raters' 0-100 slider ratings of four items: the
// consensus value of each item on the rating scale with its 95% predictive
// interval, and each rater's learnt dispersion (the third rater is erratic).
func ExampleFit() {
	d := &bounded.Data{
		ItemIDs:  []string{"a", "b", "c", "d"},
		RaterIDs: []string{"ann", "bob", "cat"},
		Lo:       0, Hi: 100,
	}
	values := [][]float64{ // per item, per rater
		{82, 78, 40},
		{55, 60, 90},
		{30, 25, 70},
		{10, 14, 50},
	}
	for i, vs := range values {
		for l, v := range vs {
			d.Ratings = append(d.Ratings, bounded.Rating{Item: i, Rater: l, Value: v})
		}
	}
	res, err := bounded.Fit(context.Background(), d, bounded.Options{Priors: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, it := range res.Items {
		fmt.Printf("item %s: consensus %.0f (95%% predictive %.0f to %.0f)\n", it.ID, it.Value.Mean, it.Value.Q025, it.Value.Q975)
	}
	for _, r := range res.Raters {
		fmt.Printf("rater %s: nu %.0f\n", r.ID, r.Dispersion.Mean)
	}
	// Output:
	// item a: consensus 78 (95% predictive 61 to 91)
	// item b: consensus 59 (95% predictive 40 to 76)
	// item c: consensus 29 (95% predictive 14 to 47)
	// item d: consensus 14 (95% predictive 4 to 29)
	// rater ann: nu 38
	// rater bob: nu 53
	// rater cat: nu 2
}
