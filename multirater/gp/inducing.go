package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
)

// GradTerms are what the gradient of a Gaussian-site approximation's log
// evidence (EP's log Z_EP, Laplace's Chu eq. 11) in the prior covariance
// needs, for a prior C = G G' + diag(Extra) given by a Factor:
//
//	d log Z / d theta = 1/2 (alpha' dC alpha - tr(R dC)) + b' dC alpha,
//
// with R = (C + S^-1)^-1 = diag(SEff) - U U' (Woodbury with the sites'
// effective precisions SEff = S/(1 + Extra S) and U = SEff G L'^-1,
// H = I + G' SEff G = L L'), alpha = R S^-1 V = V - S mean, and b the
// implicit term of Laplace's mode (nil for EP, whose sites do not move
// with theta at a fixed point; Rasmussen & Williams eq. 5.22-5.23, 5.27).
// Engines give them (ep.Result.GradTerms, laplace.Result.GradTerms); the
// gradient for a covariance held densely is Dense, for an inducing-point
// prior Inducing.KernelGradTo.
type GradTerms struct {
	Alpha, B []float64
	SEff     []float64
	// U is N×R row-major (nil for a diagonal factor, whose R is
	// diag(SEff) - diag(RDiag2) instead).
	U []float64
	R int
	// Diag2, for a diagonal factor, is SEff_n - R_nn.
	Diag2 []float64
}

// SetDiag2 sets Diag2 for a diagonal factor with prior sds sd and site
// precisions s: Diag2_n = s_n^2 c_n / (1 + c_n s_n) with c_n = sd_n^2, so
// that R_nn = s_n / (1 + c_n s_n).
func (t *GradTerms) SetDiag2(sd, s []float64) {
	t.Diag2 = make([]float64, len(sd))
	for i, x := range sd {
		c := x * x
		t.Diag2[i] = s[i] * s[i] * c / (1 + c*s[i])
	}
}

// Dense returns the gradient for the derivatives dC (N×N) of the
// covariance (SiteKernelGrad): O(N^2 R) per hyperparameter.
func (t *GradTerms) Dense(dC []mat.Symmetric) []float64 {
	return SiteKernelGrad(dC, t.SEff, t.Alpha, t.B, t.U, t.R, t.Diag2)
}

// rMulTo sets dst (N×k row-major) to R x for x N×k row-major, using
// scratch (R×k).
func (t *GradTerms) rMulTo(dst, x []float64, k int, scratch []float64) {
	n := len(t.SEff)
	for i := 0; i < n; i++ {
		floats.ScaleTo(dst[i*k:(i+1)*k], t.SEff[i], x[i*k:(i+1)*k])
	}
	if t.U == nil {
		for i := 0; i < n; i++ {
			floats.AddScaled(dst[i*k:(i+1)*k], -t.Diag2[i], x[i*k:(i+1)*k])
		}
		return
	}
	u := blas64.General{Rows: n, Cols: t.R, Stride: t.R, Data: t.U}
	s := blas64.General{Rows: t.R, Cols: k, Stride: k, Data: scratch}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, u, blas64.General{Rows: n, Cols: k, Stride: k, Data: x}, 0, s)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, -1, u, s, 1, blas64.General{Rows: n, Cols: k, Stride: k, Data: dst})
}

// rDiag returns R_nn.
func (t *GradTerms) rDiag() []float64 {
	n := len(t.SEff)
	d := make([]float64, n)
	for i := range d {
		if t.U == nil {
			d[i] = t.SEff[i] - t.Diag2[i]
			continue
		}
		row := t.U[i*t.R : (i+1)*t.R]
		d[i] = t.SEff[i] - floats.Dot(row, row)
	}
	return d
}

// Inducing is the FITC prior of a kernel k on N items with M inducing
// points chosen among the items (Snelson & Ghahramani 2006;
// Quiñonero-Candela & Rasmussen 2005 eq. 16):
//
//	C = Q + diag(K_nn - Q_nn),  Q = K_nP K_PP^-1 K_Pn,
//
// held as the factor A = K_nP L^-T (K_PP + jitter I = L L', so that
// Q = A A') and the diagonal correction: O(N M) memory, O(N M^2) time, no
// N×N matrix. With the inducing points fixed, KernelGradTo gives the exact
// gradient of an engine's log evidence under this prior in the kernel's
// hyperparameters, from the derivatives of K_nP and of the diagonal.
type Inducing struct {
	N, M   int
	Pivots []int
	// knm is K_nP (N×M row-major), a A = K_nP L^-T, l the Cholesky factor
	// of K_PP + jitter I, extra the diagonal correction and clamped the
	// items whose K_nn - Q_nn was below 0 (rounding; held at 0).
	knm, a  []float64
	l       blas64.Triangular
	extra   []float64
	clamped []bool
	fac     *Factor
}

