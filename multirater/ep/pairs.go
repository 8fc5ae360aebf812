package ep

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/lik"
)

// PairSite is a site on a linear contrast of two items' latent values,
// x = a'f = f_I - f_J (a = e_I - e_J), with the likelihood Lik of the
// observation Y: an AUC pair (Ridgway et al. sec. 3.3, lik.AUCStep), a
// paired comparison.
type PairSite struct {
	I, J int
	Y    float64
	Lik  lik.Likelihood
}

// CoordSite is a site on one whitened coordinate x = w_K of the prior
// factor's f = G w: with the linear-score factor G = sqrt(V) X,
// theta_K = sqrt(V) w_K, so a CoordSite is a site on one coefficient (the
// spike-and-slab prior sites of Ridgway et al. sec. 3.4, after
// Hernandez-Lobato et al. 2013).
type CoordSite struct {
	K   int
	Y   float64
	Lik lik.Likelihood
}

// PairOptions control RunPairs. The zero value means the defaults given for
// each field.
type PairOptions struct {
	// Damping is the fraction of each new site's natural parameters taken
	// (the rest is the old site's, Seeger 2005; Ridgway et al. sec. 5). 0
	// means adaptive: start at 0.8 and multiply by 0.7 (down to 0.05)
	// whenever the largest change of a marginal in a sweep has not reached
	// a new minimum for 5 sweeps (an oscillation); a value in (0, 1] is
	// kept throughout.
	Damping float64
	// MaxSweeps bounds the parallel sweeps; 0 means 1000.
	MaxSweeps int
	// Tol: EP has converged when no pair's marginal mean moved by more than
	// Tol of its sd and no marginal variance by more than Tol relative in a
	// sweep; 0 means 1e-6.
	Tol float64
	// InitTau and InitNu, when they have one entry per site, start from
	// these sites (a warm start).
	InitTau, InitNu []float64
	// ClampNegative sets every negative site precision to 0 (GPML's
	// infEP rule) instead of keeping it while the posterior stays proper.
	// The clamped iteration has no fixed point of EP's and need not
	// converge (with the AUC sites of Pima.tr at gamma 1000 it does not).
	ClampNegative bool
	// Stop, when not nil, is asked before every sweep whether to go on:
	// an error from it (a context's Err, when the fit is cancelled) ends
	// the run and RunPairs returns it as it is. It changes no arithmetic.
	Stop func() error
	// path forces the pair marginals by pairs (1), by items (2) or by
	// blocks (3, pairBlocks); 0 chooses the cheaper (tests).
	path int
}

// PairResult is the pair-site EP approximation at convergence. In the
// whitened coordinates of the prior factor C = G G' (f = G w,
// w ~ N(0, I_r)) the approximate posterior is w ~ N(H^-1 b, H^-1) with
//
//	H = I + G'SG,  S = sum_k tau_k a_k a_k',  b = G' sum_k nu_k a_k.
type PairResult struct {
	// Mean and Var are the items' posterior marginals (f = G w).
	Mean, Var []float64
	// PairMean and PairVar are the posterior marginals of the sites' x_k
	// (the pair sites, then the coordinate sites of RunPairsCoords).
	PairMean, PairVar []float64
	// W is the whitened posterior mean H^-1 b (length r).
	W []float64
	// LogZ is log Z_EP (see RunPairs).
	LogZ float64
	// Sweeps is the number of parallel sweeps run. Skipped counts site
	// updates left out (cavity precision not positive, or non-finite
	// tilted moments); Negative the sites whose final precision is
	// negative (kept, the likelihood not being log-concave); Clamped the
	// updates whose negative precision was set to 0 (ClampNegative, or
	// because H would not have been positive definite with it).
	Sweeps, Skipped, Negative, Clamped int
	// Damping is the damping at the end (see PairOptions.Damping).
	Damping float64
	// Tau and Nu are the sites' precisions and precision-weighted means
	// (pair sites, then coordinate sites).
	Tau, Nu []float64
	fac     *gp.Factor
	g       []float64 // n×r
	ch      chol
}

