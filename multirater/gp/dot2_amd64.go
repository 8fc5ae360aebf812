//go:build amd64 && !purego && !cblas

package gp

//go:noescape
func dot2x2AVX2(a0, a1, b0, b1 *float64, n int) (d00, d01, d10, d11 float64)

// dot2x2 returns a0·b0, a0·b1, a1·b0 and a1·b1 over the first n elements
// (n >= 1; every slice at least n long).
func dot2x2(a0, a1, b0, b1 []float64, n int) (d00, d01, d10, d11 float64) {
	_, _, _, _ = a0[n-1], a1[n-1], b0[n-1], b1[n-1]
	return dot2x2AVX2(&a0[0], &a1[0], &b0[0], &b1[0], n)
}
