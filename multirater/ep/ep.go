// Package ep is the expectation-propagation engine (Minka 2001; Chu &
// Ghahramani sec. 3.2 and app. B; Rasmussen & Williams sec. 3.6) for a
// Gaussian-process prior on the latent values f of N items and sites that
// each touch one item: site j (a lik.Site) has the likelihood Lik of its
// observation Y on f_Item (one site per rating; an item may have any number
// of sites, or none).
//
// Each site is approximated by an unnormalised Gaussian
// t_j(f) = s_j exp(-tau_j f^2/2 + nu_j f). With the sites' precisions and
// precision-weighted means summed per item (S_n, V_n) the approximate
// posterior is q(f) = N(mu, Sigma), Sigma = (C^-1 + S)^-1, mu = Sigma V,
// computed in the whitened coordinates of the prior factor C = G G'
// (gp.Factor): w ~ N(H^-1 b, H^-1) with H = I + G'SG and b = G'V, so that C
// is never inverted and may be singular. The site updates match the first
// two moments of the tilted distributions cavity x likelihood, from
// lik.Likelihood's Tilted.
//
// Costs, with r the rank of the factor (r = N for a full-rank kernel, less
// for a low-rank or pivoted factor, gp.NewPivotedFactor; the identity kernel
// is diagonal and costs O(N + M)): a sequential sweep updates the sites one
// at a time, keeping the lower triangle of H^-1 up to date by rank-one
// (Sherman-Morrison) downdates fused with the next site's H^-1 g_n, O(M r^2)
// in one pass over H^-1 per site, split between two goroutines for
// r >= 128; a parallel sweep updates every site from the same posterior and
// refactorises, O(N r^2 + r^3) in level-3 BLAS (H = I + G'SG and the
// marginals' G L'^-T by gp.SyrkUpperTrans and gp.TrsmRightLowerTrans, AVX2
// and FMA kernels where the processor has them, about three times gonum's
// pure-Go Dsyrk and Dtrsm). The log evidence and the
// marginals at convergence cost O(N r^2 + r^3), and KernelGrad O(N^2 r) per
// hyperparameter. Measured on this project's 2-core machine (pure-Go BLAS,
// N = 1000 items, r = 412, BenchmarkRun): a cold sequential EP run 0.4 s
// (10 sweeps), parallel 0.57 s (22 sweeps), a kernel gradient 0.07 s.
//
// RunPairs (pairs.go) is parallel EP with damping for sites on contrasts
// f_i - f_j of two items (AUC pairs, Ridgway et al. sec. 3.3 and 4), whose
// summed site precision is not diagonal; RunPairsCoords adds sites on the
// whitened coordinates (a linear model's prior sites).
//
// Result.NewItem and Result.Item (added.go) give the predictive probability
// of one more observation by the EP evidence ratio Z_EP(D + y)/Z_EP(D), with
// the sites of the items most correlated with the observed one responding
// (block EP), which corrects the Gaussian predictive for the skewness of the
// exact posterior.
//
// LogZ is the EP approximation of the log marginal likelihood,
// log Z_EP = sum_j log s_j - 1/2 log|H| + 1/2 b'H^-1 b (Rasmussen &
// Williams eq. 3.65 in whitened form); it is not Chu & Ghahramani's
// variational lower bound (their eq. 13).
package ep

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/lik"
)

// Options control Run. The zero value means the defaults given for each
// field.
type Options struct {
	// Parallel updates every site from the same posterior before the
	// posterior is recomputed (parallel EP); the default updates the sites
	// one after another (sequential EP), which converges in fewer sweeps.
	Parallel bool
	// Damping is the fraction of each new site's natural parameters taken
	// (the rest is the old site's); 0 means 1 (no damping) for sequential
	// and 0.8 for parallel updates.
	Damping float64
	// MaxSweeps bounds the sweeps over all sites; 0 means 200.
	MaxSweeps int
	// Tol: EP has converged when no posterior mean moved by more than Tol
	// posterior sds and no posterior variance by more than Tol relative
	// in a sweep (sequential EP compares each site's marginal at its visit
	// with the previous sweep's; log Z_EP, a function of the marginals and
	// the sites, is computed then); 0 means 1e-6.
	Tol float64
	// Init, when it has one entry per site, starts from these sites (a warm
	// start, e.g. from the previous hyperparameters of an optimisation).
	InitTau, InitNu []float64
	// NegativeSites lets sequential EP keep a negative site precision (a
	// likelihood that is not log-concave in f: an observation in conflict
	// with the rest, whose tilted variance exceeds the cavity's), Minka's
	// EP proper, as long as the item's posterior marginal stays proper;
	// otherwise, and always in parallel EP, such a precision is clamped to
	// 0 (GPML's infEP) and counted in Result.Clamped.
	NegativeSites bool
	// DecayAfter, when positive, lets sequential EP under a diagonal prior
	// (independent items) halve the damping of the items still moving
	// every decayEvery sweeps after DecayAfter sweeps, so that an item
	// whose sites cycle instead of settling (a likelihood that is not
	// log-concave: conflicting labels from precise raters, a bimodal
	// tilted distribution) stops moving instead of failing the whole run;
	// Result.Decayed counts those items. 0 means never (the damping stays
	// Damping).
	DecayAfter int
	// TiltedGrads keeps, for every site whose likelihood is a
	// lik.TiltedGrader, the gradient of its tilted log Z in the
	// likelihood's parameters at its final cavity (Result.TiltedGrad),
	// computed with log Z_EP's tilted normalisers in one pass: an evidence
	// search asks for both at every evaluation.
	TiltedGrads bool

	// Stop, when not nil, is asked before every sweep and every
	// stopEvery items of a sequential sweep whether to go on: an error
	// from it (a context's Err, when the fit is cancelled) ends the run
	// and Run returns it as it is. It changes no arithmetic.
	Stop func() error
}

