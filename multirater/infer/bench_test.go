package infer

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater"
	"concord/multirater/lik"
)

// BenchmarkFit measures a whole evidence maximisation (the warped-noise
// problem of TestFitLearnsWarpedNoise: identity prior, one site per item,
// one learnt parameter, two restarts) with each engine.
func BenchmarkFit(b *testing.B) {
	const n = 400
	rng := rand.New(rand.NewPCG(3, 4))
	ys := make([]float64, n)
	for i := range ys {
		ys[i] = 0.5 * math.Erfc(-rng.NormFloat64()*1.3/math.Sqrt2)
	}
	for _, engine := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		b.Run(engine, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				w := &lik.Warped{Sigma: 3}
				p := &Problem{Engine: engine, N: n, Liks: []lik.LaplaceLearnable{w}, Restarts: 2,
					Start:     func(s int, rng *rand.Rand, dst []float64) { dst[0] = math.Log(3) + 0.3*float64(s)*rng.NormFloat64() },
					FactorTol: func() float64 { return 1e-2 }}
				for j, y := range ys {
					p.Sites = append(p.Sites, lik.Site{Item: j, Y: y, Lik: w})
					p.Owner = append(p.Owner, 0)
				}
				if _, err := Fit(context.Background(), p, rand.New(rand.NewPCG(1, 2))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
