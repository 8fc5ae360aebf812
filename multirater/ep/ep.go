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
// Costs, with r the rank of the factor (r = N for a full-rank kernel; the
// identity kernel is diagonal and costs O(N + M)): a sequential sweep
// updates the sites one at a time with rank-one updates of the Cholesky
// factor of H, O(M r^2) for M sites; a parallel sweep updates every site
// from the same posterior and refactorises, O(N r^2 + r^3). The log
// evidence and the marginals after a sweep cost O(N r^2 + r^3).
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

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
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
	// in a sweep (log Z_EP, a function of the marginals and the sites, is
	// computed then); 0 means 1e-6.
	Tol float64
	// Init, when it has one entry per site, starts from these sites (a warm
	// start, e.g. from the previous hyperparameters of an optimisation).
	InitTau, InitNu []float64
}

// Result is the EP approximation at convergence.
type Result struct {
	// Mean and Var are the posterior marginals of the items' latent values.
	Mean, Var []float64
	// LogZ is log Z_EP.
	LogZ float64
	// Sweeps is the number of sweeps run; Skipped counts the site updates
	// left out because the cavity had a non-positive precision or the new
	// site a negative one.
	Sweeps, Skipped int
	// Tau and Nu are the sites' precisions and precision-weighted means;
	// CavMean and CavVar the cavity distributions of the sites at the final
	// posterior (what the evidence's gradients need).
	Tau, Nu         []float64
	CavMean, CavVar []float64
	post            *posterior
	sites           []lik.Site
	fac             *gp.Factor
}

// ErrNotConverged is returned (wrapped, with the Result so far) when EP
// has not converged within MaxSweeps.
var ErrNotConverged = errors.New("multirater: EP did not converge")

// Run runs EP for the prior factor f and the sites. It returns the result
// and ErrNotConverged (wrapped, with the last result) when the sweeps run
// out, or another error when the posterior cannot be formed (H not
// positive definite, non-finite site parameters).
func Run(f *gp.Factor, sites []lik.Site, opts Options) (*Result, error) {
	n := f.N
	for j, s := range sites {
		if s.Item < 0 || s.Item >= n {
			panic(fmt.Sprintf("multirater: ep: site %d on item %d of %d", j, s.Item, n))
		}
		if s.Lik == nil {
			panic(fmt.Sprintf("multirater: ep: site %d has no likelihood", j))
		}
	}
	damp := opts.Damping
	if damp == 0 {
		damp = 1
		if opts.Parallel {
			damp = 0.8
		}
	}
	if !(damp > 0 && damp <= 1) {
		panic(fmt.Sprintf("multirater: ep: Damping = %v must be in (0, 1]", damp))
	}
	maxSweeps := opts.MaxSweeps
	if maxSweeps == 0 {
		maxSweeps = 200
	}
	tol := opts.Tol
	if tol == 0 {
		tol = 1e-6
	}
	m := len(sites)
	res := &Result{Tau: make([]float64, m), Nu: make([]float64, m), sites: sites, fac: f}
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
	mean := make([]float64, n)
	vr := make([]float64, n)
	p.marginalsTo(mean, vr)
	for sweep := 1; sweep <= maxSweeps; sweep++ {
		res.Sweeps = sweep
		prevMean := append([]float64(nil), mean...)
		prevVar := append([]float64(nil), vr...)
		if opts.Parallel {
			dTau := make([]float64, m)
			dNu := make([]float64, m)
			for j, s := range sites {
				t, nu, ok := newSite(s, mean[s.Item], vr[s.Item], res.Tau[j], res.Nu[j], damp)
				if !ok {
					res.Skipped++
					continue
				}
				dTau[j], dNu[j] = t-res.Tau[j], nu-res.Nu[j]
			}
			for j, s := range sites {
				res.Tau[j] += dTau[j]
				res.Nu[j] += dNu[j]
				p.S[s.Item] += dTau[j]
				p.V[s.Item] += dNu[j]
			}
			if err := p.refresh(); err != nil {
				return nil, err
			}
		} else {
			for j, s := range sites {
				mu, v := p.marginal(s.Item)
				t, nu, ok := newSite(s, mu, v, res.Tau[j], res.Nu[j], damp)
				if !ok {
					res.Skipped++
					continue
				}
				if err := p.update(s.Item, t-res.Tau[j], nu-res.Nu[j]); err != nil {
					return nil, err
				}
				res.Tau[j], res.Nu[j] = t, nu
			}
			if err := p.refresh(); err != nil { // clear the rounding of the rank-one updates
				return nil, err
			}
		}
		p.marginalsTo(mean, vr)
		moved := 0.0
		for i := range mean {
			moved = math.Max(moved, math.Abs(mean[i]-prevMean[i])/math.Sqrt(vr[i]))
			moved = math.Max(moved, math.Abs(vr[i]-prevVar[i])/vr[i])
		}
		if moved < tol {
			logZ, err := res.logZ(mean, vr)
			if err != nil {
				return nil, err
			}
			res.LogZ = logZ
			res.Mean, res.Var = mean, vr
			return res, nil
		}
	}
	res.Mean, res.Var = mean, vr
	if logZ, err := res.logZ(mean, vr); err == nil {
		res.LogZ = logZ
	}
	return res, fmt.Errorf("%w in %d sweeps", ErrNotConverged, maxSweeps)
}

