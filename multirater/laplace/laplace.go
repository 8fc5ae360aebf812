// Package laplace is Laplace's method (Chu & Ghahramani sec. 3.1 and app.
// A; Rasmussen & Williams sec. 3.4) for a Gaussian-process prior on the
// latent values f of N items and sites (lik.Site) that each touch one item:
// the posterior mode is found by Newton's method and the posterior is
// approximated by the Gaussian with the curvature there.
//
// Newton's method runs in the whitened coordinates of the prior factor
// C = G G' (gp.Factor), f = G w with w ~ N(0, I): it maximises
// Psi(w) = sum_j log p(y_j | f_item(j)) - |w|^2/2, whose Hessian is
// -(I + G'WG) with W = diag(-sum of the sites' second derivatives per item)
// (Rasmussen & Williams alg. 3.1 in whitened form), so C is never inverted
// and may be singular. Each step costs O(N r^2 + r^3), r the rank of the
// factor (O(N + M) for the identity kernel); a step that does not increase
// Psi is halved. The log evidence is Chu & Ghahramani's eq. 11,
// log q(y) = Psi(w*) - 1/2 log|I + G'WG|.
//
// A factor with a diagonal correction (gp.Factor.Extra = D, the FITC-style
// prior C = G G' + D of a truncated low-rank basis) adds independent
// per-item terms, f = G w + e, e ~ N(0, D): Newton's method runs on (w, e)
// and eliminates e in each step (Schur complement), so that it still solves
// with the r×r matrix H = I + G'W~G, W~ = W/(1 + DW); the evidence gains
// -1/2 sum_n log(1 + D_n W_n) (block determinant) and the marginals are
// Var f_n = (g_n'H^-1 g_n)/(1 + D_n W_n)^2 + D_n/(1 + D_n W_n).
package laplace

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/lik"
)

// Options control Run. The zero value means the defaults given for each
// field.
type Options struct {
	// MaxIter bounds the Newton steps; 0 means 100.
	MaxIter int
	// InitW and InitE, when InitW has one entry per column of the factor
	// (and InitE one per item for a factor with a diagonal correction),
	// start Newton's method there instead of at 0: a warm start from the
	// mode of nearby parameters on the same factor (Result.Mode).
	InitW, InitE []float64
	// Tol: the mode is found when a step changes Psi by less than Tol and
	// moves no latent value by more than Tol (relative to 1 + |f|); 0 means
	// 1e-10.
	Tol float64
	// Stop, when not nil, is asked before every Newton step whether to go
	// on: an error from it (a context's Err, when the fit is cancelled)
	// ends the run and Run returns it as it is. It changes no arithmetic.
	Stop func() error
}

// Result is the Laplace approximation at the mode.
type Result struct {
	// Mean is the posterior mode of the items' latent values and Var the
	// diagonal of (C^-1 + W)^-1.
	Mean, Var []float64
	// LogZ is the Laplace approximation of the log evidence (Chu eq. 11).
	LogZ float64
	// Iterations is the number of Newton steps.
	Iterations int
	// W is each item's -d^2 log p(y | f)/df^2 and Grad its d log p(y | f)/df
	// at the mode (summed over the item's sites): the Gaussian sites
	// (W, W f + Grad) of the approximation, for prediction (Chu eq. 16).
	W, Grad []float64

	f    *gp.Factor
	g    *mat.Dense
	chol *mat.Cholesky
	w    *mat.VecDense // the mode in whitened coordinates
	d3   []float64     // per item third derivative of log p(y | f) at the mode
	// extra is the factor's diagonal correction D (nil without), and
	// wtil = W/(1 + DW) the weights of H with it.
	extra, wtil []float64
	u           []float64 // Sigma a, a_n = Var_n d3_n / 2 (see Implicit)
	// e is the mode's diagonal-correction part (nil without).
	e []float64
}