// stopEvery is the number of items of a sequential sweep between two
// calls of Options.Stop: a few milliseconds of work at a rank of 1,000.
const stopEvery = 64

// decayEvery is the number of sweeps after Options.DecayAfter between two
// halvings of a moving item's damping: 20 halvings (a factor 1e-6) take
// 100 sweeps.
const decayEvery = 5

// Result is the EP approximation at convergence.
type Result struct {
	// Mean and Var are the posterior marginals of the items' latent values.
	Mean, Var []float64
	// LogZ is log Z_EP.
	LogZ float64
	// Sweeps is the number of sweeps run; Skipped counts the site updates
	// left out because the cavity had a non-positive precision or the
	// tilted moments were not finite; Clamped counts the updates whose
	// site precision would have been negative (a likelihood that is not
	// log-concave in f, whose tilted variance exceeds the cavity's) and was
	// set to 0, the site's mean parameter taken as computed (GPML's
	// infEP). With clamped sites the fixed point is not exactly EP's, and
	// the evidence's gradients are approximate.
	Sweeps, Skipped, Clamped int
	// Decayed counts the items that settled only under the damping
	// Options.DecayAfter decayed: their sites stopped moving, not at a
	// fixed point of EP.
	Decayed int
	// Tau and Nu are the sites' precisions and precision-weighted means;
	// CavMean and CavVar the cavity distributions of the sites at the final
	// posterior (what the evidence's gradients need).
	Tau, Nu         []float64
	CavMean, CavVar []float64
	// grads holds the tilted gradients of Options.TiltedGrads, site j's
	// from gradAt[j] (-1: none kept).
	keepGrads bool
	grads     []float64
	gradAt    []int
	post      *posterior
	sites     []lik.Site
	fac       *gp.Factor
	// uState is the whitened factor of q's covariance for NewItem and
	// Item (added.go), computed on first use.
	uState
}

// inHalves runs f(0, n/2) and f(n/2, n) on two goroutines when there are
// two processors and the work (n times cost per unit) is large enough to
// pay for it, else f(0, n).
func inHalves(n, cost int, f func(lo, hi int)) {
	if n < 2 {
		f(0, n)
		return
	}
	m := n / 2
	both(n*cost, func() { f(0, m) }, func() { f(m, n) })
}

// both runs f and g, on two goroutines when there are two processors and
// the work is large enough to pay for it.
func both(work int, f, g func()) {
	if work < 1<<16 || runtime.GOMAXPROCS(0) < 2 {
		f()
		g()
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		g()
	}()
	f()
	wg.Wait()
}

// refreshEvery is the number of sequential sweeps after which H is
// refactorised from the site sums.
const refreshEvery = 8

// ErrNotConverged is returned (wrapped, with the Result so far) when EP
// has not converged within MaxSweeps.
var ErrNotConverged = errors.New("multirater: EP did not converge")

// Run runs EP for the prior factor f and the sites. It returns the result
// and ErrNotConverged (wrapped, with the last result) when the sweeps run
// out, or another error when the posterior cannot be formed (H not
// positive definite, non-finite site parameters).
func Run(f *gp.Factor, sites []lik.Site, opts Options) (*Result, error) {
	checkSites(f.N, sites)
	damp, maxSweeps, tol := opts.defaults()
	r, err := newRunner(f, sites, opts, damp, tol)
	if err != nil {
		return nil, err
	}
	defer r.close()
	sweep := r.sequentialSweep
	if opts.Parallel {
		sweep = r.parallelSweep
	}
	res := r.res
	for s := 1; s <= maxSweeps; s++ {
		if err := r.stopped(); err != nil {
			return nil, err
		}
		res.Sweeps = s
		done, err := sweep(s, s == maxSweeps)
		if err != nil {
			return nil, err
		}
		if done {
			logZ, err := res.logZ(r.mean, r.vr, r.stop)
			if err != nil {
				return nil, err
			}
			res.LogZ = logZ
			res.Mean, res.Var = r.mean, r.vr
			return res, nil
		}
	}
	r.p.marginalsTo(r.mean, r.vr)
	res.Mean, res.Var = r.mean, r.vr
	if logZ, err := res.logZ(r.mean, r.vr, r.stop); err == nil {
		res.LogZ = logZ
	}
	return res, fmt.Errorf("%w in %d sweeps", ErrNotConverged, maxSweeps)
}

// checkSites panics when a site is on no item of n or has no likelihood.
func checkSites(n int, sites []lik.Site) {
	for j, s := range sites {
		if s.Item < 0 || s.Item >= n {
			panic(fmt.Sprintf("multirater: ep: site %d on item %d of %d", j, s.Item, n))
		}
		if s.Lik == nil {
			panic(fmt.Sprintf("multirater: ep: site %d has no likelihood", j))
		}
	}
}

// defaults returns the damping, the sweeps and the tolerance the options
// mean; it panics for a damping outside (0, 1].
func (opts Options) defaults() (damp float64, maxSweeps int, tol float64) {
	damp = opts.Damping
	if damp == 0 {
		damp = 1
		if opts.Parallel {
			damp = 0.8
		}
	}
	if !(damp > 0 && damp <= 1) {
		panic(fmt.Sprintf("multirater: ep: Damping = %v must be in (0, 1]", damp))
	}
	maxSweeps = opts.MaxSweeps
	if maxSweeps == 0 {
		maxSweeps = 200
	}
	tol = opts.Tol
	if tol == 0 {
		tol = 1e-6
	}
	return damp, maxSweeps, tol
}

