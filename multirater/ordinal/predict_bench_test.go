package ordinal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/kernel"
)

// BenchmarkPredictEP measures predicting new items from an EP fit of Chu's
// setting (benchChu: RBF gamma 1/6, sigma 0.3 and thresholds fixed) over a
// ladder of training sizes N:
//
//   - prepare: NewPredictor, which for the evidence ratio also factors the
//     fitted items' covariance (pivoted, the fit's tolerance) and re-runs
//     EP on their ratings (ratio), against the Gaussian predictive alone
//     (gaussian: one Cholesky factorisation);
//   - item: the prediction of one new item (its 5 grade probabilities),
//     by the evidence ratio with the default block (64 items) and by the
//     Gaussian predictive.
//
// Measured on this project's shared 2-core machine (noisy: ranges over
// three runs), per new item, evidence ratio / Gaussian: N = 50 (rank 44)
// 1.3-2.9 ms / 0.02-0.1 ms; N = 500 (rank 174) 8-21 ms / 1.2-4 ms;
// N = 1000 (rank 223) 17-24 ms / 16-28 ms (the Gaussian predictive's
// triangular solve, O(N^2), dominates at this size). Preparing: N = 1000
// 0.17-1.2 s (pivoted factor and one EP run) / 0.12-0.24 s.
func BenchmarkPredictEP(b *testing.B) {
	const nNew = 16
	for _, n := range []int{50, 500, 1000} {
		if testing.Short() && n > 500 {
			continue
		}
		d, x := benchChu(n)
		in := kernel.Inputs{N: n, X: x}
		k := kernel.RBF{Gamma: 1.0 / 6}
		var c mat.SymDense
		k.GramTo(&c, in)
		d.Cov = &c
		res, err := FitDeterministic(context.Background(), d, DetOptions{Sigma: 0.3, Thresholds: []float64{-1.5, -0.5, 0.5, 1.5}})
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(n), 10))
		xn := mat.NewDense(nNew, 3, nil)
		for i := 0; i < nNew; i++ {
			for j := 0; j < 3; j++ {
				xn.Set(i, j, rng.NormFloat64())
			}
		}
		nw := kernel.Inputs{N: nNew, X: xn}
		var cross mat.Dense
		k.CrossTo(&cross, nw, in)
		prior := k.DiagTo(nil, nw)
		ids := make([]string, nNew)
		for i := range ids {
			ids[i] = fmt.Sprint("new", i)
		}
		for _, m := range []struct {
			name string
			opts PredictOptions
		}{{"ratio", PredictOptions{}}, {"gaussian", PredictOptions{Gaussian: true}}} {
			b.Run(fmt.Sprintf("N=%d/prepare/%s", n, m.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := NewPredictorOptions(res, &c, m.opts); err != nil {
						b.Fatal(err)
					}
				}
			})
			p, err := NewPredictorOptions(res, &c, m.opts)
			if err != nil {
				b.Fatal(err)
			}
			if m.name == "ratio" && p.gauss.ratio == nil {
				b.Fatalf("no evidence ratio: %s", p.gauss.why)
			}
			// The first prediction also computes the EP posterior's
			// whitened factor (once per predictor): outside the timing.
			p.Predict(ids[:1], cross.Slice(0, 1, 0, n), prior[:1])
			b.Run(fmt.Sprintf("N=%d/item/%s", n, m.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					j := i % nNew
					p.Predict(ids[j:j+1], cross.Slice(j, j+1, 0, n), prior[j:j+1])
				}
				if p.gauss.ratio != nil {
					b.ReportMetric(float64(p.gauss.ratio.fac.R), "rank")
				}
			})
		}
	}
}
