package infer

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/laplace"
	"concord/multirater/lik"
)

// Engine is a deterministic approximation of the posterior of the items'
// latent values under a Gaussian-process prior, given as a factor of its
// covariance, and independent sites, each with its likelihood: GPML's inf
// functions (infEP, infLaplace) with the prior (cov) and the likelihoods
// (lik) kept apart, as GPflow's models take a kernel and a likelihood. Fit
// maximises any Engine's log evidence; EP and Laplace answer it.
type Engine interface {
	// Name is the engine's name in the fit document
	// (multirater.EngineEP, multirater.EngineLaplace).
	Name() string
	// Approximate runs the engine on the prior factor fac and the sites at
	// their likelihoods' current parameters. warm, when not nil, is an
	// earlier approximation of the same sites at nearby parameters to start
	// from; search asks for the looser tolerances of the evidence search
	// (the final approximation is made with search false). A cancelled
	// ctx ends the run within one sweep or step with ctx's error.
	Approximate(ctx context.Context, fac *gp.Factor, sites []lik.Site, warm *Approx, search bool) (*Approx, error)
	// LikGradTo adds, for every site j, the gradient of a's log evidence in
	// the parameters of site j's likelihood (a lik.LaplaceLearnable) to
	// at(j), a slice of at least its NumParams. A cancelled ctx stops it
	// within gradCheck sites with ctx's error (the sums then partial).
	LikGradTo(ctx context.Context, a *Approx, sites []lik.Site, at func(j int) []float64) error
	// KernelGrad returns the gradient of a's log evidence in the
	// hyperparameters whose derivatives of the prior covariance are dC.
	KernelGrad(a *Approx, dC []mat.Symmetric) ([]float64, error)
}

// NewEngine returns the engine name (multirater.EngineEP or
// multirater.EngineLaplace) with the problem's options. It panics for
// another name.
func (p *Problem) NewEngine() Engine {
	switch p.Engine {
	case multirater.EngineEP:
		ps := p.ParallelSites
		if ps == 0 {
			ps = 4
		}
		return &EP{Options: p.EP, ParallelSites: ps}
	case multirater.EngineLaplace:
		return &Laplace{Options: p.Laplace}
	}
	panic(fmt.Sprintf("infer: unknown engine %q", p.Engine))
}

// EP is expectation propagation (multirater/ep) as an Engine: log Z_EP
// (Rasmussen & Williams eq. 3.65), its gradient in the likelihood
// parameters the sum of the sites' tilted gradients at their cavities
// (lik.Learnable.TiltedGradTo; Seeger 2005) and in the kernel
// hyperparameters ep.Result.KernelGrad (R&W eq. 5.27 with EP's sites).
type EP struct {
	Options ep.Options
	// ParallelSites is the number of sites per item above which EP updates
	// in parallel (unless Options says otherwise); 0 or negative never.
	ParallelSites int
}

// Name returns multirater.EngineEP.
func (*EP) Name() string { return multirater.EngineEP }

// Approximate runs EP from warm's sites when given, during the search at
// a tolerance of 1e-3 (or Options.Tol when looser). A warm start that does
// not settle is rerun cold; with Options.NegativeSites, a run that does not
// settle is rerun with the site precisions clamped at 0 and damped (GPML),
// and the Approx records it (its gradients are then approximate). A
// cancelled ctx stops the run (ep.Options.Stop) and no rerun follows.
func (e *EP) Approximate(ctx context.Context, fac *gp.Factor, sites []lik.Site, warm *Approx, search bool) (*Approx, error) {
	n := fac.N
	eo := e.Options
	eo.Stop = ctx.Err
	// again reports whether a failed run may be rerun: not when ctx was
	// cancelled.
	again := func(err error) bool { return err != nil && ctx.Err() == nil }
	// Options.DecayAfter is the final approximation's last resort only:
	// the runs before it, and every run of a search (where a run that
	// does not settle makes its trial point bad), keep their damping.
	decay := eo.DecayAfter
	eo.DecayAfter = 0
	if !eo.Parallel && eo.Damping == 0 && e.ParallelSites > 0 && len(sites) > e.ParallelSites*n {
		// A sequential sweep costs O(M r^2) in level-2 BLAS, a parallel
		// one O(N r^2) in level-3 BLAS but needs about twice the
		// sweeps: parallel pays when items have many sites.
		eo.Parallel = true
	}
	if warm != nil {
		eo.InitTau, eo.InitNu = warm.EP.Tau, warm.EP.Nu
	}
	// A search evaluates the gradient at every run: the sites' tilted
	// gradients come with log Z_EP's tilted normalisers.
	eo.TiltedGrads = search
	if search && eo.Tol < 1e-3 {
		// log Z_EP is stationary in the sites: its error at 1e-3 is far
		// smaller than 1e-3. The final approximation uses EP's Tol.
		eo.Tol = 1e-3
	}
	r, err := ep.Run(fac, sites, eo)
	if again(err) && warm != nil {
		// A warm start far from the new parameters can stall: start cold.
		eo.InitTau, eo.InitNu = nil, nil
		r, err = ep.Run(fac, sites, eo)
	}
	clamped := false
	if again(err) && eo.NegativeSites {
		// Negative site precisions can leave a cavity improper or keep
		// EP from settling: clamp them at 0 (GPML), damped, from cold.
		eo.NegativeSites, eo.InitTau, eo.InitNu = false, nil, nil
		if eo.Damping == 0 {
			eo.Damping = 0.7
		}
		r, err = ep.Run(fac, sites, eo)
		clamped = err == nil
	}
	if again(err) && !search && decay > 0 {
		// The final approximation at parameters where items' sites cycle:
		// settle them by decaying their damping (ep.Options.DecayAfter),
		// from warm's sites, the negative ones kept.
		eo = e.Options
		eo.Stop = ctx.Err
		if warm != nil {
			eo.InitTau, eo.InitNu = warm.EP.Tau, warm.EP.Nu
		}
		r, err = ep.Run(fac, sites, eo)
		clamped = false
	}
	if err != nil {
		return nil, err
	}
	ss, sv := make([]float64, n), make([]float64, n)
	for j, st := range sites {
		ss[st.Item] += r.Tau[j]
		sv[st.Item] += r.Nu[j]
	}
	return &Approx{Mean: r.Mean, Var: r.Var, SiteS: ss, SiteV: sv, LogZ: r.LogZ, Iterations: r.Sweeps, Draw: r.DrawTo, EP: r, clamped: clamped}, nil
}