// RunPairs runs parallel EP with damping (van Gerven et al. 2010; Ridgway
// et al. sec. 3.3 and 4) for the prior factor f and the pair sites. Each
// sweep computes every pair's marginal x_k ~ N(m_k, v_k) from the same
// posterior, its cavity (precision 1/v_k - tau_k), the tilted moments
// from Lik.Tilted, and the damped moment-matched site; then H is
// refactorised. The pair marginals are computed in one of two ways,
// whichever is cheaper:
//
//   - by pairs, for a factor of low rank r (linear scores: G = sqrt(V) X,
//     r = d): with g_k = G'a_k, m_k = g_k'H^-1 b and v_k = |L^-1 g_k|^2
//     (H = L L'), and H = I + sum_k tau_k g_k g_k': O(M r^2 + r^3) per
//     sweep for M pairs (Ridgway et al.'s O(n+ n- d^2 + d^3));
//   - by items (any other sites, such as a sample of the AUC pairs): with
//     the rows x_i of X = G L'^-T, v_k = |x_I - x_J|^2 and the means from
//     G H^-1 b; S G is built from the sites in O(M r) (S is never formed)
//     and H = I + G'(SG): O(M r + N r^2 + r^3) per sweep;
//   - by blocks, whenever the sites are every pair (P_a, N_b) of two
//     disjoint item sets in row-major order (the AUC pairs, any r): the
//     sites' precisions are a |P|×|N| matrix T, G'SG and the variances
//     come from two matrix products with it (pairBlocks): O(M r + N r^2 +
//     r^3) per sweep, below both others.
//
// C is never inverted. The sites' precisions may be negative (the AUC step
// is not log-concave); they are kept as long as the cavities are proper
// and H is positive definite; a sweep whose H is not positive definite is
// redone with its negative new precisions set to 0 (counted in Clamped).
//
// log Z_EP = sum_k log s_k - 1/2 log|H| + 1/2 b'H^-1 b, with
// log s_k = log Z_k + m_k^2/(2 v_k) + 1/2 log(v_k a_k) - c_k^2/(2 a_k) for the
// cavity N(m_k, v_k), a_k = 1/v_k + tau_k, c_k = m_k/v_k + nu_k (Rasmussen
// & Williams eq. 3.65 in whitened form).
//
// It returns ErrNotConverged (wrapped, with the result so far) when the
// sweeps run out, and an error when the posterior cannot be formed. Bad
// indices panic.
func RunPairs(f *gp.Factor, sites []PairSite, opts PairOptions) (*PairResult, error) {
	return RunPairsCoords(f, sites, nil, opts)
}

// RunPairsCoords is RunPairs with further sites on whitened coordinates
// (g_k = e_K in H = I + sum_k tau_k g_k g_k' and b): its marginals are
// always computed by pairs, O((M + P) r^2 + r^3) per sweep for P
// coordinate sites.
func RunPairsCoords(f *gp.Factor, sites []PairSite, coords []CoordSite, opts PairOptions) (*PairResult, error) {
	checkPairSites(f, sites, coords)
	r, err := newPairRunner(f, sites, coords, opts)
	if err != nil {
		return nil, err
	}
	res, p := r.res, r.p
	for sweep := 1; sweep <= r.maxSweeps; sweep++ {
		if stop := r.opts.Stop; stop != nil {
			if err := stop(); err != nil {
				return nil, err
			}
		}
		res.Sweeps = sweep
		p.pairMarginalsTo(r.pm, r.pv)
		if sweep > 1 && r.converged() {
			if err := r.finish(); err != nil {
				return nil, err
			}
			return res, nil
		}
		copy(r.prevM, r.pm)
		copy(r.prevV, r.pv)
		if err := r.sweep(); err != nil {
			return nil, err
		}
	}
	p.pairMarginalsTo(r.pm, r.pv)
	if err := r.finish(); err != nil {
		return res, fmt.Errorf("%w in %d sweeps (and %v)", ErrNotConverged, r.maxSweeps, err)
	}
	return res, fmt.Errorf("%w in %d sweeps", ErrNotConverged, r.maxSweeps)
}