// runner is one EP run: the result it fills, the posterior, the current
// marginals and the scratch every sweep reuses.
type runner struct {
	res      *Result
	p        *posterior
	sites    []lik.Site
	damp     float64
	tol      float64
	negative bool
	// decayAfter is Options.DecayAfter (diagonal prior only).
	decayAfter int
	// stop is Options.Stop.
	stop func() error
	// mean and vr are the posterior marginals after the last sweep (the
	// sequential sweep updates them only when it has converged).
	mean, vr []float64
	// Parallel EP: the previous sweep's marginals and the site changes.
	prevMean, prevVar []float64
	dTau, dNu         []float64
	// Sequential EP: each site's marginal at its last visit, and the
	// order of the visits, item by item (stable: an item's sites in their
	// given order), groups[g]:groups[g+1] the g-th item's.
	visMu, visVar []float64
	order, groups []int
	// A diagonal prior (no G: the items independent a priori and so a
	// posteriori): settled[g] marks the g-th item as converged, no longer
	// visited.
	settled []bool
}

// newRunner starts an EP run from opts' sites (when given) or from zero
// sites.
func newRunner(f *gp.Factor, sites []lik.Site, opts Options, damp, tol float64) (*runner, error) {
	n, m := f.N, len(sites)
	res := &Result{Tau: make([]float64, m), Nu: make([]float64, m), sites: sites, fac: f, keepGrads: opts.TiltedGrads}
	if len(opts.InitTau) == m && len(opts.InitNu) == m {
		copy(res.Tau, opts.InitTau)
		copy(res.Nu, opts.InitNu)
	}
	p := newPosterior(f)
	for j, s := range sites {
		p.S[s.Item] += res.Tau[j]
		p.V[s.Item] += res.Nu[j]
	}
	if err := p.refresh(); err != nil {
		return nil, err
	}
	res.post = p
	r := &runner{res: res, p: p, sites: sites, damp: damp, tol: tol, negative: opts.NegativeSites, decayAfter: opts.DecayAfter,
		stop: opts.Stop, mean: make([]float64, n), vr: make([]float64, n)}
	p.marginalsTo(r.mean, r.vr)
	if opts.Parallel {
		r.prevMean, r.prevVar = make([]float64, n), make([]float64, n)
		r.dTau, r.dNu = make([]float64, m), make([]float64, m)
		return r, nil
	}
	r.visMu, r.visVar = make([]float64, m), make([]float64, m)
	r.order = make([]int, m)
	for j := range r.order {
		r.order[j] = j
	}
	sort.SliceStable(r.order, func(a, b int) bool { return sites[r.order[a]].Item < sites[r.order[b]].Item })
	for k, j := range r.order {
		if k == 0 || sites[j].Item != sites[r.order[k-1]].Item {
			r.groups = append(r.groups, k)
		}
	}
	r.groups = append(r.groups, m)
	if p.g != nil && p.r >= splitRank && runtime.GOMAXPROCS(0) > 1 {
		p.split = newHalves()
	}
	return r, nil
}

// stopped returns Options.Stop's answer (nil without Stop).
func (r *runner) stopped() error {
	if r.stop == nil {
		return nil
	}
	return r.stop()
}

// close stops the sequential sweep's helper goroutine, if any.
func (r *runner) close() {
	if r.p.split != nil {
		r.p.split.stop()
		r.p.split = nil
	}
}

// parallelSweep updates every site from the same posterior, then
// refactorises it; it has converged when no marginal moved (means in
// posterior sds, variances relative) by tol since the last sweep.
func (r *runner) parallelSweep(int, bool) (done bool, err error) {
	res, p, mean, vr := r.res, r.p, r.mean, r.vr
	copy(r.prevMean, mean)
	copy(r.prevVar, vr)
	for j, s := range r.sites {
		r.dTau[j], r.dNu[j] = 0, 0
		t, nu, ok, cl := newSite(s, mean[s.Item], vr[s.Item], res.Tau[j], res.Nu[j], r.damp, false)
		if !ok {
			res.Skipped++
			continue
		}
		if cl {
			res.Clamped++
		}
		r.dTau[j], r.dNu[j] = t-res.Tau[j], nu-res.Nu[j]
	}
	for j, s := range r.sites {
		res.Tau[j] += r.dTau[j]
		res.Nu[j] += r.dNu[j]
		p.S[s.Item] += r.dTau[j]
		p.V[s.Item] += r.dNu[j]
	}
	if err := p.refresh(); err != nil {
		return false, err
	}
	p.marginalsTo(mean, vr)
	moved := 0.0
	for i := range mean {
		moved = math.Max(moved, math.Abs(mean[i]-r.prevMean[i])/math.Sqrt(vr[i]))
		moved = math.Max(moved, math.Abs(vr[i]-r.prevVar[i])/vr[i])
	}
	return moved < r.tol, nil
}

