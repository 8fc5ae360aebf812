// Package infer runs a deterministic engine (multirater/ep or
// multirater/laplace) for a Gaussian-process prior and a set of sites whose
// likelihoods belong to a few owners (the raters), and maximises the log
// evidence over the owners' likelihood parameters and the kernel's
// hyperparameters with L-BFGS (gonum/optimize) from several starting points
// (Chu & Ghahramani sec. 4 and footnote 6). Every model family fitted by EP
// or Laplace uses it: a family brings its likelihoods, their starting
// points, an optional prior on their parameters, and summarises the
// Approx it gets back.
//
// The objective is the engine's log evidence with its exact gradient: for
// EP, log Z_EP and the sum of the sites' tilted gradients at their cavities
// (lik.Learnable.TiltedGradTo) plus ep.Result.KernelGrad; for Laplace, Chu's
// eq. 11 with the explicit terms and those through the mode
// (lik.LaplaceLearnable.LogLikGradTo, laplace.Result.Implicit and
// KernelGrad).
//
// A kernel matrix is factorised by the pivoted Cholesky decomposition
// (gp.NewPivotedFactor) to the trace tolerance the problem gives
// (Problem.FactorTol), refactorised when the parameters change enough to
// need it; during the search the factor is 10 times looser and EP stops at
// 1e-3, the final approximation uses the tight settings.
package infer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"concord/multirater"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/laplace"
	"concord/multirater/lik"
)

// Problem is a deterministic fit: the prior, the sites, the owners'
// likelihoods and what of them is learnt.
type Problem struct {
	// Engine is multirater.EngineEP or multirater.EngineLaplace.
	Engine string
	// N is the number of items (latent values).
	N int
	// Cov is the fixed part of the prior covariance of the items; nil with
	// Kernel nil means the identity.
	Cov mat.Symmetric
	// Kernel, when not nil, holds the kernel terms whose hyperparameters
	// are learnt (added to Cov).
	Kernel *Kernel
	// Sites are the observations; Owner[j] is the index in Liks of the
	// owner of site j's likelihood: Sites[j].Lik is a lik.LaplaceLearnable
	// with the owner's parameters (the owner's likelihood itself, or a view
	// of it, such as a censored form, sharing its parameters), and the
	// gradient of site j goes to the owner's parameters.
	Sites []lik.Site
	Owner []int
	// Liks are the owners' likelihoods; a nil entry owns no site.
	Liks []lik.LaplaceLearnable
	// Fixed, when not nil, reports the likelihood parameters that are not
	// learnt (owner l, parameter k); their gradient is zero and Start's
	// values stay.
	Fixed func(l, k int) bool
	// Start sets dst (the parameters of every owner, concatenated in owner
	// order, each owner's NumParams long) to start s's values (s = 0 is the
	// first, deterministic one; later starts may jitter with rng).
	Start func(s int, rng *rand.Rand, dst []float64)
	// LogPrior, when not nil, returns the log prior of owner l's parameters
	// p and adds its gradient to grad (nil when only the value is needed);
	// the maximised objective is then the log evidence plus the log priors
	// (type-II MAP) and PriorNote names it in the notes.
	LogPrior  func(l int, p, grad []float64) float64
	PriorNote string
	// FactorTol returns the trace of C - G G' a pivoted factor of the
	// kernel matrix may leave out at the current parameters (the factor is
	// built to a quarter of it).
	FactorTol func() float64
	// Restarts is the number of starting points (at least 1).
	Restarts int
	// WarmKernel starts the first start's kernel hyperparameters at the
	// Kernel's current ones (those it was last fitted at, as in an EM loop
	// that refits at each step) instead of Chu's footnote-6 start.
	WarmKernel bool
	// ParallelSites is the number of sites per item above which EP
	// updates in parallel (unless EP says otherwise); 0 means 4, negative
	// never.
	ParallelSites int
	// EP and Laplace control the engines. During the search EP stops at a
	// tolerance of 1e-3 (or EP.Tol when looser); the final approximation
	// at EP.Tol.
	EP      ep.Options
	Laplace laplace.Options
	// Progress, when set, is called after each evaluation of the evidence
	// with the fraction of the maximisation done and an ETA (see
	// progressOf).
	Progress func(multirater.Progress)
	// WarmEP, when not nil, holds EP sites (one per site) to start the
	// first EP run from: the previous round's of an EM loop over
	// parameters held fixed here (robust's error rates). Later runs start
	// from the previous run's sites (across evaluations and restarts).
	WarmEP *ep.Result
	// MaxIterations bounds the L-BFGS iterations of each start; 0 means
	// 500. An EM loop that refits the other parameters at every step may
	// take a few (a generalised EM step only needs to raise the objective).
	MaxIterations int
}

