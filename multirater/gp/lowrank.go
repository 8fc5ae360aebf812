package gp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
)

// SparseRows is an N×Cols matrix stored by rows: row i has the values
// Val[i][k] in the columns Idx[i][k] (a bag-of-words vector per item).
type SparseRows struct {
	Cols int
	Idx  [][]int32
	Val  [][]float64
}

// Rows returns the number of rows.
func (x SparseRows) Rows() int { return len(x.Idx) }

// DenseGram returns X X' formed densely (O(N^2 Cols)): the covariance that
// the low-rank factors of X (NewLowRankFeatures) approximate, for checks
// against the dense path.
func (x SparseRows) DenseGram() *mat.SymDense {
	xd := mat.NewDense(x.Rows(), x.Cols, nil)
	for i, idx := range x.Idx {
		for k, j := range idx {
			xd.Set(i, int(j), x.Val[i][k])
		}
	}
	var c mat.SymDense
	c.SymOuterK(1, xd)
	return &c
}

// mulDenseTo sets dst (N×l row-major) to X B for the Cols×l row-major B.
func (x SparseRows) mulDenseTo(dst, b []float64, l int) {
	for i, idx := range x.Idx {
		row := dst[i*l : (i+1)*l]
		clear(row)
		for k, j := range idx {
			v := x.Val[i][k]
			bj := b[int(j)*l : (int(j)+1)*l]
			for c, bv := range bj {
				row[c] += v * bv
			}
		}
	}
}

// mulTDenseTo sets dst (Cols×l row-major) to X' A for the N×l row-major A.
func (x SparseRows) mulTDenseTo(dst, a []float64, l int) {
	clear(dst)
	for i, idx := range x.Idx {
		ai := a[i*l : (i+1)*l]
		for k, j := range idx {
			v := x.Val[i][k]
			dj := dst[int(j)*l : (int(j)+1)*l]
			for c, av := range ai {
				dj[c] += v * av
			}
		}
	}
}

// LowRankOptions control NewLowRankFeatures. The zero value means the
// defaults given for each field.
type LowRankOptions struct {
	// MaxRank is the largest rank M kept; 0 means DefaultRank(N). When the
	// features have at most MaxRank columns the factor is exact.
	MaxRank int
	// Oversample is the number of extra random directions of the
	// randomized range finder; 0 means 10.
	Oversample int
	// Power is the number of power (subspace) iterations of the range
	// finder; 0 means 2.
	Power int
	// Stop, when not nil, is asked before each pass of the range finder
	// whether to go on: an error from it (a cancelled fit's context's
	// Err) is returned as it is. It changes no arithmetic.
	Stop func() error
}

// stopped returns Stop's answer (nil without Stop).
func (o LowRankOptions) stopped() error {
	if o.Stop == nil {
		return nil
	}
	return o.Stop()
}

// DefaultRank is the rank of a truncated feature basis for n items when
// LowRankOptions.MaxRank is 0: every dimension up to 256 items, then
// 256 + (n - 256)/8, at most 512 and at most sqrt(2.5e8/n) (but at least
// 128), so that a sequential EP sweep, O(n r^2) with the sites grouped by
// item, stays near 2.5e8 multiply-adds (an evidence maximisation runs
// some hundred sweeps): 349 at 1,000 items, 250 at 4,000, 128 from 15,300.
func DefaultRank(n int) int {
	if n <= 256 {
		return n
	}
	return max(128, min(512, 256+(n-256)/8, int(math.Sqrt(2.5e8/float64(n)))))
}

