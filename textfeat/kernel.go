package textfeat

import (
	"fmt"
	"math"
	"slices"

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
// The products are accumulated term by term through an inverted index (the
// documents containing each term), so the cost is sum_t df_t^2 / 2 over the
// terms t, never more than the N^2/2 sparse dot products it replaces; each
// entry sums its products in increasing term order, as Vector.Dot does.
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
	p := newPostings(vecs, dim("vecs", vecs))
	reuseSym(dst, n)
	raw := dst.RawSymmetric()
	parallelFor(n, func(i int) {
		// Upper triangle of row i: row[j-i] = K_ij for j >= i.
		row := raw.Data[i*raw.Stride+i : i*raw.Stride+n]
		clear(row)
		vi := vecs[i]
		for k, t := range vi.Idx {
			docs, vals := p.of(t)
			// Documents before i are done by their own rows.
			s, _ := slices.BinarySearch(docs, int32(i))
			a := vi.Val[k]
			for m := s; m < len(docs); m++ {
				row[int(docs[m])-i] += a * vals[m]
			}
		}
	})
}

// CrossKernelTo fills dst with the linear kernel between two sets of vectors,
//
//	K_ij = a_i^T b_j,
//
// for instance new documents (rows) against the training documents (columns)
// when predicting. a and b must come from the same Vectorizer. As in
// LinearKernelTo, the products are accumulated through an inverted index of
// b, in increasing term order for each entry.
//
// dst must be empty (it is then resized to len(a) x len(b)) or of that size;
// CrossKernelTo panics otherwise, if a or b is empty or if a vector is
// malformed. Rows are computed in parallel; the result does not depend on
// scheduling.
func CrossKernelTo(dst *mat.Dense, a, b []Vector) {
	if len(a) == 0 || len(b) == 0 {
		panic("textfeat: CrossKernelTo with no vectors")
	}
	dim("a", a)
	p := newPostings(b, dim("b", b))
	reuseDense(dst, len(a), len(b))
	raw := dst.RawMatrix()
	parallelFor(len(a), func(i int) {
		row := raw.Data[i*raw.Stride : i*raw.Stride+len(b)]
		clear(row)
		ai := a[i]
		for k, t := range ai.Idx {
			if int(t) >= p.dim() {
				break // no document of b has this or any later term
			}
			docs, vals := p.of(t)
			x := ai.Val[k]
			for m, j := range docs {
				row[j] += x * vals[m]
			}
		}
	})
}

// postings is an inverted index of a set of vectors: for each term, the
// documents that contain it in increasing order, and the term's values there
// (the vectors as a compressed sparse column matrix).
type postings struct {
	start []int // term t's postings are doc[start[t]:start[t+1]]
	doc   []int32
	val   []float64
}

// newPostings indexes vecs, whose indices are all below d.
func newPostings(vecs []Vector, d int) postings {
	p := postings{start: make([]int, d+1)}
	for _, v := range vecs {
		for _, t := range v.Idx {
			p.start[t+1]++
		}
	}
	for t := range d {
		p.start[t+1] += p.start[t]
	}
	p.doc = make([]int32, p.start[d])
	p.val = make([]float64, p.start[d])
	next := slices.Clone(p.start[:d])
	for j, v := range vecs {
		for k, t := range v.Idx {
			p.doc[next[t]] = int32(j)
			p.val[next[t]] = v.Val[k]
			next[t]++
		}
	}
	return p
}

func (p postings) dim() int { return len(p.start) - 1 }

func (p postings) of(t int32) ([]int32, []float64) {
	lo, hi := p.start[t], p.start[t+1]
	return p.doc[lo:hi], p.val[lo:hi]
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
	parallelFor(n, func(i int) {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		row[i] = 1
		for j := i + 1; j < n; j++ {
			row[j] = rbf(gamma, sq[i], sq[j], row[j])
		}
	})
}

// RBFCrossKernelTo fills dst with the RBF kernel of RBFKernelTo between two
// sets of vectors: K_ij = exp(-gamma ||a_i - b_j||^2). Sizes and panics are as
// for CrossKernelTo; gamma must be positive and finite.
func RBFCrossKernelTo(dst *mat.Dense, a, b []Vector, gamma float64) {
	checkGamma(gamma)
	CrossKernelTo(dst, a, b)
	sa, sb := sqNorms(a), sqNorms(b)
	raw := dst.RawMatrix()
	parallelFor(len(a), func(i int) {
		row := raw.Data[i*raw.Stride : i*raw.Stride+len(b)]
		for j := range b {
			row[j] = rbf(gamma, sa[i], sb[j], row[j])
		}
	})
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
