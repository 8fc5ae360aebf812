package ordinal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/kernel"
)

// BenchmarkFitDeterministic measures a whole EP fit of Chu's setting (one
// rater, 5 levels, RBF kernel with gamma 1/6 on 3 inputs) with the
// thresholds and sigma learnt by evidence maximisation from 3 starting
// points, over a ladder of sizes (the kernel's factorisation included).
func BenchmarkFitDeterministic(b *testing.B) {
	for _, n := range []int{100, 300, 1000} {
		if testing.Short() && n > 300 {
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(n), 9))
		x := mat.NewDense(n, 3, nil)
		d := &Data{Levels: []string{"1", "2", "3", "4", "5"}, RaterIDs: []string{"r"}}
		cuts := []float64{-1.5, -0.5, 0.5, 1.5}
		for i := 0; i < n; i++ {
			d.ItemIDs = append(d.ItemIDs, fmt.Sprint("i", i))
			for j := 0; j < 3; j++ {
				x.Set(i, j, rng.NormFloat64())
			}
			y := 1 - 2*x.At(i, 0) + 0.5*rng.NormFloat64()
			k := 0
			for k < 4 && y > cuts[k] {
				k++
			}
			d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: 0, Level: k})
		}
		var c mat.SymDense
		kernel.RBF{Gamma: 1.0 / 6}.GramTo(&c, kernel.Inputs{N: n, X: x})
		d.Cov = &c
		b.Run(fmt.Sprintf("N=%d/restarts=3", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := FitDeterministic(context.Background(), d, DetOptions{Restarts: 3}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
