package gp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestSitePredictorNegativeSites: with site precisions of both signs (EP
// with likelihoods that are not log-concave) the predictor's latent mean and
// variance equal the Gaussian conditional computed directly from the joint
// prior of fitted and new items, Sigma = (C^-1 + S)^-1, mu = Sigma V; with
// non-negative sites both of its paths agree with it too.
func TestSitePredictorNegativeSites(t *testing.T) {
	const n = 5
	x := []float64{0, 0.7, 1.1, 2.0, 3.2, 0.4} // the last is the new item
	k := func(a, b float64) float64 { return math.Exp(-0.5 * (a - b) * (a - b)) }
	c := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			c.SetSym(i, j, k(x[i], x[j])+1e-9*b2f(i == j))
		}
	}
	cross := make([]float64, n)
	for j := range cross {
		cross[j] = k(x[n], x[j])
	}
	v := []float64{0.3, -1.2, 0.5, 2.0, -0.4}
	for _, prec := range [][]float64{{2, 0.5, 3, 1, 0}, {2, -0.3, 3, 1, 1.5}} {
		p, err := NewSitePredictor(prec, v, c)
		if err != nil {
			t.Fatal(err)
		}
		mu, vr := p.Latent(cross, 1)
		// Direct: Sigma = (C^-1 + S)^-1, mu_f = Sigma V, then the conditional
		// of the new item: mean k'C^-1 mu_f, variance
		// 1 - k'C^-1 k + k'C^-1 Sigma C^-1 k.
		var ci mat.Dense
		if err := ci.Inverse(c); err != nil {
			t.Fatal(err)
		}
		prc := mat.NewDense(n, n, nil)
		prc.Copy(&ci)
		for i := 0; i < n; i++ {
			prc.Set(i, i, prc.At(i, i)+prec[i])
		}
		var sigma mat.Dense
		if err := sigma.Inverse(prc); err != nil {
			t.Fatal(err)
		}
		var muf, a, sa mat.VecDense
		muf.MulVec(&sigma, mat.NewVecDense(n, v))
		a.MulVec(&ci, mat.NewVecDense(n, cross))
		sa.MulVec(&sigma, &a)
		wantMu := mat.Dot(&a, &muf)
		wantVr := 1 - mat.Dot(mat.NewVecDense(n, cross), &a) + mat.Dot(&a, &sa)
		if math.Abs(mu-wantMu) > 1e-6 || math.Abs(vr-wantVr) > 1e-6 {
			t.Errorf("sites %v: latent N(%v, %v), direct N(%v, %v)", prec, mu, vr, wantMu, wantVr)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