// checkPairSites panics for a site on items or a coordinate the factor f
// does not have, or without a likelihood.
func checkPairSites(f *gp.Factor, sites []PairSite, coords []CoordSite) {
	n := f.N
	for k, s := range coords {
		if s.K < 0 || s.K >= f.R {
			panic(fmt.Sprintf("multirater: ep: coordinate site %d on coordinate %d of %d", k, s.K, f.R))
		}
		if s.Lik == nil {
			panic(fmt.Sprintf("multirater: ep: coordinate site %d has no likelihood", k))
		}
	}
	for k, s := range sites {
		if s.I < 0 || s.I >= n || s.J < 0 || s.J >= n || s.I == s.J {
			panic(fmt.Sprintf("multirater: ep: pair site %d on items (%d, %d) of %d", k, s.I, s.J, n))
		}
		if s.Lik == nil {
			panic(fmt.Sprintf("multirater: ep: pair site %d has no likelihood", k))
		}
	}
}

// pairRunner is one run of RunPairsCoords: the result it fills, the
// posterior, the damping schedule and the scratch every sweep reuses.
type pairRunner struct {
	res           *PairResult
	p             *pairPost
	opts          PairOptions
	damp, tol     float64
	adaptive      bool
	maxSweeps     int
	pm, pv        []float64 // the sites' marginals
	prevM, prevV  []float64 // at the previous sweep
	newTau, newNu []float64
	minMoved      float64 // the smallest move since damping last changed
	stale         int     // sweeps since minMoved was last lowered
}

// newPairRunner starts a run from opts' sites (when given) or from zero
// sites; it panics for a damping outside (0, 1].
func newPairRunner(f *gp.Factor, sites []PairSite, coords []CoordSite, opts PairOptions) (*pairRunner, error) {
	r := &pairRunner{opts: opts, damp: opts.Damping, adaptive: opts.Damping == 0, maxSweeps: opts.MaxSweeps, tol: opts.Tol, minMoved: math.Inf(1)}
	if r.adaptive {
		r.damp = 0.8
	}
	if !(r.damp > 0 && r.damp <= 1) {
		panic(fmt.Sprintf("multirater: ep: Damping = %v must be in (0, 1]", r.damp))
	}
	if r.maxSweeps == 0 {
		r.maxSweeps = 1000
	}
	if r.tol == 0 {
		r.tol = 1e-6
	}
	m := len(sites) + len(coords)
	r.p = newPairPost(f, sites, coords, opts.path)
	r.res = &PairResult{Tau: make([]float64, m), Nu: make([]float64, m), fac: f, g: r.p.g}
	if len(opts.InitTau) == m && len(opts.InitNu) == m {
		copy(r.res.Tau, opts.InitTau)
		copy(r.res.Nu, opts.InitNu)
	}
	if err := r.p.refresh(r.res.Tau, r.res.Nu); err != nil {
		return nil, err
	}
	r.pm, r.pv = make([]float64, m), make([]float64, m)
	r.prevM, r.prevV = make([]float64, m), make([]float64, m)
	r.newTau, r.newNu = make([]float64, m), make([]float64, m)
	return r, nil
}

// converged reports whether no site's marginal moved by tol (means in
// sds, variances relative) since the last sweep; otherwise it adapts the
// damping: multiplied by 0.7 (down to 0.05) when the move has not reached
// a new minimum for 5 sweeps.
func (r *pairRunner) converged() bool {
	// The largest squared move, max(dm^2/v, dv^2/v^2) = max(dm^2 v, dv^2)/v^2:
	// one division per site and no square root (a sweep's cost besides
	// the tilted moments); NaN when a variance is not positive.
	moved := 0.0
	for k, v := range r.pv {
		dm, dv := r.pm[k]-r.prevM[k], v-r.prevV[k]
		q := max(dm*dm*v, dv*dv) / (v * v)
		if !(v > 0) {
			q = math.NaN()
		}
		moved = max(moved, q)
	}
	moved = math.Sqrt(moved)
	if moved < r.tol {
		return true
	}
	if moved < r.minMoved {
		r.minMoved, r.stale = moved, 0
	} else {
		r.stale++
	}
	if r.adaptive && r.stale >= 5 && r.damp > 0.05 {
		r.damp = math.Max(0.05, 0.7*r.damp)
		r.minMoved, r.stale = math.Inf(1), 0
	}
	return false
}