// sequentialSweep updates the sites one after another (rank-one updates of
// H^-1). Convergence is judged on each site's marginal at its visit against
// the previous sweep's, so that H is refactorised (clearing the rounding of
// the updates) only every refreshEvery sweeps, at the last and when
// converged; the marginals are brought up to date when converged.
//
// The sites are visited item by item (r.order): within an item the
// marginal of f_n after a site's change (dTau, dNu) is exactly the scalar
// update 1/v' = 1/v + dTau, mu'/v' = mu/v + dNu (the change multiplies q
// by a function of f_n alone), so H^-1 needs one rank-one update per item
// and sweep, O(N r^2), instead of one per site, O(M r^2).
//
// Under a diagonal prior the items are independent, and an item whose
// marginal moved by less than the tolerance in a sweep is settled: later
// sweeps skip it, so that the sweeps after most items have converged cost
// only the items still moving (an item's sites are updated from its own
// marginal alone, so skipping a settled item changes no other item's).
func (r *runner) sequentialSweep(sweep int, last bool) (done bool, err error) {
	res, p, m := r.res, r.p, len(r.sites)
	diag := p.g == nil
	if diag && r.settled == nil {
		r.settled = make([]bool, len(r.groups)-1)
	}
	moved, damp := 0.0, r.damp
	decayed := diag && r.decayAfter > 0 && sweep > r.decayAfter
	if decayed {
		damp = math.Ldexp(r.damp, -((sweep-r.decayAfter-1)/decayEvery + 1))
	}
	for g := 0; g < len(r.groups)-1; g++ {
		if diag && r.settled[g] {
			continue
		}
		if g%stopEvery == stopEvery-1 {
			if err := r.stopped(); err != nil {
				return false, err
			}
		}
		lo, hi := r.groups[g], r.groups[g+1]
		item := r.sites[r.order[lo]].Item
		mu, v, err := r.visit(item)
		if err != nil {
			return false, err
		}
		dTau, dNu, itemMoved := 0.0, 0.0, 0.0
		for _, j := range r.order[lo:hi] {
			s := r.sites[j]
			if sweep > 1 {
				itemMoved = math.Max(itemMoved, math.Abs(mu-r.visMu[j])/math.Sqrt(v))
				itemMoved = math.Max(itemMoved, math.Abs(v-r.visVar[j])/v)
			}
			r.visMu[j], r.visVar[j] = mu, v
			t, nu, ok, cl := newSite(s, mu, v, res.Tau[j], res.Nu[j], damp, r.negative)
			if !ok {
				res.Skipped++
				continue
			}
			if cl {
				res.Clamped++
			}
			dt, dn := t-res.Tau[j], nu-res.Nu[j]
			prec := 1/v + dt
			if !(prec > 0) {
				return false, errNotPD
			}
			mu, v = (mu/v+dn)/prec, 1/prec
			dTau += dt
			dNu += dn
			res.Tau[j], res.Nu[j] = t, nu
		}
		moved = math.Max(moved, itemMoved)
		if diag && sweep > 1 && itemMoved < r.tol {
			r.settled[g] = true
			if decayed {
				res.Decayed++
			}
		}
		next := -1
		if hi < m {
			next = r.sites[r.order[hi]].Item
		}
		if err := p.updateNext(item, dTau, dNu, next); err != nil {
			return false, err
		}
	}
	done = sweep > 1 && moved < r.tol
	if done || sweep%refreshEvery == 0 || last {
		if err := p.refresh(); err != nil {
			return false, err
		}
	}
	if done {
		p.marginalsTo(r.mean, r.vr)
	}
	return done, nil
}

// visit returns item n's posterior marginal, refactorising H from the site
// sums first when the rank-one updates of H^-1 lost too much to rounding
// (very precise sites).
func (r *runner) visit(n int) (mu, v float64, err error) {
	mu, v = r.p.marginal(n)
	if v > 0 && !math.IsNaN(mu) && !math.IsInf(mu, 0) && !math.IsInf(v, 0) {
		return mu, v, nil
	}
	if err := r.p.refresh(); err != nil {
		return 0, 0, err
	}
	if mu, v = r.p.marginal(n); !(v > 0) || math.IsNaN(mu) || math.IsInf(mu, 0) {
		return 0, 0, fmt.Errorf("multirater: ep: item %d has a posterior marginal N(%v, %v)", n, mu, v)
	}
	return mu, v, nil
}

// newSite returns the damped new natural parameters of site s given the
// item's posterior marginal N(mu, v) and the site's current (tau, nu); ok
// is false when the cavity precision is not positive or the tilted moments
// are not finite (the update is then skipped); clamped is true when the new
// site's precision would be negative and was set to 0 (nu as computed).
func newSite(s lik.Site, mu, v, tau, nu, damp float64, negative bool) (newTau, newNu float64, ok, clamped bool) {
	cTau := 1/v - tau
	if !(cTau > 0) {
		return 0, 0, false, false
	}
	cVar := 1 / cTau
	cMean := cVar * (mu/v - nu)
	if math.IsNaN(cMean) || math.IsInf(cMean, 0) || math.IsInf(cVar, 0) {
		return 0, 0, false, false
	}
	_, d1, d2 := s.Lik.Tilted(s.Y, cMean, cVar)
	// Moment matching (Rasmussen & Williams eq. 3.59 in GPML's form).
	den := 1 + d2*cVar
	t := -d2 / den
	nn := (d1 - cMean*d2) / den
	if math.IsNaN(t) || math.IsInf(t, 0) || math.IsNaN(nn) || math.IsInf(nn, 0) || !(den > 0) {
		return 0, 0, false, false
	}
	if t < 0 {
		// The new marginal precision is 1/v + (t' - tau) with t' the
		// damped new precision; keep a negative t' only while that stays
		// above a tenth of the cavity's.
		if nt := damp*t + (1-damp)*tau; !negative || 1/v+nt-tau < 0.1*cTau {
			t, clamped = 0, true
		}
	}
	return damp*t + (1-damp)*tau, damp*nn + (1-damp)*nu, true, clamped
}

// logZ computes log Z_EP at the posterior with marginals (mean, vr), and
// stores each site's cavity; stop (Options.Stop, may be nil) is asked
// every stopEvery sites, since the tilted normalisers (and gradients,
// Options.TiltedGrads) are quadratures for some likelihoods.
func (r *Result) logZ(mean, vr []float64, stop func() error) (float64, error) {
	m := len(r.sites)
	if len(r.CavMean) != m {
		r.CavMean = make([]float64, m)
		r.CavVar = make([]float64, m)
	}
	if r.keepGrads {
		r.grads, r.gradAt = r.grads[:0], slices.Grow(r.gradAt[:0], m)[:m]
	}
	sum := 0.0
	for j, s := range r.sites {
		if stop != nil && j%stopEvery == stopEvery-1 {
			if err := stop(); err != nil {
				r.gradAt = nil // none kept
				return 0, err
			}
		}
		v, mu := vr[s.Item], mean[s.Item]
		cTau := 1/v - r.Tau[j]
		if !(cTau > 0) {
			r.gradAt = nil // none kept
			return 0, fmt.Errorf("multirater: ep: site %d has a cavity of precision %v at the posterior", j, cTau)
		}
		cVar := 1 / cTau
		cMean := cVar * (mu/v - r.Nu[j])
		r.CavMean[j], r.CavVar[j] = cMean, cVar
		lz := r.tiltedLogZ(j, s, cMean, cVar)
		// log s_j: the site's scale that makes cavity x site integrate to
		// the tilted normaliser.
		a := 1/cVar + r.Tau[j]
		c := cMean/cVar + r.Nu[j]
		sum += lz + 0.5*cMean*cMean/cVar + 0.5*math.Log(cVar*a) - 0.5*c*c/a
	}
	return sum - 0.5*r.post.logDetH() + 0.5*r.post.quad() + r.post.extraLogZ(), nil
}