// Approx is what both engines give at the final parameters: the Gaussian
// marginals, the Gaussian sites summed per item, the log evidence, the
// iterations and joint draws.
type Approx struct {
	Mean, Var []float64
	// SiteS, SiteV are the Gaussian sites' precisions and
	// precision-weighted means summed per item (multirater.GaussianSites).
	SiteS, SiteV []float64
	LogZ         float64
	Iterations   int
	// Draw sets dst to a joint draw of the latent values.
	Draw func(rng *rand.Rand, dst []float64)
	// EP or Laplace is the engine's own result.
	EP      *ep.Result
	Laplace *laplace.Result
	// Notes are one line per start of the evidence maximisation.
	Notes []string
	// Learnt are the learnt kernel terms in the kernel grammar (nil
	// without Kernel).
	Learnt []string
}

// Fit maximises the objective over the parameters not fixed (when there
// are any) and returns the engine's approximation at the best start's
// optimum, with every owner's likelihood set to it.
func Fit(ctx context.Context, p *Problem, rng *rand.Rand) (*Approx, error) {
	start := time.Now()
	if p.Engine != multirater.EngineEP && p.Engine != multirater.EngineLaplace {
		panic(fmt.Sprintf("infer: unknown engine %q", p.Engine))
	}
	if len(p.Owner) != len(p.Sites) || p.Start == nil || p.FactorTol == nil {
		panic("infer: Problem needs Owner for every site, Start and FactorTol")
	}
	n := p.N
	nl := len(p.Liks)
	off := make([]int, nl+1)
	for l, o := range p.Liks {
		off[l+1] = off[l]
		if o != nil {
			off[l+1] += o.NumParams()
		}
	}
	nlik := off[nl]
	var fac *gp.Factor
	cov := p.Cov
	if p.Cov == nil && p.Kernel == nil {
		fac = gp.IdentityFactor(n)
	}
	parallelSites := p.ParallelSites
	if parallelSites == 0 {
		parallelSites = 4
	}
	warm := p.WarmEP
	if warm != nil && len(warm.Tau) != len(p.Sites) {
		panic("infer: WarmEP has the wrong number of sites")
	}
	optimising := false
	prog := &evidenceProgress{starts: 1, expect: firstStartEvals}
	clampedRuns := 0 // EP runs that fell back to clamped site precisions
	evaluate := func() (*Approx, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if p.Kernel != nil && p.Kernel.c != cov {
			cov, fac = p.Kernel.c, nil
		}
		ftol := p.FactorTol()
		if optimising {
			ftol *= 10
		}
		if cov != nil && (fac == nil || fac.Residual > ftol) {
			f, err := gp.NewPivotedFactor(cov, ftol/4)
			if err != nil {
				return nil, err
			}
			fac = f
		}
		if p.Engine == multirater.EngineLaplace {
			r, err := laplace.Run(fac, p.Sites, p.Laplace)
			if err != nil {
				return nil, err
			}
			sv := make([]float64, n)
			for i := range sv {
				sv[i] = r.W[i]*r.Mean[i] + r.Grad[i]
			}
			return &Approx{Mean: r.Mean, Var: r.Var, SiteS: r.W, SiteV: sv, LogZ: r.LogZ, Iterations: r.Iterations, Draw: r.DrawTo, Laplace: r}, nil
		}
		eo := p.EP
		if !eo.Parallel && eo.Damping == 0 && parallelSites > 0 && len(p.Sites) > parallelSites*n {
			// A sequential sweep costs O(M r^2) in level-2 BLAS, a parallel
			// one O(N r^2) in level-3 BLAS but needs about twice the
			// sweeps: parallel pays when items have many sites.
			eo.Parallel = true
		}
		if warm != nil {
			eo.InitTau, eo.InitNu = warm.Tau, warm.Nu
		}
		if optimising && eo.Tol < 1e-3 {
			// log Z_EP is stationary in the sites: its error at 1e-3 is far
			// smaller than 1e-3. The final approximation uses EP's Tol.
			eo.Tol = 1e-3
		}
		r, err := ep.Run(fac, p.Sites, eo)
		if err != nil && warm != nil {
			// A warm start far from the new parameters can stall: start cold.
			eo.InitTau, eo.InitNu = nil, nil
			r, err = ep.Run(fac, p.Sites, eo)
		}
		if err != nil && eo.NegativeSites {
			// Negative site precisions can leave a cavity improper or keep
			// EP from settling: clamp them at 0 (GPML), damped, from cold.
			eo.NegativeSites, eo.InitTau, eo.InitNu = false, nil, nil
			if eo.Damping == 0 {
				eo.Damping = 0.7
			}
			r, err = ep.Run(fac, p.Sites, eo)
			if err == nil {
				clampedRuns++
			}
		}
		if err != nil {
			return nil, err
		}
		warm = r
		ss, sv := make([]float64, n), make([]float64, n)
		for j, st := range p.Sites {
			ss[st.Item] += r.Tau[j]
			sv[st.Item] += r.Nu[j]
		}
		return &Approx{Mean: r.Mean, Var: r.Var, SiteS: ss, SiteV: sv, LogZ: r.LogZ, Iterations: r.Sweeps, Draw: r.DrawTo, EP: r}, nil
	}
	fixed := func(l, k int) bool { return p.Fixed != nil && p.Fixed(l, k) }
	anyFree := p.Kernel.Size() > 0
	for l, o := range p.Liks {
		for k := 0; o != nil && k < o.NumParams(); k++ {
			anyFree = anyFree || !fixed(l, k)
		}
	}
	base := make([]float64, nlik) // the fixed parameters' values (start 0)
	p.Start(0, rng, base)
	setAll := func(theta []float64) error {
		if err := p.Kernel.set(theta[nlik:]); err != nil {
			return err
		}
		for l, o := range p.Liks {
			if o == nil {
				continue
			}
			q := make([]float64, o.NumParams())
			for k := range q {
				q[k] = theta[off[l]+k]
				if fixed(l, k) {
					q[k] = base[off[l]+k]
				}
			}
			o.SetParams(q)
		}
		return nil
	}
	startTheta := func(s int) []float64 {
		theta := make([]float64, nlik+p.Kernel.Size())
		p.Start(s, rng, theta[:nlik])
		if p.WarmKernel && s == 0 && p.Kernel != nil && p.Kernel.c != nil {
			copy(theta[nlik:], p.Kernel.cur)
		} else {
			p.Kernel.startTo(theta[nlik:], s, rng)
		}
		return theta
	}
	var lastErr error
	objective := func(theta, grad []float64) float64 {
		if err := setAll(theta); err != nil {
			lastErr = err
			return math.Inf(1)
		}
		a, err := evaluate()
		if err != nil {
			lastErr = err
			return math.Inf(1)
		}
		val := a.LogZ
		if math.IsNaN(val) || math.IsInf(val, 0) {
			lastErr = fmt.Errorf("multirater: the %s log evidence is %v at these parameters", p.Engine, val)
			return math.Inf(1)
		}
		if grad != nil {
			for i := range grad {
				grad[i] = 0
			}
			if a.Laplace != nil {
				// Chu eq. 11: explicit terms and those through the mode.
				u := a.Laplace.Implicit()
				maxNP := 0
				for _, o := range p.Liks {
					if o != nil {
						maxNP = max(maxNP, o.NumParams())
					}
				}
				bufs := make([]float64, 3*maxNP)
				for j, s := range p.Sites {
					o := s.Lik.(lik.LaplaceLearnable)
					np := o.NumParams()
					buf, d1, d2 := bufs[:np], bufs[maxNP:maxNP+np], bufs[2*maxNP:2*maxNP+np]
					o.LogLikGradTo(buf, d1, d2, s.Y, a.Mean[s.Item])
					g := grad[off[p.Owner[j]]:]
					for k := range buf {
						g[k] += buf[k] + 0.5*a.Var[s.Item]*d2[k] + u[s.Item]*d1[k]
					}
				}
			} else {
				// EP: the sites' tilted gradients at their cavities.
				var scratch []float64
				for j, s := range p.Sites {
					o := s.Lik.(lik.LaplaceLearnable)
					if np := o.NumParams(); cap(scratch) < np {
						scratch = make([]float64, np)
					}
					buf := o.TiltedGradTo(scratch[:o.NumParams()], s.Y, a.EP.CavMean[j], a.EP.CavVar[j])
					g := grad[off[p.Owner[j]]:]
					for k := range buf {
						g[k] += buf[k]
					}
				}
			}
			if p.Kernel.Size() > 0 {
				var g []float64
				if a.Laplace != nil {
					g = a.Laplace.KernelGrad(p.Kernel.grads)
				} else if g, err = a.EP.KernelGrad(p.Kernel.grads); err != nil {
					lastErr = err
					return math.Inf(1)
				}
				copy(grad[nlik:], g)
			}
		}
		if p.LogPrior != nil {
			for l, o := range p.Liks {
				if o == nil {
					continue
				}
				var g []float64
				if grad != nil {
					g = grad[off[l]:off[l+1]]
				}
				val += p.LogPrior(l, o.ParamsTo(make([]float64, o.NumParams())), g)
			}
		}
		if grad != nil {
			for l, o := range p.Liks {
				for k := 0; o != nil && k < o.NumParams(); k++ {
					if fixed(l, k) {
						grad[off[l]+k] = 0
					}
				}
			}
			for k := range grad {
				grad[k] = -grad[k]
			}
		}
		if p.Progress != nil {
			prog.evals++
			p.Progress(prog.progress(time.Since(start)))
		}
		return -val
	}
	var best []float64
	bestVal := math.Inf(1)
	var notes []string
	if anyFree {
		restarts := max(p.Restarts, 1)
		prog.starts = restarts
		for s := 0; s < restarts; s++ {
			prog.start, prog.evals = s, 0
			x0 := startTheta(s)
			// L-BFGS asks for the value and the gradient at the same points:
			// one engine run gives both.
			var cx, cg []float64
			var cv float64
			eval := func(x []float64) {
				if cx != nil && floats.Equal(cx, x) {
					return
				}
				cx = append(cx[:0], x...)
				cg = make([]float64, len(x))
				cv = objective(x, cg)
			}
			prob := optimize.Problem{
				Func: func(x []float64) float64 { eval(x); return cv },
				Grad: func(g, x []float64) { eval(x); copy(g, cg) },
			}
			optimising = true
			// Converged when the objective has gained less than 1e-4 nats in
			// two iterations, or the gradient is below 1e-5.
			conv := &hopeless{FunctionConverge: optimize.FunctionConverge{Absolute: 1e-4, Iterations: 2}, best: bestVal}
			maxIter := p.MaxIterations
			if maxIter == 0 {
				maxIter = 500
			}
			r, err := optimize.Minimize(prob, x0, &optimize.Settings{GradientThreshold: 1e-5, MajorIterations: maxIter,
				Converger: conv}, &optimize.LBFGS{})
			prog.done(prog.evals)
			if err != nil && r == nil {
				return nil, fmt.Errorf("multirater: evidence maximisation: %w", err)
			}
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			status := "converged"
			switch {
			case err != nil:
				status = err.Error()
			case conv.stopped:
				status = fmt.Sprintf("stopped early: %.1f nats below the best start after %d iterations", conv.gap, r.Stats.MajorIterations)
			case r.Status != optimize.GradientThreshold && r.Status != optimize.FunctionConvergence:
				status = r.Status.String()
			}
			what := "log evidence"
			if p.LogPrior != nil && p.PriorNote != "" {
				what = p.PriorNote
			}
			notes = append(notes, fmt.Sprintf("evidence maximisation start %d: %s %.4f after %d L-BFGS iterations (%s)", s+1, what, -r.F, r.Stats.MajorIterations, status))
			if r.F < bestVal {
				bestVal, best = r.F, append([]float64(nil), r.X...)
			}
		}
		if best == nil {
			if lastErr != nil {
				return nil, lastErr
			}
			return nil, errors.New("multirater: evidence maximisation found no finite evidence")
		}
	} else {
		best = startTheta(0)
	}
	if err := setAll(best); err != nil {
		return nil, err
	}
	optimising = false
	a, err := evaluate()
	if err != nil {
		return nil, err
	}
	if math.IsNaN(a.LogZ) || math.IsInf(a.LogZ, 0) {
		return nil, fmt.Errorf("multirater: the %s log evidence is %v (a likelihood gave non-finite values)", p.Engine, a.LogZ)
	}
	for i, m := range a.Mean {
		if math.IsNaN(m) || math.IsNaN(a.Var[i]) {
			return nil, fmt.Errorf("multirater: the %s posterior of item %d is N(%v, %v)", p.Engine, i, m, a.Var[i])
		}
	}
	if clampedRuns > 0 {
		notes = append(notes, fmt.Sprintf("%d EP runs kept no negative site precisions (clamped at 0, damped) after EP with them did not settle; their evidence gradients are approximate", clampedRuns))
	}
	a.Notes = notes
	if p.Kernel != nil {
		a.Learnt = p.Kernel.terms()
	}
	return a, nil
}

