package ep

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/lik"
)

// addedModel is a small ordinal GP: n items on 2 inputs (RBF), item i rated
// by rater i%2 (sigma 0.15 and 0.4) and, for every third item, also by the
// other rater; one more input for a new item.
func addedModel(n int) (c *mat.SymDense, k []float64, kss float64, sites []lik.Site, liks []*lik.OrdinalProbit) {
	rng := rand.New(rand.NewPCG(11, 12))
	x := mat.NewDense(n+1, 2, nil)
	for i := 0; i <= n; i++ {
		for j := 0; j < 2; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	var all mat.SymDense
	kernel.RBF{Gamma: 0.4}.GramTo(&all, kernel.Inputs{N: n + 1, X: x})
	c = mat.NewSymDense(n, nil)
	k = make([]float64, n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			c.SetSym(i, j, all.At(i, j))
		}
		c.SetSym(i, i, c.At(i, i)+1e-8)
		k[i] = all.At(i, n)
	}
	liks = []*lik.OrdinalProbit{{B: []float64{-0.8, 0, 0.8}, Sigma: 0.15}, {B: []float64{-1, -0.1, 0.7}, Sigma: 0.4}}
	level := func(f float64, o *lik.OrdinalProbit) float64 {
		y := 0
		for y < len(o.B) && f+o.Sigma*rng.NormFloat64() > o.B[y] {
			y++
		}
		return float64(y)
	}
	for i := 0; i < n; i++ {
		f := x.At(i, 0) - 0.5*x.At(i, 1)
		o := liks[i%2]
		sites = append(sites, lik.Site{Item: i, Y: level(f, o), Lik: o})
		if i%3 == 0 {
			o = liks[1-i%2]
			sites = append(sites, lik.Site{Item: i, Y: level(f, o), Lik: o})
		}
	}
	return c, k, all.At(n, n), sites, liks
}

// TestAddedMatchesFullEP: the block EP of NewItem and Item with every item
// in the block gives the same log Z_EP ratio as EP run afresh on the
// enlarged problem (N+1 items from an (N+1)×(N+1) covariance, or one more
// site), warm-started from the result's sites; a smaller block stays close.
func TestAddedMatchesFullEP(t *testing.T) {
	const n = 30
	c, k, kss, sites, liks := addedModel(n)
	for _, tc := range []struct {
		name string
		fac  func() *gp.Factor
	}{
		{"eigen", func() *gp.Factor { f, _ := gp.NewFactor(c); return f }},
		{"pivoted", func() *gp.Factor { f, _ := gp.NewPivotedFactor(c, 0); return f }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fac := tc.fac()
			res, err := Run(fac, sites, Options{Tol: 1e-10})
			if err != nil {
				t.Fatal(err)
			}
			g := make([]float64, fac.R)
			resid := fac.WhitenTo(g, k, kss)
			aug := mat.NewSymDense(n+1, nil)
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					aug.SetSym(i, j, c.At(i, j))
				}
				aug.SetSym(i, n, k[i])
			}
			aug.SetSym(n, n, kss)
			fa, err := gp.NewFactor(aug)
			if err != nil {
				t.Fatal(err)
			}
			for _, target := range []int{-1, 0, 7} {
				var all, small *Added
				if target < 0 {
					all = res.NewItem(g, resid, AddOptions{MaxItems: -1, MinCorr: -1, Tol: 1e-10})
					small = res.NewItem(g, resid, AddOptions{MaxItems: 5})
				} else {
					all = res.Item(target, AddOptions{MaxItems: -1, MinCorr: -1, Tol: 1e-10})
					small = res.Item(target, AddOptions{MaxItems: 5})
				}
				if small.Items() > 5 || all.Items() <= small.Items() {
					t.Fatalf("target %d: blocks of %d and %d items", target, all.Items(), small.Items())
				}
				for _, o := range liks {
					for y := 0; y <= len(o.B); y++ {
						got, _, err := all.LogZRatio(o, float64(y))
						if err != nil {
							t.Fatal(err)
						}
						// EP afresh on the enlarged problem.
						s2 := append([]lik.Site(nil), sites...)
						f2 := fac
						item := target
						if target < 0 {
							f2, item = fa, n
						}
						s2 = append(s2, lik.Site{Item: item, Y: float64(y), Lik: o})
						full, err := Run(f2, s2, Options{Tol: 1e-10, InitTau: append(append([]float64(nil), res.Tau...), 0), InitNu: append(append([]float64(nil), res.Nu...), 0)})
						if err != nil {
							t.Fatal(err)
						}
						want := full.LogZ - res.LogZ
						if math.Abs(got-want) > 1e-8 {
							t.Errorf("target %d, sigma %g, y %d: block EP ratio %.8f, EP afresh %.8f", target, o.Sigma, y, got, want)
						}
						sm, _, err := small.LogZRatio(o, float64(y))
						if err != nil {
							t.Fatal(err)
						}
						if d := math.Abs(math.Exp(sm) - math.Exp(want)); d > 2e-3 {
							t.Errorf("target %d, sigma %g, y %d: 5-item block P %.5f, all items %.5f", target, o.Sigma, y, math.Exp(sm), math.Exp(want))
						}
					}
				}
			}
		})
	}
}

// TestAddedDuplicateItem: a new item with the covariances of item i (a
// duplicate of it, up to the jitter on C's diagonal) has the predictive of
// one more observation of item i itself: NewItem and Item agree.
func TestAddedDuplicateItem(t *testing.T) {
	const n = 30
	c, _, _, sites, liks := addedModel(n)
	fac, err := gp.NewFactor(c)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(fac, sites, Options{Tol: 1e-10})
	if err != nil {
		t.Fatal(err)
	}
	g := make([]float64, fac.R)
	for _, i := range []int{0, 7, 20} {
		k := make([]float64, n)
		for j := range k {
			k[j] = c.At(j, i)
		}
		resid := fac.WhitenTo(g, k, c.At(i, i))
		dup := res.NewItem(g, resid, AddOptions{Tol: 1e-10})
		same := res.Item(i, AddOptions{Tol: 1e-10})
		if math.Abs(dup.Mean()-same.Mean()) > 1e-6 || math.Abs(dup.Var()/same.Var()-1) > 1e-4 {
			t.Errorf("item %d: duplicate N(%.8f, %.8f), item N(%.8f, %.8f)", i, dup.Mean(), dup.Var(), same.Mean(), same.Var())
		}
		for _, o := range liks {
			for y := 0; y <= len(o.B); y++ {
				a, _, err := dup.LogZRatio(o, float64(y))
				if err != nil {
					t.Fatal(err)
				}
				b, _, err := same.LogZRatio(o, float64(y))
				if err != nil {
					t.Fatal(err)
				}
				if d := math.Abs(math.Exp(a) - math.Exp(b)); d > 1e-4 {
					t.Errorf("item %d, sigma %g, y %d: duplicate P %.6f, item P %.6f", i, o.Sigma, y, math.Exp(a), math.Exp(b))
				}
			}
		}
	}
}
