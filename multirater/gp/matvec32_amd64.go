//go:build amd64 && !purego && !cblas

package gp

import "golang.org/x/sys/cpu"

// haveAVX2FMA reports whether the assembly kernels can run.
var haveAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotF32AVX2(a []float32, x []float64) float64

//go:noescape
func axpyF32AVX2(alpha float64, a []float32, y []float64)

//go:noescape
func axpy2F32AVX2(a1, a2 float64, a []float32, y1, y2 []float64)

// dotF32 returns sum_i float64(a[i]) x[i]; len(x) >= len(a).
func dotF32(a []float32, x []float64) float64 {
	if haveAVX2FMA {
		_ = x[:len(a)]
		return dotF32AVX2(a, x)
	}
	return dotF32Generic(a, x)
}

// axpyF32 sets y[i] += alpha float64(a[i]); len(y) >= len(a).
func axpyF32(alpha float64, a []float32, y []float64) {
	if haveAVX2FMA {
		_ = y[:len(a)]
		axpyF32AVX2(alpha, a, y)
		return
	}
	axpyF32Generic(alpha, a, y)
}

// axpy2F32 sets y1 += a1 a and y2 += a2 a; len(y1), len(y2) >= len(a).
func axpy2F32(a1, a2 float64, a []float32, y1, y2 []float64) {
	if haveAVX2FMA {
		_ = y1[:len(a)]
		_ = y2[:len(a)]
		axpy2F32AVX2(a1, a2, a, y1, y2)
		return
	}
	axpy2F32Generic(a1, a2, a, y1, y2)
}
