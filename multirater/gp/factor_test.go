package gp

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"concord/internal/testutil"
	"concord/multirater/kernel"

	"gonum.org/v1/gonum/mat"
)

// TestPriorFactor checks the factorisation m = G w of the prior: G G'
// reproduces C (dense, singular and diagonal), and a matrix that is not
// positive semidefinite is an error.
func TestPriorFactor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	n := 40
	x := testutil.NormalMatrix(rng, n, 3)
	in := kernel.Inputs{N: n, X: x}
	var rbf, lin mat.SymDense
	kernel.RBF{Gamma: 0.2}.GramTo(&rbf, in)
	kernel.Linear{}.GramTo(&lin, in)
	for _, tc := range []struct {
		name     string
		c        mat.Symmetric
		rank     int
		diagonal bool
	}{
		{"rbf", &rbf, -1, false},
		{"linear, 3 covariates", &lin, 3, false},
		{"diagonal", mat.NewDiagDense(4, []float64{1, 2, 0, 3}), 4, true},
		{"diagonal held dense", mat.NewSymDense(3, []float64{2, 0, 0, 0, 0.5, 0, 0, 0, 1}), 3, true},
	} {
		f, err := NewFactor(tc.c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if f.Diag != tc.diagonal || (tc.rank >= 0 && f.R != tc.rank) {
			t.Errorf("%s: diag %v rank %d, want %v %d", tc.name, f.Diag, f.R, tc.diagonal, tc.rank)
		}
		if !mat.EqualApprox(f.covTo(), tc.c, 1e-12) {
			t.Errorf("%s: G G' differs from C", tc.name)
		}
	}
	bad := mat.NewSymDense(2, []float64{1, 2, 2, 1})
	if _, err := NewFactor(bad); err == nil || !strings.Contains(err.Error(), "positive semidefinite") {
		t.Errorf("indefinite matrix: %v", err)
	}
	for _, tc := range []struct {
		name string
		c    mat.Symmetric
		want string
	}{
		{"NaN off the diagonal", mat.NewSymDense(2, []float64{1, math.NaN(), math.NaN(), 1}), "NaN"},
		{"diagonal NaN", mat.NewDiagDense(2, []float64{1, math.NaN()}), "NaN"},
		{"diagonal infinity", mat.NewDiagDense(2, []float64{math.Inf(1), 1}), "+Inf"},
		{"diagonal negative", mat.NewDiagDense(2, []float64{1, -1}), "positive semidefinite"},
		{"dense diagonal negative", mat.NewSymDense(2, []float64{-1, 0, 0, 1}), "positive semidefinite"},
	} {
		if _, err := NewFactor(tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

// TestGaussSampler checks the exact draw of the latent consensus (Rogers et
// al. eq. 27) on every path (diagonal, complete eigen, conjugate gradients)
// against the posterior computed densely: Sigma = (C^{-1} + D)^{-1},
// mean Sigma s. The empirical mean and covariance of 40000 draws must be
// within 5 standard errors.
func TestGaussSampler(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	n := 6
	x := mat.NewDense(n, 1, []float64{-1, -0.5, 0, 0.2, 0.9, 1.4})
	var rbf mat.SymDense
	kernel.RBF{Gamma: 0.5}.GramTo(&rbf, kernel.Inputs{N: n, X: x})
	for i := 0; i < n; i++ {
		rbf.SetSym(i, i, rbf.At(i, i)+0.05) // make C well conditioned for the dense reference
	}
	diagC := mat.NewDiagDense(n, []float64{1, 0.5, 2, 1, 1.5, 0.7})
	sum := []float64{0.5, -1, 2, 0.3, 0, 1.2}
	dEq := []float64{2.5, 2.5, 2.5, 2.5, 2.5, 2.5}
	dNe := []float64{3, 0, 1.5, 0.2, 4, 1}
	for _, tc := range []struct {
		name  string
		c     mat.Symmetric
		d     []float64
		equal bool
	}{
		{"diagonal", diagC, dNe, false},
		{"eigen complete", &rbf, dEq, true},
		{"conjugate gradients", &rbf, dNe, false},
	} {
		f, err := NewFactor(tc.c)
		if err != nil {
			t.Fatal(err)
		}
		f.PrepareCG()
		gs := NewPosterior(f)
		// Dense reference.
		var cinv mat.Dense
		cd := mat.DenseCopyOf(tc.c)
		if err := cinv.Inverse(cd); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			cinv.Set(i, i, cinv.At(i, i)+tc.d[i])
		}
		var sigma mat.Dense
		if err := sigma.Inverse(&cinv); err != nil {
			t.Fatal(err)
		}
		var mean mat.VecDense
		mean.MulVec(&sigma, mat.NewVecDense(n, sum))
		const draws = 40000
		w := make([]float64, f.R)
		m := make([]float64, n)
		acc := make([]float64, n)
		cov := mat.NewDense(n, n, nil)
		for s := 0; s < draws; s++ {
			if err := gs.Draw(rng, w, m, sum, tc.d, tc.equal); err != nil {
				t.Fatal(err)
			}
			for i := range m {
				acc[i] += m[i]
				for j := range m {
					cov.Set(i, j, cov.At(i, j)+(m[i]-mean.AtVec(i))*(m[j]-mean.AtVec(j)))
				}
			}
		}
		for i := 0; i < n; i++ {
			sd := math.Sqrt(sigma.At(i, i))
			if z := (acc[i]/draws - mean.AtVec(i)) / (sd / math.Sqrt(draws)); math.Abs(z) > 5 {
				t.Errorf("%s: mean of m[%d] %.4f, want %.4f (z = %.1f)", tc.name, i, acc[i]/draws, mean.AtVec(i), z)
			}
			for j := 0; j < n; j++ {
				got := cov.At(i, j) / draws
				want := sigma.At(i, j)
				se := math.Sqrt((sigma.At(i, i)*sigma.At(j, j) + want*want) / draws)
				if math.Abs(got-want) > 5*se {
					t.Errorf("%s: cov(m[%d], m[%d]) = %.4f, want %.4f", tc.name, i, j, got, want)
				}
			}
		}
	}
}

// TestCGStop checks the ordinal sampler's conjugate-gradient draw
// (drawTracked on a single-precision factor): its error against the exact
// solution of H w = b, in the posterior metric |e|_H = sqrt(e'He), is within
// a small factor of the target cgTolH sqrt(r), with the Jacobi and with the
// block preconditioner; and the tracked m equals G w.
func TestCGStop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	n := 300
	x := testutil.NormalMatrix(rng, n, 3)
	var c mat.SymDense
	kernel.RBF{Gamma: 0.5}.GramTo(&c, kernel.Inputs{N: n, X: x})
	f, err := NewFactor(&c)
	if err != nil {
		t.Fatal(err)
	}
	f.Single()
	f.PrepareCG()
	r := f.R
	g := mat.NewDense(n, r, f.G)
	for _, block := range []int{0, 40} {
		gs := NewPosterior(f)
		gs.TolH = CGTolH
		d := make([]float64, n)
		sum := make([]float64, n)
		w := make([]float64, r)
		m := make([]float64, n)
		for draw := 0; draw < 5; draw++ {
			for i := range d {
				d[i] = float64(rng.IntN(4)) * (0.5 + rng.Float64())
				sum[i] = d[i] * rng.NormFloat64()
			}
			// H = I + G'DG, densely.
			var gd mat.Dense
			gd.Apply(func(i, _ int, v float64) float64 { return v * d[i] }, g)
			h := mat.NewDense(r, r, nil)
			h.Mul(g.T(), &gd)
			for k := 0; k < r; k++ {
				h.Set(k, k, h.At(k, k)+1)
			}
			if block > 0 {
				inv := make([]float64, block*block)
				var hb, hbi mat.Dense
				hb.CloneFrom(h.Slice(0, block, 0, block))
				if err := hbi.Inverse(&hb); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < block; i++ {
					for j := 0; j < block; j++ {
						inv[i*block+j] = hbi.At(i, j)
					}
				}
				diag := make([]float64, r)
				for k := range diag {
					diag[k] = h.At(k, k)
				}
				gs.SetPrecBlockInv(block, inv, diag)
			}
			f.MulG(m, w)
			if err := gs.DrawTracked(rng, w, m, sum, d, false); err != nil {
				t.Fatal(err)
			}
			var exact mat.VecDense
			if err := exact.SolveVec(h, mat.NewVecDense(r, gs.RHS)); err != nil {
				t.Fatal(err)
			}
			e := mat.NewVecDense(r, nil)
			e.SubVec(mat.NewVecDense(r, w), &exact)
			errH := math.Sqrt(mat.Inner(e, h, e))
			if lim := 3 * CGTolH * math.Sqrt(float64(r)); errH > lim {
				t.Errorf("block %d, draw %d: |e|_H = %.3g, want <= %.3g", block, draw, errH, lim)
			}
			gw := make([]float64, n)
			f.MulG(gw, w)
			for i := range gw {
				if math.Abs(gw[i]-m[i]) > 1e-10*(1+math.Abs(gw[i])) {
					t.Fatalf("block %d: tracked m[%d] = %v, G w = %v", block, i, m[i], gw[i])
				}
			}
		}
	}
}

// TestGramFeatures checks the eigendecomposition of a linear kernel from its
// features (NewGramFeatures, p < n) against the dense one: the same nonzero
// eigenvalues, the prior factors G G' equal to C, and the same predictive
// quantities from either Gram.
func TestGramFeatures(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct{ n, p int }{{30, 5}, {80, 40}, {50, 49}, {40, 40}, {20, 30}} {
		x := mat.NewDense(tc.n, tc.p, nil)
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.p; j++ {
				if rng.Float64() < 0.3 {
					x.Set(i, j, rng.Float64())
				}
			}
		}
		var c mat.SymDense
		c.SymOuterK(1, x)
		dense, err := NewFactor(NewGram(&c))
		if err != nil {
			t.Fatal(err)
		}
		feat, err := NewFactor(NewGramFeatures(&c, x))
		if err != nil {
			t.Fatal(err)
		}
		if dense.R != feat.R {
			t.Errorf("n=%d p=%d: rank %d from features, %d dense", tc.n, tc.p, feat.R, dense.R)
			continue
		}
		for k := range dense.Lam {
			if math.Abs(dense.Lam[k]-feat.Lam[k]) > 1e-10*dense.Lam[0] {
				t.Errorf("n=%d p=%d: eigenvalue %d: %v from features, %v dense", tc.n, tc.p, k, feat.Lam[k], dense.Lam[k])
			}
		}
		g := mat.NewDense(tc.n, feat.R, feat.G)
		var ggt mat.Dense
		ggt.Mul(g, g.T())
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.n; j++ {
				if d := math.Abs(ggt.At(i, j) - c.At(i, j)); d > 1e-12*dense.Lam[0] {
					t.Fatalf("n=%d p=%d: (G G')[%d,%d] = %v, C = %v", tc.n, tc.p, i, j, ggt.At(i, j), c.At(i, j))
				}
			}
		}
	}
}