// tiltedLogZ returns site s's (site j's) tilted log Z at the cavity
// N(cMean, cVar) and, with Options.TiltedGrads and a lik.TiltedGrader,
// keeps its gradient from the same computation.
func (r *Result) tiltedLogZ(j int, s lik.Site, cMean, cVar float64) float64 {
	if r.keepGrads {
		r.gradAt[j] = -1
		if tg, ok := s.Lik.(lik.TiltedGrader); ok {
			np := s.Lik.(lik.Learnable).NumParams()
			r.gradAt[j] = len(r.grads)
			r.grads = append(r.grads, make([]float64, np)...)
			return tg.TiltedLogZGradTo(r.grads[r.gradAt[j]:], s.Y, cMean, cVar)
		}
	}
	lz, _, _ := s.Lik.Tilted(s.Y, cMean, cVar)
	return lz
}

// TiltedGrad returns the gradient of site j's tilted log Z in its
// likelihood's parameters at its final cavity (lik.Learnable.TiltedGradTo
// at CavMean[j], CavVar[j]) when the run kept it (Options.TiltedGrads, a
// lik.TiltedGrader), else nil. The slice is the result's.
func (r *Result) TiltedGrad(j int) []float64 {
	if r.gradAt == nil || r.gradAt[j] < 0 {
		return nil
	}
	at := r.gradAt[j]
	return r.grads[at : at+r.sites[j].Lik.(lik.Learnable).NumParams()]
}

// posterior is q(f) in whitened form for the per-item site sums S and V.
type posterior struct {
	f    *gp.Factor
	n, r int
	g    *mat.Dense   // n×r, nil for a diagonal factor
	h2   []float64    // scratch, r×r
	gw   [2][]float64 // scratch of gp.SyrkUpperTrans, one per half of refresh
	S, V []float64
	effS []float64 // scratch: the effective S~ of refresh
	// dg is the factor's diagonal correction (gp.Factor.Extra) or nil:
	// with it the sites on f_n = g_n'w + e_n act on g_n'w through their
	// effective sums S~ = S/(1 + dg S), V~ = V/(1 + dg S) (e_n integrated
	// out), see eff.
	dg  []float64
	ch  chol
	h   []float64    // scratch for H, r×r
	sg  []float64    // scratch for S^1/2 G, n×r
	b   []float64    // G'V
	mw  []float64    // H^-1 b
	tmp []float64    // H^-1 g_vFor, length r
	acc [2][]float64 // scratch, length r
	// sw is H^-1 (r×r, lower triangle) when swOK, kept up to date by the sequential
	// updates; vFor is the item whose H^-1 g_n is in tmp, or -1.
	sw   []float64
	swOK bool
	vFor int
	// k and next parametrise rows; split shares its work (nil: not).
	k      float64
	next   int
	split  *halves
	rowsFn func(lo, hi int)
}

func newPosterior(f *gp.Factor) *posterior {
	p := &posterior{f: f, n: f.N, r: f.R, S: make([]float64, f.N), V: make([]float64, f.N), vFor: -1}
	if f.Extra != nil {
		if f.Diag || len(f.Extra) != f.N {
			panic("multirater: ep: a diagonal correction needs a non-diagonal factor and one variance per item")
		}
		p.dg = f.Extra
	}
	if !f.Diag {
		p.g = mat.NewDense(f.N, f.R, f.G)
		p.h = make([]float64, f.R*f.R)
		p.gw = [2][]float64{make([]float64, min(f.N, 256)*f.R), make([]float64, min(f.N, 256)*f.R)}
		p.b = make([]float64, f.R)
		p.mw = make([]float64, f.R)
		p.tmp = make([]float64, f.R)
		p.acc = [2][]float64{make([]float64, f.R), make([]float64, f.R)}
		p.rowsFn = p.rows
	}
	return p
}

// errNotPD is returned when H is not positive definite (negative site
// precisions outweighing the prior).
var errNotPD = errors.New("multirater: ep: the posterior precision I + G'SG is not positive definite")

// eff returns item n's site sums as seen by the low-rank part u_n = g_n'w
// of f_n = u_n + e_n, e_n ~ N(0, dg_n) integrated out:
//
//	∫ N(e; 0, d) exp(-S (u+e)^2/2 + V (u+e)) de
//	  = (1 + dS)^{-1/2} exp(-S~ u^2/2 + V~ u + d V^2/(2(1 + dS))),
//
// S~ = S/(1 + dS), V~ = V/(1 + dS); ok is false when 1 + dS <= 0.
func (p *posterior) eff(n int) (s, v float64, ok bool) {
	if p.dg == nil {
		return p.S[n], p.V[n], true
	}
	a := 1 + p.dg[n]*p.S[n]
	return p.S[n] / a, p.V[n] / a, a > 0
}

