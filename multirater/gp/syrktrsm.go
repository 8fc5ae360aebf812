package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// The two level-3 operations that EP's and Laplace's low-rank posteriors
// spend their time in, H = I + G'SG (a rank-N update of an r×r matrix) and
// X = G L'^-1 (N triangular solves, for the marginal variances and the
// gradients), both O(N r^2). gonum's pure-Go Dsyrk and Dtrsm run them as
// axpys and dots in SSE2 (at most two multiply-adds a cycle, bound by the
// loads and stores); with AVX2 and FMA (haveAVX2FMA) they run here as
// blocks of four dot products that share their loads (dot2x2: four 4-lane
// fused multiply-adds per four loads), about three times as fast. Without
// the assembly (other architectures, -tags purego, -tags cblas, a processor
// without AVX2/FMA) they call gonum's (or OpenBLAS's) routines as before,
// bit for bit. The two paths' results differ by rounding (different orders
// of summation), not more.

// SyrkUpperTrans sets the upper triangle of the r×r row-major c (stride r)
// to alpha A'A + beta c for the rows×r row-major a (stride r), beta 0 or 1
// (beta 0 overwrites c's upper triangle, NaNs included): blas64.Syrk with
// blas.Trans. work, when it has min(rows, 256)*r elements, is the scratch for
// A' (else it is allocated).
func SyrkUpperTrans(alpha float64, a []float64, rows, r int, beta float64, c, work []float64) {
	if beta != 0 && beta != 1 {
		panic(fmt.Sprintf("multirater: gp: SyrkUpperTrans with beta %v (0 or 1)", beta))
	}
	if len(a) < rows*r || len(c) < r*r {
		panic("multirater: gp: SyrkUpperTrans: short slices")
	}
	if !haveAVX2FMA || rows == 0 || r == 0 {
		blas64.Syrk(blas.Trans, alpha, blas64.General{Rows: rows, Cols: r, Stride: r, Data: a}, beta,
			blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: r, Data: c})
		return
	}
	if beta == 0 {
		for i := 0; i < r; i++ {
			clear(c[i*r+i : (i+1)*r])
		}
	}
	if alpha == 0 {
		return
	}
	// A' by chunks of gramChunk rows (r×cl), so that element (i, j) adds
	// the dot of rows i and j of the chunk, which stays in the L2 cache.
	cl := min(rows, gramChunk)
	if len(work) < cl*r {
		work = make([]float64, cl*r)
	}
	for l0 := 0; l0 < rows; l0 += gramChunk {
		n := min(rows-l0, gramChunk)
		at := work[:n*r]
		for l := 0; l < n; l++ {
			for i, v := range a[(l0+l)*r : (l0+l+1)*r] {
				at[i*n+l] = v
			}
		}
		addGramPairs(c, alpha, at, n, r)
	}
}

// gramChunk is the number of rows of A whose transpose SyrkUpperTrans
// holds at a time (256 rows of rank 500 are 1 MB).
const gramChunk = 256

// addGramPairs adds alpha times the dots of the rows of the r×n at to the
// upper triangle of c, two rows by two.
func addGramPairs(c []float64, alpha float64, at []float64, n, r int) {
	row := func(i int) []float64 { return at[i*n : (i+1)*n] }
	for i := 0; i < r; i += 2 {
		i1 := min(i+1, r-1)
		for j := i; j < r; j += 2 {
			j1 := min(j+1, r-1)
			d00, d01, d10, d11 := dot2x2(row(i), row(i1), row(j), row(j1), n)
			c[i*r+j] += alpha * d00
			if j+1 < r {
				c[i*r+j+1] += alpha * d01
			}
			if i+1 < r {
				if j > i {
					c[(i+1)*r+j] += alpha * d10
				}
				if j+1 < r {
					c[(i+1)*r+j+1] += alpha * d11
				}
			}
		}
	}
}

