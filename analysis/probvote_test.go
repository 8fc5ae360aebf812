package analysis

import (
	"context"
	"testing"

	"concord/annotations"
	"concord/raters"
)

// TestAgreementProbMajority: Agreement passes the labels' probabilities
// in the order of the labels, so that the probability-weighted majority
// vote outvotes a hard human label only with confident models: item a (a
// human for x, models for y with p = 0.95 and 0.55: x 1 + 0.05 + 0.45 =
// 1.5 against y 0.95 + 0.55 = 1.5, a tie, x first) and item b (the models
// with p = 0.95 and 0.9: y 1.85 against x 1.15), where the plain majority
// vote says y for both.
func TestAgreementProbMajority(t *testing.T) {
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("nominal:x,y"), ModelRaters: []string{"m1", "m2"}, Labels: []annotations.Label{
		{Item: "a", Rater: "h", Value: "x"}, {Item: "a", Rater: "m1", Value: "y", Prob: 0.95}, {Item: "a", Rater: "m2", Value: "y", Prob: 0.55},
		{Item: "b", Rater: "h", Value: "x"}, {Item: "b", Rater: "m1", Value: "y", Prob: 0.95}, {Item: "b", Rater: "m2", Value: "y", Prob: 0.9},
	}}
	rep, err := Agreement(context.Background(), ds, raters.Options{Ties: raters.TieFirst})
	if err != nil {
		t.Fatal(err)
	}
	var pm *raters.Consensus
	for _, a := range rep.Aggregators {
		if a.Method == "prob_majority" {
			pm = a
		}
	}
	if pm == nil {
		t.Fatal("no probability-weighted majority vote in the report")
	}
	if a, b := pm.Items[0], pm.Items[1]; !a.Tie || a.Class != 0 || b.Tie || b.Class != 1 {
		t.Errorf("items %+v %+v", a, b)
	}
	// Without probabilities, no such aggregator.
	for i := range ds.Labels {
		ds.Labels[i].Prob = 0
	}
	rep, err = Agreement(context.Background(), ds, raters.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rep.Aggregators {
		if a.Method == "prob_majority" {
			t.Error("probability-weighted majority vote without probabilities")
		}
	}
}
