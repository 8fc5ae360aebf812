package infer

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
)

// Prior is the Gaussian-process prior of the items' latent values as an
// Engine sees it (GPML's cov, GPflow's kernel): a factor of its covariance
// at the current hyperparameters, C ≈ G G' (gp.Factor).
type Prior interface {
	// Factor returns a factor of the current covariance that leaves out at
	// most tol of its trace; it may return one it made earlier while that
	// is good enough.
	Factor(tol float64) (*gp.Factor, error)
	// on returns the prior, with what it has cached, on the kernel k that
	// has adopted the state of the prior's own (Kernel.adopt).
	on(k *Kernel) Prior
}

// densePrior is a Prior given by a covariance: a fixed one, or a Kernel
// whose hyperparameters are learnt, with the pivoted factor last made of
// it.
type densePrior struct {
	kernel *Kernel
	cov    mat.Symmetric
	fac    *gp.Factor
	// first is the first factor made of a fixed covariance (no kernel):
	// the starts after the first begin with it (runStarts), read-only.
	first *gp.Factor
}

// newPrior returns the prior of p: the identity when p has neither Cov nor
// Kernel.
func newPrior(p *Problem) Prior {
	if p.Kernel != nil && p.Kernel.ind != nil {
		return newInducingPrior(p.Kernel)
	}
	pr := &densePrior{kernel: p.Kernel, cov: p.Cov}
	if p.Cov == nil && p.Kernel == nil {
		pr.fac = gp.IdentityFactor(p.N)
	}
	return pr
}

// on returns the prior with its factor on kernel k (the same kernel
// state: Kernel.adopt).
func (pr *densePrior) on(k *Kernel) Prior {
	return &densePrior{kernel: k, cov: pr.cov, fac: pr.fac}
}

// later returns the prior of a start after the first on kernel k (a clone
// of the first start's): a fixed covariance's first factor, shared
// read-only (a start that needs it tighter makes its own), the inducing
// items the first start chose first (Kernel.clone), or a prior of its own.
func later(first Prior, p *Problem, k *Kernel) Prior {
	switch pr := first.(type) {
	case inducingPrior:
		return inducingPrior{k}
	case *densePrior:
		if pr.kernel == nil && pr.first != nil {
			return &densePrior{cov: pr.cov, fac: pr.first}
		}
	}
	q := *p
	q.Kernel = k
	return newPrior(&q)
}

// Factor returns the last factor while the covariance has not changed and
// it is tight enough, else a new pivoted factor to tol/4
// (gp.NewPivotedFactor).
func (pr *densePrior) Factor(tol float64) (*gp.Factor, error) {
	if pr.kernel != nil && pr.kernel.c != pr.cov {
		pr.cov, pr.fac = pr.kernel.c, nil
	}
	if pr.cov != nil && (pr.fac == nil || pr.fac.Residual > tol) {
		f, err := gp.NewPivotedFactor(pr.cov, tol/4)
		if err != nil {
			return nil, err
		}
		pr.fac = f
		if pr.kernel == nil && pr.first == nil {
			pr.first = f
		}
	}
	return pr.fac, nil
}

// objective is what the evidence maximisation minimises: minus the
// engine's log evidence, plus the log priors of the likelihood parameters
// when the problem has them (type-II MAP), as a function of
// theta = (every owner's likelihood parameters in owner order, then the
// kernel's hyperparameters), with its gradient.
type objective struct {
	p      *Problem
	engine Engine
	// off[l] is where owner l's parameters start in theta; off[len(Liks)]
	// = nlik, where the kernel's start.
	off  []int
	nlik int
	// base holds start 0's values, those of the fixed parameters.
	base []float64
	// prog estimates the fraction done for Problem.Progress (shared by
	// the starts), unit is the start this objective runs.
	prog *evidenceProgress
	unit int
}

// newObjective lays out p's parameters.
func newObjective(p *Problem, engine Engine, start time.Time) *objective {
	ob := &objective{p: p, engine: engine, off: make([]int, len(p.Liks)+1),
		prog: newEvidenceProgress(1, p.Progress, start)}
	for l, o := range p.Liks {
		ob.off[l+1] = ob.off[l]
		if o != nil {
			ob.off[l+1] += o.NumParams()
		}
	}
	ob.nlik = ob.off[len(p.Liks)]
	ob.base = make([]float64, ob.nlik)
	return ob
}

// fixed reports whether owner l's parameter k is not learnt.
func (ob *objective) fixed(l, k int) bool { return ob.p.Fixed != nil && ob.p.Fixed(l, k) }

// size is the length of theta.
func (ob *objective) size() int { return ob.nlik + ob.p.Kernel.Size() }