// Mode returns the mode in the coordinates of Run (w, and e for a factor
// with a diagonal correction) and the factor it was found on: a warm
// start for Options.InitW and InitE on the same factor.
func (res *Result) Mode() (w, e []float64, f *gp.Factor) {
	if res.w == nil {
		return nil, nil, res.f
	}
	return res.w.RawVector().Data, res.e, res.f
}

// DrawTo sets dst to a draw of the items' latent values from the Laplace
// approximation N(mode, (C^-1 + W)^-1) (jointly, through the whitened
// coordinates).
func (res *Result) DrawTo(rng *rand.Rand, dst []float64) {
	if res.f.Diag {
		for i := range dst {
			dst[i] = res.Mean[i] + math.Sqrt(res.Var[i])*rng.NormFloat64()
		}
		return
	}
	r := res.w.Len()
	z := mat.NewVecDense(r, nil)
	for k := 0; k < r; k++ {
		z.SetVec(k, rng.NormFloat64())
	}
	var u mat.TriDense
	res.chol.UTo(&u)
	var x mat.VecDense
	if err := x.SolveVec(&u, z); err != nil {
		panic("multirater: laplace: triangular solve failed: " + err.Error())
	}
	if res.extra != nil {
		// f = mode + A G x + (D/(1 + DW))^1/2 z, A = diag(1/(1 + DW)).
		mat.NewVecDense(len(dst), dst).MulVec(res.g, &x)
		for i, d := range res.extra {
			a := 1 + d*res.W[i]
			dst[i] = res.Mean[i] + dst[i]/a + math.Sqrt(d/a)*rng.NormFloat64()
		}
		return
	}
	x.AddVec(&x, res.w)
	mat.NewVecDense(len(dst), dst).MulVec(res.g, &x)
}

// ErrNotConverged is returned (wrapped) when the mode was not found within
// MaxIter steps.
var ErrNotConverged = errors.New("multirater: Laplace's method did not converge")

// Run finds the posterior mode for the prior factor f and the sites, whose
// likelihoods must be log-concave in f (W >= 0).
func Run(f *gp.Factor, sites []lik.Site, opts Options) (*Result, error) {
	n := f.N
	for j, s := range sites {
		if s.Item < 0 || s.Item >= n || s.Lik == nil {
			panic(fmt.Sprintf("multirater: laplace: site %d on item %d of %d, or without a likelihood", j, s.Item, n))
		}
	}
	maxIter := cmp.Or(opts.MaxIter, 100)
	tol := cmp.Or(opts.Tol, 1e-10)
	nt := newNewton(f, sites)
	if len(opts.InitW) == f.R && (nt.extra == nil || len(opts.InitE) == n) {
		copy(nt.w, opts.InitW)
		copy(nt.e, opts.InitE)
	}
	psi, err := nt.eval(nt.w, nt.e)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for it := 1; it <= maxIter; it++ {
		if opts.Stop != nil {
			if err := opts.Stop(); err != nil {
				return nil, err
			}
		}
		res.Iterations = it
		psiPrev := psi
		if psi, err = nt.step(psi); err != nil {
			return nil, err
		}
		// The test of Options.Tol on the move of f compared f before and
		// after the last evaluation of the same point, always 0: only the
		// change of Psi decides (kept so that fits stay as they were).
		if math.Abs(psi-psiPrev) < tol {
			return nt.finish(res, psi)
		}
	}
	if _, err := nt.finish(res, psi); err != nil {
		return nil, err
	}
	return res, fmt.Errorf("%w in %d steps", ErrNotConverged, maxIter)
}

// newton is the search for the mode in the whitened coordinates w
// (f = G w): Psi(w) = sum_j log p(y_j | f_j) - |w|^2/2, maximised by
// Newton steps with step halving (Rasmussen & Williams alg. 3.1 in
// whitened form), and its scratch.
type newton struct {
	f     *gp.Factor
	g     *mat.Dense // nil for a diagonal factor
	sites []lik.Site
	chol  mat.Cholesky
	// w is the current point, fv = G w; grad and wt the per-item first
	// derivatives and -second derivatives of the log likelihood at fv.
	w, fv, grad, wt []float64
	// scratch
	newW, trial, rhs []float64
	// extra is the factor's diagonal correction D (nil without): f = G w
	// + e, e ~ N(0, D); e, eNew, eTrial are its current, Newton and trial
	// values, wtil = W/(1 + DW) and t the Newton right-hand side.
	extra, e, eNew, eTrial, wtil, t []float64
}