// firstStartEvals is the number of evidence evaluations the progress
// expects of a start of the maximisation until one has finished (then the
// largest seen; L-BFGS from the first start takes 20-60 on the ladder).
const firstStartEvals = 40

// evidenceProgress estimates the fraction done of an evidence
// maximisation: starts done plus the current start's evaluations over
// those expected (capped at 95% of a start), and the ETA from the rate so
// far.
type evidenceProgress struct {
	starts, start, evals, expect int
}

func (e *evidenceProgress) done(evals int) { e.expect = max(e.expect, evals) }

func (e *evidenceProgress) progress(elapsed time.Duration) multirater.Progress {
	cur := math.Min(float64(e.evals)/float64(e.expect), 0.95)
	f := (float64(e.start) + cur) / float64(e.starts)
	pr := multirater.Progress{Fraction: f, Elapsed: elapsed, Phase: fmt.Sprintf("maximising the evidence (start %d of %d, %d evaluations)", e.start+1, e.starts, e.evals)}
	if f > 0 {
		pr.ETA = time.Duration(float64(elapsed) * (1 - f) / f)
	}
	return pr
}

// hopeless is L-BFGS's convergence test with an early stop for a start
// that cannot win: after hopelessAfter iterations, a start whose
// objective is still more than hopelessGap nats (or that fraction of the
// best's magnitude, if larger) worse than the best start's optimum so far
// is stopped. Its note says so.
type hopeless struct {
	optimize.FunctionConverge
	best    float64
	stopped bool
	gap     float64
	iter    int
}

