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
// A fit is a likelihood (lik), a prior (a covariance or a Kernel whose
// hyperparameters are learnt) and an Engine (EP, Laplace), as in GPML's
// lik/cov/inf split: Fit lays out the parameters, draws every starting
// point, runs each restart (one L-BFGS search, a call with its own inputs)
// and makes the final approximation at the best restart's optimum.
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
	"sync"
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
	// take a few (a generalised EM step only needs to raise the objective);
	// a positive bound also bounds the evaluations of the evidence, line
	// searches included, at 3 per iteration (a line search on an evidence
	// whose EP runs barely settle can otherwise take tens of evaluations
	// without a gain).
	MaxIterations int
	// FirstStep, when positive, is the length of L-BFGS's first step in the
	// parameters in every start (gonum's is 1: a factor e in a log-scale
	// parameter), for starts that are already near their optimum (a warm
	// start from a related fit): each search runs in the parameters
	// divided by FirstStep, in which L-BFGS is otherwise the same (its
	// later steps are scale-free), with the gradient threshold scaled
	// alike. 0 means 1.
	FirstStep float64
	// Replica, when not nil, returns a new problem with the same sites,
	// owners and likelihoods as this one (new values: the likelihoods,
	// the sites on them, and FactorTol and LogPrior reading them), so that
	// the starts after the first can run concurrently, each on its own
	// (Fit uses the replica's Liks, Sites, FactorTol and, when it has one,
	// LogPrior: a LogPrior that reads only its arguments may stay the
	// problem's). Without it they run one after another, with the same
	// results.
	Replica func() *Problem
	// Parallel bounds the starts run at once with Replica; 0 means
	// GOMAXPROCS.
	Parallel int
	// GainTol: a start has converged when the objective gained less than
	// GainTol nats in two L-BFGS iterations (or the gradient is below
	// 1e-5); 0 means 1e-4. A search over hundreds of parameters whose
	// last iterations gain hundredths of a nat may take 1e-2.
	GainTol float64
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
	// clamped: EP clamped its site precisions at 0 (EP.Approximate).
	clamped bool
	// fac is the prior factor the approximation was made on.
	fac *gp.Factor
}

// Fit maximises the objective over the parameters not fixed (when there
// are any) and returns the engine's approximation at the best start's
// optimum, with every owner's likelihood set to it.
//
// The fit is three separate units: the objective (objective.eval: the
// engine's log evidence and its gradient at a parameter vector), its
// evaluation by an Engine on the prior's factor (objective.approximate),
// and the restarts (objective.restart: L-BFGS from one starting point).
// Every starting point is drawn from rng before the first search starts, in
// start order, and each restart is a function of the problem, its start,
// Problem.WarmEP and the first start's optimum alone (runStarts), so that
// the restarts after the first may run in any order or at once: with
// Problem.Replica they run concurrently; with an Apart in ctx (WithApart)
// in other processes.
func Fit(ctx context.Context, p *Problem, rng *rand.Rand) (*Approx, error) {
	start := time.Now()
	engine := p.NewEngine()
	if len(p.Owner) != len(p.Sites) || p.Start == nil || p.FactorTol == nil {
		panic("infer: Problem needs Owner for every site, Start and FactorTol")
	}
	ob := newObjective(p, engine, start)
	p.Start(0, rng, ob.base)
	if !ob.anyFree() {
		return finalApprox(ctx, ob, newPrior(p), startTheta(p, ob, 0, rng), nil, 0, nil)
	}
	starts := make([][]float64, max(p.Restarts, 1))
	for s := range starts {
		starts[s] = startTheta(p, ob, s, rng)
	}
	var warm *Approx
	if p.WarmEP != nil {
		if len(p.WarmEP.Tau) != len(p.Sites) {
			panic("infer: WarmEP has the wrong number of sites")
		}
		warm = &Approx{EP: p.WarmEP}
	}
	var rs []*Restart
	var err error
	if a := apartOf(ctx); a != nil && len(starts) > 1 {
		rs, err = a.run(ctx, ob, starts, warm)
	} else {
		rs, err = runStarts(ctx, ob, starts, warm)
	}
	if err != nil {
		return nil, err
	}
	win, notes, err := bestRestart(p, rs)
	if err != nil {
		return nil, err
	}
	clamped := 0
	for _, r := range rs {
		clamped += r.Clamped
	}
	// The final approximation continues the winning start's run: its
	// kernel state, prior factor and last sites.
	w := rs[win]
	p.Kernel.adopt(w.kernel)
	return finalApprox(ctx, ob, w.prior.on(p.Kernel), append([]float64(nil), w.X...), notes, clamped, w.last)
}

