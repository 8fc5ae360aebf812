package gp

import "math"

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
