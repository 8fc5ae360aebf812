package robust

import (
	"context"
	"math"
	"reflect"
	"testing"

	"concord/multirater"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// TestSettingsRecorded checks that the fit document's model.robust says how
// the error rates and the latent noise were obtained.
func TestSettingsRecorded(t *testing.T) {
	data := ionosphere40(t)
	eps := 0.1
	zero := 0.0
	for _, tc := range []struct {
		name string
		opts Options
		want multirater.RobustSettings
	}{
		{"learnt", Options{Seed: 1}, multirater.RobustSettings{EM: "tilted", StartEpsilon: 0.05, MaxEM: 50, EMTol: 1e-4, Restarts: 1, Positive: "1"}},
		{"paper EM, noise fixed", Options{Seed: 1, PaperEM: true, Noise: 0.5, MaxEM: 5},
			multirater.RobustSettings{EM: "paper", StartEpsilon: 0.05, MaxEM: 5, EMTol: 1e-4, Noise: 0.5, Restarts: 1, Positive: "1"}},
		{"fixed", Options{Seed: 1, FixEpsilon: true, Epsilon: eps, Noise: 1}, multirater.RobustSettings{Epsilon: &eps, Noise: 1, Restarts: 1, Positive: "1"}},
		{"plain", Options{Seed: 1, FixEpsilon: true, Noise: 1}, multirater.RobustSettings{Epsilon: &zero, Noise: 1, Restarts: 1, Positive: "1"}},
		{"select", Options{Seed: 1, Select: true, Noise: 1}, multirater.RobustSettings{EM: "tilted", StartEpsilon: 0.05, MaxEM: 50, EMTol: 1e-4, Noise: 1, Select: true, Restarts: 1, Positive: "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Fit(context.Background(), data, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Model.Robust
			if got == nil {
				t.Fatal("model.robust missing")
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("model.robust = %+v, want %+v", *got, tc.want)
			}
		})
	}
}

// TestPredictRaterLabels: a new item's label predictive for each rater is
// eps + (1 - 2 eps) Phi(mu / sqrt(s^2 + v)) (eq. 10 under the latent
// Gaussian), in the order of the fit's levels [negative, positive].
func TestPredictRaterLabels(t *testing.T) {
	for _, posFirst := range []bool{false, true} {
		testPredictRaterLabels(t, posFirst)
	}
}

func testPredictRaterLabels(t *testing.T, posFirst bool) {
	data := ionosphere40(t)
	pos := 1 // the positive class's place in the levels
	if posFirst {
		data.Levels, pos = []string{"1", "-1"}, 0
	}
	const eps, s = 0.1, 0.5
	res, err := Fit(context.Background(), data, Options{Seed: 1, FixEpsilon: true, Epsilon: eps, Noise: s})
	if err != nil {
		t.Fatal(err)
	}
	if res.Levels[pos] != "1" {
		t.Fatalf("levels %v with the positive class first %v", res.Levels, posFirst)
	}
	p, err := NewPredictor(res, data.Cov)
	if err != nil {
		t.Fatal(err)
	}
	// Items 0 and 1 again, as new items.
	n := len(data.ItemIDs)
	cross := mat.NewDense(2, n, nil)
	prior := make([]float64, 2)
	for i := 0; i < 2; i++ {
		for j := 0; j < n; j++ {
			cross.Set(i, j, data.Cov.At(i, j))
		}
		prior[i] = data.Cov.At(i, i)
	}
	for _, it := range p.Predict([]string{"x0", "x1"}, cross, prior) {
		mu, v := it.Score.Mean, it.Score.SD*it.Score.SD
		want := eps + (1-2*eps)*distuv.UnitNormal.CDF(mu/math.Sqrt(s*s+v))
		got := it.RaterClassProbs["r"]
		if len(got) != 2 || math.Abs(got[pos]-want) > 2e-6 || math.Abs(got[0]+got[1]-1) > 2e-6 {
			t.Errorf("%s (positive first %v): rater r's label predictive %v, P(positive) %v", it.ID, posFirst, got, want)
		}
		if q := it.ClassProbs["1"]; math.Abs(q-distuv.UnitNormal.CDF(mu/math.Sqrt(s*s+v))) > 2e-6 {
			t.Errorf("%s: class probability %v", it.ID, q)
		}
	}
}
