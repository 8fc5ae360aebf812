package auc

import (
	"testing"

	"concord/multirater/lik/liktest"
)

// TestSpikeSlabSiteConforms: the spike-and-slab prior site (a likelihood
// of one whitened coefficient) in the likelihood conformance kit. Its
// LogLik gives no third derivative.
func TestSpikeSlabSiteConforms(t *testing.T) {
	liktest.Check(t, liktest.Case{Name: "spikeSlabSite", Lik: spikeSlabSite{p: 0.3, u0: 0.05}, Ys: []float64{0},
		Fs: []float64{-0.8, 0.05, 0.4}, NoD3: true,
		Cavities: []liktest.Cavity{{Mu: 0, S2: 0.3}, {Mu: -1.2, S2: 1}, {Mu: 0.7, S2: 4}}})
}