// LowRank is a prior covariance given by a factor with orthogonal columns,
//
//	C ≈ G G',  G'G = Λ = diag(λ_1 ≥ ... ≥ λ_r),
//
// so that G = Q Λ^{1/2} with Q the leading r eigenvectors of the
// covariance as represented: the weight-space form of a kernel that is
// linear in features, C = X X' (Rasmussen & Williams sec. 2.1), exact when
// the features have at most r dimensions (G = X U from X'X = U Λ U'), and
// the best rank-r approximation found by a randomized range finder
// otherwise (Halko, Martinsson & Tropp 2011, alg. 4.4 and 5.3). It never
// holds an N×N matrix: memory O(N r), and every engine works with G (EP and
// Laplace with H = I + G'SG of size r×r, Woodbury and the matrix
// determinant lemma: O(N r^2) per factorisation).
//
// LowRank satisfies mat.Symmetric (At costs O(r)), so that it can be
// passed wherever a covariance is; NewFactor, NewPrior,
// NewPivotedFactorRank and KeptEigen use its factor directly.
type LowRank struct {
	n, r int
	g    []float64 // n×r row-major
	lam  []float64 // column norms squared, descending
	// Trace is tr(C) of the covariance the factor approximates (X X':
	// the sum of squared row norms); Trace - sum(λ) is what the factor
	// leaves out.
	Trace float64
	// Exact reports that no direction was truncated.
	Exact bool
	// Seed is the seed of the random test matrix (0 when Exact).
	Seed uint64
	// MaxRank is the bound on the rank it was built with: the same
	// features, MaxRank and seed rebuild it exactly.
	MaxRank int
	// diag is the diagonal of the covariance approximated (|x_n|^2 for
	// features), from which a truncated factor's diagonal correction
	// comes (see factor).
	diag []float64
}

