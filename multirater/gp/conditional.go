package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Conditional conditions the latent values of new items on those of the
// training items, for predicting without refitting (Rogers et al. sec.
// 2.2.1, 2.3.1): with k the covariances between a new item and the N
// training items, k_new its prior variance and C = Q Λ Q' the training
// items' covariance restricted to its eigenvalues above PredictRelTol of
// the largest,
//
//	f_new | m ~ N(k' C^+ m, k_new - k' C^+ k),
//
// computed as (Q'k)'(Λ^{-1} Q'm) without inverting C. The families'
// predictors project each kept draw of m once (ProjectTo) and each new item
// once (CrossTo). Safe for concurrent use.
type Conditional struct {
	n, r int
	q    []float64 // n×r row-major
	lam  []float64
}

// NewConditional decomposes cov, the covariance matrix of the training
// items. It returns an error when the eigendecomposition fails.
func NewConditional(cov mat.Symmetric) (*Conditional, error) {
	q, lam, err := KeptEigen(cov)
	if err != nil {
		return nil, err
	}
	return &Conditional{n: cov.SymmetricDim(), r: len(lam), q: q, lam: lam}, nil
}

// CheckNew panics unless cross (the covariances of n new items with the
// training items) is n×N and prior has n values: a caller's mistake.
func (c *Conditional) CheckNew(n int, cross mat.Matrix, prior []float64) {
	rr, cc := cross.Dims()
	if rr != n || cc != c.n || len(prior) != n {
		panic(fmt.Sprintf("multirater: Predict: cross is %d×%d and prior has %d values for %d ids and %d training items", rr, cc, len(prior), n, c.n))
	}
}

// Rank is the number of kept eigendirections r.
func (c *Conditional) Rank() int { return c.r }

// ProjectTo sets dst (length Rank) to Λ^{-1} Q'm for a draw m of the
// training items' latent values and returns it; dst nil allocates.
func (c *Conditional) ProjectTo(dst, m []float64) []float64 {
	if len(m) != c.n {
		panic("multirater: Conditional.ProjectTo: wrong length of m")
	}
	if dst == nil {
		dst = make([]float64, c.r)
	} else {
		for k := range dst {
			dst[k] = 0
		}
	}
	for row, mv := range m {
		qr := c.q[row*c.r : (row+1)*c.r]
		for k, qv := range qr {
			dst[k] += qv * mv
		}
	}
	for k := range dst {
		dst[k] /= c.lam[k]
	}
	return dst
}

// CrossTo sets qk (length Rank) to Q'k for row i of cross (the covariances
// of new item i with the training items) and returns the conditional
// variance k_new - k'C^+k (clamped at 0) given the prior variance prior.
// The conditional mean for a projected draw pr is numeric.Dot(qk, pr).
func (c *Conditional) CrossTo(qk []float64, cross mat.Matrix, i int, prior float64) float64 {
	for k := range qk {
		qk[k] = 0
	}
	for row := 0; row < c.n; row++ {
		v := cross.At(i, row)
		if v == 0 {
			continue
		}
		qr := c.q[row*c.r : (row+1)*c.r]
		for k, qv := range qr {
			qk[k] += qv * v
		}
	}
	v2 := prior
	for k, v := range qk {
		v2 -= v * v / c.lam[k]
	}
	return math.Max(v2, 0)
}
