package robust

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"

	"concord/multirater/lik"
)

// TestIntegratedLogEvidenceTilted: IntegratedLogEvidence, which takes
// each label's log Phi once, equals the same quadrature with
// lik.RobustProbit.Tilted at every node (its definition, 1024 tilted
// evaluations per label) to rounding, at learnt error rates and with one
// at exactly 0.
func TestIntegratedLogEvidenceTilted(t *testing.T) {
	data := ionosphere40(t)
	opts := Options{Noise: 1, Seed: 1}.WithDefaults()
	f, err := fitModel(context.Background(), data, opts, false, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	slow := func(liks []*lik.RobustProbit) float64 {
		x := make([]float64, occamNodes)
		w := make([]float64, occamNodes)
		quad.Legendre{}.FixedLocations(x, w, 0, 1)
		total := f.a.LogZ
		lt := make([]float64, occamPanels*occamNodes)
		for l := range liks {
			g := func(eps float64) float64 {
				o := lik.RobustProbit{Eps: eps, S: liks[l].S}
				v := 0.0
				for j, lb := range data.Labels {
					if lb.Rater == l {
						mu, s2 := cavity(f.a, data, j)
						lz, _, _ := o.Tilted(lb.Y, mu, s2)
						v += lz
					}
				}
				return v
			}
			total += logOccam(g, liks[l].Eps, x, w, lt)
		}
		return total
	}
	zero := make([]*lik.RobustProbit, len(f.liks))
	for l, o := range f.liks {
		c := *o
		zero[l] = &c
	}
	zero[0].Eps = 0
	for _, liks := range [][]*lik.RobustProbit{f.liks, zero} {
		got, want := IntegratedLogEvidence(f.a, data, liks), slow(liks)
		if math.IsNaN(got) || math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("IntegratedLogEvidence %.12g, with Tilted at every node %.12g", got, want)
		}
	}
}