// startTheta returns start s's parameter vector: Problem.Start's
// likelihood parameters and the kernel's (Kernel.startTo, or its current
// ones for the first start with Problem.WarmKernel).
func startTheta(p *Problem, ob *objective, s int, rng *rand.Rand) []float64 {
	theta := make([]float64, ob.size())
	p.Start(s, rng, theta[:ob.nlik])
	if p.WarmKernel && s == 0 && p.Kernel != nil && (p.Kernel.c != nil || p.Kernel.ind != nil) {
		copy(theta[ob.nlik:], p.Kernel.cur)
	} else {
		p.Kernel.startTo(theta[ob.nlik:], s, rng)
	}
	return theta
}

// bestRestart returns the index of the restart with the largest
// objective (the first of equals) and one note per restart, with a summary
// when there were several; an error when none found a finite one.
func bestRestart(p *Problem, rs []*Restart) (int, []string, error) {
	what := "log evidence"
	if p.LogPrior != nil && p.PriorNote != "" {
		what = p.PriorNote
	}
	best := -1
	bestVal := math.Inf(1)
	var notes []string
	var lastErr error
	hopeless := 0
	for s, r := range rs {
		notes = append(notes, fmt.Sprintf("evidence maximisation start %d: %s %.4f after %d L-BFGS iterations (%s)", s+1, what, -r.F, r.Iterations, r.Status))
		if r.F < bestVal {
			bestVal, best = r.F, s
		}
		if r.Err != nil {
			lastErr = r.Err
		}
		if r.Hopeless {
			hopeless++
		}
	}
	if best < 0 {
		if lastErr != nil {
			return 0, nil, lastErr
		}
		return 0, nil, errors.New("multirater: evidence maximisation found no finite evidence")
	}
	if len(rs) > 1 {
		notes = append(notes, fmt.Sprintf("evidence maximisation: %d starts, %d stopped early as hopeless (more than %g nats, or %g%% of its size, below start 1's optimum after %d L-BFGS iterations); start %d won", len(rs), hopeless, hopelessGap, 100*hopelessShare, hopelessAfter, best+1))
	}
	return best, notes, nil
}

// finalApprox sets the parameters to best and returns the engine's approximation
// there at the tight tolerances, with its notes.
func finalApprox(ctx context.Context, ob *objective, pr Prior, best []float64, notes []string, clamped int, warm *Approx) (*Approx, error) {
	p := ob.p
	if err := ob.set(best); err != nil {
		return nil, err
	}
	ev := &evaluation{prior: pr, warm: warm}
	a, err := ob.approximate(ctx, ev)
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
	if clamped += ev.clamped; clamped > 0 {
		notes = append(notes, fmt.Sprintf("%d EP runs kept no negative site precisions (clamped at 0, damped) after EP with them did not settle; their evidence gradients are approximate", clamped))
	}
	if p.Kernel != nil {
		if d := p.Kernel.describeInducing(); d != "" {
			notes = append(notes, d)
		}
		a.Learnt = p.Kernel.terms()
	}
	a.Notes = notes
	return a, nil
}

// firstStartEvals is the number of evidence evaluations the progress
// expects of a start of the maximisation until one has finished (then the
// largest seen; L-BFGS from the first start takes 20-60 on the ladder).
const firstStartEvals = 40

