package ordinal

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
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

// TestPredictEPMethod: an EP fit's new items get the EP evidence ratio's
// grade distributions (each rater's summing to 1, the consensus their
// average, close to the Gaussian predictive's), and the Gaussian
// predictive's, with a note saying why, when asked to, above the work
// budget, above MaxItems, or when the result does not record every rating.
func TestPredictEPMethod(t *testing.T) {
	nt := newNewItems(40, 5)
	var c mat.SymDense
	nt.k.GramTo(&c, kernel.Inputs{N: nt.nTrain, X: nt.xTrain})
	nt.train.Cov = &c
	res, err := FitDeterministic(context.Background(), &nt.train, DetOptions{Seed: 3, Restarts: 1})
	if err != nil {
		t.Fatal(err)
	}
	td := nt.td
	predict := func(r *multirater.FitResult, o PredictOptions) ([]multirater.ItemResult, []string) {
		return nt.predict(t, r, &c, o)
	}
	gauss, _ := predict(res, PredictOptions{Gaussian: true})
	// A result that lost a rating of item 0.
	lost := *res
	lost.Items = append([]multirater.ItemResult(nil), res.Items...)
	lost.Items[0].Labels = map[string]string{}
	for id, lv := range res.Items[0].Labels {
		if id != td.data.RaterIDs[0] {
			lost.Items[0].Labels[id] = lv
		}
	}
	for _, tc := range []struct {
		name  string
		res   *multirater.FitResult
		opts  PredictOptions
		ratio bool
		note  string
	}{
		{"default", res, PredictOptions{}, true, "EP evidence ratio P(y = k)"},
		{"gaussian", res, PredictOptions{Gaussian: true}, false, "the Gaussian predictive was asked for"},
		{"budget", res, PredictOptions{Budget: 1}, false, "above the budget"},
		{"max-items", res, PredictOptions{MaxItems: 10}, false, "more than the 10"},
		{"lost-rating", &lost, PredictOptions{}, false, "records 3 of them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, notes := predict(tc.res, tc.opts)
			if len(notes) == 0 || !strings.Contains(notes[0], tc.note) {
				t.Fatalf("notes %q, want one with %q", notes, tc.note)
			}
			maxDiff := 0.0
			for i, it := range out {
				cons := make([]float64, len(res.Levels))
				for _, rr := range res.Raters {
					pr := it.RaterGradeProbs[rr.ID]
					sum := 0.0
					for c, p := range pr {
						sum += p
						cons[c] += p / float64(len(res.Raters))
						maxDiff = math.Max(maxDiff, math.Abs(p-gauss[i].RaterGradeProbs[rr.ID][c]))
					}
					if math.Abs(sum-1) > 1e-5 {
						t.Errorf("item %s rater %s: probabilities %v sum to %v", it.ID, rr.ID, pr, sum)
					}
				}
				for c, lv := range res.Levels {
					if math.Abs(it.GradeProbs[lv]-cons[c]) > 1e-5 {
						t.Errorf("item %s level %s: consensus %v, raters' average %v", it.ID, lv, it.GradeProbs[lv], cons[c])
					}
				}
				if it.Score.Mean != gauss[i].Score.Mean || it.Score.SD != gauss[i].Score.SD {
					t.Errorf("item %s: score %v, Gaussian predictive's %v", it.ID, it.Score, gauss[i].Score)
				}
			}
			// The ratio moves the probabilities a little; the fallbacks
			// are the Gaussian predictive exactly.
			if tc.ratio && !(maxDiff > 1e-6 && maxDiff < 0.05) || !tc.ratio && maxDiff != 0 {
				t.Errorf("max |P - P_Gaussian| = %g", maxDiff)
			}
			t.Logf("max |P - P_Gaussian| = %.5f; notes %q", maxDiff, notes)
		})
	}
}