// NewLowRankFeatures returns the low-rank covariance C ≈ X X' of the rows
// of x. With d = x.Cols <= MaxRank it is exact: X'X = U Λ U' (d×d,
// O(nnz d + d^3)) and G = X U, dropping eigenvalues below d eps λ_max.
// Otherwise it is rank M = MaxRank from the randomized range finder with
// q = Power subspace iterations: Y = (X X')^q X Ω with Ω a d×(M+p)
// standard normal matrix drawn from rng, Q = orth(Y), then the
// eigendecomposition of the small matrix Q'X X'Q = W Σ W' gives
// G = Q W_M Σ_M^{1/2}: O(nnz (M+p) q + N (M+p)^2) time and O((N + d)(M+p))
// memory. seed is recorded in the result (the caller's seed of rng).
func NewLowRankFeatures(x SparseRows, opts LowRankOptions, rng *rand.Rand, seed uint64) (*LowRank, error) {
	n, d := x.Rows(), x.Cols
	if n == 0 {
		return nil, multirater.DataErrorf("no items for the feature kernel")
	}
	if len(x.Val) != n {
		panic(fmt.Sprintf("gp: NewLowRankFeatures: %d index rows and %d value rows", n, len(x.Val)))
	}
	trace := 0.0
	diag := make([]float64, n)
	for i, idx := range x.Idx {
		if len(x.Val[i]) != len(idx) {
			panic(fmt.Sprintf("gp: NewLowRankFeatures: row %d has %d indices and %d values", i, len(idx), len(x.Val[i])))
		}
		for k, j := range idx {
			if j < 0 || int(j) >= d {
				panic(fmt.Sprintf("gp: NewLowRankFeatures: row %d has column %d of %d", i, j, d))
			}
			v := x.Val[i][k]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, multirater.DataErrorf("feature (%d, %d) is %v", i, j, v)
			}
			trace += v * v
			diag[i] += v * v
		}
	}
	if !(trace > 0) {
		return nil, multirater.DataErrorf("every feature is zero")
	}
	maxRank := opts.MaxRank
	if maxRank == 0 {
		maxRank = DefaultRank(n)
	}
	if maxRank < 1 {
		panic(fmt.Sprintf("gp: NewLowRankFeatures: MaxRank = %d", maxRank))
	}
	if d <= maxRank {
		lr, err := exactFeatures(x, trace)
		if lr != nil {
			lr.diag, lr.MaxRank = diag, maxRank
		}
		return lr, err
	}
	if rng == nil {
		panic("gp: NewLowRankFeatures: a truncated basis needs a random generator")
	}
	over := opts.Oversample
	if over == 0 {
		over = 10
	}
	power := opts.Power
	if power == 0 {
		power = 2
	}
	l := min(maxRank+over, d, n)
	omega := make([]float64, d*l)
	for i := range omega {
		omega[i] = rng.NormFloat64()
	}
	y := make([]float64, n*l)
	if err := opts.stopped(); err != nil {
		return nil, err
	}
	x.mulDenseTo(y, omega, l)
	z := omega // reused: d×l
	if err := orthonormalize(y, n, l); err != nil {
		return nil, err
	}
	for q := 0; q < power; q++ {
		if err := opts.stopped(); err != nil {
			return nil, err
		}
		x.mulTDenseTo(z, y, l)
		x.mulDenseTo(y, z, l)
		if err := orthonormalize(y, n, l); err != nil {
			return nil, err
		}
	}
	if err := opts.stopped(); err != nil {
		return nil, err
	}
	// Q'X X'Q = Z'Z with Z = X'Q.
	x.mulTDenseTo(z, y, l)
	t := mat.NewSymDense(l, nil)
	blas64.Syrk(blas.Trans, 1, blas64.General{Rows: d, Cols: l, Stride: l, Data: z}, 0, t.RawSymmetric())
	vals, w, err := eigen(t, "the projected feature kernel")
	if err != nil {
		return nil, err
	}
	r := 0
	tol := float64(l) * 0x1p-52 * vals[l-1]
	for k := l - 1; k >= 0 && r < maxRank && vals[k] > tol; k-- {
		r++
	}
	lr := &LowRank{n: n, r: r, g: make([]float64, n*r), lam: make([]float64, r), Trace: trace, Seed: seed, diag: diag, MaxRank: maxRank}
	// G = Q W_r Σ_r^{1/2}: column c is Q w_k sqrt(σ_k), k = l-1-c.
	wr := make([]float64, l*r)
	for c := 0; c < r; c++ {
		k := l - 1 - c
		s := math.Sqrt(vals[k])
		lr.lam[c] = vals[k]
		for a := 0; a < l; a++ {
			wr[a*r+c] = w.At(a, k) * s
		}
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: n, Cols: l, Stride: l, Data: y},
		blas64.General{Rows: l, Cols: r, Stride: r, Data: wr}, 0, blas64.General{Rows: n, Cols: r, Stride: r, Data: lr.g})
	return lr, nil
}

// eigen returns the eigenvalues of a in ascending order and its
// eigenvectors as columns, or a *multirater.DataError saying that the
// eigendecomposition of what did not converge.
func eigen(a mat.Symmetric, what string) ([]float64, *mat.Dense, error) {
	var es mat.EigenSym
	if !es.Factorize(a, true) {
		return nil, nil, multirater.DataErrorf("eigendecomposition of %s did not converge", what)
	}
	var vecs mat.Dense
	es.VectorsTo(&vecs)
	return es.Values(nil), &vecs, nil
}

// exactFeatures is NewLowRankFeatures for few columns: G = X U with
// X'X = U Λ U'.
func exactFeatures(x SparseRows, trace float64) (*LowRank, error) {
	n, d := x.Rows(), x.Cols
	a := mat.NewSymDense(d, nil)
	raw := a.RawSymmetric()
	for i, idx := range x.Idx {
		for k1, j1 := range idx {
			v1 := x.Val[i][k1]
			for k2, j2 := range idx {
				if j2 >= j1 {
					raw.Data[int(j1)*raw.Stride+int(j2)] += v1 * x.Val[i][k2]
				}
			}
		}
	}
	vals, u, err := eigen(a, "the feature cross-product")
	if err != nil {
		return nil, err
	}
	tol := float64(d) * 0x1p-52 * vals[d-1]
	r := 0
	for k := d - 1; k >= 0 && vals[k] > tol; k-- {
		r++
	}
	if vals[0] < -1e-8*vals[d-1] {
		return nil, multirater.DataErrorf("feature cross-product is not positive semidefinite (eigenvalue %.3g)", vals[0])
	}
	ur := make([]float64, d*r)
	lr := &LowRank{n: n, r: r, g: make([]float64, n*r), lam: make([]float64, r), Trace: trace, Exact: true}
	for c := 0; c < r; c++ {
		k := d - 1 - c
		lr.lam[c] = vals[k]
		for a := 0; a < d; a++ {
			ur[a*r+c] = u.At(a, k)
		}
	}
	x.mulDenseTo(lr.g, ur, r)
	return lr, nil
}

