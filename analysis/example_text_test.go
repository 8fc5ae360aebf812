package analysis_test

import (
	"context"
	"fmt"
	"log"

	"concord/analysis"
	"concord/annotations"
)

// Fit the multi-rater ordinal model with the text kernel to real essays,
// then predict two essays it has not seen, from their texts alone.
func ExamplePredict() {
	s := annotations.MustParseScheme("ordinal:0..12")
	ld, err := annotations.LoadFiles("testdata/asap7_ratings.csv", annotations.LoadOptions{ItemsPath: "testdata/asap7_items.csv", Scheme: &s})
	if err != nil {
		log.Fatal(err)
	}
	// Hold out two essays: the train set keeps every other item and label.
	held := map[string]bool{"18348": true, "18889": true}
	train := &annotations.Dataset{Scheme: s}
	var newItems []annotations.Item
	for _, it := range ld.Dataset.Items {
		if held[it.ID] {
			newItems = append(newItems, it)
		} else {
			train.Items = append(train.Items, it)
		}
	}
	for _, l := range ld.Dataset.Labels {
		if !held[l.Item] {
			train.Labels = append(train.Labels, l)
		}
	}
	// The kernel defaults to "text" because the items have texts; the
	// numeric resolved_score column is not read.
	res, err := analysis.Fit(context.Background(), train, analysis.FitSpec{Engine: "gibbs", Chains: 2, Samples: 300, Burnin: 200, Seed: 1}, nil)
	if err != nil {
		log.Fatal(err)
	}
	pred, err := analysis.Predict(res, newItems)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pred.Model, pred.Kernel, len(pred.Items), "essays")
	short, long := pred.Items[0], pred.Items[1] // 18348 (resolved score 5), 18889 (24)
	fmt.Println("one-line essay scores lower:", short.Score.Mean < long.Score.Mean)
	// Output:
	// ordinal text 2 essays
	// one-line essay scores lower: true
}