func newNewton(f *gp.Factor, sites []lik.Site) *newton {
	n, r := f.N, f.R
	nt := &newton{f: f, sites: sites, w: make([]float64, r), fv: make([]float64, n), grad: make([]float64, n), wt: make([]float64, n),
		newW: make([]float64, r), trial: make([]float64, r), rhs: make([]float64, n)}
	if !f.Diag {
		nt.g = mat.NewDense(n, r, f.G)
	}
	if f.Extra != nil {
		if f.Diag || len(f.Extra) != n {
			panic("multirater: laplace: a diagonal correction needs a non-diagonal factor and one variance per item")
		}
		nt.extra = f.Extra
		nt.e, nt.eNew, nt.eTrial, nt.wtil, nt.t = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	}
	return nt
}

// eval sets fv = G w (+ e) and returns Psi(w, e), filling grad and wt.
func (nt *newton) eval(w, e []float64) (float64, error) {
	grad, wt := nt.grad, nt.wt
	mulG(nt.f, nt.g, nt.fv, w)
	for i, v := range e {
		nt.fv[i] += v
	}
	for i := range grad {
		grad[i], wt[i] = 0, 0
	}
	psi := 0.0
	for _, s := range nt.sites {
		lp, d1, d2, _ := s.Lik.LogLik(s.Y, nt.fv[s.Item])
		psi += lp
		grad[s.Item] += d1
		wt[s.Item] -= d2
	}
	for i, v := range wt {
		if v < 0 {
			// Rounding at a likelihood's flat end (Phi(f) saturated)
			// leaves W a hair below 0: read it as 0.
			if v > -1e-6 {
				wt[i] = 0
				continue
			}
			return 0, fmt.Errorf("multirater: laplace: the likelihood of item %d is not log-concave at the current point (W = %v); use the ep engine", i, v)
		}
	}
	for _, v := range w {
		psi -= 0.5 * v * v
	}
	for i, v := range e {
		if v != 0 {
			psi -= 0.5 * v * v / nt.extra[i]
		}
	}
	if math.IsNaN(psi) || math.IsInf(psi, 0) {
		return 0, fmt.Errorf("multirater: laplace: log posterior is %v", psi)
	}
	return psi, nil
}

// step takes one Newton step from w (where Psi is psi),
// w_new = H^-1 G'(W f + grad) with H = I + G'WG, halved until Psi does not
// decrease (the current point kept when halving runs out), and returns Psi
// at the new w.
func (nt *newton) step(psi float64) (float64, error) {
	for i := range nt.rhs {
		nt.rhs[i] = nt.wt[i]*nt.fv[i] + nt.grad[i]
	}
	hw := nt.wt
	if nt.extra != nil {
		// Eliminate e (Schur complement): H = I + G'W~G with
		// W~ = W/(1 + DW), right-hand side t/(1 + DW); then
		// e' = D(t - W G w')/(1 + DW).
		copy(nt.t, nt.rhs)
		for i, d := range nt.extra {
			a := 1 + d*nt.wt[i]
			nt.wtil[i] = nt.wt[i] / a
			nt.rhs[i] = nt.t[i] / a
		}
		hw = nt.wtil
	}
	if err := solveH(nt.f, nt.g, &nt.chol, hw, nt.newW, nt.rhs); err != nil {
		return 0, err
	}
	if nt.extra != nil {
		mulG(nt.f, nt.g, nt.eNew, nt.newW)
		for i, d := range nt.extra {
			nt.eNew[i] = d * (nt.t[i] - nt.wt[i]*nt.eNew[i]) / (1 + d*nt.wt[i])
		}
	}
	for step := 1.0; ; step /= 2 {
		for k := range nt.trial {
			nt.trial[k] = nt.w[k] + step*(nt.newW[k]-nt.w[k])
		}
		for i := range nt.eTrial {
			nt.eTrial[i] = nt.e[i] + step*(nt.eNew[i]-nt.e[i])
		}
		psiNew, err := nt.eval(nt.trial, nt.eTrial)
		if err == nil && psiNew >= psi-1e-12*math.Abs(psi) {
			break
		}
		if step/2 < 1e-10 {
			if err != nil {
				return 0, err
			}
			copy(nt.trial, nt.w) // keep the current point
			copy(nt.eTrial, nt.e)
			break
		}
	}
	copy(nt.w, nt.trial)
	copy(nt.e, nt.eTrial)
	return nt.eval(nt.w, nt.e)
}