// evidenceProgress estimates the fraction done of an evidence
// maximisation whose starts may run at once: starts finished plus each
// running start's evaluations over those expected (capped at 95% of a
// start), and the ETA from the rate so far. It reports to Problem.Progress
// one call at a time.
type evidenceProgress struct {
	mu       sync.Mutex
	report   func(multirater.Progress)
	begin    time.Time
	starts   int
	finished int
	expect   int
	// evals[s] counts start s's evaluations; running[s] says it is under
	// way.
	evals   []int
	running []bool
}

// newEvidenceProgress returns the progress of starts starts reported to
// report (nil: none) from begin.
func newEvidenceProgress(starts int, report func(multirater.Progress), begin time.Time) *evidenceProgress {
	return &evidenceProgress{report: report, begin: begin, starts: starts, expect: firstStartEvals,
		evals: make([]int, starts), running: make([]bool, starts)}
}

// eval counts an evaluation of start s and reports.
func (e *evidenceProgress) eval(s int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.evals[s]++
	e.running[s] = true
	if e.report != nil {
		e.report(e.progress(s, time.Since(e.begin)))
	}
}

// done records that start s has finished.
func (e *evidenceProgress) done(s int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.expect = max(e.expect, e.evals[s])
	e.running[s] = false
	e.finished++
}

// progress is the progress after an evaluation of start s.
func (e *evidenceProgress) progress(s int, elapsed time.Duration) multirater.Progress {
	cur := 0.0
	for t, r := range e.running {
		if r {
			cur += math.Min(float64(e.evals[t])/float64(e.expect), 0.95)
		}
	}
	f := (float64(e.finished) + cur) / float64(e.starts)
	pr := multirater.Progress{Fraction: f, Elapsed: elapsed, Phase: fmt.Sprintf("maximising the evidence (start %d of %d, %d evaluations)", s+1, e.starts, e.evals[s])}
	if f > 0 {
		pr.ETA = time.Duration(float64(elapsed) * (1 - f) / f)
	}
	return pr
}

// hopeless is L-BFGS's convergence test with an early stop for a start
// that cannot win: after hopelessAfter iterations, a start whose
// objective is still more than hopelessGap nats (or hopelessShare of the
// best's magnitude, if larger) worse than best (the first start's optimum:
// runStarts) is stopped. Its note says so.
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
	hopelessShare = 1e-2
)

func (h *hopeless) Init(dim int) {
	h.FunctionConverge.Init(dim)
	h.iter, h.stopped = 0, false
}

