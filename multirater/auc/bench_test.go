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

// BenchmarkFitSampledEP fits linear and GP scores (RBF, the low-rank
// prior of rank 128) by EP at fixed gamma on the default sample of pair
// sites (DefaultPairs: 65,536 pairs at 1,000 items, 160,000 at 4,000),
// the work of one of the cross-validation's fits at the sizes of the
// scale ladder.
func BenchmarkFitSampledEP(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		x, y := synthetic(n, 8, 1)
		for _, sc := range []struct {
			name string
			o    Options
		}{
			{"linear", Options{Gamma: 30}},
			{"gp", Options{Gamma: 30, Kernel: kernel.RBF{Gamma: 0.05}, Rank: 128}},
		} {
			b.Run(fmt.Sprintf("%s/n=%d", sc.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Fit(context.Background(), Data{X: x, Positive: y}, sc.o); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