// gradCheck is the number of sites between two checks of the context in
// LikGradTo (a site's tilted gradient by quadrature costs microseconds).
const gradCheck = 1024

// LikGradTo adds the sites' tilted gradients at their cavities (those the
// EP run kept, ep.Options.TiltedGrads, else computed here).
func (*EP) LikGradTo(ctx context.Context, a *Approx, sites []lik.Site, at func(j int) []float64) error {
	var scratch []float64
	for j, s := range sites {
		if j%gradCheck == gradCheck-1 && ctx.Err() != nil {
			return ctx.Err()
		}
		buf := a.EP.TiltedGrad(j)
		if buf == nil {
			o := s.Lik.(lik.LaplaceLearnable)
			if np := o.NumParams(); cap(scratch) < np {
				scratch = make([]float64, np)
			}
			buf = o.TiltedGradTo(scratch[:o.NumParams()], s.Y, a.EP.CavMean[j], a.EP.CavVar[j])
		}
		g := at(j)
		for k := range buf {
			g[k] += buf[k]
		}
	}
	return nil
}

// KernelGrad returns ep.Result.KernelGrad.
func (*EP) KernelGrad(a *Approx, dC []mat.Symmetric) ([]float64, error) {
	return a.EP.KernelGrad(dC)
}

// Laplace is Laplace's method (multirater/laplace) as an Engine: Chu &
// Ghahramani's eq. 11 for the log evidence, its gradient in the likelihood
// parameters the explicit terms and those through the mode
// (laplace.Result.Implicit), in the kernel hyperparameters
// laplace.Result.KernelGrad.
type Laplace struct {
	Options laplace.Options
}

// Name returns multirater.EngineLaplace.
func (*Laplace) Name() string { return multirater.EngineLaplace }

// Approximate finds the mode by Newton's method (warm and search do not
// change it); a cancelled ctx stops it (laplace.Options.Stop).
func (e *Laplace) Approximate(ctx context.Context, fac *gp.Factor, sites []lik.Site, warm *Approx, _ bool) (*Approx, error) {
	lo := e.Options
	lo.Stop = ctx.Err
	if warm != nil && warm.Laplace != nil {
		// Newton from the last mode when the factor is the same.
		if w, ew, f := warm.Laplace.Mode(); f == fac {
			lo.InitW, lo.InitE = w, ew
		}
	}
	r, err := laplace.Run(fac, sites, lo)
	if err != nil {
		return nil, err
	}
	sv := make([]float64, len(r.Mean))
	for i := range sv {
		sv[i] = r.W[i]*r.Mean[i] + r.Grad[i]
	}
	return &Approx{Mean: r.Mean, Var: r.Var, SiteS: r.W, SiteV: sv, LogZ: r.LogZ, Iterations: r.Iterations, Draw: r.DrawTo, Laplace: r}, nil
}

// LikGradTo adds Chu's eq. 11 gradient: per site, d lp/d theta + 1/2 Var_n
// d d2/d theta + u_n d d1/d theta (laplace.Result.Implicit).
func (*Laplace) LikGradTo(ctx context.Context, a *Approx, sites []lik.Site, at func(j int) []float64) error {
	u := a.Laplace.Implicit()
	maxNP := 0
	for _, s := range sites {
		maxNP = max(maxNP, s.Lik.(lik.LaplaceLearnable).NumParams())
	}
	bufs := make([]float64, 3*maxNP)
	for j, s := range sites {
		if j%gradCheck == gradCheck-1 && ctx.Err() != nil {
			return ctx.Err()
		}
		o := s.Lik.(lik.LaplaceLearnable)
		np := o.NumParams()
		buf, d1, d2 := bufs[:np], bufs[maxNP:maxNP+np], bufs[2*maxNP:2*maxNP+np]
		o.LogLikGradTo(buf, d1, d2, s.Y, a.Mean[s.Item])
		g := at(j)
		for k := range buf {
			g[k] += buf[k] + 0.5*a.Var[s.Item]*d2[k] + u[s.Item]*d1[k]
		}
	}
	return nil
}

// KernelGrad returns laplace.Result.KernelGrad.
func (*Laplace) KernelGrad(a *Approx, dC []mat.Symmetric) ([]float64, error) {
	return a.Laplace.KernelGrad(dC), nil
}