// sweep updates every site from the current marginals and refactorises
// the posterior; a sweep whose H is not positive definite is redone with
// its negative new precisions set to 0.
func (r *pairRunner) sweep() error {
	res, p := r.res, r.p
	for k := range r.newTau {
		l, y := p.site(k)
		t, nu, ok := pairSite(l, p.derivs[k], y, r.pm[k], r.pv[k], res.Tau[k], res.Nu[k], r.damp)
		if !ok {
			res.Skipped++
			t, nu = res.Tau[k], res.Nu[k]
		} else if t < 0 && r.opts.ClampNegative {
			t = 0
			res.Clamped++
		}
		r.newTau[k], r.newNu[k] = t, nu
	}
	if err := p.refresh(r.newTau, r.newNu); err != nil {
		// Negative precisions outweigh the prior: redo the sweep with
		// them set to 0.
		for k, t := range r.newTau {
			if t < 0 {
				r.newTau[k] = 0
				res.Clamped++
			}
		}
		if err := p.refresh(r.newTau, r.newNu); err != nil {
			return err
		}
	}
	copy(res.Tau, r.newTau)
	copy(res.Nu, r.newNu)
	return nil
}

// finish fills the result at the current posterior: the marginals, the
// count of negative sites and log Z_EP.
func (r *pairRunner) finish() error {
	res, p := r.res, r.p
	res.Damping = r.damp
	res.PairMean, res.PairVar = r.pm, r.pv
	res.W = p.mw
	res.ch = p.ch
	res.Mean, res.Var = make([]float64, p.n), make([]float64, p.n)
	p.itemMarginalsTo(res.Mean, res.Var)
	res.Negative = 0
	for _, t := range res.Tau {
		if t < 0 {
			res.Negative++
		}
	}
	lz, err := res.logZ(p)
	res.LogZ = lz
	return err
}

// pairSite returns the damped moment-matched site for the marginal
// N(mu, v) of its x and its current (tau, nu); ok is false when the cavity
// is improper or the tilted moments are not finite. dv, when not nil, is
// l as a lik.TiltedDeriver: its derivatives without log Z.
func pairSite(l lik.Likelihood, dv lik.TiltedDeriver, y, mu, v, tau, nu, damp float64) (newTau, newNu float64, ok bool) {
	cTau := 1/v - tau
	if !(cTau > 0) {
		return 0, 0, false
	}
	cVar := 1 / cTau
	cMean := cVar * (mu/v - nu)
	if math.IsNaN(cMean) || math.IsInf(cMean, 0) || math.IsInf(cVar, 0) {
		return 0, 0, false
	}
	var d1, d2 float64
	if dv != nil {
		d1, d2 = dv.TiltedDerivs(y, cMean, cVar)
	} else {
		_, d1, d2 = l.Tilted(y, cMean, cVar)
	}
	// Moment matching (Rasmussen & Williams eq. 3.59 in GPML's form): the
	// tilted precision is cTau + t with t = -d2/(1 + d2 cVar).
	den := 1 + d2*cVar
	t := -d2 / den
	nn := (d1 - cMean*d2) / den
	if math.IsNaN(t) || math.IsInf(t, 0) || math.IsNaN(nn) || math.IsInf(nn, 0) || !(den > 0) {
		return 0, 0, false
	}
	return damp*t + (1-damp)*tau, damp*nn + (1-damp)*nu, true
}