// finish fills res at the current point (the mode when converged).
func (nt *newton) finish(res *Result, psi float64) (*Result, error) {
	res.W, res.Grad, res.d3 = append([]float64(nil), nt.wt...), append([]float64(nil), nt.grad...), third(nt.sites, nt.fv)
	res.extra = nt.extra
	res.e = append([]float64(nil), nt.e...)
	return res.finish(nt.f, nt.g, &nt.chol, nt.w, nt.fv, nt.wt, psi)
}

// finish fills the marginal variances and the evidence at the mode.
func (res *Result) finish(f *gp.Factor, g *mat.Dense, chol *mat.Cholesky, w, fv, wt []float64, psi float64) (*Result, error) {
	n := f.N
	res.f, res.g, res.chol, res.w = f, g, chol, mat.NewVecDense(len(w), append([]float64(nil), w...))
	res.Mean = append([]float64(nil), fv...)
	res.Var = make([]float64, n)
	if f.Diag {
		logDet := 0.0
		for i, sd := range f.SD {
			c := sd * sd
			res.Var[i] = c / (1 + c*wt[i])
			logDet += math.Log1p(c * wt[i])
		}
		res.LogZ = psi - 0.5*logDet
		return res, nil
	}
	hw := wt
	extraDet := 0.0
	if res.extra != nil {
		res.wtil = make([]float64, n)
		for i, d := range res.extra {
			a := 1 + d*wt[i]
			res.wtil[i] = wt[i] / a
			extraDet += math.Log(a)
		}
		hw = res.wtil
	}
	if err := factorH(g, chol, hw); err != nil {
		return nil, err
	}
	var l mat.TriDense
	chol.LTo(&l)
	var x mat.Dense
	if err := x.Solve(&l, g.T()); err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		s := 0.0
		for k := 0; k < f.R; k++ {
			v := x.At(k, i)
			s += v * v
		}
		res.Var[i] = s
		if res.extra != nil {
			d := res.extra[i]
			a := 1 + d*wt[i]
			res.Var[i] = s/(a*a) + d/a
		}
	}
	res.LogZ = psi - 0.5*chol.LogDet() - 0.5*extraDet
	return res, nil
}

// mulG sets dst = G w.
func mulG(f *gp.Factor, g *mat.Dense, dst, w []float64) {
	if f.Diag {
		for i, sd := range f.SD {
			dst[i] = sd * w[i]
		}
		return
	}
	mat.NewVecDense(len(dst), dst).MulVec(g, mat.NewVecDense(len(w), w))
}

