package infer

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/optimize"

	"concord/multirater"
	"concord/multirater/lik"
)

func TestEvidenceProgress(t *testing.T) {
	e := &evidenceProgress{starts: 2, expect: 40}
	prev := -1.0
	for _, tc := range []struct {
		start, evals int
		want         float64
	}{{0, 0, 0}, {0, 20, 0.25}, {0, 40, 0.475}, {0, 400, 0.475}, {1, 0, 0.5}, {1, 20, 0.75}} {
		e.start, e.evals = tc.start, tc.evals
		pr := e.progress(10 * time.Second)
		if math.Abs(pr.Fraction-tc.want) > 1e-12 || pr.Fraction < prev {
			t.Errorf("start %d evals %d: fraction %v, want %v (not below %v)", tc.start, tc.evals, pr.Fraction, tc.want, prev)
		}
		if tc.want > 0 {
			if eta := time.Duration(float64(10*time.Second) * (1 - tc.want) / tc.want); pr.ETA != eta {
				t.Errorf("fraction %v: ETA %v, want %v", tc.want, pr.ETA, eta)
			}
		}
		prev = pr.Fraction
	}
	e.done(100)
	if e.expect != 100 {
		t.Errorf("expect %d after a start of 100 evaluations", e.expect)
	}
}

func TestHopelessStopsLosingStarts(t *testing.T) {
	for _, tc := range []struct {
		best, f float64
		iter    int
		stop    bool
	}{
		{math.Inf(1), 1e6, 100, false}, // no best yet
		{100, 130, 14, false},          // too early
		{100, 130, 15, true},           // 30 nats worse
		{100, 110, 50, false},          // within 20 nats
		{1e5, 1e5 + 500, 20, false},    // within 1% of the best's size
		{1e5, 1e5 + 2000, 20, true},
	} {
		h := &hopeless{FunctionConverge: optimize.FunctionConverge{Absolute: 1e-4, Iterations: 2}, best: tc.best}
		h.Init(1)
		var st optimize.Status
		for i := 0; i < tc.iter; i++ {
			// A value still falling (1e-3 per iteration, above
			// FunctionConverge's 1e-4): only the early stop ends it.
			st = h.Converged(&optimize.Location{F: tc.f + 1e-3*float64(tc.iter-i)})
		}
		if h.stopped != tc.stop || (tc.stop && st != optimize.FunctionConvergence) {
			t.Errorf("best %v f %v after %d: stopped %v status %v", tc.best, tc.f, tc.iter, h.stopped, st)
		}
	}
}

// TestWarmEPSameFit: a fit started from the sites of a previous fit (an EM
// loop's warm start) reaches the same optimum as a cold one (to the
// optimiser's 1e-4 nats) in no more evaluations.
func TestWarmEPSameFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 300
	o := &lik.OrdinalProbit{B: []float64{-0.5, 0.5}, Sigma: 1}
	mk := func() *Problem {
		p := &Problem{Engine: multirater.EngineEP, N: n, Liks: []lik.LaplaceLearnable{o}, Restarts: 1,
			Start: func(s int, _ *rand.Rand, dst []float64) {
				(&lik.OrdinalProbit{B: []float64{-0.5, 0.5}, Sigma: 1}).ParamsTo(dst)
			},
			FactorTol: func() float64 { return 1e-2 }}
		return p
	}
	truth := make([]float64, n)
	var sites []lik.Site
	for i := range truth {
		truth[i] = rng.NormFloat64()
		for k := 0; k < 3; k++ {
			y := truth[i] + 0.4*rng.NormFloat64()
			lv := 0.0
			if y > -0.5 {
				lv++
			}
			if y > 0.5 {
				lv++
			}
			sites = append(sites, lik.Site{Item: i, Y: lv, Lik: o})
		}
	}
	var evals [2]int
	var logZ [2]float64
	var prev *Approx
	for k := 0; k < 2; k++ {
		p := mk()
		p.Sites = sites
		p.Owner = make([]int, len(sites))
		p.Progress = func(multirater.Progress) { evals[k]++ }
		if k == 1 {
			p.WarmEP = prev.EP
		}
		a, err := Fit(context.Background(), p, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		prev, logZ[k] = a, a.LogZ
	}
	if math.Abs(logZ[0]-logZ[1]) > 1e-3 {
		t.Errorf("log Z cold %v, warm %v", logZ[0], logZ[1])
	}
	if evals[1] > evals[0] {
		t.Errorf("%d evaluations warm, %d cold", evals[1], evals[0])
	}
}
