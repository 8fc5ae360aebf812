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

// TestSitePredictorLowRank: a low-rank covariance (NewGramLowRank of
// pivoted columns, no N×N matrix behind it) predicts as the dense matrix of
// the FITC prior it stands for, G G' + diag(C_nn - |g_n|^2), with site
// precisions of both signs.
func TestSitePredictorLowRank(t *testing.T) {
	const n = 30
	x := make([]float64, n+1)
	for i := range x {
		x[i] = 0.37 * float64((i*7)%(n+1))
	}
	k := func(a, b float64) float64 { return math.Exp(-0.5 * (a - b) * (a - b)) }
	diag := make([]float64, n)
	for i := range diag {
		diag[i] = 1
	}
	lr, err := NewLowRankColumns(diag, func(p int, dst []float64) {
		for i := range dst {
			dst[i] = k(x[i], x[p])
		}
	}, 6, 0)
	if err != nil {
		t.Fatal(err)
	}
	dense := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := lr.At(i, j)
			if i == j {
				v = 1
			}
			dense.SetSym(i, j, v)
		}
	}
	cross := make([]float64, n)
	for j := range cross {
		cross[j] = k(x[n], x[j])
	}
	v, prec := make([]float64, n), make([]float64, n)
	for i := range v {
		v[i] = math.Sin(float64(i))
		prec[i] = 1 + math.Cos(float64(3*i))
	}
	for _, neg := range []bool{false, true} {
		if neg {
			prec[4] = -0.2
		}
		pl, err := NewSitePredictor(prec, v, NewGramLowRank(lr))
		if err != nil {
			t.Fatal(err)
		}
		pd, err := NewSitePredictor(prec, v, dense)
		if err != nil {
			t.Fatal(err)
		}
		ml, vl := pl.Latent(cross, 1)
		md, vd := pd.Latent(cross, 1)
		if math.Abs(ml-md) > 1e-12 || math.Abs(vl-vd) > 1e-12 {
			t.Errorf("negative sites %v: low-rank (%v, %v), dense (%v, %v)", neg, ml, vl, md, vd)
		}
	}
}
