package ordinal

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/kernel"
)

// benchChu makes Chu's setting at size n: one rater, 5 levels, 3 standard
// normal inputs and a non-linear latent 2 sin(1.5 x_1) + x_2^2 - 1 with
// noise sd 0.3 (so that the learnt RBF length-scale is short enough to
// need a kernel of high rank).
func benchChu(n int) (*Data, *mat.Dense) {
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	x := mat.NewDense(n, 3, nil)
	d := &Data{Levels: []string{"1", "2", "3", "4", "5"}, RaterIDs: []string{"r"}}
	cuts := []float64{-1.5, -0.5, 0.5, 1.5}
	for i := 0; i < n; i++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprint("i", i))
		for j := 0; j < 3; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
		y := 2*math.Sin(1.5*x.At(i, 0)) + x.At(i, 1)*x.At(i, 1) - 1 + 0.3*rng.NormFloat64()
		k := 0
		for k < 4 && y > cuts[k] {
			k++
		}
		d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: 0, Level: k})
	}
	return d, x
}

// BenchmarkFitDeterministic measures whole EP fits of Chu's setting over a
// ladder of sizes, end to end (kernel matrix, factorisation, EP, the
// result's 500 joint draws):
//
//   - fixed: RBF gamma 1/6 (Chu's 1/(2D)), sigma 0.3 and thresholds fixed:
//     one EP run;
//   - raters: the same kernel, thresholds and sigma learnt by evidence
//     maximisation from 3 starting points;
//   - learnt-rbf: the RBF gamma learnt too (the target: N = 1000 in
//     under 30 s).
func BenchmarkFitDeterministic(b *testing.B) {
	for _, n := range []int{100, 300, 1000, 2000} {
		if testing.Short() && n > 300 {
			continue
		}
		d, x := benchChu(n)
		in := kernel.Inputs{N: n, X: x}
		var c mat.SymDense
		kernel.RBF{Gamma: 1.0 / 6}.GramTo(&c, in)
		fixed := *d
		fixed.Cov = &c
		learnt := *d
		learnt.Learn = &LearnKernel{Terms: []kernel.Hyper{kernel.RBF{Gamma: 1}}, Inputs: in}
		cases := []struct {
			name string
			data *Data
			opts DetOptions
		}{
			{"fixed", &fixed, DetOptions{Sigma: 0.3, Thresholds: []float64{-1.5, -0.5, 0.5, 1.5}}},
			{"raters/restarts=3", &fixed, DetOptions{Restarts: 3}},
			{"learnt-rbf/restarts=3", &learnt, DetOptions{Restarts: 3}},
		}
		for _, tc := range cases {
			b.Run(fmt.Sprintf("N=%d/%s", n, tc.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := FitDeterministic(context.Background(), tc.data, tc.opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkFitDeterministicIdentity measures the labels-only EP fit (the
// identity prior, issue 35) at the shared ladder's shape: about 4 ratings
// per item from 20 (N = 4,000) to 50 raters, thresholds and noise learnt by
// evidence maximisation (the default), end to end including the result's
// joint draws. The prior is diagonal throughout (gp.IdentityFactor), so time
// and bytes allocated per item should stay flat across the sizes; the
// bytes are dominated by the result (N x 500 joint draws, rank summaries).
func BenchmarkFitDeterministicIdentity(b *testing.B) {
	for _, tc := range []struct{ n, raters int }{{4000, 20}, {16000, 40}, {64000, 50}} {
		d := benchData(tc.n, tc.raters, 4/float64(tc.raters), "identity", 35)
		b.Run(fmt.Sprintf("N=%d", tc.n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := FitDeterministic(context.Background(), d, DetOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