// anyFree reports whether any parameter is learnt.
func (ob *objective) anyFree() bool {
	for l, o := range ob.p.Liks {
		for k := 0; o != nil && k < o.NumParams(); k++ {
			if !ob.fixed(l, k) {
				return true
			}
		}
	}
	return ob.p.Kernel.Size() > 0
}

// set sets the owners' likelihoods (the fixed parameters at base) and the
// kernel to theta.
func (ob *objective) set(theta []float64) error {
	if err := ob.p.Kernel.set(theta[ob.nlik:]); err != nil {
		return err
	}
	for l, o := range ob.p.Liks {
		if o == nil {
			continue
		}
		q := make([]float64, o.NumParams())
		for k := range q {
			q[k] = theta[ob.off[l]+k]
			if ob.fixed(l, k) {
				q[k] = ob.base[ob.off[l]+k]
			}
		}
		o.SetParams(q)
	}
	return nil
}

// evaluation is what one evidence search carries from one engine run to
// the next: the prior with its factor, the last approximation (a warm
// start), whether it searches (looser factor and tolerances) and the
// number of EP runs that clamped their site precisions.
type evaluation struct {
	prior   Prior
	warm    *Approx
	search  bool
	clamped int
}

// approximate runs the engine at the current parameters on a factor to
// the problem's tolerance (10 times looser during the search).
func (ob *objective) approximate(ctx context.Context, ev *evaluation) (*Approx, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tol := ob.p.FactorTol()
	if ev.search {
		tol *= 10
	}
	fac, err := ev.prior.Factor(tol)
	if err != nil {
		return nil, err
	}
	a, err := ob.engine.Approximate(ctx, fac, ob.p.Sites, ev.warm, ev.search)
	if err != nil {
		return nil, err
	}
	a.fac = fac
	ev.warm = a
	if a.clamped {
		ev.clamped++
	}
	return a, nil
}

// eval returns minus the objective at theta and sets grad, when not nil,
// to its gradient (fixed parameters' entries 0).
func (ob *objective) eval(ctx context.Context, ev *evaluation, theta, grad []float64) (float64, error) {
	if err := ob.set(theta); err != nil {
		return 0, err
	}
	a, err := ob.approximate(ctx, ev)
	if err != nil {
		return 0, err
	}
	val := a.LogZ
	if math.IsNaN(val) || math.IsInf(val, 0) {
		return 0, fmt.Errorf("multirater: the %s log evidence is %v at these parameters", ob.p.Engine, val)
	}
	if grad != nil {
		if err := ob.gradTo(ctx, grad, a); err != nil {
			return 0, err
		}
	}
	val = ob.addLogPrior(val, grad)
	if grad != nil {
		for l, o := range ob.p.Liks {
			for k := 0; o != nil && k < o.NumParams(); k++ {
				if ob.fixed(l, k) {
					grad[ob.off[l]+k] = 0
				}
			}
		}
		for k := range grad {
			grad[k] = -grad[k]
		}
	}
	ob.prog.eval(ob.unit)
	return -val, nil
}

// gradTo sets grad to the gradient of a's log evidence in theta; a
// cancelled ctx stops it with ctx's error.
func (ob *objective) gradTo(ctx context.Context, grad []float64, a *Approx) error {
	for i := range grad {
		grad[i] = 0
	}
	if err := ob.engine.LikGradTo(ctx, a, ob.p.Sites, func(j int) []float64 { return grad[ob.off[ob.p.Owner[j]]:] }); err != nil {
		return err
	}
	if ob.p.Kernel.Size() > 0 {
		kernelGrad := ob.engine.KernelGrad
		if ob.p.Kernel.ind != nil {
			kernelGrad = func(a *Approx, _ []mat.Symmetric) ([]float64, error) { return ob.p.Kernel.inducingGrad(ob.engine, a) }
		}
		g, err := kernelGrad(a, ob.p.Kernel.grads)
		if err != nil {
			return err
		}
		copy(grad[ob.nlik:], g)
	}
	return nil
}

// addLogPrior returns v plus the log priors of the owners' current
// parameters, added one owner after another (v without Problem.LogPrior),
// and adds their gradient to grad when not nil.
func (ob *objective) addLogPrior(v float64, grad []float64) float64 {
	if ob.p.LogPrior == nil {
		return v
	}
	for l, o := range ob.p.Liks {
		if o == nil {
			continue
		}
		var g []float64
		if grad != nil {
			g = grad[ob.off[l]:ob.off[l+1]]
		}
		v += ob.p.LogPrior(l, o.ParamsTo(make([]float64, o.NumParams())), g)
	}
	return v
}
