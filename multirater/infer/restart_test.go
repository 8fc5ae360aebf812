package infer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"concord/multirater"
	"concord/multirater/kernel"
	"concord/multirater/lik"
)

// TestRestartsIndependent: the starts after the first are independent
// units, so a fit gives bit-identical results whether they run one after
// another on the problem's own likelihoods or at once on replicas
// (Problem.Replica), with a dense or an inducing-point kernel, by EP or
// Laplace; the notes count the starts and the hopeless ones.
func TestRestartsIndependent(t *testing.T) {
	const n = 150
	for _, engine := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		for _, rank := range []int{0, 40} {
			t.Run(fmt.Sprintf("%s/rank%d", engine, rank), func(t *testing.T) {
				fit := func(replica bool, parallel int) *Approx {
					a, err := Fit(context.Background(), restartProblem(t, n, engine, rank, replica, parallel), rand.New(rand.NewPCG(1, 2)))
					if err != nil {
						t.Fatal(err)
					}
					return a
				}
				serial := fit(false, 0)
				if len(serial.Notes) < 5 || !strings.HasPrefix(serial.Notes[4], "evidence maximisation: 4 starts, ") {
					t.Fatalf("notes %q: want 4 starts and their summary", serial.Notes)
				}
				t.Log(strings.Join(serial.Notes, "\n"))
				for _, par := range []int{1, 3} {
					a := fit(true, par)
					if a.LogZ != serial.LogZ || !slices.Equal(a.Mean, serial.Mean) || !slices.Equal(a.Var, serial.Var) || !slices.Equal(a.Notes, serial.Notes) {
						t.Errorf("parallel %d: log Z %v, notes %q; one by one: %v, %q", par, a.LogZ, a.Notes, serial.LogZ, serial.Notes)
					}
				}
			})
		}
	}
}

// restartProblem is the ordinal problem of inducingProblem (n items, seed
// 5) with its thresholds, noise and RBF width learnt from 4 starts, the
// kernel dense (rank 0) or in inducing-point form, with a Replica when
// replica is set.
func restartProblem(tb testing.TB, n int, engine string, rank int, replica bool, parallel int) *Problem {
	in, sites := inducingProblem(n, 5)
	o := sites[0].Lik.(*lik.OrdinalProbit)
	lk := &LearnKernel{Terms: []kernel.Hyper{kernel.RBF{Gamma: 1}}, Inputs: in, Rank: rank}
	k, err := lk.NewKernel(n, nil)
	if err != nil {
		tb.Fatal(err)
	}
	likOf := func(o *lik.OrdinalProbit) *Problem {
		q := &Problem{Liks: []lik.LaplaceLearnable{o}, Sites: slices.Clone(sites),
			FactorTol: func() float64 { return 1e-3 * o.Sigma * o.Sigma }}
		for j := range q.Sites {
			q.Sites[j].Lik = o
		}
		return q
	}
	p := likOf(o)
	p.Engine, p.N, p.Kernel, p.Restarts, p.Parallel = engine, n, k, 4, parallel
	p.Owner = make([]int, len(sites))
	p.Start = func(s int, rng *rand.Rand, dst []float64) {
		(&lik.OrdinalProbit{B: []float64{-0.5, 0.5}, Sigma: 1}).ParamsTo(dst)
		if s > 0 {
			for i := range dst {
				dst[i] += 0.8 * rng.NormFloat64()
			}
		}
	}
	if replica {
		p.Replica = func() *Problem {
			return likOf(&lik.OrdinalProbit{B: slices.Clone(o.B), Sigma: o.Sigma})
		}
	}
	return p
}

