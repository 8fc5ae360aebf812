package infer

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater"
)

// TestCurvatureWarpedExact: with the identity prior and one warped site
// per item, z_n = Phi^-1(y_n) is N(0, 1 + sigma^2) and both engines'
// evidence is exact, ln Z(s) = sum_n -1/2 ln v - z_n^2/(2v) + const with
// v = 1 + e^(2s), s = ln sigma; Curvature at the fitted s equals minus its
// second derivative, sum_n -2e(z^2/v^2 - 1/v) - 2e^2(1/v^2 - 2z^2/v^3)
// with e = e^(2s), to 1e-4 relative (central differences of the exact
// gradient, step 1e-3: an error of order 1e-6).
func TestCurvatureWarpedExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	const n, sigma = 300, 0.8
	ys := make([]float64, n)
	zs := make([]float64, n)
	for i := range ys {
		zs[i] = rng.NormFloat64() * math.Sqrt(1+sigma*sigma)
		ys[i] = 0.5 * math.Erfc(-zs[i]/math.Sqrt2)
	}
	for _, engine := range []string{multirater.EngineEP, multirater.EngineLaplace} {
		p, w := warpedProblem(engine, ys, 2)
		a, err := Fit(context.Background(), p, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		fitted := w.Sigma
		h, err := Curvature(context.Background(), p, a)
		if err != nil {
			t.Fatal(err)
		}
		if w.Sigma != fitted {
			t.Errorf("%s: Curvature left sigma at %v, want the fitted %v", engine, w.Sigma, fitted)
		}
		e := fitted * fitted
		v := 1 + e
		want := 0.0
		for _, z := range zs {
			want -= 2*e*(z*z/(v*v)-1/v) + 2*e*e*(1/(v*v)-2*z*z/(v*v*v))
		}
		t.Logf("%s: sigma %.4f, curvature %.6f, exact %.6f", engine, fitted, h.At(0, 0), want)
		if r, c := h.SymmetricDim(), h.At(0, 0); r != 1 || math.Abs(c-want) > 1e-4*math.Abs(want) {
			t.Errorf("%s: curvature %v (dim %d), want %v", engine, c, r, want)
		}
	}
}