// newSite returns the damped new natural parameters of site s given the
// item's posterior marginal N(mu, v) and the site's current (tau, nu); ok
// is false when the cavity precision is not positive or the new site's
// precision would be negative (the update is then skipped).
func newSite(s lik.Site, mu, v, tau, nu, damp float64) (newTau, newNu float64, ok bool) {
	cTau := 1/v - tau
	if !(cTau > 0) {
		return 0, 0, false
	}
	cVar := 1 / cTau
	cMean := cVar * (mu/v - nu)
	_, d1, d2 := s.Lik.Tilted(s.Y, cMean, cVar)
	// Moment matching (Rasmussen & Williams eq. 3.59 in GPML's form).
	den := 1 + d2*cVar
	t := -d2 / den
	nn := (d1 - cMean*d2) / den
	if !(t >= 0) || math.IsInf(t, 0) || math.IsNaN(nn) || math.IsInf(nn, 0) {
		return 0, 0, false
	}
	return damp*t + (1-damp)*tau, damp*nn + (1-damp)*nu, true
}

// logZ computes log Z_EP at the posterior with marginals (mean, vr), and
// stores each site's cavity.
func (r *Result) logZ(mean, vr []float64) (float64, error) {
	m := len(r.sites)
	if len(r.CavMean) != m {
		r.CavMean = make([]float64, m)
		r.CavVar = make([]float64, m)
	}
	sum := 0.0
	for j, s := range r.sites {
		v, mu := vr[s.Item], mean[s.Item]
		cTau := 1/v - r.Tau[j]
		if !(cTau > 0) {
			return 0, fmt.Errorf("multirater: ep: site %d has a cavity of precision %v at the posterior", j, cTau)
		}
		cVar := 1 / cTau
		cMean := cVar * (mu/v - r.Nu[j])
		r.CavMean[j], r.CavVar[j] = cMean, cVar
		lz, _, _ := s.Lik.Tilted(s.Y, cMean, cVar)
		// log s_j: the site's scale that makes cavity x site integrate to
		// the tilted normaliser.
		a := 1/cVar + r.Tau[j]
		c := cMean/cVar + r.Nu[j]
		sum += lz + 0.5*cMean*cMean/cVar + 0.5*math.Log(cVar*a) - 0.5*c*c/a
	}
	return sum - 0.5*r.post.logDetH() + 0.5*r.post.quad(), nil
}

// posterior is q(f) in whitened form for the per-item site sums S and V.
type posterior struct {
	f    *gp.Factor
	n, r int
	g    *mat.Dense // n×r, nil for a diagonal factor
	S, V []float64
	ch   chol
	h    []float64 // scratch for H, r×r
	sg   []float64 // scratch for S^1/2 G, n×r
	b    []float64 // G'V
	mw   []float64 // H^-1 b
	gn   []float64 // scratch, length r
	tmp  []float64 // scratch, length r
}

func newPosterior(f *gp.Factor) *posterior {
	p := &posterior{f: f, n: f.N, r: f.R, S: make([]float64, f.N), V: make([]float64, f.N)}
	if !f.Diag {
		p.g = mat.NewDense(f.N, f.R, f.G)
		p.h = make([]float64, f.R*f.R)
		p.b = make([]float64, f.R)
		p.mw = make([]float64, f.R)
		p.gn = make([]float64, f.R)
		p.tmp = make([]float64, f.R)
	}
	return p
}

// errNotPD is returned when H is not positive definite (negative site
// precisions outweighing the prior).
var errNotPD = errors.New("multirater: ep: the posterior precision I + G'SG is not positive definite")

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
	for i := 0; i < p.n; i++ {
		if p.S[i] > 0 {
			np++
		} else if p.S[i] < 0 {
			nn++
		}
	}
	pos = p.sg[:np*r]
	neg = make([]float64, nn*r)
	ip, in := 0, 0
	for i := 0; i < p.n; i++ {
		s := p.S[i]
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
	hs := blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: r, Data: p.h}
	if np > 0 {
		blas64.Syrk(blas.Trans, 1, blas64.General{Rows: np, Cols: r, Stride: r, Data: pos}, 1, hs)
	}
	if nn > 0 {
		blas64.Syrk(blas.Trans, -1, blas64.General{Rows: nn, Cols: r, Stride: r, Data: neg}, 1, hs)
	}
	for i := 0; i < r; i++ {
		for k := i + 1; k < r; k++ {
			p.h[k*r+i] = p.h[i*r+k]
		}
	}
	if !p.ch.factorize(p.h, r) {
		return errNotPD
	}
	for k := range p.b {
		p.b[k] = 0
	}
	for i := 0; i < p.n; i++ {
		if v := p.V[i]; v != 0 {
			floats.AddScaled(p.b, v, p.g.RawRowView(i))
		}
	}
	p.ch.solveTo(p.mw, p.b)
	return nil
}

