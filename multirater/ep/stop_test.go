package ep

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/lik"
)

// stopModel is a small ordinal problem: n items on a line under an RBF
// kernel, one rating per item on 5 levels (a fixed seed).
func stopModel(t *testing.T, n int) (*gp.Factor, []lik.Site) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 35))
	x := mat.NewDense(n, 1, nil)
	o := &lik.OrdinalProbit{B: []float64{-1.5, -0.5, 0.5, 1.5}, Sigma: 0.5}
	sites := make([]lik.Site, n)
	for i := range sites {
		x.Set(i, 0, 4*rng.Float64())
		y := 2*x.At(i, 0) - 4 + 0.5*rng.NormFloat64()
		k := 0
		for k < 4 && y > o.B[k] {
			k++
		}
		sites[i] = lik.Site{Item: i, Y: float64(k), Lik: o}
	}
	var c mat.SymDense
	kernel.RBF{Gamma: 2}.GramTo(&c, kernel.Inputs{N: n, X: x})
	f, err := gp.NewFactor(&c)
	if err != nil {
		t.Fatal(err)
	}
	return f, sites
}

// TestRunStop: a Stop that answers nil changes nothing (the same result,
// bit for bit); one that answers an error ends the run with that error,
// before the first sweep, within a sequential sweep (every stopEvery
// items) or between sweeps.
func TestRunStop(t *testing.T) {
	const n = 200
	f, sites := stopModel(t, n)
	for _, tc := range []struct {
		name string
		fac  *gp.Factor
		opts Options
		// inSweep: the sequential sweep asks Stop within a sweep too.
		inSweep bool
	}{
		{"sequential", f, Options{}, true},
		{"parallel", f, Options{Parallel: true}, false},
		{"diagonal", gp.IdentityFactor(n), Options{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := Run(tc.fac, sites, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			o := tc.opts
			var calls *int
			o.Stop, calls = testutil.StopAfter(1 << 30)
			got, err := Run(tc.fac, sites, o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Mean, want.Mean) || !reflect.DeepEqual(got.Var, want.Var) || got.LogZ != want.LogZ ||
				!reflect.DeepEqual(got.Tau, want.Tau) || !reflect.DeepEqual(got.Nu, want.Nu) || got.Sweeps != want.Sweeps {
				t.Errorf("with a Stop that answers nil: log Z %v in %d sweeps, want %v in %d, or other marginals or sites", got.LogZ, got.Sweeps, want.LogZ, want.Sweeps)
			}
			if *calls < want.Sweeps || tc.inSweep && *calls <= want.Sweeps {
				t.Errorf("Stop asked %d times in %d sweeps", *calls, want.Sweeps)
			}
			for _, after := range []int{0, 1, 2, *calls - 1} {
				o.Stop, _ = testutil.StopAfter(after)
				res, err := Run(tc.fac, sites, o)
				if !errors.Is(err, context.Canceled) || res != nil {
					t.Errorf("stopped at call %d: got %v, %v; want no result and context.Canceled", after+1, res, err)
				}
			}
		})
	}
}

// TestRunPairsStop is TestRunStop for pair sites.
func TestRunPairsStop(t *testing.T) {
	f, y := linearAUC(t, 35)
	sites := aucSites(y, 50)
	want, err := RunPairs(f, sites, PairOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stop, calls := testutil.StopAfter(1 << 30)
	got, err := RunPairs(f, sites, PairOptions{Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Mean, want.Mean) || !reflect.DeepEqual(got.W, want.W) || got.LogZ != want.LogZ || got.Sweeps != want.Sweeps {
		t.Errorf("with a Stop that answers nil: log Z %v in %d sweeps, want %v in %d, or other marginals", got.LogZ, got.Sweeps, want.LogZ, want.Sweeps)
	}
	if *calls != want.Sweeps {
		t.Errorf("Stop asked %d times in %d sweeps", *calls, want.Sweeps)
	}
	for _, after := range []int{0, 1, want.Sweeps - 1} {
		stop, _ := testutil.StopAfter(after)
		res, err := RunPairs(f, sites, PairOptions{Stop: stop})
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Errorf("stopped at call %d: got %v, %v; want no result and context.Canceled", after+1, res, err)
		}
	}
}
