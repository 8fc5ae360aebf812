package auc

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"concord/multirater/lik/liktest"
)

// TestSpikeSlabSiteTilted checks the closed-form tilted normaliser of the
// spike-and-slab prior site against quadrature of
// t(x) N(x | m, v), t(x) = p + (1 - p) N(x; 0, u0)/N(x; 0, 1), and its
// derivatives against central differences.
func TestSpikeSlabSiteTilted(t *testing.T) {
	for _, tc := range []struct{ p, u0, m, v float64 }{
		{0.5, 0.01, 0.3, 0.5}, {0.2, 0.1, -1.5, 0.2}, {0.5, 1e-4, 2, 1}, {0.9, 0.3, 0, 0.05},
	} {
		s := spikeSlabSite{p: tc.p, u0: tc.u0}
		lz, _, _ := s.Tilted(0, tc.m, tc.v)
		sd := math.Sqrt(tc.v)
		integrand := func(x float64) float64 {
			lp, _, _, _ := s.LogLik(0, x)
			return math.Exp(lp-0.5*(x-tc.m)*(x-tc.m)/tc.v) / math.Sqrt(2*math.Pi*tc.v)
		}
		// The spike is narrow: integrate around 0 finely and the rest
		// coarsely.
		w := 12 * math.Sqrt(tc.u0)
		lo, hi := math.Min(tc.m-12*sd, -2*w), math.Max(tc.m+12*sd, 2*w)
		z := quad.Fixed(integrand, lo, -w, 2000, nil, 0) + quad.Fixed(integrand, -w, w, 2000, nil, 0) + quad.Fixed(integrand, w, hi, 2000, nil, 0)
		if want := math.Log(z); math.Abs(lz-want) > 1e-8 {
			t.Errorf("%+v: log Z %.10g, quadrature %.10g", tc, lz, want)
		}
		liktest.CheckTiltedDifferences(t, fmt.Sprintf("%+v", tc), s, 0, tc.m, tc.v, 1e-6, 1e-3)
	}
	// u0 = 0 (a point mass) is the limit u0 -> 0.
	a, b := spikeSlabSite{p: 0.3, u0: 0}, spikeSlabSite{p: 0.3, u0: 1e-12}
	la, da, ea := a.Tilted(0, 0.7, 0.4)
	lb, db, eb := b.Tilted(0, 0.7, 0.4)
	if math.Abs(la-lb) > 1e-9 || math.Abs(da-db) > 1e-9 || math.Abs(ea-eb) > 1e-9 {
		t.Errorf("u0 = 0: (%v, %v, %v), u0 = 1e-12: (%v, %v, %v)", la, da, ea, lb, db, eb)
	}
}

// withNoise appends k pure-noise covariates (independent of the labels) to
// x.
func withNoise(x *mat.Dense, k int, seed uint64) *mat.Dense {
	noise, _ := synthetic(x.RawMatrix().Rows, k, seed)
	n, d := x.Dims()
	out := mat.NewDense(n, d+k, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			out.Set(i, j, x.At(i, j))
		}
		for j := 0; j < k; j++ {
			out.Set(i, d+j, noise.At(i, j))
		}
	}
	return out
}

// TestSpikeSlabAgainstSMC compares the spike-and-slab EP (prior sites on
// the coefficients) with tempering SMC on the same mixture prior (spike
// variance 0.01, p = 0.5, gamma 20) on 80 synthetic items whose labels
// depend on covariates 1 and 2 and not on 3 and 4. Tolerances: inclusion
// probabilities within 0.1, means within 0.15 SMC sd plus 4 standard
// errors, log Z within 0.4 nats plus 4 standard errors (measured: EP
// -4.807, SMC -4.501 +- 0.022; EP's log Z falls below SMC's as gamma grows,
// 0.0005 nats at gamma 1, 0.08 at 5, and by 0.13 at gamma 20 for the
// Gaussian prior on the same data). The relevant
// covariates must have larger inclusion probabilities than the noise.
func TestSpikeSlabAgainstSMC(t *testing.T) {
	x0, y := synthetic(80, 2, 21)
	x := withNoise(x0, 2, 22)
	d := Data{X: x, Positive: y}
	e, s := fitEPAndSMC(t, d, Options{Prior: SpikeSlab, SpikeSlab: SpikeSlabOptions{SpikeVar: 0.01}, Gamma: 20}, 5, 0.4, 0.15)
	for k, c := range e.Coefficients {
		if sc := s.Coefficients[k]; math.Abs(c.Inclusion-sc.Inclusion) > 0.1 {
			t.Errorf("coefficient %d: EP inclusion %.3f, SMC %.3f", k, c.Inclusion, sc.Inclusion)
		}
	}
	for _, r := range []*Result{e, s} {
		c := r.Coefficients
		if !(math.Min(c[0].Inclusion, c[1].Inclusion) > math.Max(c[2].Inclusion, c[3].Inclusion)) {
			t.Errorf("%v: inclusion %.3f %.3f (relevant) vs %.3f %.3f (noise)", r.Engine, c[0].Inclusion, c[1].Inclusion, c[2].Inclusion, c[3].Inclusion)
		}
	}
}

// TestPath fits the spike-and-slab model along a decreasing spike
// variance (the regularisation path of Ridgway et al. Figure 3a) with a
// point-mass spike at the end: every fit converges and the noise
// covariates' coefficients shrink towards 0 as v0 does.
func TestPath(t *testing.T) {
	x0, y := synthetic(80, 2, 21)
	x := withNoise(x0, 2, 22)
	rs, err := Path(context.Background(), Data{X: x, Positive: y}, Options{Gamma: 20}, []float64{0.1, 0.01, 1e-4, 0})
	if err != nil {
		t.Fatal(err)
	}
	for k := 2; k < 4; k++ {
		first, last := math.Abs(rs[0].Coefficients[k].Mean), math.Abs(rs[len(rs)-1].Coefficients[k].Mean)
		if !(last < first) {
			t.Errorf("noise coefficient %d: |mean| %.4f at v0 = 0.1, %.4f at v0 = 0", k, first, last)
		}
	}
	for i, r := range rs {
		if r.Prior != SpikeSlab || r.Gamma != 20 {
			t.Errorf("fit %d: prior %v gamma %v", i, r.Prior, r.Gamma)
		}
	}
}
