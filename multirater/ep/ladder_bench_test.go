package ep

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/kernel"
)

// BenchmarkLadder is the size ladder of one EP run (sequential, 4 ordinal
// ratings per item, the ladder's shape) for the three kinds of prior: the
// identity (diagonal factor, O(N + M)), a text kernel in weight space
// (gp.LowRank on 5,000-term bag-of-words rows, rank gp.DefaultRank(N),
// truncated with the diagonal correction beyond it) and a fixed RBF
// kernel on 8 covariates (pivoted Cholesky to a trace tolerance of 1e-2
// per item; its dense Gram matrix limits it to 4,000 items). Run with
// -bench Ladder -benchtime 1x; report CPU seconds with /usr/bin/time.
func BenchmarkLadder(b *testing.B) {
	for _, n := range []int{250, 1000, 4000, 16000} {
		x, sites, _ := lowRankProblem(n, 5000, uint64(n))
		b.Run(fmt.Sprintf("identity/N=%d", n), func(b *testing.B) {
			f := gp.IdentityFactor(n)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Run(f, sites, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("text/N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				lr, err := gp.NewLowRankFeatures(x, gp.LowRankOptions{}, rand.New(rand.NewPCG(1, uint64(i))), uint64(i))
				if err != nil {
					b.Fatal(err)
				}
				f, err := gp.NewFactor(lr)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Run(f, sites, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		if n > 4000 {
			continue
		}
		b.Run(fmt.Sprintf("rbf/N=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(2, uint64(n)))
			cov := mat.NewDense(n, 8, nil)
			for i := 0; i < n; i++ {
				for j := 0; j < 8; j++ {
					cov.Set(i, j, rng.NormFloat64())
				}
			}
			var c mat.SymDense
			kernel.RBF{Gamma: 0.125}.GramTo(&c, kernel.Inputs{N: n, X: cov})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f, err := gp.NewPivotedFactor(&c, 1e-2*float64(n))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Run(f, sites, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