// fromU returns f_n's marginal from that of u_n = g_n'w, N(mu, vr): with
// a = 1 + dS, f_n | u_n ~ N((u_n + dV)/a, d/a), so f_n ~ N((mu + dV)/a,
// vr/a^2 + d/a).
func (p *posterior) fromU(n int, mu, vr float64) (float64, float64) {
	if p.dg == nil {
		return mu, vr
	}
	d := p.dg[n]
	a := 1 + d*p.S[n]
	return (mu + d*p.V[n]) / a, vr/(a*a) + d/a
}

// extraLogZ returns the terms of log Z_EP from integrating out e:
// sum_n -1/2 log(1 + d_n S_n) + d_n V_n^2/(2(1 + d_n S_n)) (0 without a
// diagonal correction).
func (p *posterior) extraLogZ() float64 {
	if p.dg == nil {
		return 0
	}
	s := 0.0
	for i, d := range p.dg {
		a := 1 + d*p.S[i]
		s += -0.5*math.Log(a) + 0.5*d*p.V[i]*p.V[i]/a
	}
	return s
}

// refresh factorises H = I + G'SG and solves for the mean, O(N r^2 + r^3).
func (p *posterior) refresh() error {
	if p.g == nil {
		for i, sd := range p.f.SD {
			if !(1+sd*sd*p.S[i] > 0) {
				return errNotPD
			}
		}
		return nil
	}
	r := p.r
	// H = I + (S^1/2 G)'(S^1/2 G) by a rank-n update (level-3 BLAS); the
	// rows of items with S_n < 0 enter with a minus sign.
	if cap(p.sg) < p.n*r {
		p.sg = make([]float64, p.n*r)
	}
	var pos, neg []float64
	np, nn := 0, 0
	if cap(p.effS) < p.n {
		p.effS = make([]float64, p.n)
	}
	es := p.effS[:p.n]
	for i := 0; i < p.n; i++ {
		s, _, ok := p.eff(i)
		if !ok {
			return errNotPD
		}
		es[i] = s
		if s > 0 {
			np++
		} else if s < 0 {
			nn++
		}
	}
	// The positive rows, then the negative ones, in the same scratch.
	pos = p.sg[:np*r]
	neg = p.sg[np*r : (np+nn)*r]
	ip, in := 0, 0
	for i := 0; i < p.n; i++ {
		s := es[i]
		switch {
		case s > 0:
			floats.ScaleTo(pos[ip*r:(ip+1)*r], math.Sqrt(s), p.g.RawRowView(i))
			ip++
		case s < 0:
			floats.ScaleTo(neg[in*r:(in+1)*r], math.Sqrt(-s), p.g.RawRowView(i))
			in++
		}
	}
	for i := range p.h {
		p.h[i] = 0
	}
	for i := 0; i < r; i++ {
		p.h[i*r+i] = 1
	}
	if np > 0 {
		// Two halves of the rows into H and a scratch copy, then summed.
		if cap(p.h2) < r*r {
			p.h2 = make([]float64, r*r)
		}
		h2 := p.h2[:r*r]
		half := np / 2
		both(np*r*r, func() {
			if half > 0 {
				gp.SyrkUpperTrans(1, pos, half, r, 1, p.h, p.gw[0])
			}
		}, func() {
			gp.SyrkUpperTrans(1, pos[half*r:], np-half, r, 0, h2, p.gw[1])
		})
		floats.Add(p.h, h2)
	}
	if nn > 0 {
		gp.SyrkUpperTrans(-1, neg, nn, r, 1, p.h, p.gw[0])
	}
	for i := 0; i < r; i++ {
		for k := i + 1; k < r; k++ {
			p.h[k*r+i] = p.h[i*r+k]
		}
	}
	if !p.ch.factorize(p.h, r) {
		return errNotPD
	}
	p.swOK, p.vFor = false, -1
	for k := range p.b {
		p.b[k] = 0
	}
	for i := 0; i < p.n; i++ {
		if _, v, _ := p.eff(i); v != 0 {
			floats.AddScaled(p.b, v, p.g.RawRowView(i))
		}
	}
	p.ch.solveTo(p.mw, p.b)
	return nil
}

// updateNext adds (dTau, dNu) to item n's site sums. For a dense factor it
// updates H^-1 and the whitened mean in place (Sherman-Morrison,
// H^-1 <- H^-1 - k v v' with v = H^-1 g_n, k = dTau/(1 + dTau g_n'v):
// O(r^2) in level-2 BLAS) and, when next >= 0, computes H^-1 g_next for
// the next marginal in the same pass over H^-1 (split between two
// goroutines for a large r). The Cholesky factor of H is stale until the
// next refresh, which a sweep ends with.
func (p *posterior) updateNext(n int, dTau, dNu float64, next int) error {
	s0, v0, _ := p.eff(n)
	p.S[n] += dTau
	p.V[n] += dNu
	if p.dg != nil {
		// The update of the effective sums (eff) acts on H and b.
		s1, v1, ok := p.eff(n)
		if !ok {
			return errNotPD
		}
		dTau, dNu = s1-s0, v1-v0
	}
	if p.g == nil {
		if sd := p.f.SD[n]; !(1+sd*sd*p.S[n] > 0) {
			return errNotPD
		}
		return nil
	}
	row := p.g.RawRowView(n)
	if p.vFor != n {
		p.prepare(n)
	}
	m := floats.Dot(row, p.mw)
	sv := floats.Dot(row, p.tmp)
	den := 1 + dTau*sv
	if !(den > 0) {
		return errNotPD
	}
	p.k = dTau / den
	floats.AddScaled(p.mw, dNu-p.k*(m+dNu*sv), p.tmp)
	floats.AddScaled(p.b, dNu, row)
	p.next = next
	p.pass()
	p.vFor = next
	return nil
}

// pass runs rows over all of H^-1 and sets p.tmp = H^-1 g_next.
func (p *posterior) pass() {
	p.split.run(p.rowsFn, p.r)
	if p.next < 0 {
		return
	}
	if p.split == nil {
		copy(p.tmp, p.acc[0])
		return
	}
	floats.AddTo(p.tmp, p.acc[0], p.acc[1])
}

