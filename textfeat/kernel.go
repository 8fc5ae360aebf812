package textfeat

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// LinearKernelTo fills dst with the Gram matrix of the linear kernel
//
//	K_ij = x_i^T x_j,
//
// the covariance function Rogers et al. sec. 4 use on unit-norm bag-of-words
// vectors. For vectors made by a Vectorizer the diagonal is 1 (to rounding),
// except for documents with no known term, whose row and column are zero: add
// a jitter or another kernel before factorising such a matrix.
//
// dst must be empty (it is then resized to len(vecs) x len(vecs)) or of that
// size; LinearKernelTo panics otherwise, if vecs is empty or if a vector is
// malformed. Rows are computed in parallel (one goroutine per CPU); each entry
// is computed by one goroutine in a fixed order, so the result does not depend
// on scheduling. The result can be added to other Gram matrices of the same
// items with (*mat.SymDense).AddSym.
func LinearKernelTo(dst *mat.SymDense, vecs []Vector) {
	n := len(vecs)
	if n == 0 {
		panic("textfeat: LinearKernelTo with no vectors")
	}
	d := dim("vecs", vecs)
	reuseSym(dst, n)
	raw := dst.RawSymmetric()
	parallelRows(n, d, func(x []float64, i int) {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		vi := vecs[i]
		scatter(x, vi)
		for j := i; j < n; j++ {
			row[j] = gather(x, vecs[j])
		}
		unscatter(x, vi)
	})
}

// CrossKernelTo fills dst with the linear kernel between two sets of vectors,
//
//	K_ij = a_i^T b_j,
//
// for instance new documents (rows) against the training documents (columns)
// when predicting. a and b must come from the same Vectorizer.
//
// dst must be empty (it is then resized to len(a) x len(b)) or of that size;
// CrossKernelTo panics otherwise, if a or b is empty or if a vector is
// malformed. Rows are computed in parallel; the result does not depend on
// scheduling.
func CrossKernelTo(dst *mat.Dense, a, b []Vector) {
	if len(a) == 0 || len(b) == 0 {
		panic("textfeat: CrossKernelTo with no vectors")
	}
	d := max(dim("a", a), dim("b", b))
	reuseDense(dst, len(a), len(b))
	raw := dst.RawMatrix()
	parallelRows(len(a), d, func(x []float64, i int) {
		row := raw.Data[i*raw.Stride : i*raw.Stride+len(b)]
		scatter(x, a[i])
		for j, bj := range b {
			row[j] = gather(x, bj)
		}
		unscatter(x, a[i])
	})
}

// RBFKernelTo fills dst with the Gaussian (RBF) kernel on the vectors,
//
//	K_ij = exp(-gamma ||x_i - x_j||^2),  ||x_i - x_j||^2 = |x_i|^2 + |x_j|^2 - 2 x_i^T x_j,
//
// (Rogers et al. eq. 20, with their gamma) where the squared distance is
// computed from the sparse inner products and clamped at zero against
// rounding; the diagonal is exactly 1. For unit-norm vectors the squared
// distance is 2 - 2 x_i^T x_j, in [0, 4]; a zero vector (empty document) is at
// squared distance 1 from every unit vector.
//
// gamma must be positive and finite. Sizes and panics are as for
// LinearKernelTo.
func RBFKernelTo(dst *mat.SymDense, vecs []Vector, gamma float64) {
	checkGamma(gamma)
	LinearKernelTo(dst, vecs)
	n := len(vecs)
	sq := sqNorms(vecs)
	raw := dst.RawSymmetric()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		row[i] = 1
		for j := i + 1; j < n; j++ {
			row[j] = rbf(gamma, sq[i], sq[j], row[j])
		}
	}
}

// RBFCrossKernelTo fills dst with the RBF kernel of RBFKernelTo between two
// sets of vectors: K_ij = exp(-gamma ||a_i - b_j||^2). Sizes and panics are as
// for CrossKernelTo; gamma must be positive and finite.
func RBFCrossKernelTo(dst *mat.Dense, a, b []Vector, gamma float64) {
	checkGamma(gamma)
	CrossKernelTo(dst, a, b)
	sa, sb := sqNorms(a), sqNorms(b)
	raw := dst.RawMatrix()
	for i := range a {
		row := raw.Data[i*raw.Stride : i*raw.Stride+len(b)]
		for j := range b {
			row[j] = rbf(gamma, sa[i], sb[j], row[j])
		}
	}
}

func rbf(gamma, sqa, sqb, dot float64) float64 {
	d2 := sqa + sqb - 2*dot
	if d2 < 0 {
		d2 = 0
	}
	return math.Exp(-gamma * d2)
}

func checkGamma(gamma float64) {
	if !(gamma > 0) || math.IsInf(gamma, 1) {
		panic(fmt.Sprintf("textfeat: RBF gamma = %v, want positive and finite", gamma))
	}
}

func sqNorms(vs []Vector) []float64 {
	sq := make([]float64, len(vs))
	for i, v := range vs {
		sq[i] = v.Dot(v)
	}
	return sq
}

func reuseSym(dst *mat.SymDense, n int) {
	if dst.IsEmpty() {
		dst.ReuseAsSym(n)
		return
	}
	if m := dst.SymmetricDim(); m != n {
		panic(fmt.Sprintf("textfeat: destination is %d x %d, want %d x %d", m, m, n, n))
	}
}

func reuseDense(dst *mat.Dense, r, c int) {
	if dst.IsEmpty() {
		dst.ReuseAs(r, c)
		return
	}
	if m, n := dst.Dims(); m != r || n != c {
		panic(fmt.Sprintf("textfeat: destination is %d x %d, want %d x %d", m, n, r, c))
	}
}

// scatter writes v into the dense scratch x, which must be zero on v's
// indices.
func scatter(x []float64, v Vector) {
	for k, i := range v.Idx {
		x[i] = v.Val[k]
	}
}

// unscatter zeroes x on v's indices again.
func unscatter(x []float64, v Vector) {
	for _, i := range v.Idx {
		x[i] = 0
	}
}

// gather returns sum_k x[w.Idx[k]] * w.Val[k].
func gather(x []float64, w Vector) float64 {
	var s float64
	val := w.Val[:len(w.Idx)]
	for k, i := range w.Idx {
		s += x[i] * val[k]
	}
	return s
}
