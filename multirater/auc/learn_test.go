package auc

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater/kernel"
)

// TestLearnKernel learns an RBF kernel's inverse length-scale by the EP
// evidence on 50 items labelled by a ring (x1^2 + x2^2 < 1.4 with 10% of
// labels flipped), where a linear score is useless. The evidence has two
// local maxima in gamma (near 0.3, the global one, and 2.6; the grid:
// -12.80 at 0.2, -12.97 at 1, -12.93 at 2). Started at 0.1, L-BFGS must
// reach at least the grid's best (to 1e-3); started at 5, a local maximum:
// log Z_EP at least that of gamma 10% above and below the learnt one.
func TestLearnKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	// A ring, 10% of its labels flipped.
	d := labelled(rng, 50, 2, func(x []float64) bool { return (x[0]*x[0]+x[1]*x[1] < 1.4) != (rng.Float64() < 0.1) })
	const gamma = 40
	fit := func(g float64, learn bool) *Result {
		r, err := Fit(context.Background(), d, Options{Kernel: kernel.RBF{Gamma: g}, Gamma: gamma, LearnKernel: learn})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	bestGrid := math.Inf(-1)
	for _, g := range []float64{0.05, 0.1, 0.2, 0.5, 1, 2} {
		bestGrid = math.Max(bestGrid, fit(g, false).LogEvidence)
	}
	global := fit(0.1, true)
	if global.LogEvidence < bestGrid-1e-3 {
		t.Errorf("from 0.1: learnt log Z_EP %.4f (%s) below the grid's best %.4f", global.LogEvidence, global.Kernel, bestGrid)
	}
	if global.TrainAUC < 0.7 {
		t.Errorf("training AUC %.3f with %s", global.TrainAUC, global.Kernel)
	}
	local := fit(5, true)
	k, err := kernel.ParseKernel(local.Kernel)
	if err != nil {
		t.Fatal(err)
	}
	g := k.(kernel.RBF).Gamma
	for _, f := range []float64{0.9, 1.1} {
		if nb := fit(f*g, false).LogEvidence; nb > local.LogEvidence+1e-6 {
			t.Errorf("from 5: learnt %s, log Z_EP %.6f, but %.6f at gamma %.4g", local.Kernel, local.LogEvidence, nb, f*g)
		}
	}
	if fixed := fit(5, false); !(local.LogEvidence > fixed.LogEvidence) {
		t.Errorf("from 5: learnt log Z_EP %.4f not above the start's %.4f", local.LogEvidence, fixed.LogEvidence)
	}
}
