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
	// Two starts one after the other, then three with the last two at
	// once: the fraction counts the finished starts and each running
	// one's evaluations over those expected (40, then the most a finished
	// start took), capped at 95% of a start.
	for _, tc := range []struct {
		name   string
		starts int
		steps  []int // a start's evaluation, or -1-s: start s finished
	}{
		{"serial", 2, append(append(evals(0, 20), -1), evals(1, 20)...)},
		{"parallel", 3, append(append(evals(0, 40), -1), 1, 2, 1, 2)},
	} {
		var got []multirater.Progress
		e := newEvidenceProgress(tc.starts, func(p multirater.Progress) { got = append(got, p) }, time.Now())
		for _, s := range tc.steps {
			if s < 0 {
				e.done(-1 - s)
				continue
			}
			e.eval(s)
		}
		last := got[len(got)-1]
		want := map[string]float64{"serial": (1 + 20.0/40) / 2, "parallel": (1 + 2*2.0/40) / 3}[tc.name]
		if math.Abs(last.Fraction-want) > 1e-12 {
			t.Errorf("%s: fraction %v, want %v", tc.name, last.Fraction, want)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Fraction < got[i-1].Fraction {
				t.Errorf("%s: fraction fell from %v to %v", tc.name, got[i-1].Fraction, got[i].Fraction)
			}
		}
	}
	e := newEvidenceProgress(1, nil, time.Now())
	for range 400 {
		e.eval(0)
	}
	wantETA := 10 * time.Second / 19 // (1 - 0.95) / 0.95 of the time so far
	if f := e.progress(0, 10*time.Second); math.Abs(f.Fraction-0.95) > 1e-12 || (f.ETA-wantETA).Abs() > time.Microsecond {
		t.Errorf("400 of 40 expected evaluations: fraction %v ETA %v, want 0.95 and %v", f.Fraction, f.ETA, wantETA)
	}
	e.done(0)
	if e.expect != 400 {
		t.Errorf("expect %d after a start of 400 evaluations", e.expect)
	}
}

// evals returns n evaluations of start s.
func evals(s, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = s
	}
	return out
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