// logZ computes log Z_EP at the converged posterior.
func (r *PairResult) logZ(p *pairPost) (float64, error) {
	sum := 0.0
	for k := range r.Tau {
		cMean, cVar, ok := r.Cavity(k)
		if !ok {
			return 0, fmt.Errorf("multirater: ep: site %d has a cavity of precision %v at the posterior", k, 1/r.PairVar[k]-r.Tau[k])
		}
		l, y := p.site(k)
		lz, _, _ := l.Tilted(y, cMean, cVar)
		a := 1/cVar + r.Tau[k]
		c := cMean/cVar + r.Nu[k]
		sum += lz + 0.5*cMean*cMean/cVar + 0.5*math.Log(cVar*a) - 0.5*c*c/a
	}
	return sum - 0.5*p.ch.logDet() + 0.5*floats.Dot(p.b, p.mw), nil
}

// Cavity returns site k's cavity distribution N(mean, vr) at the final
// posterior (ok false when its precision is not positive).
func (r *PairResult) Cavity(k int) (mean, vr float64, ok bool) {
	v, mu := r.PairVar[k], r.PairMean[k]
	cTau := 1/v - r.Tau[k]
	if !(cTau > 0) {
		return 0, 0, false
	}
	vr = 1 / cTau
	return vr * (mu/v - r.Nu[k]), vr, true
}

// pairPost is the whitened posterior of pair sites with its scratch space.
type pairPost struct {
	n, r   int
	g      []float64 // n×r
	sites  []PairSite
	coords []CoordSite
	// derivs[k] is site k's likelihood as a lik.TiltedDeriver (nil when
	// it is not one).
	derivs []lik.TiltedDeriver
	byPair bool
	// blk holds the block path's state when the pair sites are every
	// (I, J) of two disjoint item sets in row-major order (the AUC pairs).
	blk   *pairBlocks
	gk    []float64 // M×r rows g_k = G'a_k (byPair)
	z     []float64 // M×r or n×r scratch
	gw    []float64 // scratch of gp.SyrkUpperTrans
	h     []float64 // r×r
	sgm   []float64 // n×r: S G (by items)
	sq    []float64 // |x_i|^2 for the rows of X = G L'^-T (by items)
	u     []float64 // sum nu_k a_k (n)
	fm    []float64 // item means (n)
	b, mw []float64
	ch    chol
}

func newPairPost(f *gp.Factor, sites []PairSite, coords []CoordSite, path int) *pairPost {
	n, r := f.N, f.R
	g := f.G
	if f.Diag {
		g = make([]float64, n*n)
		for i, sd := range f.SD {
			g[i*n+i] = sd
		}
	}
	m := len(sites) + len(coords)
	p := &pairPost{n: n, r: r, g: g, sites: sites, coords: coords, h: make([]float64, r*r), u: make([]float64, n),
		b: make([]float64, r), mw: make([]float64, r)}
	p.derivs = make([]lik.TiltedDeriver, m)
	for k := range p.derivs {
		l, _ := p.site(k)
		p.derivs[k], _ = l.(lik.TiltedDeriver)
	}
	// By pairs costs M r^2 per sweep, by items M r + N r^2.
	p.byPair = float64(m)*float64(r) <= float64(m)+float64(n)*float64(r)
	if path != 0 {
		p.byPair = path == 1
	}
	if len(coords) > 0 {
		p.byPair = true
	}
	if len(coords) == 0 && (path == 0 || path == 3) {
		p.blk = newPairBlocks(g, n, r, sites)
	}
	if path == 3 && p.blk == nil {
		panic("multirater: ep: the block path needs complete bipartite pair sites")
	}
	switch {
	case p.blk != nil:
		p.byPair = false
		p.fm = make([]float64, n)
	case p.byPair:
		p.gk = make([]float64, m*r)
		p.z = make([]float64, m*r)
		for k, s := range sites {
			floats.SubTo(p.gk[k*r:(k+1)*r], g[s.I*r:(s.I+1)*r], g[s.J*r:(s.J+1)*r])
		}
		for c, s := range coords {
			p.gk[(len(sites)+c)*r+s.K] = 1
		}
	default:
		p.sgm = make([]float64, n*r)
		p.sq = make([]float64, n)
		p.z = make([]float64, n*r)
		p.fm = make([]float64, n)
	}
	return p
}

