package bounded

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// benchData is n items rated by 10 of 30 raters each on 0..100, beta noise
// around a latent consensus, with dispersions from 3 to 40 and 8% of the
// ratings at a bound.
func benchData(n int) *Data {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	d := &Data{Lo: 0, Hi: 100}
	for l := 0; l < 30; l++ {
		d.RaterIDs = append(d.RaterIDs, fmt.Sprintf("r%d", l))
	}
	for i := 0; i < n; i++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprintf("i%d", i))
		f := rng.NormFloat64()
		for _, l := range rng.Perm(30)[:10] {
			v := math.Round(100 * (0.5 * math.Erfc(-(f+0.3*rng.NormFloat64()*(1+float64(l%4)))/math.Sqrt2)))
			d.Ratings = append(d.Ratings, Rating{Item: i, Rater: l, Value: v})
		}
	}
	return d
}

// BenchmarkFit: a whole EP fit with every rater's dispersion learnt (10
// ratings per item, identity kernel), the speed case at N = 100
// (1,000 ratings, target under 5 s).
func BenchmarkFit(b *testing.B) {
	for _, n := range []int{30, 100, 300} {
		d := benchData(n)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Fit(context.Background(), d, Options{Priors: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChoice: the default of `concord fit --model bounded`, the
// choice among beta and normal likelihoods with per-rater and shared
// dispersions (four fits and their leave-one-out scores), beside
// BenchmarkFit's single beta fit on the same data: the ratio of the two is
// the choice's cost.
func BenchmarkChoice(b *testing.B) {
	for _, n := range []int{30, 100} {
		d := benchData(n)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Fit(context.Background(), d, Options{Likelihood: Auto, Dispersions: Auto, Priors: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