// factorH factorises H = I + G' diag(wt) G.
func factorH(g *mat.Dense, chol *mat.Cholesky, wt []float64) error {
	// H = I + (W^1/2 G)'(W^1/2 G) by a symmetric rank-n update (half the
	// multiply-adds of a general product; W >= 0 here), rows with W = 0
	// left out.
	n, r := g.Dims()
	rows := 0
	for _, v := range wt[:n] {
		if v > 0 {
			rows++
		}
	}
	sg := make([]float64, rows*r)
	k := 0
	for i := 0; i < n; i++ {
		if !(wt[i] > 0) {
			continue
		}
		s := math.Sqrt(wt[i])
		dst := sg[k*r : (k+1)*r]
		for c, v := range g.RawRowView(i) {
			dst[c] = s * v
		}
		k++
	}
	h := mat.NewSymDense(r, nil)
	raw := h.RawSymmetric()
	for i := 0; i < r; i++ {
		raw.Data[i*raw.Stride+i] = 1
	}
	if rows > 0 {
		gp.SyrkUpperTrans(1, sg, rows, r, 1, raw.Data, nil)
	}
	if !chol.Factorize(h) {
		return errors.New("multirater: laplace: I + G'WG is not positive definite")
	}
	return nil
}

// solveH sets dst = H^-1 G' rhs with H = I + G'WG.
func solveH(f *gp.Factor, g *mat.Dense, chol *mat.Cholesky, wt, dst, rhs []float64) error {
	if f.Diag {
		for i, sd := range f.SD {
			dst[i] = sd * rhs[i] / (1 + sd*sd*wt[i])
		}
		return nil
	}
	if err := factorH(g, chol, wt); err != nil {
		return err
	}
	var b mat.VecDense
	b.MulVec(g.T(), mat.NewVecDense(len(rhs), rhs))
	return chol.SolveVecTo(mat.NewVecDense(len(dst), dst), &b)
}

// third returns each item's third derivative of log p(y | f) at f.
func third(sites []lik.Site, f []float64) []float64 {
	d3 := make([]float64, len(f))
	for _, s := range sites {
		_, _, _, d := s.Lik.LogLik(s.Y, f[s.Item])
		d3[s.Item] += d
	}
	return d3
}

// Implicit returns u = Sigma a with a_n = Var_n d3_n / 2 and Sigma =
// (C^-1 + W)^-1: the sensitivity of Chu's eq. 11 to the mode, through
// -1/2 log|B| (Rasmussen & Williams eq. 5.23). With it, the gradient of the
// Laplace log evidence in a likelihood parameter theta is
//
//	sum_j d lp_j/d theta + 1/2 Var_n d d2_j/d theta + u_n d d1_j/d theta
//
// over the sites j (on items n), lp, d1 and d2 the log likelihood and its
// first two derivatives in f at the mode (lik.OrdinalProbit.LogLikGradTo).
func (res *Result) Implicit() []float64 {
	if res.u != nil {
		return res.u
	}
	n := len(res.Mean)
	a := make([]float64, n)
	for i := range a {
		a[i] = 0.5 * res.Var[i] * res.d3[i]
	}
	res.u = make([]float64, n)
	if res.f.Diag {
		for i, sd := range res.f.SD {
			c := sd * sd
			res.u[i] = c * a[i] / (1 + c*res.W[i])
		}
		return res.u
	}
	// Sigma a = G H^-1 G' a; with a diagonal correction
	// Sigma a = A G H^-1 G' A a + D A a, A = diag(1/(1 + DW)).
	in := a
	if res.extra != nil {
		in = make([]float64, n)
		for i, d := range res.extra {
			in[i] = a[i] / (1 + d*res.W[i])
		}
	}
	var b, x mat.VecDense
	b.MulVec(res.g.T(), mat.NewVecDense(n, in))
	if err := res.chol.SolveVecTo(&x, &b); err != nil {
		panic("multirater: laplace: Implicit: " + err.Error())
	}
	mat.NewVecDense(n, res.u).MulVec(res.g, &x)
	for i, d := range res.extra {
		res.u[i] = res.u[i]/(1+d*res.W[i]) + d*in[i]
	}
	return res.u
}