// refresh sets H = I + G'SG and b for the sites (tau, nu), factorises H
// and solves for the whitened mean; errNotPD when H is not positive
// definite.
func (p *pairPost) refresh(tau, nu []float64) error {
	r, n := p.r, p.n
	for i := range p.h {
		p.h[i] = 0
	}
	for i := 0; i < r; i++ {
		p.h[i*r+i] = 1
	}
	for i := range p.u {
		p.u[i] = 0
	}
	if p.blk != nil {
		p.blk.refresh(p.h, p.u, tau, nu)
	} else {
		for k, s := range p.sites {
			p.u[s.I] += nu[k]
			p.u[s.J] -= nu[k]
		}
	}
	switch {
	case p.blk != nil:
	case p.byPair:
		// H = I + sum tau_k g_k g_k' as two rank-M updates: sqrt(tau_k) g_k
		// for the positive sites, sqrt(-tau_k) g_k for the negative ones.
		m := len(p.sites) + len(p.coords)
		if len(p.gw) < min(m, 256)*r {
			p.gw = make([]float64, min(m, 256)*r)
		}
		np := 0
		for k := 0; k < m; k++ {
			if tau[k] > 0 {
				floats.ScaleTo(p.z[np*r:(np+1)*r], math.Sqrt(tau[k]), p.gk[k*r:(k+1)*r])
				np++
			}
		}
		if np > 0 {
			gp.SyrkUpperTrans(1, p.z, np, r, 1, p.h, p.gw)
		}
		nn := 0
		for k := 0; k < m; k++ {
			if tau[k] < 0 {
				floats.ScaleTo(p.z[nn*r:(nn+1)*r], math.Sqrt(-tau[k]), p.gk[k*r:(k+1)*r])
				nn++
			}
		}
		if nn > 0 {
			gp.SyrkUpperTrans(-1, p.z, nn, r, 1, p.h, p.gw)
		}
	default:
		// SG = sum_k tau_k a_k (g_I - g_J)' with S never formed, O(M r):
		// row i is d_i g_i - sum over i's sites of tau_k g_(the other
		// item), d_i the sum of i's sites' tau_k. H = I + G'(SG).
		clear(p.sgm)
		clear(p.fm)
		for k, s := range p.sites {
			t := tau[k]
			if t == 0 {
				continue
			}
			p.fm[s.I] += t
			p.fm[s.J] += t
			floats.AddScaled(p.sgm[s.I*r:(s.I+1)*r], -t, p.g[s.J*r:(s.J+1)*r])
			floats.AddScaled(p.sgm[s.J*r:(s.J+1)*r], -t, p.g[s.I*r:(s.I+1)*r])
		}
		for i, d := range p.fm {
			if d != 0 {
				floats.AddScaled(p.sgm[i*r:(i+1)*r], d, p.g[i*r:(i+1)*r])
			}
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, blas64.General{Rows: n, Cols: r, Stride: r, Data: p.g},
			blas64.General{Rows: n, Cols: r, Stride: r, Data: p.sgm}, 1,
			blas64.General{Rows: r, Cols: r, Stride: r, Data: p.h})
	}
	for i := 0; i < r; i++ {
		for k := i + 1; k < r; k++ {
			v := p.h[i*r+k]
			if !p.byPair && p.blk == nil {
				v = 0.5 * (v + p.h[k*r+i])
			}
			p.h[i*r+k], p.h[k*r+i] = v, v
		}
	}
	if !p.ch.factorize(p.h, r) {
		return errNotPD
	}
	// b = G'u.
	blas64.Gemv(blas.Trans, 1, blas64.General{Rows: n, Cols: r, Stride: r, Data: p.g},
		blas64.Vector{N: n, Inc: 1, Data: p.u}, 0, blas64.Vector{N: r, Inc: 1, Data: p.b})
	for c, s := range p.coords {
		p.b[s.K] += nu[len(p.sites)+c]
	}
	p.ch.solveTo(p.mw, p.b)
	return nil
}

