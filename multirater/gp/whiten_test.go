package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/kernel"
)

// TestWhitenTo: the whitened coordinates g of a new item extend each kind
// of factor to the N+1 items: G g reproduces the new item's covariances k
// and |g|^2 + resid its prior variance (exact factors: resid = kss -
// k'C^-1 k; a low-rank pivoted factor: the Nyström extension, exact on its
// pivots).
func TestWhitenTo(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(7, 8))
	x := normalInputs(rng, n+1, 2)
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
