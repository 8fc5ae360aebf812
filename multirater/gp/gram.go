package gp

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Gram is a precomputed kernel matrix that remembers its eigendecomposition.
// ordinal.Fit (as Data.Cov) and ordinal.NewPredictor decompose the
// covariance matrix they are given, O(N^3); given the same *Gram they
// decompose it once between them, so that several fits on the same items
// (cross-validation models on one fold, a fit and its predictor) share the
// work. The matrix must not be changed after NewGram. Safe for concurrent
// use.
type Gram struct {
	*mat.SymDense
	x    *mat.Dense // features with C = x x', or nil (see NewGramFeatures)
	once sync.Once
	vals []float64
	vecs *mat.Dense
	err  error
}

// NewGram wraps the kernel matrix c.
func NewGram(c *mat.SymDense) *Gram {
	if c == nil {
		panic("multirater: NewGram of a nil matrix")
	}
	return &Gram{SymDense: c}
}

// NewGramFeatures wraps the kernel matrix c of a linear kernel on features:
// c = x x' (to rounding), x being n×p with a row of features per item, as
// for the linear kernel on bag-of-words vectors (Rogers et al. sec. 4). When
// there are fewer features than items (p < n) the eigendecomposition comes
// from the p×p matrix x'x = U Λ U': the nonzero eigenvalues of c are those
// of x'x and its eigenvectors are x U Λ^{-1/2}, so that the prior factor
// G = V Λ^{1/2} = x U needs no division (O(n p^2 + p^3) instead of O(n^3)).
// The remaining n - p eigenvalues are exactly zero, with zero columns in
// place of their eigenvectors, which no user of the decomposition reads.
func NewGramFeatures(c *mat.SymDense, x *mat.Dense) *Gram {
	if c == nil || x == nil {
		panic("multirater: NewGramFeatures of a nil matrix")
	}
	if n, _ := x.Dims(); n != c.SymmetricDim() {
		panic(fmt.Sprintf("multirater: NewGramFeatures: %d feature rows for a %d×%d kernel matrix", n, c.SymmetricDim(), c.SymmetricDim()))
	}
	return &Gram{SymDense: c, x: x}
}

// eigen returns copies of the eigenvalues (ascending) and eigenvectors of
// the matrix, computed on first use.
func (g *Gram) eigen() ([]float64, *mat.Dense, error) {
	g.once.Do(func() {
		if g.x != nil {
			if n, p := g.x.Dims(); p < n {
				g.vals, g.vecs, g.err = featureEigen(g.x)
				return
			}
		}
		g.vals, g.vecs, g.err = SymEigen(g.SymDense)
	})
	if g.err != nil {
		return nil, nil, g.err
	}
	return append([]float64(nil), g.vals...), mat.DenseCopyOf(g.vecs), nil
}

// featureEigen returns the eigendecomposition of x x' (x n×p, p < n) from
// that of the p×p matrix x'x, in SymEigen's layout: n eigenvalues in
// ascending order, the n - p smallest (and any nonpositive ones of x'x) set
// to zero with zero eigenvector columns; each other column is
// x u_k / sqrt(λ_k).
func featureEigen(x *mat.Dense) ([]float64, *mat.Dense, error) {
	n, p := x.Dims()
	var s mat.SymDense
	s.SymOuterK(1, x.T())
	vs, us, err := SymEigen(&s)
	if err != nil {
		return nil, nil, err
	}
	vals := make([]float64, n)
	vecs := mat.NewDense(n, n, nil)
	var xu mat.VecDense
	for k := 0; k < p; k++ {
		lam := vs[k]
		if !(lam > 0) {
			continue
		}
		col := n - p + k
		vals[col] = lam
		xu.MulVec(x, us.ColView(k))
		xu.ScaleVec(1/math.Sqrt(lam), &xu)
		vecs.SetCol(col, xu.RawVector().Data)
	}
	return vals, vecs, nil
}

// KeptEigen returns the eigenvectors (n×r row-major) and eigenvalues of
// cov above predictRelTol of the largest (see predictRelTol).
func KeptEigen(cov mat.Symmetric) ([]float64, []float64, error) {
	n := cov.SymmetricDim()
	diag := true
	for i := 0; i < n && diag; i++ {
		for j := 0; j < i; j++ {
			if cov.At(i, j) != 0 {
				diag = false
				break
			}
		}
	}
	var vals []float64
	var vecs *mat.Dense
	if diag {
		vals = make([]float64, n)
		vecs = mat.NewDense(n, n, nil)
		for i := 0; i < n; i++ {
			vals[i] = cov.At(i, i)
			vecs.Set(i, i, 1)
		}
	} else {
		var err error
		vals, vecs, err = SymEigen(cov)
		if err != nil {
			return nil, nil, err
		}
	}
	lmax := 0.0
	for _, v := range vals {
		lmax = math.Max(lmax, v)
	}
	var keep []int
	for i, v := range vals {
		if v > predictRelTol*lmax && v > 0 {
			keep = append(keep, i)
		}
	}
	r := len(keep)
	lam := make([]float64, r)
	q := make([]float64, n*r)
	for j, i := range keep {
		lam[j] = vals[i]
		for row := 0; row < n; row++ {
			q[row*r+j] = vecs.At(row, i)
		}
	}
	return q, lam, nil
}

// predictRelTol is the relative eigenvalue below which the prediction
// ignores directions of the training covariance: f_new is conditioned on the
// projection of m onto the leading eigenvectors (a valid Gaussian
// conditioning on less information), which keeps the rounding of the stored
// draws from being amplified by tiny eigenvalues.
const predictRelTol = 1e-9
