package auc

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
	"concord/multirater/ep"
)

// fitEPAndSMC fits d with o by EP and by tempering SMC (2,000 particles,
// 4 repeats, the seed given) and fails the test unless the two log
// evidences agree within zTol nats plus 4 SMC standard errors and every
// coefficient's mean within meanTol SMC sds plus 4 standard errors.
func fitEPAndSMC(t *testing.T, d Data, o Options, seed uint64, zTol, meanTol float64) (e, s *Result) {
	t.Helper()
	e, err := Fit(context.Background(), d, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Engine, o.Seed, o.SMC = SMC, seed, SMCOptions{Particles: 2000, Repeats: 4}
	if s, err = Fit(context.Background(), d, o); err != nil {
		t.Fatal(err)
	}
	if dz := math.Abs(e.LogEvidence - s.LogEvidence); dz > zTol+4*s.LogEvidenceSE {
		t.Errorf("log Z_EP %.4f, SMC %.4f +- %.4f", e.LogEvidence, s.LogEvidence, s.LogEvidenceSE)
	}
	for k, c := range e.Coefficients {
		sc := s.Coefficients[k]
		if dm := math.Abs(c.Mean - sc.Mean); dm > meanTol*sc.SD+4*s.SMC.MeanSE[k] {
			t.Errorf("coefficient %d: EP mean %.4f, SMC %.4f +- %.4f (sd %.4f)", k, c.Mean, sc.Mean, s.SMC.MeanSE[k], sc.SD)
		}
	}
	return e, s
}

// readPima reads testdata/pima_tr.csv or pima_te.csv (MASS's Pima.tr and
// Pima.te, written by testdata/pima.R): 7 covariates and the class (Yes is
// positive).
func readPima(tb testing.TB, name string) (*mat.Dense, []bool, []string) {
	tb.Helper()
	x, y, names, err := testutil.Classified(testutil.ReadCSV(tb, "testdata/"+name), "Yes")
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return x, y, names
}

// synthetic returns n items with d standard normal covariates and labels
// from a noisy linear rule on the first two.
func synthetic(n, d int, seed uint64) (*mat.Dense, []bool) {
	rng := rand.New(rand.NewPCG(seed, 3))
	data := labelled(rng, n, d, func(x []float64) bool { return x[0]+0.6*x[1]+0.8*rng.NormFloat64() > 0.3 })
	return data.X, data.Positive
}

// labelled draws n items of d standard normal covariates from rng, item
// by item, each labelled by label(its covariates) right after its draws
// (so that label may draw from rng too).
func labelled(rng *rand.Rand, n, d int, label func(x []float64) bool) Data {
	x := mat.NewDense(n, d, nil)
	y := make([]bool, n)
	for i := range y {
		row := x.RawRowView(i)
		for k := range row {
			row[k] = rng.NormFloat64()
		}
		y[i] = label(row)
	}
	return Data{X: x, Positive: y}
}

// epTight converges EP far below the tolerances of the invariance tests.
var epTight = ep.PairOptions{Tol: 1e-10, MaxSweeps: 2000}