// InducingJitter is the jitter added to K_PP's diagonal, relative to its
// largest element.
const InducingJitter = 1e-8

// NewInducing returns the FITC prior of the kernel whose diagonal is diag
// (length N) and whose columns at the inducing items pivots are knm (N×M
// row-major, M = len(pivots): knm[n*M + p] = k(x_n, x_pivots[p])). It
// returns a data error when K_PP is not positive definite after the jitter
// (inducing points that coincide); a caller's mistake (sizes, pivots out
// of range) panics.
func NewInducing(diag, knm []float64, pivots []int) (*Inducing, error) {
	n, m := len(diag), len(pivots)
	if m == 0 || len(knm) != n*m {
		panic(fmt.Sprintf("gp: NewInducing: %d values for %d items and %d inducing points", len(knm), n, m))
	}
	in := &Inducing{N: n, M: m, Pivots: append([]int(nil), pivots...), knm: knm}
	kpp := make([]float64, m*m)
	dmax := 0.0
	for i, p := range pivots {
		if p < 0 || p >= n {
			panic(fmt.Sprintf("gp: NewInducing: pivot %d of %d items", p, n))
		}
		copy(kpp[i*m:(i+1)*m], knm[p*m:(p+1)*m])
		dmax = math.Max(dmax, kpp[i*m+i])
	}
	if !(dmax > 0) {
		return nil, multirater.DataErrorf("kernel matrix at the inducing points is zero")
	}
	for i := 0; i < m; i++ {
		for j := 0; j < i; j++ {
			v := 0.5 * (kpp[i*m+j] + kpp[j*m+i])
			kpp[i*m+j], kpp[j*m+i] = v, v
		}
		kpp[i*m+i] += InducingJitter * dmax
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(m, kpp)) {
		return nil, multirater.DataErrorf("kernel matrix at the %d inducing points is not positive definite", m)
	}
	var lt mat.TriDense
	ch.LTo(&lt)
	in.l = lt.RawTriangular()
	in.a = append([]float64(nil), knm...)
	// A L' = K_nP.
	blas64.Trsm(blas.Right, blas.Trans, 1, in.l, blas64.General{Rows: n, Cols: m, Stride: m, Data: in.a})
	in.extra = make([]float64, n)
	in.clamped = make([]bool, n)
	res := 0.0
	for i := range in.extra {
		row := in.a[i*m : (i+1)*m]
		v := diag[i] - floats.Dot(row, row)
		if v < 0 {
			v, in.clamped[i] = 0, true
		}
		in.extra[i] = v
		res += v
	}
	in.fac = &Factor{N: n, R: m, G: in.a, Extra: in.extra, Residual: res, Dropped: n - m, Pivots: in.Pivots}
	in.fac.setOneProj()
	return in, nil
}

// Factor returns the prior's factor: G = A (N×M, columns not orthogonal)
// with Extra the diagonal correction, for ep.Run and laplace.Run. The
// caller must not change it.
func (in *Inducing) Factor() *Factor { return in.fac }

