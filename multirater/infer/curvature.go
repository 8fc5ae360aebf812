package infer

import (
	"context"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
)

// factorPrior is a Prior that is one factor: the fitted approximation's,
// while only likelihood parameters move.
type factorPrior struct{ fac *gp.Factor }

func (f factorPrior) Factor(float64) (*gp.Factor, error) { return f.fac, nil }

// on returns f: its factor is fixed, whatever the kernel.
func (f factorPrior) on(*Kernel) Prior { return f }

// Curvature returns the Hessian of minus the objective (the log evidence,
// plus the log priors with Problem.LogPrior) in the learnt likelihood
// parameters at their current values, the fitted ones after Fit, with the
// kernel held at its values: central differences, step 1e-3 (1e-3 |theta|
// above 1), of the objective's analytic gradient, each engine run warm
// started from a, the final approximation of Fit, on its factor.
// Symmetrised. Row and column r are the r-th parameter not fixed, in owner
// order. Cost: two engine runs per parameter.
//
// With theta-hat the maximiser, N(theta-hat, H^-1) is the Laplace
// approximation of the type-II posterior p(theta | y) ∝ Z(theta) p(theta)
// in the likelihoods' own (unconstrained) parametrisation.
func Curvature(ctx context.Context, p *Problem, a *Approx) (*mat.SymDense, error) {
	q := *p
	q.Progress = nil
	ob := newObjective(&q, p.NewEngine(), time.Now())
	theta := make([]float64, ob.size())
	var free []int
	for l, o := range p.Liks {
		if o == nil {
			continue
		}
		o.ParamsTo(theta[ob.off[l]:ob.off[l+1]])
		for k := 0; k < o.NumParams(); k++ {
			if !ob.fixed(l, k) {
				free = append(free, ob.off[l]+k)
			}
		}
	}
	copy(ob.base, theta[:ob.nlik])
	if p.Kernel != nil && p.Kernel.Size() > 0 {
		copy(theta[ob.nlik:], p.Kernel.cur)
	}
	h := mat.NewSymDense(len(free), nil)
	if len(free) == 0 {
		return h, nil
	}
	var pr Prior = factorPrior{a.fac}
	if a.fac == nil {
		pr = newPrior(p)
	}
	cols := make([][]float64, len(free))
	gp, gm := make([]float64, len(theta)), make([]float64, len(theta))
	x := make([]float64, len(theta))
	for c, q := range free {
		step := 1e-3 * math.Max(1, math.Abs(theta[q]))
		for s, g := range [][]float64{gp, gm} {
			copy(x, theta)
			x[q] += step * float64(1-2*s)
			if _, err := ob.eval(ctx, &evaluation{prior: pr, warm: a}, x, g); err != nil {
				ob.set(theta)
				return nil, err
			}
		}
		cols[c] = make([]float64, len(free))
		for r, q2 := range free {
			cols[c][r] = (gp[q2] - gm[q2]) / (2 * step)
		}
	}
	if err := ob.set(theta); err != nil {
		return nil, err
	}
	for c := range free {
		for r := c; r < len(free); r++ {
			h.SetSym(c, r, (cols[c][r]+cols[r][c])/2)
		}
	}
	return h, nil
}