// rows does updateNext's work on rows [lo, hi) of the lower triangle of
// H^-1 in one pass (each row is in cache once): the rank-one downdate with
// the old v (p.tmp) and the rows' contributions to H^-1 g_next, summed into
// p.acc[0] (rows from 0) or p.acc[1] (the helper's). Keeping only the
// lower triangle halves the memory traffic, which bounds this loop.
func (p *posterior) rows(lo, hi int) {
	r := p.r
	acc := p.acc[0]
	if lo > 0 {
		acc = p.acc[1]
	}
	var g []float64
	if p.next >= 0 {
		g = p.g.RawRowView(p.next)
		for i := range acc {
			acc[i] = 0
		}
	}
	for i := lo; i < hi; i++ {
		row := p.sw[i*r : i*r+i+1]
		if p.k != 0 {
			blas64.Axpy(-p.k*p.tmp[i], blas64.Vector{N: i + 1, Inc: 1, Data: p.tmp}, blas64.Vector{N: i + 1, Inc: 1, Data: row})
		}
		if g != nil {
			acc[i] += floats.Dot(row, g[:i+1])
			blas64.Axpy(g[i], blas64.Vector{N: i, Inc: 1, Data: row}, blas64.Vector{N: i, Inc: 1, Data: acc})
		}
	}
}

// prepare sets p.tmp = H^-1 g_n.
func (p *posterior) prepare(n int) {
	p.inverse()
	p.k, p.next = 0, n
	p.pass()
	p.vFor = n
}

// halves runs a function on two halves of a range, the upper half on a
// helper goroutine (nil: all on the caller's). The hand-over spins on
// atomic counters for a while (a sequential EP sweep hands over once per
// site, every few microseconds, too often for channels alone) and then
// blocks on a channel, so that an oversubscribed machine is not kept busy
// by waiting.
type halves struct {
	seq, done atomic.Int64
	stopped   atomic.Bool
	wake, fin chan struct{} // buffered tokens for the blocking waits
	f         func(lo, hi int)
	lo, hi    int
}

// splitRank is the rank from which sequential EP splits its work on H^-1
// between two goroutines (below it the hand-over costs more than it saves).
const splitRank = 128

// spinLimit is the number of spins before a wait blocks.
const spinLimit = 4096

// await returns when cond holds: spinning, then blocking on ch (whose
// tokens are sent after every change of the condition).
func await(cond func() bool, ch chan struct{}) {
	for spins := 1; !cond(); spins++ {
		switch {
		case spins > spinLimit:
			<-ch
		case spins%64 == 0:
			runtime.Gosched()
		}
	}
}

// signal leaves a token in ch unless one is there.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func newHalves() *halves {
	h := &halves{wake: make(chan struct{}, 1), fin: make(chan struct{}, 1)}
	go func() {
		var last int64
		for {
			await(func() bool { return h.seq.Load() != last || h.stopped.Load() }, h.wake)
			if h.stopped.Load() {
				return
			}
			last = h.seq.Load()
			h.f(h.lo, h.hi)
			h.done.Store(last)
			signal(h.fin)
		}
	}()
	return h
}

func (h *halves) run(f func(lo, hi int), n int) {
	if h == nil {
		f(0, n)
		return
	}
	// Row i of a lower triangle has i+1 elements: equal halves of the work
	// split at n/sqrt(2).
	m := int(float64(n) / math.Sqrt2)
	h.f, h.lo, h.hi = f, m, n
	seq := h.seq.Add(1)
	signal(h.wake)
	f(0, m)
	await(func() bool { return h.done.Load() == seq }, h.fin)
}

// stop ends the helper goroutine.
func (h *halves) stop() {
	if h != nil {
		h.stopped.Store(true)
		signal(h.wake)
	}
}

// inverse makes sure p.sw holds H^-1 (from the Cholesky factor of H,
// O(r^3), once after each refresh).
func (p *posterior) inverse() {
	if p.swOK {
		return
	}
	r := p.r
	if cap(p.sw) < r*r {
		p.sw = make([]float64, r*r)
	}
	p.sw = p.sw[:r*r]
	copy(p.sw, p.ch.l)
	// The lower triangle of H^-1 (all that is kept up to date).
	lapack64.Potri(blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: r, Stride: r, Data: p.sw})
	p.swOK = true
}

// marginal returns the posterior mean and variance of f_n, O(r^2), and
// keeps H^-1 g_n for an update of the same item.
func (p *posterior) marginal(n int) (mean, vr float64) {
	if p.g == nil {
		c := p.f.SD[n] * p.f.SD[n]
		d := 1 + c*p.S[n]
		return c * p.V[n] / d, c / d
	}
	if p.vFor != n {
		p.prepare(n)
	}
	row := p.g.RawRowView(n)
	return p.fromU(n, floats.Dot(row, p.mw), floats.Dot(row, p.tmp))
}

// marginalsTo sets every item's posterior mean and variance, O(N r^2)
// (a triangular solve with all of G' at once: level-3 BLAS).
func (p *posterior) marginalsTo(mean, vr []float64) {
	if p.g == nil {
		for i := range mean {
			mean[i], vr[i] = p.marginal(i)
		}
		return
	}
	// X = G L'^-1 (n×r), row i = (L^-1 g_i)'.
	r := p.r
	if cap(p.sg) < p.n*r {
		p.sg = make([]float64, p.n*r)
	}
	x := p.sg[:p.n*r]
	copy(x, p.g.RawMatrix().Data)
	inHalves(p.n, r, func(lo, hi int) {
		p.ch.rightSolve(x[lo*r:], hi-lo)
	})
	for i := 0; i < p.n; i++ {
		row := x[i*r : (i+1)*r]
		mean[i], vr[i] = p.fromU(i, floats.Dot(p.g.RawRowView(i), p.mw), floats.Dot(row, row))
	}
}