const (
	hopelessAfter = 15
	hopelessGap   = 20.0
)

func (h *hopeless) Init(dim int) {
	h.FunctionConverge.Init(dim)
	h.iter, h.stopped = 0, false
}

func (h *hopeless) Converged(loc *optimize.Location) optimize.Status {
	h.iter++
	if h.iter >= hopelessAfter && !math.IsInf(h.best, 1) {
		if gap := loc.F - h.best; gap > math.Max(hopelessGap, 1e-2*math.Abs(h.best)) {
			h.stopped, h.gap = true, gap
			return optimize.FunctionConvergence
		}
	}
	return h.FunctionConverge.Converged(loc)
}

// LearnKernel are kernel terms whose hyperparameters a family's data asks
// to learn, on the items' inputs (the families' Data.Learn).
type LearnKernel struct {
	Terms  []kernel.Hyper
	Inputs kernel.Inputs
}

// Kernel is the prior covariance when kernel terms are learnt:
// C = fixed + sum_t Gram_t(theta_t) and the derivatives of C in every
// hyperparameter. A nil *Kernel has no hyperparameters.
type Kernel struct {
	n      int
	fixed  mat.Symmetric
	learn  []kernel.Hyper
	inputs kernel.Inputs
	dims   []int // hyperparameters per term
	cur    []float64
	terms_ []kernel.Hyper
	c      *mat.SymDense
	grads  []mat.Symmetric
}

