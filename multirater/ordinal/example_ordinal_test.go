package ordinal_test

import (
	"context"
	"fmt"
	"log"
	"sort"

	"concord/multirater"
	"concord/multirater/mcmc"
	"concord/multirater/ordinal"
)

func ExampleFit() {
	// Four raters grade twelve essays on a scale of 1 to 4 ("-" is not
	// graded). Raters a and b agree closely, c is lenient and d erratic;
	// essay e12 has not been graded yet and is predicted.
	data := &ordinal.Data{
		ItemIDs:  []string{"e01", "e02", "e03", "e04", "e05", "e06", "e07", "e08", "e09", "e10", "e11", "e12"},
		RaterIDs: []string{"a", "b", "c", "d"},
		Levels:   []string{"1", "2", "3", "4"},
	}
	grades := []string{ // one column per rater
		"1113", "1121", "1221", "2224", "2231",
		"2232", "3331", "3342", "3442", "4444", "444-", "----",
	}
	for i, g := range grades {
		for r, c := range g {
			if c != '-' {
				data.Ratings = append(data.Ratings, multirater.Rating{Item: i, Rater: r, Level: int(c - '1')})
			}
		}
	}
	res, err := ordinal.Fit(context.Background(), data, ordinal.Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 2000, Seed: 1}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("converged:", res.Diagnostics.Converged)
	items := append([]multirater.ItemResult(nil), res.Items...)
	sort.Slice(items, func(i, j int) bool { return items[i].Rank.Mean < items[j].Rank.Mean })
	for _, it := range items[:3] {
		fmt.Printf("%s: consensus grade %s (%d labels), rank interval %.0f-%.0f\n", it.ID, it.Grade, it.NLabels, it.Rank.Q025, it.Rank.Q975)
	}
	e12 := res.Items[11]
	fmt.Printf("%s: %d labels, score sd %.1f (its prior's)\n", e12.ID, e12.NLabels, e12.Score.SD)
	raters := append([]multirater.RaterResult(nil), res.Raters...)
	sort.Slice(raters, func(i, j int) bool { return raters[i].Precision.Mean > raters[j].Precision.Mean })
	for _, r := range raters {
		fmt.Printf("rater %s: precision %.1f, severity %+.1f\n", r.ID, r.Precision.Mean, r.Severity)
	}
	// Output:
	// converged: true
	// e10: consensus grade 4 (4 labels), rank interval 1-4
	// e11: consensus grade 4 (3 labels), rank interval 1-4
	// e09: consensus grade 4 (4 labels), rank interval 1-6
	// e12: 0 labels, score sd 1.0 (its prior's)
	// rater a: precision 2.3, severity +0.2
	// rater b: precision 2.2, severity -0.0
	// rater c: precision 2.0, severity -0.5
	// rater d: precision 0.4, severity +0.3
}
