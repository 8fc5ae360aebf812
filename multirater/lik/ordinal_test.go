package lik

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

var ordCases = []struct {
	o OrdinalProbit
	y float64
	f float64
}{
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.7}, 0, 0.3},
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.7}, 1, -0.2},
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.7}, 2, 1.1},
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.7}, 3, 0.4},
	{OrdinalProbit{B: []float64{0}, Sigma: 1}, 1, -2.5},          // K = 2: probit
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.3}, 3, -6}, // far in the tail
	{OrdinalProbit{B: []float64{-1, 0.5, 2}, Sigma: 0.3}, 1, 9},  // both bounds in the upper tail
}

// TestOrdinalProbitParams checks the parametrisation round trip (the
// derivatives, TiltedGradTo and LogLikGradTo included, are checked by the
// conformance kit, multirater/lik/liktest).
func TestOrdinalProbitParams(t *testing.T) {
	for i, tc := range ordCases {
		o := OrdinalProbit{B: append([]float64(nil), tc.o.B...), Sigma: tc.o.Sigma}
		o.SetParams(o.ParamsTo(make([]float64, o.NumParams())))
		for k := range o.B {
			if math.Abs(o.B[k]-tc.o.B[k]) > 1e-12 {
				t.Fatalf("case %d: round trip thresholds %v, want %v", i, o.B, tc.o.B)
			}
		}
		if math.Abs(o.Sigma-tc.o.Sigma) > 1e-12 {
			t.Fatalf("case %d: round trip sigma %v, want %v", i, o.Sigma, tc.o.Sigma)
		}
	}
}

// TestOrdinalProbitBinaryIsProbit: with K = 2 (one threshold b) the
// likelihood is probit GP classification (Rasmussen & Williams eq. 3.82 and
// 3.58 with the latent shifted by b and scaled by sigma): for y = 1,
// Z = Phi(z), z = (mu - b)/sqrt(sigma^2 + s2), d log Z / d mu = N(z)/(Phi(z) v)
// and d2 = -(z N(z)/(Phi(z) v^2) + d1^2), v = sqrt(sigma^2 + s2); y = 0 is
// the same with the sign of z flipped.
func TestOrdinalProbitBinaryIsProbit(t *testing.T) {
	o := OrdinalProbit{B: []float64{0.3}, Sigma: 0.8}
	nrm := distuv.UnitNormal
	for _, mu := range []float64{-3, -0.5, 0, 0.7, 4} {
		for _, s2 := range []float64{0, 0.5, 2} {
			for _, y := range []float64{0, 1} {
				sign := 2*y - 1
				v := math.Sqrt(o.Sigma*o.Sigma + s2)
				z := sign * (mu - o.B[0]) / v
				wantZ := math.Log(nrm.CDF(z))
				wd1 := sign * nrm.Prob(z) / (nrm.CDF(z) * v)
				wd2 := -(z*nrm.Prob(z)/(nrm.CDF(z)*v*v) + wd1*wd1)
				lz, d1, d2 := o.Tilted(y, mu, s2)
				if math.Abs(lz-wantZ) > 1e-12 || math.Abs(d1-wd1) > 1e-10 || math.Abs(d2-wd2) > 1e-10 {
					t.Errorf("y %v mu %v s2 %v: (%.12g, %.12g, %.12g), probit (%.12g, %.12g, %.12g)", y, mu, s2, lz, d1, d2, wantZ, wd1, wd2)
				}
			}
		}
	}
}
