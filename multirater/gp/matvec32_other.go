//go:build !amd64 || purego || cblas

package gp

// The portable kernels of matvec32.go serve on other architectures, with
// -tags purego, and with -tags cblas (a package that uses cgo cannot hold Go
// assembly). They give the same results, bit for bit.

const haveAVX2FMA = false

func dotF32(a []float32, x []float64) float64 { return dotF32Generic(a, x) }

func axpyF32(alpha float64, a []float32, y []float64) { axpyF32Generic(alpha, a, y) }

func axpy2F32(a1, a2 float64, a []float32, y1, y2 []float64) {
	axpy2F32Generic(a1, a2, a, y1, y2)
}