// update adds (dTau, dNu) to item n's site sums with a rank-one update of
// the Cholesky factor of H (a full refactorisation if a downdate fails).
func (p *posterior) update(n int, dTau, dNu float64) error {
	p.S[n] += dTau
	p.V[n] += dNu
	if p.g == nil {
		if sd := p.f.SD[n]; !(1+sd*sd*p.S[n] > 0) {
			return errNotPD
		}
		return nil
	}
	row := p.g.RawRowView(n)
	if dTau != 0 {
		copy(p.gn, row)
		if !p.ch.rankOne(dTau, p.gn) {
			return p.refresh()
		}
	}
	floats.AddScaled(p.b, dNu, row)
	p.ch.solveTo(p.mw, p.b)
	return nil
}

// marginal returns the posterior mean and variance of f_n, O(r^2).
func (p *posterior) marginal(n int) (mean, vr float64) {
	if p.g == nil {
		c := p.f.SD[n] * p.f.SD[n]
		d := 1 + c*p.S[n]
		return c * p.V[n] / d, c / d
	}
	row := p.g.RawRowView(n)
	copy(p.tmp, row)
	p.ch.lowerSolve(p.tmp)
	return floats.Dot(row, p.mw), floats.Dot(p.tmp, p.tmp)
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
	blas64.Trsm(blas.Right, blas.Trans, 1, p.ch.tri(blas.Lower), blas64.General{Rows: p.n, Cols: r, Stride: r, Data: x})
	for i := 0; i < p.n; i++ {
		row := x[i*r : (i+1)*r]
		vr[i] = floats.Dot(row, row)
		mean[i] = floats.Dot(p.g.RawRowView(i), p.mw)
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
// hyperparameters at the converged sites: with C the prior covariance
// (N×N, the one the factor decomposes) and dC[k] its derivative in the
// k-th hyperparameter,
//
//	d log Z_EP / d theta_k = 1/2 tr((alpha alpha' - R) dC_k),
//
// R = S^1/2 B^-1 S^1/2, B = I + S^1/2 C S^1/2, alpha = V - R C V
// (Rasmussen & Williams eq. 5.27 and alg. 3.5 with the item sums S, V of
// the sites; at an EP fixed point the sites' own dependence on theta does
// not enter). It needs every S_n >= 0 (log-concave likelihoods) and costs
// O(N^3 + N^2 per hyperparameter).
func (r *Result) KernelGrad(c mat.Symmetric, dC []mat.Symmetric) ([]float64, error) {
	n := c.SymmetricDim()
	if n != r.fac.N {
		panic("multirater: ep: KernelGrad: covariance of the wrong size")
	}
	s := r.post.S
	sq := make([]float64, n)
	for i, v := range s {
		if v < 0 {
			return nil, fmt.Errorf("multirater: ep: item %d has a negative site precision %v: no kernel gradient", i, v)
		}
		sq[i] = math.Sqrt(v)
	}
	b := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := sq[i] * c.At(i, j) * sq[j]
			if i == j {
				v++
			}
			b.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(b) {
		return nil, errNotPD
	}
	// R = S^1/2 B^-1 S^1/2.
	var binv mat.SymDense
	if err := ch.InverseTo(&binv); err != nil {
		return nil, err
	}
	rm := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			rm.SetSym(i, j, sq[i]*binv.At(i, j)*sq[j])
		}
	}
	v := mat.NewVecDense(n, append([]float64(nil), r.post.V...))
	var cv, rcv mat.VecDense
	cv.MulVec(c, v)
	rcv.MulVec(rm, &cv)
	alpha := mat.NewVecDense(n, nil)
	alpha.SubVec(v, &rcv)
	out := make([]float64, len(dC))
	for k, d := range dC {
		if d.SymmetricDim() != n {
			panic("multirater: ep: KernelGrad: derivative of the wrong size")
		}
		tr := 0.0
		for i := 0; i < n; i++ {
			ai := alpha.AtVec(i)
			for j := 0; j < n; j++ {
				tr += (ai*alpha.AtVec(j) - rm.At(i, j)) * d.At(j, i)
			}
		}
		out[k] = 0.5 * tr
	}
	return out, nil
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
}
