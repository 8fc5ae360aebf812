package gp

import "math"

// Kernels for the products with the prior factor G when it is stored in
// single precision (see Factor.Single): the matrix elements are float32,
// the vectors and every sum float64. A float32 element converts to float64
// exactly, so each product is the double-precision product with the rounded
// matrix, and storing G in float32 halves the memory traffic of the large
// matrix-vector products, which are limited by memory bandwidth.
//
// The amd64 build uses AVX2 and FMA assembly when the CPU has them; the
// portable versions below perform the same operations in the same order
// (sixteen lanes of fused multiply-adds, a scalar lane for the tail, the same
// summation tree), so the results are bit for bit the same on every machine.

// dotF32Generic returns sum_i float64(a[i]) x[i]; len(x) >= len(a).
func dotF32Generic(a []float32, x []float64) float64 {
	var acc [16]float64
	n := len(a) &^ 15
	x = x[:len(a)]
	for i := 0; i < n; i += 16 {
		aa := a[i : i+16 : i+16]
		xx := x[i : i+16 : i+16]
		for l := range acc {
			acc[l] = math.FMA(float64(aa[l]), xx[l], acc[l])
		}
	}
	var t float64
	for i := n; i < len(a); i++ {
		t = math.FMA(float64(a[i]), x[i], t)
	}
	var s [4]float64
	for l := range s {
		s[l] = (acc[l] + acc[4+l]) + (acc[8+l] + acc[12+l])
	}
	return ((s[0] + s[2]) + (s[1] + s[3])) + t
}

// axpyF32Generic sets y[i] += alpha float64(a[i]) (fused); len(y) >= len(a).
func axpyF32Generic(alpha float64, a []float32, y []float64) {
	y = y[:len(a)]
	for i, v := range a {
		y[i] = math.FMA(alpha, float64(v), y[i])
	}
}

// axpy2F32Generic sets y1[i] += a1 float64(a[i]) and y2[i] += a2 float64(a[i])
// (fused); len(y1), len(y2) >= len(a).
func axpy2F32Generic(a1, a2 float64, a []float32, y1, y2 []float64) {
	y1 = y1[:len(a)]
	y2 = y2[:len(a)]
	for i, v := range a {
		f := float64(v)
		y1[i] = math.FMA(a1, f, y1[i])
		y2[i] = math.FMA(a2, f, y2[i])
	}
}