// logDetH returns log|H| = log|I + C S| (the identity's when diagonal).
func (p *posterior) logDetH() float64 {
	if p.g == nil {
		s := 0.0
		for i, sd := range p.f.SD {
			s += math.Log1p(sd * sd * p.S[i])
		}
		return s
	}
	return p.ch.logDet()
}

// quad returns b'H^-1 b (V' Sigma V... in whitened form).
func (p *posterior) quad() float64 {
	if p.g == nil {
		s := 0.0
		for i, sd := range p.f.SD {
			c := sd * sd
			s += c * p.V[i] * p.V[i] / (1 + c*p.S[i])
		}
		return s
	}
	return floats.Dot(p.b, p.mw)
}

// KernelGrad returns the gradient of log Z_EP with respect to kernel
// hyperparameters at the converged sites: with C = G G' the prior
// covariance the factor decomposes and dC[k] its derivative (N×N) in the
// k-th hyperparameter,
//
//	d log Z_EP / d theta_k = 1/2 tr((alpha alpha' - R) dC_k),
//
// R = (C + S^-1)^-1 and alpha = R S^-1 V (Rasmussen & Williams eq. 5.27
// and alg. 3.5 with the item sums S, V of the sites; at an EP fixed point
// the sites' own dependence on theta does not enter). In the factor's
// terms (Woodbury), R = S - U U' with U = S G L'^-1, H = I + G'SG = L L',
// and alpha = V - S mu, so that
//
//	tr(R dC) = sum_n S_n dC_nn - tr(U' dC U),
//
// which costs O(N^2 r) per hyperparameter (level-3 BLAS) and O(N r^2) once;
// C is never inverted and S may have negative entries as long as H is
// positive definite. When the factor is a low-rank approximation
// (gp.NewPivotedFactor) this is the gradient of the evidence of the model
// with covariance G G', taking dC for its derivative.
func (r *Result) KernelGrad(dC []mat.Symmetric) ([]float64, error) {
	p := r.post
	if p.dg != nil {
		return nil, errors.New("multirater: ep: kernel gradients of a prior with a diagonal correction are not implemented")
	}
	n := r.fac.N
	alpha := make([]float64, n)
	for i := range alpha {
		alpha[i] = p.V[i] - p.S[i]*r.Mean[i]
	}
	var u []float64
	rk := r.fac.R
	if p.g != nil {
		// U = S G L'^-1 (n×r).
		u = make([]float64, n*rk)
		copy(u, p.g.RawMatrix().Data)
		inHalves(n, rk, func(lo, hi int) {
			p.ch.rightSolve(u[lo*rk:], hi-lo)
		})
		for i := 0; i < n; i++ {
			floats.Scale(p.S[i], u[i*rk:(i+1)*rk])
		}
	}
	var sd2 []float64
	if u == nil {
		// Diagonal factor: R is diagonal, S_n/(1 + c_n S_n), i.e.
		// S_n - S_n^2 c_n/(1 + c_n S_n): the second term in place of U U'.
		sd2 = make([]float64, n)
		for i, sd := range r.fac.SD {
			c := sd * sd
			sd2[i] = p.S[i] * p.S[i] * c / (1 + c*p.S[i])
		}
	}
	return gp.SiteKernelGrad(dC, p.S, alpha, nil, u, rk, sd2), nil
}

// GradTerms returns what the kernel gradient of log Z_EP needs at the
// converged sites (gp.GradTerms: alpha = V - S mu, b nil, the effective
// precisions S/(1 + Extra S) and U = S~ G L'^-1 with H = I + G'S~G = L L'),
// also for a factor with a diagonal correction: O(N r^2).
func (r *Result) GradTerms() *gp.GradTerms {
	p := r.post
	n := r.fac.N
	t := &gp.GradTerms{Alpha: make([]float64, n), SEff: make([]float64, n), R: r.fac.R}
	for i := range t.Alpha {
		t.Alpha[i] = p.V[i] - p.S[i]*r.Mean[i]
		t.SEff[i], _, _ = p.eff(i)
	}
	if p.g == nil {
		t.SetDiag2(r.fac.SD, p.S)
		return t
	}
	rk := r.fac.R
	t.U = make([]float64, n*rk)
	copy(t.U, p.g.RawMatrix().Data)
	inHalves(n, rk, func(lo, hi int) {
		p.ch.rightSolve(t.U[lo*rk:], hi-lo)
	})
	for i := 0; i < n; i++ {
		floats.Scale(t.SEff[i], t.U[i*rk:(i+1)*rk])
	}
	return t
}

// DrawTo sets dst to a draw of the items' latent values from the EP
// posterior N(mu, Sigma) (jointly: w = H^-1 b + L'^-1 z with H = L L' and
// z ~ N(0, I), f = G w), for summaries that need joint draws (ranks) and
// for prediction from draws.
func (r *Result) DrawTo(rng *rand.Rand, dst []float64) {
	p := r.post
	if p.g == nil {
		for i := range dst {
			dst[i] = r.Mean[i] + math.Sqrt(r.Var[i])*rng.NormFloat64()
		}
		return
	}
	x := make([]float64, p.r)
	for k := range x {
		x[k] = rng.NormFloat64()
	}
	p.ch.upperSolve(x) // x ~ N(0, H^-1)
	floats.Add(x, p.mw)
	mat.NewVecDense(len(dst), dst).MulVec(p.g, mat.NewVecDense(p.r, x))
	if p.dg != nil {
		// f_n | u_n ~ N((u_n + dV)/a, d/a), a = 1 + dS.
		for i, d := range p.dg {
			a := 1 + d*p.S[i]
			dst[i] = (dst[i]+d*p.V[i])/a + math.Sqrt(d/a)*rng.NormFloat64()
		}
	}
}