func (h *hopeless) Converged(loc *optimize.Location) optimize.Status {
	h.iter++
	if h.iter >= hopelessAfter && !math.IsInf(h.best, 1) {
		if gap := loc.F - h.best; gap > math.Max(hopelessGap, hopelessShare*math.Abs(h.best)) {
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
	// Rank, when positive, asks for the prior in inducing-point (FITC)
	// form with at most Rank inducing items (LearnKernel.NewKernel); 0
	// means the dense N×N covariance.
	Rank int
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
	// ind, when not nil, holds the prior in inducing-point form
	// (LearnKernel.NewKernel) instead of c and grads.
	ind *inducing
}

// NewKernel returns the covariance fixed + the terms learn on the inputs
// (fixed may be nil), at the terms' current hyperparameters.
func NewKernel(n int, fixed mat.Symmetric, learn []kernel.Hyper, inputs kernel.Inputs) (*Kernel, error) {
	return (&Kernel{n: n, fixed: fixed, learn: learn, inputs: inputs}).start()
}

// start sets k's terms at their current hyperparameters (the starting
// point of their learning), recording each term's number of them.
func (k *Kernel) start() (*Kernel, error) {
	dim := 0
	if k.inputs.X != nil {
		_, dim = k.inputs.X.Dims()
	}
	var p []float64
	for _, t := range k.learn {
		d := t.NumHyper(dim)
		k.dims = append(k.dims, d)
		p = append(p, t.HyperTo(make([]float64, d), dim)...)
	}
	if err := k.set(p); err != nil {
		return nil, err
	}
	return k, nil
}

// clone returns a copy of k for a restart after the first: its own
// hyperparameters, matrices and inducing state (beginning with the
// inducing items the first start chose first), sharing what never changes
// (inputs, fixed part, terms) and the matrices it replaces, never writes
// (Kernel.set).
func (k *Kernel) clone() *Kernel {
	if k == nil {
		return nil
	}
	c := *k
	c.cur = slices.Clone(k.cur)
	c.terms_ = slices.Clone(k.terms_)
	c.grads = slices.Clone(k.grads)
	if k.ind != nil {
		ind := *k.ind
		ind.terms = slices.Clone(k.ind.terms)
		ind.pivots, ind.pivAt, ind.cur, ind.dk = ind.first, nil, nil, nil
		c.ind = &ind
	}
	return &c
}

// adopt sets k to w's state (a clone of k's that ran a restart); a no-op
// when w is k.
func (k *Kernel) adopt(w *Kernel) {
	if k != nil && w != k {
		*k = *w
	}
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
	if k.ind != nil {
		if k.cur == nil || !floats.Equal(p, k.cur) {
			k.setInducing(p)
		}
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
// the learnt ones); nil for a Kernel in inducing-point form
// (LearnKernel.NewKernel), which never forms it.
func (k *Kernel) Cov() mat.Symmetric {
	if k.ind != nil {
		return nil
	}
	return k.c
}

// terms returns the learnt terms in the kernel grammar.
func (k *Kernel) terms() []string {
	out := make([]string, len(k.terms_))
	for i, t := range k.terms_ {
		out[i] = t.String()
	}
	return out
}

// MaxRankNumbers bounds the ranks Ranks holds at once (draws x items, as
// int32: 64 MB), so that a fit's memory stays linear in the items: from
// MaxRankNumbers/500 = 32,000 items on, the default 500 rank draws give way
// to fewer (RankDraws: 250 at 64,000 items).
const MaxRankNumbers = 16_000_000

// RankDraws returns the number of joint draws Ranks takes for n items when
// draws are asked: draws, at most MaxRankNumbers/n but not fewer than 100
// (nor more than draws). A 95 % rank interval from 250 draws rests on its
// 6th draws from either end.
func RankDraws(n, draws int) int {
	return min(draws, max(100, MaxRankNumbers/max(n, 1)))
}

// Ranks returns each item's rank summary (rank 1: the largest latent
// value) over RankDraws(N, draws) joint draws of the approximation (Draw
// with rng); keep, when not nil, is given each draw after its ranks are
// counted (the slice is reused for the next draw: keep copies what it
// keeps).
func (a *Approx) Ranks(rng *rand.Rand, draws int, keep func(m []float64)) []*multirater.RankSummary {
	n := len(a.Mean)
	draws = RankDraws(n, draws)
	// ranks[i*draws+s] is item i's rank in draw s: one block of int32
	// (4 N draws bytes, at most 4 MaxRankNumbers), not N slices grown draw
	// by draw. The summaries are those of the float64 ranks (integers,
	// exact).
	if n > math.MaxInt32 {
		panic("infer: Ranks: too many items")
	}
	ranks := make([]int32, n*draws)
	order := make([]int, n)
	m := make([]float64, n)
	for s := 0; s < draws; s++ {
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

// SetRanks sets the rank summary of each of res's items from draws joint
// draws of the approximation (Ranks, with rng) and res.Gaussian to its
// Gaussian sites.
func (a *Approx) SetRanks(res *multirater.FitResult, rng *rand.Rand, draws int) {
	for i, r := range a.Ranks(rng, draws, nil) {
		res.Items[i].Rank = r
	}
	res.Gaussian = &multirater.GaussianSites{Precision: a.SiteS, Shift: a.SiteV}
}
