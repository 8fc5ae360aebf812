package ordinal_test

import (
	"context"
	"fmt"

	"concord/multirater"
	"concord/multirater/ordinal"
)

// ExampleFitDeterministic fits the ordinal model by expectation propagation
// to six essays graded 0-2 by three raters, one of whom (c) grades one
// level higher than the others, with every rater's thresholds and noise
// learnt by maximising the evidence (under the Gibbs model's priors).
func ExampleFitDeterministic() {
	d := &ordinal.Data{
		ItemIDs:  []string{"e1", "e2", "e3", "e4", "e5", "e6"},
		RaterIDs: []string{"a", "b", "c"},
		Levels:   []string{"0", "1", "2"},
	}
	grades := [][3]int{{0, 0, 1}, {0, 1, 1}, {1, 1, 2}, {1, 1, 2}, {2, 1, 2}, {2, 2, 2}}
	for i, g := range grades {
		for l, k := range g {
			d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: l, Level: k})
		}
	}
	res, err := ordinal.FitDeterministic(context.Background(), d, ordinal.DetOptions{Priors: true, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("engine:", res.Model.Engine, "converged:", res.Diagnostics.Converged)
	for _, it := range res.Items {
		fmt.Printf("%s score %5.2f grade %s\n", it.ID, it.Score.Mean, it.Grade)
	}
	for _, r := range res.Raters {
		fmt.Printf("rater %s severity %+.2f\n", r.ID, r.Severity)
	}
	// Output:
	// engine: ep converged: true
	// e1 score -1.01 grade 0
	// e2 score -0.50 grade 1
	// e3 score  0.30 grade 2
	// e4 score  0.30 grade 2
	// e5 score  0.69 grade 2
	// e6 score  1.32 grade 2
	// rater a severity +0.31
	// rater b severity +0.31
	// rater c severity -0.61
}