// KernelGradTo sets dst[k] to the gradient of the log evidence whose
// terms are t (made on Factor) in hyperparameter k, given dKnm[k] (N×M
// row-major), the derivative of K_nP, and dDiag[k] (length N), that of
// K_nn (nil when zero). With W = K_PP^-1 K_Pn and the inducing points
// fixed,
//
//	dQ = dK_nP W + W' dK_Pn - W' dK_PP W,  dC = dQ + diag(dK_nn - dQ_nn),
//
// so that every term of GradTerms' formula is a product with N×M
// matrices: O(N M R) once (R W') and O(N M^2) per hyperparameter (the
// diagonal of W' dK_PP W).
func (in *Inducing) KernelGradTo(dst []float64, t *GradTerms, dKnm, dDiag [][]float64) {
	n, m := in.N, in.M
	if len(dKnm) != len(dst) || (dDiag != nil && len(dDiag) != len(dst)) {
		panic("gp: Inducing.KernelGradTo: derivatives for the wrong number of hyperparameters")
	}
	if len(t.Alpha) != n {
		panic("gp: Inducing.KernelGradTo: terms of another size")
	}
	// W' = A L^-1 (N×M).
	wt := append([]float64(nil), in.a...)
	wtG := blas64.General{Rows: n, Cols: m, Stride: m, Data: wt}
	blas64.Trsm(blas.Right, blas.NoTrans, 1, in.l, wtG)
	mulT := func(dst, x []float64) { // dst (M) = W x
		blas64.Gemv(blas.Trans, 1, wtG, blas64.Vector{N: n, Inc: 1, Data: x}, 0, blas64.Vector{N: m, Inc: 1, Data: dst})
	}
	wa := make([]float64, m)
	mulT(wa, t.Alpha)
	var wb []float64
	if t.B != nil {
		wb = make([]float64, m)
		mulT(wb, t.B)
	}
	// Z = R W' (N×M), Y = W R W' (M×M).
	z := make([]float64, n*m)
	t.rMulTo(z, wt, m, make([]float64, max(t.R, 1)*m))
	y := make([]float64, m*m)
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, wtG, blas64.General{Rows: n, Cols: m, Stride: m, Data: z}, 0, blas64.General{Rows: m, Cols: m, Stride: m, Data: y})
	rd := t.rDiag()
	dp := make([]float64, m*m)
	tt := make([]float64, n*m)
	dka, dkb, dpw := make([]float64, m), make([]float64, m), make([]float64, m)
	for k, d := range dKnm {
		if len(d) != n*m {
			panic("gp: Inducing.KernelGradTo: dKnm of the wrong size")
		}
		dG := blas64.General{Rows: n, Cols: m, Stride: m, Data: d}
		for i, p := range in.Pivots {
			copy(dp[i*m:(i+1)*m], d[p*m:(p+1)*m])
		}
		dpG := blas64.General{Rows: m, Cols: m, Stride: m, Data: dp}
		// alpha' dQ alpha = 2 (W alpha)'(dK_Pn alpha) - (W alpha)' dK_PP (W alpha).
		blas64.Gemv(blas.Trans, 1, dG, blas64.Vector{N: n, Inc: 1, Data: t.Alpha}, 0, blas64.Vector{N: m, Inc: 1, Data: dka})
		blas64.Gemv(blas.NoTrans, 1, dpG, blas64.Vector{N: m, Inc: 1, Data: wa}, 0, blas64.Vector{N: m, Inc: 1, Data: dpw})
		aqa := 2*floats.Dot(wa, dka) - floats.Dot(wa, dpw)
		// tr(R dQ) = 2 tr(W R dK_nP) - tr(W R W' dK_PP).
		trq := 2*floats.Dot(z, d) - floats.Dot(y, dp)
		// dQ_nn = 2 dK_nP[n,:] W'[n,:] - W'[n,:] dK_PP W'[n,:]'.
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, wtG, dpG, 0, blas64.General{Rows: n, Cols: m, Stride: m, Data: tt})
		var ada, trd, bda float64
		for i := 0; i < n; i++ {
			if in.clamped[i] {
				continue
			}
			wrow := wt[i*m : (i+1)*m]
			dq := 2*floats.Dot(d[i*m:(i+1)*m], wrow) - floats.Dot(tt[i*m:(i+1)*m], wrow)
			dd := -dq
			if dDiag != nil && dDiag[k] != nil {
				dd += dDiag[k][i]
			}
			ada += t.Alpha[i] * t.Alpha[i] * dd
			trd += rd[i] * dd
			if t.B != nil {
				bda += t.B[i] * t.Alpha[i] * dd
			}
		}
		g := 0.5 * (aqa + ada - trq - trd)
		if t.B != nil {
			blas64.Gemv(blas.Trans, 1, dG, blas64.Vector{N: n, Inc: 1, Data: t.B}, 0, blas64.Vector{N: m, Inc: 1, Data: dkb})
			// b' dQ alpha = (W b)'(dK_Pn alpha) + (W alpha)'(dK_Pn b) - (W b)' dK_PP (W alpha).
			g += floats.Dot(wb, dka) + floats.Dot(wa, dkb) - floats.Dot(wb, dpw) + bda
		}
		dst[k] = g
	}
}

// Pivots returns the items chosen as inducing points by the partial
// Cholesky decomposition with diagonal pivoting (NewPivotedFactorRank) of
// the kernel matrix given by its diagonal and its columns (col sets dst,
// length N, to column p), to a residual trace of tol or maxRank items.
func Pivots(diag []float64, col func(p int, dst []float64), maxRank int, tol float64) ([]int, error) {
	if maxRank < 1 || !(tol >= 0) {
		panic(fmt.Sprintf("gp: Pivots: maxRank = %d, tol = %v", maxRank, tol))
	}
	f, err := pivoted(len(diag), func(i int) float64 { return diag[i] }, col, tol, 0, maxRank)
	if err != nil {
		return nil, err
	}
	return f.Pivots, nil
}