// orthonormalize replaces the columns of the n×l row-major y by an
// orthonormal basis of their span (thin QR by Householder reflections,
// LAPACK's dgeqrf and dorgqr).
func orthonormalize(y []float64, n, l int) error {
	a := blas64.General{Rows: n, Cols: l, Stride: l, Data: y}
	tau := make([]float64, l)
	work := []float64{0}
	lapack64.Geqrf(a, tau, work, -1)
	lw := int(work[0])
	lapack64.Orgqr(a, tau, work, -1)
	lw = max(lw, int(work[0]), 1)
	work = make([]float64, lw)
	lapack64.Geqrf(a, tau, work, lw)
	lapack64.Orgqr(a, tau, work, lw)
	for _, v := range y {
		if math.IsNaN(v) {
			return multirater.DataErrorf("the range finder of the feature kernel produced NaN")
		}
	}
	return nil
}

// NewLowRankFactor wraps g (n×r row-major, orthogonal columns: g'g
// diagonal, in descending order) as a LowRank covariance of trace trace
// (at least the sum of the column norms squared). It panics when the
// columns are not orthogonal to 1e-8 relative (a caller's mistake).
func NewLowRankFactor(n, r int, g []float64, trace float64, exact bool) *LowRank {
	if len(g) != n*r {
		panic(fmt.Sprintf("gp: NewLowRankFactor: %d values for %d×%d", len(g), n, r))
	}
	lr := &LowRank{n: n, r: r, g: g, lam: make([]float64, r), Trace: trace, Exact: exact}
	gg := make([]float64, r*r)
	if r > 0 {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, blas64.General{Rows: n, Cols: r, Stride: r, Data: g},
			blas64.General{Rows: n, Cols: r, Stride: r, Data: g}, 0, blas64.General{Rows: r, Cols: r, Stride: r, Data: gg})
	}
	for c := 0; c < r; c++ {
		lr.lam[c] = gg[c*r+c]
		if c > 0 && lr.lam[c] > lr.lam[c-1]*(1+1e-12) {
			panic("gp: NewLowRankFactor: column norms not in descending order")
		}
		for k := 0; k < c; k++ {
			if math.Abs(gg[c*r+k]) > 1e-8*math.Sqrt(gg[c*r+c]*gg[k*r+k]) {
				panic("gp: NewLowRankFactor: columns not orthogonal")
			}
		}
	}
	return lr
}

// Rank returns r.
func (c *LowRank) Rank() int { return c.r }

// Lam returns the kept eigenvalues λ (descending); the caller must not
// change them.
func (c *LowRank) Lam() []float64 { return c.lam }

// Residual returns tr(C) - tr(G G'), the variance the factor leaves out.
func (c *LowRank) Residual() float64 {
	s := c.Trace
	for _, v := range c.lam {
		s -= v
	}
	return math.Max(s, 0)
}

// Describe says what the factor is, for a fit's notes.
func (c *LowRank) Describe() string {
	if c.Exact {
		return fmt.Sprintf("weight-space prior: C = X X' exactly, rank %d (Woodbury: O(N r^2))", c.r)
	}
	return fmt.Sprintf("weight-space prior: C = X X' truncated to rank %d by a randomized range finder (seed %d), leaving out %.3g of its trace %.4g (%.2f%%)",
		c.r, c.Seed, c.Residual(), c.Trace, 100*c.Residual()/c.Trace)
}