// TestWhitenTo: the whitened coordinates g of a new item extend each kind
// of factor to the N+1 items: G g reproduces the new item's covariances k
// and |g|^2 + resid its prior variance (exact factors: resid = kss -
// k'C^-1 k; a low-rank pivoted factor: the Nyström extension, exact on its
// pivots).
func TestWhitenTo(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(7, 8))
	x := testutil.NormalMatrix(rng, n+1, 2)
	var all mat.SymDense
	kernel.RBF{Gamma: 0.3}.GramTo(&all, kernel.Inputs{N: n + 1, X: x})
	c := mat.NewSymDense(n, nil)
	k := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			c.SetSym(i, j, all.At(i, j))
		}
		k[i] = all.At(i, n)
	}
	kss := all.At(n, n)
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		t.Fatal("C is not positive definite")
	}
	var ck mat.VecDense
	if err := ch.SolveVecTo(&ck, mat.NewVecDense(n, k)); err != nil {
		t.Fatal(err)
	}
	exactResid := kss - mat.Dot(mat.NewVecDense(n, k), &ck)
	eig, err := NewFactor(c)
	if err != nil {
		t.Fatal(err)
	}
	chf, _, err := NewCholeskyFactor(c)
	if err != nil {
		t.Fatal(err)
	}
	piv, err := NewPivotedFactor(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	low, err := NewPivotedFactor(c, 1e-2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		f     *Factor
		exact bool    // G g = k everywhere and resid = kss - k'C^-1 k
		tol   float64 // on |G g - k| and |resid - exact|
	}{
		{"eigen", eig, true, 1e-8},
		{"cholesky", chf, true, 1e-8},
		{"pivoted/exact", piv, true, 1e-6},
		{"pivoted/1e-2", low, false, 1e-8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := make([]float64, tc.f.R)
			resid := tc.f.WhitenTo(g, k, kss)
			gg := make([]float64, n)
			tc.f.MulG(gg, g)
			if tc.exact {
				for i := range k {
					if d := math.Abs(gg[i] - k[i]); d > tc.tol {
						t.Errorf("item %d: (G g)_i = %.10g, k_i = %.10g", i, gg[i], k[i])
					}
				}
				if d := math.Abs(resid - exactResid); d > tc.tol {
					t.Errorf("resid = %.10g, kss - k'C^-1 k = %.10g", resid, exactResid)
				}
				return
			}
			// Low rank: exact on the pivots, and the residual is the
			// variance the Nyström extension leaves, at least the exact one.
			for _, p := range tc.f.Pivots {
				if d := math.Abs(gg[p] - k[p]); d > tc.tol {
					t.Errorf("pivot %d: (G g)_p = %.10g, k_p = %.10g", p, gg[p], k[p])
				}
			}
			if resid < exactResid-tc.tol {
				t.Errorf("resid = %.10g below kss - k'C^-1 k = %.10g", resid, exactResid)
			}
		})
	}
	// A diagonal factor: g = k/sd.
	d := IdentityFactor(3)
	g := make([]float64, 3)
	if r := d.WhitenTo(g, []float64{0, 0.5, 0}, 1); g[1] != 0.5 || math.Abs(r-0.75) > 1e-15 {
		t.Errorf("identity factor: g = %v, resid %v; want (0, 0.5, 0), 0.75", g, r)
	}
}