// pairMarginalsTo sets the pairs' marginal means and variances.
func (p *pairPost) pairMarginalsTo(pm, pv []float64) {
	r, n := p.r, p.n
	if p.blk != nil {
		blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: n, Cols: r, Stride: r, Data: p.g},
			blas64.Vector{N: r, Inc: 1, Data: p.mw}, 0, blas64.Vector{N: n, Inc: 1, Data: p.fm})
		p.blk.marginalsTo(pm, pv, &p.ch, p.fm)
		return
	}
	if p.byPair {
		m := len(p.sites) + len(p.coords)
		copy(p.z, p.gk)
		// Z = Gk L'^-1: row k is (L^-1 g_k)'.
		p.ch.rightSolve(p.z, m)
		for k := 0; k < m; k++ {
			row := p.z[k*r : (k+1)*r]
			pv[k] = floats.Dot(row, row)
			pm[k] = floats.Dot(p.gk[k*r:(k+1)*r], p.mw)
		}
		return
	}
	// Sigma_f = X X', X = G L'^-1 (n×r): v_k = |x_I|^2 + |x_J|^2 -
	// 2 x_I'x_J, O(M r); item means G H^-1 b.
	copy(p.z, p.g)
	p.ch.rightSolve(p.z, n)
	blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: n, Cols: r, Stride: r, Data: p.g},
		blas64.Vector{N: r, Inc: 1, Data: p.mw}, 0, blas64.Vector{N: n, Inc: 1, Data: p.fm})
	for i := range p.sq {
		x := p.z[i*r : (i+1)*r]
		p.sq[i] = floats.Dot(x, x)
	}
	for k, s := range p.sites {
		pv[k] = p.sq[s.I] + p.sq[s.J] - 2*floats.Dot(p.z[s.I*r:(s.I+1)*r], p.z[s.J*r:(s.J+1)*r])
		pm[k] = p.fm[s.I] - p.fm[s.J]
	}
}

// site returns site k's likelihood and observation (pair sites first).
func (p *pairPost) site(k int) (lik.Likelihood, float64) {
	if k < len(p.sites) {
		return p.sites[k].Lik, p.sites[k].Y
	}
	c := p.coords[k-len(p.sites)]
	return c.Lik, c.Y
}

// itemMarginalsTo sets the items' marginal means and variances, O(N r^2).
func (p *pairPost) itemMarginalsTo(mean, vr []float64) {
	r, n := p.r, p.n
	x := make([]float64, n*r)
	copy(x, p.g)
	p.ch.rightSolve(x, n)
	for i := 0; i < n; i++ {
		row := x[i*r : (i+1)*r]
		vr[i] = floats.Dot(row, row)
		mean[i] = floats.Dot(p.g[i*r:(i+1)*r], p.mw)
	}
}

// Rank is r, the dimension of the whitened coordinates.
func (r *PairResult) Rank() int { return len(r.W) }

// SolveTo sets dst = H^-1 v (lengths r; dst may be v) and returns it: the
// whitened posterior covariance times v.
func (r *PairResult) SolveTo(dst, v []float64) []float64 {
	if len(dst) != len(r.W) || len(v) != len(r.W) {
		panic("multirater: ep: PairResult.SolveTo: wrong lengths")
	}
	r.ch.solveTo(dst, v)
	return dst
}

// QuadForm returns v'H^-1 v = |L^-1 v|^2, the posterior variance of the
// whitened contrast v'w, O(r^2). scratch (length r) is overwritten; nil
// allocates.
func (r *PairResult) QuadForm(v, scratch []float64) float64 {
	if scratch == nil {
		scratch = make([]float64, len(r.W))
	}
	copy(scratch, v)
	r.ch.lowerSolve(scratch)
	return floats.Dot(scratch, scratch)
}

// WCovTo sets dst (r×r, empty or of that size) to the whitened posterior
// covariance H^-1, O(r^3): for a linear model with G = sqrt(V) X the
// coefficients' covariance is V H^-1.
func (r *PairResult) WCovTo(dst *mat.SymDense) {
	k := len(r.W)
	if dst.IsEmpty() {
		dst.ReuseAsSym(k)
	}
	e := make([]float64, k)
	for j := 0; j < k; j++ {
		for i := range e {
			e[i] = 0
		}
		e[j] = 1
		r.ch.solveTo(e, e)
		for i := 0; i <= j; i++ {
			dst.SetSym(i, j, e[i])
		}
	}
}