// Dims returns (n, n).
func (c *LowRank) Dims() (int, int) { return c.n, c.n }

// SymmetricDim returns n.
func (c *LowRank) SymmetricDim() int { return c.n }

// T returns c.
func (c *LowRank) T() mat.Matrix { return c }

// At returns (G G')_ij, O(r).
func (c *LowRank) At(i, j int) float64 {
	if i < 0 || i >= c.n || j < 0 || j >= c.n {
		panic(mat.ErrIndexOutOfRange)
	}
	r := c.r
	s := 0.0
	gi, gj := c.g[i*r:(i+1)*r], c.g[j*r:(j+1)*r]
	for k, v := range gi {
		s += v * gj[k]
	}
	return s
}

// factor returns a new Factor with the first k columns (a copy of G, so
// that Single may round it). When the columns left out hold any variance,
// the factor carries the diagonal correction
//
//	Extra_n = C_nn - |g_n|^2 >= 0,
//
// so that C ≈ G_k G_k' + diag(Extra) has the exact prior variances: the
// directions left out become independent per-item variation instead of
// none (the FITC construction, Snelson & Ghahramani 2006, applied to a
// truncated eigenbasis). Engines that take Extra: ep.Run, laplace.Run.
func (c *LowRank) factor(k int) *Factor {
	f := c.plainFactor(k)
	if c.diag == nil || (c.Exact && k == c.r) {
		return f
	}
	f.Extra = make([]float64, c.n)
	for i := range f.Extra {
		row := f.G[i*k : (i+1)*k]
		v := c.diag[i]
		for _, g := range row {
			v -= g * g
		}
		f.Extra[i] = math.Max(v, 0)
	}
	return f
}

// plainFactor is factor without the diagonal correction.
func (c *LowRank) plainFactor(k int) *Factor {
	f := &Factor{N: c.n, R: k, Lam: append([]float64(nil), c.lam[:k]...), G: make([]float64, c.n*k)}
	for i := 0; i < c.n; i++ {
		copy(f.G[i*k:(i+1)*k], c.g[i*c.r:i*c.r+k])
	}
	f.Dropped = c.n - k
	f.Residual = c.Residual()
	for _, v := range c.lam[k:] {
		f.Residual += v
	}
	f.setOneProj()
	return f
}

// lowRankOf returns the LowRank behind a covariance (a *LowRank, or a
// *Gram made by NewGramLowRank), or nil.
func lowRankOf(a mat.Symmetric) *LowRank {
	switch c := a.(type) {
	case *LowRank:
		return c
	case *Gram:
		return c.low
	}
	return nil
}

// LowRankOf returns the LowRank behind a covariance, or nil when it is held
// otherwise.
func LowRankOf(a mat.Symmetric) *LowRank { return lowRankOf(a) }

// NewLowRankColumns returns the low-rank covariance of a kernel matrix C
// given only by its diagonal and a function that sets dst (length n) to
// its column p: the partial Cholesky decomposition with diagonal pivoting
// (NewPivotedFactorRank; Harbrecht, Peters & Schneider 2012) to rank
// maxRank or a left-out trace of tol, which is the Nyström approximation
// with the pivots as inducing points, C ≈ K_nP K_PP^-1 K_Pn, turned into
// orthogonal columns (G V with G'G = V Λ V'). A truncated factor carries
// the diagonal correction (see factor), which makes the EP and Laplace
// prior FITC's, K_nP K_PP^-1 K_Pn + diag(C - K_nP K_PP^-1 K_Pn)
// (Snelson & Ghahramani 2006), with the pivots as inducing points. Only
// r columns of C are computed: O(N r) memory, O(N r^2) time beyond them.
func NewLowRankColumns(diag []float64, col func(p int, dst []float64), maxRank int, tol float64) (*LowRank, error) {
	return lowRankColumns(diag, col, 0, maxRank, tol)
}