// BenchmarkRestarts measures the 4-start fit of TestRestartsIndependent
// (EP, 300 items, inducing-point RBF kernel) with its restarts after the
// first one by one and at once (the CPU time should match; the wall time
// falls with free cores).
func BenchmarkRestarts(b *testing.B) {
	for _, tc := range []struct {
		name    string
		replica bool
	}{{"serial", false}, {"parallel", true}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Fit(context.Background(), restartProblem(b, 300, multirater.EngineEP, 60, tc.replica, 0), rand.New(rand.NewPCG(1, 2))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestApart: the starts run apart (a plan running start 1, a part per
// later start, each on a problem of its own as another process would have,
// and a combine) give the fit of one process bit for bit: log Z, the
// marginals and the notes (every start's objective and iterations, the
// hopeless count, the winner), with a dense or an inducing-point kernel, by
// EP or Laplace.
func TestApart(t *testing.T) {
	const n = 150
	for _, engine := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		for _, rank := range []int{0, 40} {
			t.Run(fmt.Sprintf("%s/rank%d", engine, rank), func(t *testing.T) {
				fit := func(a *Apart) (*Approx, error) {
					ctx := context.Background()
					if a != nil {
						var cancel context.CancelFunc
						ctx, cancel = WithApart(ctx, a)
						defer cancel()
					}
					return Fit(ctx, restartProblem(t, n, engine, rank, false, 0), rand.New(rand.NewPCG(1, 2)))
				}
				whole, err := fit(nil)
				if err != nil {
					t.Fatal(err)
				}
				plan := &Apart{}
				if _, err := fit(plan); !errors.Is(err, ErrApart) || plan.Out == nil || plan.Out.Starts != 4 {
					t.Fatalf("plan: error %v, outcome %+v; want ErrApart and start 1 of 4", err, plan.Out)
				}
				enc, err := plan.Out.Encode()
				if err != nil {
					t.Fatal(err)
				}
				first, err := DecodeOutcome(enc)
				if err != nil {
					t.Fatal(err)
				}
				outs := []Outcome{*first}
				for s := 1; s < first.Starts; s++ {
					part := &Apart{Start: s, First: first}
					if _, err := fit(part); !errors.Is(err, ErrApart) || part.Out == nil || part.Out.Start != s {
						t.Fatalf("part %d: error %v, outcome %+v", s, err, part.Out)
					}
					outs = append(outs, *part.Out)
				}
				comb, err := fit(&Apart{Outcomes: outs})
				if err != nil {
					t.Fatal(err)
				}
				if comb.LogZ != whole.LogZ || !slices.Equal(comb.Mean, whole.Mean) || !slices.Equal(comb.Var, whole.Var) || !slices.Equal(comb.Notes, whole.Notes) {
					t.Errorf("apart: log Z %v, notes %q; one process: %v, %q", comb.LogZ, comb.Notes, whole.LogZ, whole.Notes)
				}
				// An outcome that is not what the start gives here is found.
				bad := slices.Clone(outs)
				win := slices.IndexFunc(whole.Notes, func(s string) bool { return strings.Contains(s, " won") })
				if win < 0 {
					t.Fatalf("notes %q name no winner", whole.Notes)
				}
				for s := range bad {
					bad[s].F -= 1e-9 * math.Abs(bad[s].F)
				}
				if _, err := fit(&Apart{Outcomes: bad}); err == nil || !strings.Contains(err.Error(), "run apart") {
					t.Errorf("outcomes off by 1e-9: error %v, want the winner's objective found different", err)
				}
			})
		}
	}
}

// TestFirstStep: Problem.FirstStep shortens L-BFGS's first step (the
// first evaluation after the start moves the parameters by FirstStep, not
// by gonum's 1) and changes nothing else of the search: from one start the
// optimum's log evidence agrees with the unscaled search's within 1e-3
// nats (each stops when two iterations gain less than 1e-4) and the
// posterior means within 1e-2 (the optimum is flat: 0.002 apart at FirstStep 0.2).
func TestFirstStep(t *testing.T) {
	const n = 150
	fit := func(step float64) (*Approx, float64) {
		p := restartProblem(t, n, multirater.EngineEP, 0, false, 0)
		p.Restarts, p.FirstStep = 1, step
		o := p.Liks[0].(*lik.OrdinalProbit)
		var x0, x1 []float64
		p.Progress = func(multirater.Progress) {
			x := o.ParamsTo(make([]float64, o.NumParams()))
			x = append(x, p.Kernel.cur...)
			switch {
			case x0 == nil:
				x0 = x
			case x1 == nil:
				x1 = x
			}
		}
		a, err := Fit(context.Background(), p, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		d := 0.0
		for i := range x0 {
			d += (x1[i] - x0[i]) * (x1[i] - x0[i])
		}
		return a, math.Sqrt(d)
	}
	plain, d1 := fit(0)
	for _, step := range []float64{0.2, 0.05} {
		a, d := fit(step)
		if math.Abs(d-step) > 1e-9 {
			t.Errorf("FirstStep %v: first step of length %v", step, d)
		}
		if math.Abs(a.LogZ-plain.LogZ) > 1e-3 {
			t.Errorf("FirstStep %v: log Z %.6f, unscaled %.6f", step, a.LogZ, plain.LogZ)
		}
		for i := range a.Mean {
			if math.Abs(a.Mean[i]-plain.Mean[i]) > 1e-2 {
				t.Fatalf("FirstStep %v: mean %d %.6f, unscaled %.6f", step, i, a.Mean[i], plain.Mean[i])
			}
		}
	}
	if math.Abs(d1-1) > 1e-9 {
		t.Errorf("no FirstStep: first step of length %v, want gonum's 1", d1)
	}
}
