package gp

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// PrecBlock returns the number of leading eigendirections that the
// block-Jacobi preconditioner of the conjugate-gradient sampler treats
// exactly: those where lambda_k times dmax, the largest item precision,
// is at least 1/2 (H = I + G'DG is far from its diagonal there), at most
// MaxPrecBlock and at most 2^22 numbers over groups blocks.
func (f *Factor) PrecBlock(dmax float64, groups int) int {
	limit := min(MaxPrecBlock, int(math.Sqrt(float64(1<<22)/float64(groups))))
	kb := 0
	for kb < f.R && kb < limit && f.Lam[kb]*dmax >= 0.5 {
		kb++
	}
	return kb
}

// AddRowGram adds row row' to dst (k×k row-major, lower triangle only),
// k = len(row): a row of G (or its leading k entries) into a sum of
// G_n' G_n over items.
func AddRowGram(dst, row []float64) {
	k := len(row)
	for i, gi := range row {
		for j, gj := range row[:i+1] {
			dst[i*k+j] += gi * gj
		}
	}
}

// AddRowSquares adds the squares of row's entries to dst.
func AddRowSquares(dst, row []float64) {
	for k, v := range row {
		dst[k] += v * v
	}
}

// SumSquares sets dst to 1 + sum_g a[g] squares[g]: the diagonal of
// H = I + G'DG from per-group (per-rater) sums of the squares of G's rows
// (AddRowSquares), the Jacobi part of the preconditioner.
func SumSquares(dst []float64, squares [][]float64, a []float64) {
	for k := range dst {
		dst[k] = 1
	}
	for g, e := range squares {
		ag := a[g]
		for k, v := range e {
			dst[k] += ag * v
		}
	}
}

// SumBlocks sets dst (k×k row-major) to I + sum_g a[g] blocks[g]: the
// leading block of H = I + G'DG from per-group (per-rater) sums of
// G_n' G_n over items (AddRowGram), lower triangle.
func SumBlocks(dst []float64, k int, blocks [][]float64, a []float64) {
	clear(dst)
	for g, gm := range blocks {
		blas64.Axpy(a[g], blas64.Vector{N: len(gm), Inc: 1, Data: gm}, blas64.Vector{N: len(dst), Inc: 1, Data: dst})
	}
	for i := 0; i < k; i++ {
		dst[i*k+i]++
	}
}

// InvertBlock overwrites the k×k row-major matrix a, symmetric positive
// definite with its lower triangle set, with its full inverse (for
// Posterior.SetPrecBlockInv: one matrix-vector product per
// preconditioning instead of two triangular solves), and reports whether a
// was positive definite.
func InvertBlock(a []float64, k int) bool {
	t, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: k, Stride: k, Data: a})
	if !ok {
		return false
	}
	if _, ok := lapack64.Potri(t); !ok {
		return false
	}
	for i := 0; i < k; i++ {
		for j := 0; j < i; j++ {
			a[j*k+i] = a[i*k+j]
		}
	}
	return true
}