// TrsmRightLowerTrans sets the rows×r row-major b (stride r) to b L'^-1
// for the lower-triangular, non-unit r×r row-major l (stride r): each row x
// of b becomes the solution y of L y = x by forward substitution,
// y_j = (x_j - L[j,:j] y[:j]) / L_jj (blas64.Trsm with blas.Right and
// blas.Trans). With the assembly kernel two rows of b and two of L go
// together: the four dots L[j,:j]·y[:j], L[j+1,:j]·y[:j] for both rows in
// one pass, then y_j and y_{j+1}.
func TrsmRightLowerTrans(l []float64, r int, b []float64, rows int) {
	if len(l) < r*r || len(b) < rows*r {
		panic("multirater: gp: TrsmRightLowerTrans: short slices")
	}
	if !haveAVX2FMA || rows == 0 || r == 0 {
		blas64.Trsm(blas.Right, blas.Trans, 1, blas64.Triangular{Uplo: blas.Lower, Diag: blas.NonUnit, N: r, Stride: r, Data: l},
			blas64.General{Rows: rows, Cols: r, Stride: r, Data: b})
		return
	}
	for i := 0; i < rows; i += 2 {
		y0 := b[i*r : (i+1)*r]
		y1 := y0
		if i+1 < rows {
			y1 = b[(i+1)*r : (i+2)*r]
		}
		solve2(l, r, y0, y1)
	}
}

// solve2 solves L y = x in place for the rows y0 and y1 (the same slice
// for one row).
func solve2(l []float64, r int, y0, y1 []float64) {
	j := 0
	if r%2 == 1 {
		// The first column alone, so that the pairs end at r.
		y0[0] /= l[0]
		if &y1[0] != &y0[0] {
			y1[0] /= l[0]
		}
		j = 1
	}
	same := &y1[0] == &y0[0]
	for ; j < r; j += 2 {
		lj, lk := l[j*r:], l[(j+1)*r:]
		var d00, d01, d10, d11 float64
		if j > 0 {
			d00, d01, d10, d11 = dot2x2(lj, lk, y0, y1, j)
		}
		djj, c, dkk := lj[j], lk[j], lk[j+1]
		a0 := (y0[j] - d00) / djj
		y0[j+1] = (y0[j+1] - d10 - float64(c*a0)) / dkk
		y0[j] = a0
		if !same {
			a1 := (y1[j] - d01) / djj
			y1[j+1] = (y1[j+1] - d11 - float64(c*a1)) / dkk
			y1[j] = a1
		}
	}
}

// dot2x2Generic is dot2x2 in Go, in the assembly's lanes and order (see
// dot2_amd64.s): the reference of its test, and the kernel where there is
// no assembly.
func dot2x2Generic(a0, a1, b0, b1 []float64, n int) (d00, d01, d10, d11 float64) {
	var acc [4][8]float64 // product, element mod 8 of the step
	m := n &^ 7
	for e := 0; e < m; e++ {
		k := e & 7
		acc[0][k] = math.FMA(a0[e], b0[e], acc[0][k])
		acc[1][k] = math.FMA(a0[e], b1[e], acc[1][k])
		acc[2][k] = math.FMA(a1[e], b0[e], acc[2][k])
		acc[3][k] = math.FMA(a1[e], b1[e], acc[3][k])
	}
	var d [4]float64
	for p := range d {
		s := [4]float64{acc[p][0] + acc[p][4], acc[p][1] + acc[p][5], acc[p][2] + acc[p][6], acc[p][3] + acc[p][7]}
		d[p] = (s[0] + s[2]) + (s[1] + s[3])
	}
	for e := m; e < n; e++ {
		d[0] = math.FMA(a0[e], b0[e], d[0])
		d[1] = math.FMA(a0[e], b1[e], d[1])
		d[2] = math.FMA(a1[e], b0[e], d[2])
		d[3] = math.FMA(a1[e], b1[e], d[3])
	}
	return d[0], d[1], d[2], d[3]
}
