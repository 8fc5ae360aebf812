package infer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"concord/multirater"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/laplace"
)

// TestFitCancelled: a fit whose context is cancelled before it starts,
// at the first progress report (the first evaluation of the evidence) or
// at the first report of the second start ends with the context's error
// and no approximation, by EP or Laplace, dense or inducing-point, its
// later starts one by one or at once; one by one, no evaluation follows
// the cancellation.
func TestFitCancelled(t *testing.T) {
	const n = 60
	for _, engine := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		for _, rank := range []int{0, 20} {
			for _, parallel := range []int{0, 3} {
				for _, at := range []string{"before", "first report", "start 2"} {
					t.Run(fmt.Sprintf("%s/rank%d/parallel%d/%s", engine, rank, parallel, at), func(t *testing.T) {
						p := restartProblem(t, n, engine, rank, parallel > 0, parallel)
						ctx, cancel := context.WithCancel(context.Background())
						defer cancel()
						var mu sync.Mutex
						after := 0 // reports after the cancellation
						p.Progress = func(pr multirater.Progress) {
							mu.Lock()
							defer mu.Unlock()
							if ctx.Err() != nil {
								after++
								return
							}
							if at == "first report" || at == "start 2" && strings.Contains(pr.Phase, "start 2 of") {
								cancel()
							}
						}
						if at == "before" {
							cancel()
						}
						a, err := Fit(ctx, p, rand.New(rand.NewPCG(1, 2)))
						if !errors.Is(err, context.Canceled) || a != nil {
							t.Fatalf("got %v, %v; want no approximation and context.Canceled", a, err)
						}
						if parallel == 0 && after > 0 {
							t.Errorf("%d evaluations after the cancellation", after)
						}
					})
				}
			}
		}
	}
}

// TestApproximateCancelled: an engine run on a cancelled context returns
// the context's error, whatever reruns a failed EP run may get (cold,
// clamped, decayed).
func TestApproximateCancelled(t *testing.T) {
	p := restartProblem(t, 60, multirater.EngineEP, 0, false, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fac := gp.IdentityFactor(p.N)
	warm := &Approx{EP: &ep.Result{Tau: make([]float64, len(p.Sites)), Nu: make([]float64, len(p.Sites))}}
	for _, e := range []Engine{
		&EP{Options: ep.Options{NegativeSites: true, DecayAfter: 10}},
		&Laplace{Options: laplace.Options{}},
	} {
		for _, search := range []bool{false, true} {
			a, err := e.Approximate(ctx, fac, p.Sites, warm, search)
			if !errors.Is(err, context.Canceled) || a != nil {
				t.Errorf("%s (search %t): got %v, %v; want context.Canceled", e.Name(), search, a, err)
			}
		}
	}
}

// TestLikGradToCancelled: the likelihood gradients of an approximation on
// more than gradCheck sites stop on a cancelled context with its error,
// and run through on a live one.
func TestLikGradToCancelled(t *testing.T) {
	p := restartProblem(t, 60, multirater.EngineEP, 0, false, 0)
	sites := slices.Repeat(p.Sites, 2*gradCheck/len(p.Sites)+1)
	fac := gp.IdentityFactor(p.N)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, e := range []Engine{&EP{}, &Laplace{}} {
		a, err := e.Approximate(context.Background(), fac, sites, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		grad := make([]float64, 8)
		at := func(int) []float64 { return grad }
		if err := e.LikGradTo(context.Background(), a, sites, at); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
		if err := e.LikGradTo(done, a, sites, at); !errors.Is(err, context.Canceled) {
			t.Errorf("%s on a cancelled context: %v, want context.Canceled", e.Name(), err)
		}
	}
}