// GradTerms returns what the kernel gradient of the Laplace log evidence
// needs at the mode (gp.GradTerms): alpha = grad log p(y | f_MAP), the
// implicit term b = (I + W C)^-1 a = a - W Sigma a (a_n = Var_n d3_n / 2,
// Sigma a = Implicit), the effective weights W/(1 + DW) and
// U = W~ G L'^-1 (H = I + G'W~G = L L'), also for a factor with a diagonal
// correction D: O(N r^2).
func (res *Result) GradTerms() *gp.GradTerms {
	n := len(res.Mean)
	sa := res.Implicit()
	t := &gp.GradTerms{Alpha: append([]float64(nil), res.Grad...), B: make([]float64, n), SEff: append([]float64(nil), res.W...)}
	for i := range t.B {
		t.B[i] = 0.5*res.Var[i]*res.d3[i] - res.W[i]*sa[i]
	}
	if res.wtil != nil {
		copy(t.SEff, res.wtil)
	}
	if res.f.Diag {
		t.SetDiag2(res.f.SD, res.W)
		return t
	}
	r := res.f.R
	t.R = r
	t.U = make([]float64, n*r)
	copy(t.U, res.f.G)
	var l mat.TriDense
	res.chol.LTo(&l)
	gp.TrsmRightLowerTrans(l.RawTriangular().Data, r, t.U, n)
	for i := 0; i < n; i++ {
		for k := 0; k < r; k++ {
			t.U[i*r+k] *= t.SEff[i]
		}
	}
	return t
}

// KernelGrad returns the gradient of the Laplace log evidence (Chu eq. 11)
// in kernel hyperparameters, given the derivatives dC of the prior
// covariance: the explicit part 1/2 (alpha' dC alpha - tr(R dC)) with
// alpha = grad log p(y | f_MAP), R = (C + W^-1)^-1, and the implicit part
// b' dC alpha through the mode, b = (I + W C)^-1 a (Rasmussen & Williams
// eq. 5.22-5.24), evaluated in the factor's terms (gp.SiteKernelGrad).
func (res *Result) KernelGrad(dC []mat.Symmetric) []float64 {
	if res.extra != nil {
		panic("multirater: laplace: KernelGrad of a prior with a diagonal correction is not implemented")
	}
	n := len(res.Mean)
	a := make([]float64, n)
	for i := range a {
		a[i] = 0.5 * res.Var[i] * res.d3[i]
	}
	// b = a - R C a.
	ca := make([]float64, n)
	if res.f.Diag {
		d2 := make([]float64, n)
		b := make([]float64, n)
		for i, sd := range res.f.SD {
			c := sd * sd
			rn := res.W[i] / (1 + c*res.W[i])
			d2[i] = res.W[i] - rn
			b[i] = a[i] - rn*c*a[i]
		}
		return gp.SiteKernelGrad(dC, res.W, res.Grad, b, nil, 0, d2)
	}
	r := res.f.R
	var gta mat.VecDense
	gta.MulVec(res.g.T(), mat.NewVecDense(n, a))
	mat.NewVecDense(n, ca).MulVec(res.g, &gta)
	// U = W G L'^-1 (n×r): rows of G solved against L.
	var l mat.TriDense
	res.chol.LTo(&l)
	var x mat.Dense
	if err := x.Solve(&l, res.g.T()); err != nil { // x = L^-1 G' (r×n)
		panic("multirater: laplace: KernelGrad: " + err.Error())
	}
	u := make([]float64, n*r)
	for i := 0; i < n; i++ {
		for k := 0; k < r; k++ {
			u[i*r+k] = res.W[i] * x.At(k, i)
		}
	}
	// R C a = W (C a) - U (U' (C a)).
	um := mat.NewDense(n, r, u)
	var utc, uutc mat.VecDense
	utc.MulVec(um.T(), mat.NewVecDense(n, ca))
	uutc.MulVec(um, &utc)
	b := make([]float64, n)
	for i := range b {
		b[i] = a[i] - (res.W[i]*ca[i] - uutc.AtVec(i))
	}
	return gp.SiteKernelGrad(dC, res.W, res.Grad, b, u, r, nil)
}
