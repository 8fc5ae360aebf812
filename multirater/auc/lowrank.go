package auc

import (
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/kernel"
)

// lowRankTol is the share of the kernel matrix's trace that the low-rank
// prior may leave out before Options.Rank columns: a smooth kernel (the
// ladder's rbf:gamma=0.005 on 8 covariates) needs far fewer, and EP's
// cost per sweep grows as N r^2. On the ladder's 16,000 items rank 128
// (4e-5 of the trace left out) took more than 290 CPU s.
const lowRankTol = 1e-3

// newLowRankModel is newModel's low-rank prior of GP scores
// (Options.Rank): C = V K(X, X) ≈ G G' by the partial Cholesky
// decomposition with pivoting (gp.NewPivotedFactorRank, Harbrecht et al.
// 2012) to at most Options.Rank columns, or fewer once the trace left out
// is at most lowRankTol of the trace, reading the diagonal and the
// pivots' columns of K only (O(N Rank (Rank + d)) time, O(N Rank)
// memory). G's rows at the pivots P are L with K_PP = L L', so G G' =
// K_nP K_PP^-1 K_Pn: the Nyström, or subset-of-regressors, prior on the
// pivot items (Williams & Seeger 2001; Quiñonero-Candela & Rasmussen 2005
// sec. 4), in whose whitened coordinates EP runs unchanged.
func newLowRankModel(x *mat.Dense, k kernel.Kernel, o *Options) (*model, error) {
	n, d := x.Dims()
	in := kernel.Inputs{N: n, X: x}
	c := &kernelColumns{k: k, in: in, v: o.PriorScale, col: -1, diag: k.DiagTo(nil, in)}
	floats.Scale(o.PriorScale, c.diag)
	tr := floats.Sum(c.diag)
	fac, err := gp.NewPivotedFactorRank(c, lowRankTol*tr, min(o.Rank, n))
	if err != nil {
		return nil, multirater.DataErrorf("auc: the low-rank prior of kernel %s: %v", k, err)
	}
	m := &model{n: n, r: fac.R, d: d, kern: k, x: x, v: o.PriorScale, g: fac.G, fac: fac, kp: make([]float64, n)}
	if tr > 0 {
		m.resid = fac.Residual / tr
	}
	return m, nil
}

// kernelColumns is the kernel matrix V K(X, X) as a mat.Symmetric that
// computes one column at a time (the last one asked for is kept) and
// holds the diagonal: what the pivoted Cholesky decomposition reads,
// without the N×N matrix.
type kernelColumns struct {
	k      kernel.Kernel
	in     kernel.Inputs
	v      float64
	diag   []float64
	col    int
	colVal []float64
	cross  mat.Dense
}

func (c *kernelColumns) Dims() (int, int)  { return c.in.N, c.in.N }
func (c *kernelColumns) T() mat.Matrix     { return c }
func (c *kernelColumns) SymmetricDim() int { return c.in.N }

// At reads the diagonal as it is held and any other element from its
// column.
func (c *kernelColumns) At(i, j int) float64 {
	if i == j {
		return c.diag[i]
	}
	return c.column(j)[i]
}

// column returns column j of V K, computing it when it is not the last
// one asked for (O(N d)).
func (c *kernelColumns) column(j int) []float64 {
	if j == c.col {
		return c.colVal
	}
	if c.colVal == nil {
		c.colVal = make([]float64, c.in.N)
	}
	_, d := c.in.X.Dims()
	one := kernel.Inputs{N: 1, X: mat.NewDense(1, d, mat.Row(nil, j, c.in.X))}
	c.cross.Reset()
	c.k.CrossTo(&c.cross, c.in, one)
	for i := range c.colVal {
		c.colVal[i] = c.v * c.cross.At(i, 0)
	}
	c.col = j
	return c.colVal
}