// NewKernel returns the covariance fixed + the terms learn on the inputs
// (fixed may be nil), at the terms' current hyperparameters.
func NewKernel(n int, fixed mat.Symmetric, learn []kernel.Hyper, inputs kernel.Inputs) (*Kernel, error) {
	k := &Kernel{n: n, fixed: fixed, learn: learn, inputs: inputs}
	dim := 0
	if inputs.X != nil {
		_, dim = inputs.X.Dims()
	}
	var p []float64
	for _, t := range learn {
		d := t.NumHyper(dim)
		k.dims = append(k.dims, d)
		p = append(p, t.HyperTo(make([]float64, d), dim)...)
	}
	if err := k.set(p); err != nil {
		return nil, err
	}
	return k, nil
}

// Size is the number of hyperparameters.
func (k *Kernel) Size() int {
	if k == nil {
		return 0
	}
	return len(k.cur)
}

// startTo sets dst to the starting hyperparameters of start s: Chu's
// footnote 6 (gamma = kappa/2 = 1/(2D)) for the first, jittered by a factor
// exp(N(0, 1)) for the others.
func (k *Kernel) startTo(dst []float64, s int, rng *rand.Rand) {
	if k == nil {
		return
	}
	dim := 1
	if k.inputs.X != nil {
		_, dim = k.inputs.X.Dims()
	}
	for i := range dst {
		dst[i] = math.Log(0.5 / float64(dim))
		if s > 0 {
			dst[i] += rng.NormFloat64()
		}
	}
}

