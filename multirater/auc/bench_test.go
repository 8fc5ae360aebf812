package auc

import (
	"context"
	"fmt"
	"testing"

	"concord/multirater/kernel"
)

// BenchmarkFitLinearEP fits linear scores (7 covariates) by EP at fixed
// gamma for a ladder of item counts (n+ n- grows as n^2/4).
func BenchmarkFitLinearEP(b *testing.B) {
	for _, n := range []int{100, 200, 400, 800} {
		x, y := synthetic(n, 7, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Fit(context.Background(), Data{X: x, Positive: y}, Options{Gamma: 50}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFitGPEP fits GP scores (RBF kernel) by EP at fixed gamma.
func BenchmarkFitGPEP(b *testing.B) {
	for _, n := range []int{50, 100, 200} {
		x, y := synthetic(n, 7, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Fit(context.Background(), Data{X: x, Positive: y}, Options{Gamma: 50, Kernel: kernel.RBF{Gamma: 0.05}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFitLinearSMC runs tempering SMC (1000 particles, one repeat) on
// linear scores.
func BenchmarkFitLinearSMC(b *testing.B) {
	for _, n := range []int{100, 200} {
		x, y := synthetic(n, 7, 1)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Fit(context.Background(), Data{X: x, Positive: y}, Options{Gamma: 50, Engine: SMC,
					SMC: SMCOptions{Particles: 1000, Repeats: 1}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
