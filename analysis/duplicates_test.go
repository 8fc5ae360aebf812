package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"concord/annotations"
	"concord/multirater"
	"concord/raters"
)

// contested builds a dataset where three raters agree on ten items and
// item "x" gets hi from rater0 and lo from rater1; with repeat, rater0
// gives x its hi label three times (repeated labels kept as observations).
func contested(scheme string, levels []string, lo, hi string, repeat bool) *annotations.Dataset {
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme(scheme)}
	for i := 0; i < 10; i++ {
		v := levels[i%len(levels)]
		for r := 0; r < 3; r++ {
			ds.Labels = append(ds.Labels, annotations.Label{Item: fmt.Sprint("i", i), Rater: fmt.Sprint("rater", r), Value: v})
		}
	}
	n := 1
	if repeat {
		n = 3
	}
	for k := 0; k < n; k++ {
		ds.Labels = append(ds.Labels, annotations.Label{Item: "x", Rater: "rater0", Value: hi})
	}
	ds.Labels = append(ds.Labels, annotations.Label{Item: "x", Rater: "rater1", Value: lo})
	return ds
}

// TestFitRepeatedLabels fits every model and engine to a dataset with
// repeated labels (--duplicates keep): each repeat is one more likelihood
// term, so repeating rater0's label of the contested item "x" moves the
// consensus of x towards it, and the counts include the repeats.
func TestFitRepeatedLabels(t *testing.T) {
	type probe func(it multirater.ItemResult) float64
	score := func(it multirater.ItemResult) float64 { return it.Score.Mean }
	for _, tc := range []struct {
		name          string
		scheme        string
		levels        []string
		lo, hi        string
		spec          FitSpec
		towardsHi     probe
		minDifference float64
	}{
		{"classification gibbs", "binary:no,yes,pos=yes", []string{"no", "yes"}, "no", "yes",
			FitSpec{Model: ModelClassification, Chains: 2, Samples: 400, Burnin: 200, Seed: 7},
			func(it multirater.ItemResult) float64 { return it.ClassProbs["yes"] }, 0.1},
		{"ordinal gibbs", "ordinal:low,mid,high", []string{"low", "mid", "high"}, "low", "high",
			FitSpec{Engine: multirater.EngineGibbs, Chains: 2, Samples: 400, Burnin: 200, Seed: 7}, score, 0.1},
		{"ordinal ep", "ordinal:low,mid,high", []string{"low", "mid", "high"}, "low", "high",
			FitSpec{Engine: multirater.EngineEP, Seed: 7}, score, 0.1},
		{"ordinal laplace", "ordinal:low,mid,high", []string{"low", "mid", "high"}, "low", "high",
			FitSpec{Engine: multirater.EngineLaplace, Seed: 7}, score, 0.1},
		{"bounded ep", "bounded:0..1", []string{"0.1", "0.5", "0.9"}, "0.1", "0.9",
			FitSpec{Model: ModelBounded, Seed: 7}, score, 0.02},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := func(repeat bool) (multirater.ItemResult, *multirater.FitResult) {
				ds := contested(tc.scheme, tc.levels, tc.lo, tc.hi, repeat)
				res, err := Fit(context.Background(), ds, tc.spec, nil)
				if err != nil {
					t.Fatalf("repeat %v: %v", repeat, err)
				}
				for _, it := range res.Items {
					if it.ID == "x" {
						return it, res
					}
				}
				t.Fatal("no item x")
				return multirater.ItemResult{}, nil
			}
			once, _ := at(false)
			thrice, res := at(true)
			if thrice.NLabels != 4 || once.NLabels != 2 {
				t.Errorf("x has %d labels with repeats, %d without; want 4 and 2", thrice.NLabels, once.NLabels)
			}
			if res.Raters[0].ID != "rater0" || res.Raters[0].NLabels != 13 {
				t.Errorf("rater0: %d labels, want 13 labels (10 + x three times)", res.Raters[0].NLabels)
			}
			a, b := tc.towardsHi(once), tc.towardsHi(thrice)
			t.Logf("x: %.3f with one label per rater, %.3f with rater0's repeated", a, b)
			if !(b > a+tc.minDifference) {
				t.Errorf("repeating rater0's %s moved x from %.3f to %.3f, want an increase above %g", tc.hi, a, b, tc.minDifference)
			}
		})
	}
}

// TestAgreementRepeatedLabels: the coefficients, which take one label per
// rater and item, use each rater's first label; the aggregators use every
// label (issue 29 item 5), and the notes say so.
func TestAgreementRepeatedLabels(t *testing.T) {
	ds := contested("ordinal:low,mid,high", []string{"low", "mid", "high"}, "low", "high", true)
	// rater0's first label of x (mid) disagrees with the two later ones
	// (high).
	for i := range ds.Labels {
		if ds.Labels[i].Item == "x" && ds.Labels[i].Rater == "rater0" {
			ds.Labels[i].Value = "mid"
			break
		}
	}
	rt, err := Table(ds)
	if err != nil {
		t.Fatal(err)
	}
	if rt.Duplicates != 2 || rt.Ratings.Len() != len(ds.Labels) {
		t.Errorf("Duplicates = %d, labels %d, want 2 and %d", rt.Duplicates, rt.Ratings.Len(), len(ds.Labels))
	}
	first := *ds
	first.Labels = nil
	seen := map[[2]string]bool{}
	for _, l := range ds.Labels {
		k := [2]string{l.Item, l.Rater}
		if !seen[k] {
			first.Labels = append(first.Labels, l)
		}
		seen[k] = true
	}
	for _, only := range []string{raters.OnlyCoefficients, raters.OnlyItems} {
		opts := raters.Options{Bootstrap: -1, Only: only}
		rep, err := Agreement(context.Background(), ds, opts)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := Agreement(context.Background(), &first, opts)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(rep.Notes, "\n")
		if rep.Labels != 34 || ref.Labels != 32 {
			t.Errorf("labels %d and %d, want 34 (all) and 32", rep.Labels, ref.Labels)
		}
		rep.Notes, ref.Notes, rep.Labels = nil, nil, ref.Labels
		a, _ := json.Marshal(rep)
		b, _ := json.Marshal(ref)
		if string(a) != string(b) {
			t.Errorf("only %s: the report with repeats differs from that of the first labels:\n%s\n%s", only, a, b)
		}
		if !strings.Contains(notes, "2 repeated labels") || !strings.Contains(notes, "first label") || !strings.Contains(notes, "aggregators") {
			t.Errorf("notes do not state the rule: %s", notes)
		}
	}
	// Majority vote counts every label: x has high twice (rater0's
	// repeats), mid and low once; on the first labels it is a tie.
	rep, err := Agreement(context.Background(), ds, raters.Options{Bootstrap: -1, Only: raters.OnlyAggregators})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Agreement(context.Background(), &first, raters.Options{Bootstrap: -1, Only: raters.OnlyAggregators})
	if err != nil {
		t.Fatal(err)
	}
	xi := -1
	for i, id := range rt.Items {
		if id == "x" {
			xi = i
		}
	}
	got, want := rep.Aggregators["majority"].Items[xi], ref.Aggregators["majority"].Items[xi]
	if got.Label != "high" || got.N != 4 || got.Tie || !want.Tie || want.N != 2 {
		t.Errorf("majority vote of x: %+v with repeats, %+v on the first labels", got, want)
	}
}