// set rebuilds C and its derivatives for hyperparameters p (a no-op when p
// has not changed).
func (k *Kernel) set(p []float64) error {
	if k == nil {
		return nil
	}
	if k.c != nil && floats.Equal(p, k.cur) {
		return nil
	}
	k.cur = append(k.cur[:0], p...)
	k.c = mat.NewSymDense(k.n, nil)
	if k.fixed != nil {
		for i := 0; i < k.n; i++ {
			for j := i; j < k.n; j++ {
				k.c.SetSym(i, j, k.fixed.At(i, j))
			}
		}
	}
	k.terms_ = k.terms_[:0]
	k.grads = k.grads[:0]
	off := 0
	for t, term := range k.learn {
		h := term.WithHyper(p[off : off+k.dims[t]])
		off += k.dims[t]
		k.terms_ = append(k.terms_, h)
		var g mat.SymDense
		h.GramTo(&g, k.inputs)
		k.c.AddSym(k.c, &g)
		gs := make([]*mat.SymDense, k.dims[t])
		h.GramGradTo(gs, k.inputs)
		for _, d := range gs {
			k.grads = append(k.grads, d)
		}
	}
	return nil
}

// Cov returns the covariance at the current hyperparameters (after Fit:
// the learnt ones).
func (k *Kernel) Cov() mat.Symmetric { return k.c }

// terms returns the learnt terms in the kernel grammar.
func (k *Kernel) terms() []string {
	out := make([]string, len(k.terms_))
	for i, t := range k.terms_ {
		out[i] = t.String()
	}
	return out
}

// Ranks returns each item's rank summary (rank 1: the largest latent
// value) over draws joint draws of the approximation (Draw with rng); keep,
// when not nil, is given each draw after its ranks are counted (it may keep
// the slice).
func (a *Approx) Ranks(rng *rand.Rand, draws int, keep func(m []float64)) []*multirater.RankSummary {
	n := len(a.Mean)
	// ranks[i*draws+s] is item i's rank in draw s: one block of int32
	// (4 N draws bytes, 128 MB for 64,000 items and 500 draws), not N
	// slices grown draw by draw. The summaries are those of the float64
	// ranks (integers, exact).
	if n > math.MaxInt32 {
		panic("infer: Ranks: too many items")
	}
	ranks := make([]int32, n*draws)
	order := make([]int, n)
	var m []float64
	for s := 0; s < draws; s++ {
		if m == nil || keep != nil {
			m = make([]float64, n)
		}
		a.Draw(rng, m)
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(x, y int) bool { return m[order[x]] > m[order[y]] })
		for rank, i := range order {
			ranks[i*draws+s] = int32(rank + 1)
		}
		if keep != nil {
			keep(m)
		}
	}
	out := make([]*multirater.RankSummary, n)
	if draws == 0 {
		return out
	}
	for i := range out {
		rk := ranks[i*draws : (i+1)*draws]
		slices.Sort(rk)
		sum := 0.0
		for _, v := range rk {
			sum += float64(v)
		}
		q := func(p float64) float64 { return float64(rk[min(len(rk)-1, int(p*float64(len(rk))))]) }
		out[i] = &multirater.RankSummary{Mean: sum / float64(len(rk)), Q025: q(0.025), Q50: q(0.5), Q975: q(0.975)}
	}
	return out
}

// Diagnose fills dg's engine-neutral part for the approximation a made by
// engine: the engine with its iterations and log evidence, converged, the
// verdict, and empty MCMC fields.
func (a *Approx) Diagnose(dg *multirater.Diagnostics, engine string) {
	le := a.LogZ
	dg.Engine = &multirater.EngineDiagnostics{Name: engine, Iterations: a.Iterations, LogEvidence: &le}
	dg.Converged = true
	what := "EP"
	if engine == multirater.EngineLaplace {
		what = "Laplace's method"
	}
	dg.Verdict = fmt.Sprintf("converged: %s in %d iterations, log evidence %.4f", what, a.Iterations, le)
	dg.Parameters = []multirater.ParamDiag{}
	dg.Autocorrelation = map[string][]float64{}
}