// DrawTo sets dst (length N) to a joint draw of the items' latent values
// from the EP posterior: w = H^-1 b + L'^-1 z, z ~ N(0, I), f = G w.
func (r *PairResult) DrawTo(rng *rand.Rand, dst []float64) {
	k := len(r.W)
	x := make([]float64, k)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	r.ch.upperSolve(x)
	floats.Add(x, r.W)
	n := r.fac.N
	blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: n, Cols: k, Stride: k, Data: r.g},
		blas64.Vector{N: k, Inc: 1, Data: x}, 0, blas64.Vector{N: n, Inc: 1, Data: dst})
}

// KernelGrad returns the gradient of log Z_EP with respect to kernel
// hyperparameters at the converged pair sites (Ridgway et al. sec. 3.3:
// "derivatives of this approximated quantity with respect to
// hyper-parameters"), for dC[k] the derivative (N×N) of the prior
// covariance C = G G' in the k-th hyperparameter:
//
//	d log Z_EP / d theta_k = 1/2 (alpha' dC_k alpha - tr(R dC_k)),
//
// with S = sum_k tau_k a_k a_k' and u = sum_k nu_k a_k the sites' sums,
// alpha = (I + SC)^-1 u = u - S mu (mu the posterior mean of f) and
// R = S (I + CS)^-1 = S - S Sigma S, Sigma = G H^-1 G' (Rasmussen &
// Williams eq. 5.27 with a non-diagonal site precision). With U = S G L'^-T
// (H = L L'), tr(R dC) = tr(S dC) - tr(U' dC U): O(M + N^2 r) once and
// O(N^2 r) per hyperparameter; C is never inverted. At an EP fixed point
// the sites' own dependence on the hyperparameters does not enter. It
// panics for a result with coordinate sites (RunPairsCoords), whose sites
// live in the factor's coordinates.
func (r *PairResult) KernelGrad(sites []PairSite, dC []mat.Symmetric) []float64 {
	n, k := r.fac.N, len(r.W)
	if len(sites) != len(r.Tau) {
		panic(fmt.Sprintf("multirater: ep: KernelGrad: %d sites for a result of %d (coordinate sites are not supported)", len(sites), len(r.Tau)))
	}
	s := mat.NewSymDense(n, nil)
	u := make([]float64, n)
	for j, st := range sites {
		t := r.Tau[j]
		s.SetSym(st.I, st.I, s.At(st.I, st.I)+t)
		s.SetSym(st.J, st.J, s.At(st.J, st.J)+t)
		s.SetSym(st.I, st.J, s.At(st.I, st.J)-t)
		u[st.I] += r.Nu[j]
		u[st.J] -= r.Nu[j]
	}
	// alpha = u - S mu.
	var smu mat.VecDense
	smu.MulVec(s, mat.NewVecDense(n, r.Mean))
	alpha := mat.NewVecDense(n, u)
	alpha.SubVec(alpha, &smu)
	// U = S X, X = G L'^-T (n×k).
	x := make([]float64, n*k)
	copy(x, r.g)
	r.ch.rightSolve(x, n)
	var um mat.Dense
	um.Mul(s, mat.NewDense(n, k, x))
	grad := make([]float64, len(dC))
	var du mat.Dense
	var da mat.VecDense
	for h, d := range dC {
		if d.SymmetricDim() != n {
			panic(fmt.Sprintf("multirater: ep: KernelGrad: dC[%d] is %d×%d for %d items", h, d.SymmetricDim(), d.SymmetricDim(), n))
		}
		da.MulVec(d, alpha)
		trSD := 0.0
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				trSD += s.At(i, j) * d.At(j, i)
			}
		}
		du.Mul(d, &um)
		trU := 0.0
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				trU += um.At(i, j) * du.At(i, j)
			}
		}
		grad[h] = 0.5 * (mat.Dot(alpha, &da) - trSD + trU)
	}
	return grad
}
