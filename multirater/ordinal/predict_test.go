package ordinal

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/kernel"
	"concord/multirater/mcmc"
)

// TestPredictMatchesInFit checks prediction for new items against the exact
// answer: items left unrated inside a fit are part of the Gaussian process
// and are sampled with everything else, so predicting the same items after a
// fit without them (OrdinalPredictor, from the kept draws) must give the
// same score distribution and grade distributions within Monte Carlo error.
func TestPredictMatchesInFit(t *testing.T) {
	td := makeToy(4, 60)
	const nNew = 5
	nTrain := 60 - nNew
	k := kernel.RBF{Gamma: 1}
	opts := Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 4, Samples: 1500, Seed: 8}}}

	// Fit A: all items, the last nNew without ratings.
	full := *td.data
	full.Ratings = nil
	for _, r := range td.data.Ratings {
		if r.Item < nTrain {
			full.Ratings = append(full.Ratings, r)
		}
	}
	inFit := fit(t, &full, opts)

	// Fit B: the training items only, then predict the others.
	train := full
	train.ItemIDs = full.ItemIDs[:nTrain]
	xTrain := mat.DenseCopyOf(td.x.Slice(0, nTrain, 0, 1))
	xNew := mat.DenseCopyOf(td.x.Slice(nTrain, 60, 0, 1))
	var c mat.SymDense
	k.GramTo(&c, kernel.Inputs{N: nTrain, X: xTrain})
	train.Cov = &c
	res := fit(t, &train, opts)
	pred, err := NewPredictor(res, &c)
	if err != nil {
		t.Fatal(err)
	}
	var cross mat.Dense
	k.CrossTo(&cross, kernel.Inputs{N: nNew, X: xNew}, kernel.Inputs{N: nTrain, X: xTrain})
	prior := k.DiagTo(nil, kernel.Inputs{N: nNew, X: xNew})
	out := pred.Predict(full.ItemIDs[nTrain:], &cross, prior)

	for i, p := range out {
		want := inFit.Items[nTrain+i]
		if p.ID != want.ID || p.NLabels != 0 || p.Rank != nil {
			t.Fatalf("prediction %d: %+v", i, p)
		}
		// Standard error: the in-fit MCSE plus that of the 500 kept draws
		// (taken as at least 100 effective draws).
		se := math.Hypot(want.Score.SD/math.Sqrt(inFit.Diagnostics.MinESSBulk), p.Score.SD/10)
		if z := math.Abs(p.Score.Mean-want.Score.Mean) / se; z > 4.5 {
			t.Errorf("%s: predicted score %.3f, in-fit %.3f (z = %.1f)", p.ID, p.Score.Mean, want.Score.Mean, z)
		}
		if math.Abs(p.Score.SD-want.Score.SD) > 0.15*want.Score.SD+0.05 {
			t.Errorf("%s: predicted sd %.3f, in-fit %.3f", p.ID, p.Score.SD, want.Score.SD)
		}
		if !(p.Score.Q025 < p.Score.Q50 && p.Score.Q50 < p.Score.Q975) {
			t.Errorf("%s: quantiles %+v", p.ID, *p.Score)
		}
		for _, lev := range td.data.Levels {
			if d := math.Abs(p.GradeProbs[lev] - want.GradeProbs[lev]); d > 0.05 {
				t.Errorf("%s: P(grade %s) predicted %.3f, in-fit %.3f", p.ID, lev, p.GradeProbs[lev], want.GradeProbs[lev])
			}
		}
		for _, r := range res.Raters {
			var s float64
			for _, v := range p.RaterGradeProbs[r.ID] {
				s += v
			}
			if math.Abs(s-1) > 1e-4 {
				t.Errorf("%s, rater %s: probabilities sum to %v", p.ID, r.ID, s)
			}
		}
	}
}

func TestPredictErrors(t *testing.T) {
	td := makeToy(5, 20)
	res := fit(t, td.data, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 1, Samples: 50, Burnin: 20}}})
	if _, err := NewPredictor(res, mat.NewSymDense(3, nil)); err == nil {
		t.Error("covariance of the wrong size accepted")
	}
	res.Draws = nil
	if _, err := NewPredictor(res, td.data.Cov); err == nil {
		t.Error("result without draws accepted")
	}
}