// NewLowRankColumnsShare is NewLowRankColumns stopped by a share of the
// kernel's trace: the pivoting runs to at least minRank and at most maxRank
// pivots and stops at the first rank r from minRank whose left-out trace,
// tr(C) - tr(K_nP K_PP^-1 K_Pn) (the sum of the residual diagonal, known at
// every step of the pivoted Cholesky decomposition: Harbrecht, Peters &
// Schneider 2012, alg. 1), is at most share tr(C). The first pivots do not
// depend on where the decomposition stops, so the result is
// NewLowRankColumns(diag, col, r, 0) for the rank r kept, and its MaxRank
// is r: the same call rebuilds it. It panics unless 1 <= minRank <=
// maxRank and 0 <= share < 1.
func NewLowRankColumnsShare(diag []float64, col func(p int, dst []float64), minRank, maxRank int, share float64) (*LowRank, error) {
	if minRank < 1 || minRank > maxRank || !(share >= 0 && share < 1) {
		panic(fmt.Sprintf("gp: NewLowRankColumnsShare: minRank %d, maxRank %d, share %v", minRank, maxRank, share))
	}
	trace := 0.0
	for _, d := range diag {
		trace += d
	}
	lr, err := lowRankColumns(diag, col, minRank, maxRank, share*trace)
	if lr != nil {
		lr.MaxRank = lr.r
	}
	return lr, err
}

// ShareRank returns the smallest rank r from minRank (at most Rank()) whose
// leading r directions leave out at most share of the trace the factor
// approximates, Trace - (λ_1 + ... + λ_r) <= share Trace, or Rank() when
// none does: the rank a truncated basis needs for that share, read from a
// basis of larger rank (the eigenvalues of the randomized range finder's
// projection approximate the leading ones from below: Halko, Martinsson
// & Tropp 2011, sec. 9.3).
func (c *LowRank) ShareRank(minRank int, share float64) int {
	left := c.Trace
	for k, v := range c.lam {
		if k >= minRank && left <= share*c.Trace {
			return k
		}
		left -= v
	}
	return c.r
}

func lowRankColumns(diag []float64, col func(p int, dst []float64), minRank, maxRank int, tol float64) (*LowRank, error) {
	n := len(diag)
	f, err := pivoted(n, func(i int) float64 { return diag[i] }, col, tol, minRank, maxRank)
	if err != nil {
		return nil, err
	}
	r := f.R
	// G'G = V Λ V' (r×r); G V has orthogonal columns with norms Λ.
	gtg := mat.NewSymDense(r, nil)
	blas64.Syrk(blas.Trans, 1, blas64.General{Rows: n, Cols: r, Stride: r, Data: f.G}, 0, gtg.RawSymmetric())
	vals, v, err := eigen(gtg, "the pivoted factor's cross-product")
	if err != nil {
		return nil, err
	}
	vr := make([]float64, r*r)
	lr := &LowRank{n: n, r: r, g: make([]float64, n*r), lam: make([]float64, r), diag: append([]float64(nil), diag...), MaxRank: maxRank}
	for c := 0; c < r; c++ {
		k := r - 1 - c
		lr.lam[c] = math.Max(vals[k], 0)
		for a := 0; a < r; a++ {
			vr[a*r+c] = v.At(a, k)
		}
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: n, Cols: r, Stride: r, Data: f.G},
		blas64.General{Rows: r, Cols: r, Stride: r, Data: vr}, 0, blas64.General{Rows: n, Cols: r, Stride: r, Data: lr.g})
	for _, d := range diag {
		lr.Trace += d
	}
	lr.Exact = f.Residual <= float64(n)*0x1p-52*lr.Trace
	return lr, nil
}