// TestPredictEPLowRank: an EP fit on a truncated low-rank prior (FITC's
// diagonal correction, gp.Factor.Extra: the text kernel's prior from
// gp.PivotedFromItems items on) predicts new items by the evidence ratio,
// which pivots on the covariance's entries (ep.Result.NewItem takes no
// diagonal correction: it panicked before), with each rater's grade
// probabilities summing to 1 and within 0.05 of the Gaussian predictive's.
func TestPredictEPLowRank(t *testing.T) {
	const rank = 8
	nt := newNewItems(40, 5)
	var c mat.SymDense
	nt.k.GramTo(&c, kernel.Inputs{N: nt.nTrain, X: nt.xTrain})
	diag := make([]float64, nt.nTrain)
	for i := range diag {
		diag[i] = c.At(i, i)
	}
	lr, err := gp.NewLowRankColumns(diag, func(p int, dst []float64) {
		for i := range dst {
			dst[i] = c.At(i, p)
		}
	}, rank, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := gp.NewPivotedFactor(lr, 0); err != nil || f.Extra == nil {
		t.Fatalf("the low-rank prior has no diagonal correction (%v): the test tests nothing", err)
	}
	nt.train.Cov = lr
	res, err := FitDeterministic(context.Background(), &nt.train, DetOptions{Seed: 3, Restarts: 1})
	if err != nil {
		t.Fatal(err)
	}
	gauss, _ := nt.predict(t, res, lr, PredictOptions{Gaussian: true})
	out, notes := nt.predict(t, res, lr, PredictOptions{})
	if len(notes) == 0 || !strings.Contains(notes[0], "EP evidence ratio P(y = k)") {
		t.Fatalf("notes %q, want the evidence ratio's", notes)
	}
	maxDiff := 0.0
	for i, it := range out {
		for _, rr := range res.Raters {
			sum := 0.0
			for c, p := range it.RaterGradeProbs[rr.ID] {
				sum += p
				maxDiff = math.Max(maxDiff, math.Abs(p-gauss[i].RaterGradeProbs[rr.ID][c]))
			}
			if math.Abs(sum-1) > 1e-5 {
				t.Errorf("item %s rater %s: probabilities sum to %v", it.ID, rr.ID, sum)
			}
		}
	}
	if !(maxDiff > 1e-6 && maxDiff < 0.05) {
		t.Errorf("max |P - P_Gaussian| = %g, want in (1e-6, 0.05)", maxDiff)
	}
	t.Logf("max |P - P_Gaussian| = %.5f", maxDiff)
}

// newItems is a toy fit's first items with their ratings (train) and the
// last nNew items to predict, related by an rbf kernel on one covariate.
type newItems struct {
	td           toyData
	train        Data
	nTrain, nNew int
	k            kernel.RBF
	xTrain, xNew *mat.Dense
	cross        mat.Dense
	prior        []float64
	ids          []string
}

func newNewItems(n, nNew int) *newItems {
	td := makeToy(6, n)
	nt := &newItems{td: td, train: *td.data, nTrain: n - nNew, nNew: nNew, k: kernel.RBF{Gamma: 1}}
	nt.train.ItemIDs = td.data.ItemIDs[:nt.nTrain]
	nt.train.Ratings = nil
	for _, r := range td.data.Ratings {
		if r.Item < nt.nTrain {
			nt.train.Ratings = append(nt.train.Ratings, r)
		}
	}
	nt.xTrain = mat.DenseCopyOf(td.x.Slice(0, nt.nTrain, 0, 1))
	nt.xNew = mat.DenseCopyOf(td.x.Slice(nt.nTrain, n, 0, 1))
	nt.k.CrossTo(&nt.cross, kernel.Inputs{N: nNew, X: nt.xNew}, kernel.Inputs{N: nt.nTrain, X: nt.xTrain})
	nt.prior = nt.k.DiagTo(nil, kernel.Inputs{N: nNew, X: nt.xNew})
	nt.ids = td.data.ItemIDs[nt.nTrain:]
	return nt
}

// predict predicts the new items from fit r of the training items with
// covariance cov.
func (nt *newItems) predict(t *testing.T, r *multirater.FitResult, cov mat.Symmetric, o PredictOptions) ([]multirater.ItemResult, []string) {
	t.Helper()
	p, err := NewPredictorOptions(r, cov, o)
	if err != nil {
		t.Fatal(err)
	}
	return p.PredictNotes(nt.ids, &nt.cross, nt.prior)
}
