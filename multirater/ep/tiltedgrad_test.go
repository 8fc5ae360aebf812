package ep

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/kernel"
	"concord/multirater/lik"
)

// TestTiltedGrads: with Options.TiltedGrads the run keeps each beta
// site's tilted gradient at its final cavity, bit for bit TiltedGradTo's
// there, and log Z_EP is bit for bit the run's without it; a site whose
// likelihood is no lik.TiltedGrader (the normal one) keeps none, and a run
// without the option keeps none. Cases: an RBF prior (dense factor) and
// the identity (diagonal), 40 items, beta and normal raters.
func TestTiltedGrads(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(3, 5))
	x := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		x.Set(i, 0, rng.NormFloat64())
	}
	var rbf mat.SymDense
	kernel.RBF{Gamma: 0.5}.GramTo(&rbf, kernel.Inputs{N: n, X: x})
	raters := []lik.Likelihood{&lik.Beta{Nu: 8}, &lik.Beta{Nu: 20}, &lik.Normal{Sigma: 0.2}}
	var sites []lik.Site
	for i := 0; i < n; i++ {
		for l, o := range raters {
			y := 0.5 * math.Erfc(-(x.At(i, 0)+0.3*rng.NormFloat64())/math.Sqrt2)
			y = math.Min(0.99, math.Max(0.01, y))
			if l == 2 && i%3 == 0 {
				continue
			}
			sites = append(sites, lik.Site{Item: i, Y: y, Lik: o})
		}
	}
	for _, c := range []struct {
		name string
		cov  mat.Symmetric
	}{{"rbf", &rbf}, {"identity", nil}} {
		t.Run(c.name, func(t *testing.T) {
			fac := factorOf(t, n, c.cov)
			plain, err := Run(fac, sites, Options{NegativeSites: true})
			if err != nil {
				t.Fatal(err)
			}
			kept, err := Run(fac, sites, Options{NegativeSites: true, TiltedGrads: true})
			if err != nil {
				t.Fatal(err)
			}
			if kept.LogZ != plain.LogZ {
				t.Errorf("log Z_EP %.17g with the gradients kept, %.17g without", kept.LogZ, plain.LogZ)
			}
			for j, s := range sites {
				if plain.TiltedGrad(j) != nil {
					t.Fatalf("site %d: a gradient kept without TiltedGrads", j)
				}
				g := kept.TiltedGrad(j)
				if _, ok := s.Lik.(lik.TiltedGrader); !ok {
					if g != nil {
						t.Errorf("site %d (%T): a gradient kept for a likelihood that is no TiltedGrader", j, s.Lik)
					}
					continue
				}
				want := s.Lik.(lik.Learnable).TiltedGradTo(make([]float64, 1), s.Y, kept.CavMean[j], kept.CavVar[j])
				if len(g) != 1 || g[0] != want[0] {
					t.Errorf("site %d: kept gradient %v, TiltedGradTo at the cavity %v", j, g, want)
				}
			}
		})
	}
}
