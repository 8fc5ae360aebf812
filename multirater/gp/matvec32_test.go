package gp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMatvec32 checks the single-precision kernels: the dispatched version
// (assembly where the CPU allows) must equal the portable one bit for bit,
// and both must agree with a plain double-precision sum to rounding.
func TestMatvec32(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	if !haveAVX2FMA {
		t.Log("no AVX2/FMA: the portable kernels are compared with themselves")
	}
	for n := 0; n <= 70; n++ {
		for rep := 0; rep < 5; rep++ {
			a := make([]float32, n)
			x := make([]float64, n+3)
			for i := range a {
				a[i] = float32(rng.NormFloat64() * math.Exp(4*rng.NormFloat64()))
			}
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			got, want := dotF32(a, x), dotF32Generic(a, x)
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n=%d: dotF32 %v, portable %v", n, got, want)
			}
			var plain, abs float64
			for i, v := range a {
				plain += float64(v) * x[i]
				abs += math.Abs(float64(v) * x[i])
			}
			if math.Abs(got-plain) > 1e-14*abs {
				t.Fatalf("n=%d: dotF32 %v, plain sum %v", n, got, plain)
			}
			alpha, beta := rng.NormFloat64(), rng.NormFloat64()
			y1 := append([]float64(nil), x...)
			y2 := append([]float64(nil), x...)
			z1 := append([]float64(nil), x...)
			z2 := append([]float64(nil), x...)
			axpyF32(alpha, a, y1)
			axpyF32Generic(alpha, a, y2)
			axpy2F32(alpha, beta, a, z1, z2)
			for i := range y1 {
				if math.Float64bits(y1[i]) != math.Float64bits(y2[i]) || math.Float64bits(z1[i]) != math.Float64bits(y2[i]) {
					t.Fatalf("n=%d: axpy element %d: %v %v %v", n, i, y1[i], y2[i], z1[i])
				}
				w := x[i]
				if i < n {
					w = math.FMA(beta, float64(a[i]), x[i])
				}
				if math.Float64bits(z2[i]) != math.Float64bits(w) {
					t.Fatalf("n=%d: axpy2 second element %d: %v, want %v", n, i, z2[i], w)
				}
			}
		}
	}
}
