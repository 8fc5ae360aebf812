package confusion

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/mcmc"
)

// Predictor predicts new items from a confusion fit. With the identity
// kernel a new item shares nothing with the fitted ones: its class
// distribution is the posterior mean of the class proportions,
// E[rho_k] (FitResult.ClassProportions).
type Predictor struct {
	levels []string
	probs  []float64
}

// NewPredictor prepares the predictions of a confusion fit result; cov,
// the covariance of its items, is not read (identity kernel) beyond its
// size.
func NewPredictor(res *multirater.FitResult, cov mat.Symmetric) (*Predictor, error) {
	if err := multirater.CheckPredictable(res, "a", Name, cov); err != nil {
		return nil, err
	}
	if len(res.ClassProportions) != len(res.Levels) || len(res.Levels) < 2 {
		return nil, multirater.DataErrorf("the confusion fit result has no class proportions")
	}
	p := &Predictor{levels: res.Levels, probs: make([]float64, len(res.Levels))}
	sum := 0.0
	for c, e := range res.ClassProportions {
		if !(e.Mean >= 0) {
			return nil, multirater.DataErrorf("the confusion fit result has invalid class proportions")
		}
		p.probs[c] = e.Mean
		sum += e.Mean
	}
	if !(sum > 0) {
		return nil, multirater.DataErrorf("the confusion fit result has invalid class proportions")
	}
	for c := range p.probs {
		p.probs[c] /= sum
	}
	return p, nil
}

// Predict returns the results of new items (cross and prior are not read:
// the identity kernel relates no new item to the fitted ones): each has
// NLabels 0, the class proportions as its class distribution, the most
// probable class and its entropy in bits.
func (p *Predictor) Predict(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult {
	out := make([]multirater.ItemResult, len(ids))
	best := 0
	var h float64
	for c, x := range p.probs {
		if x > p.probs[best] {
			best = c
		}
		if x > 0 {
			h -= x * math.Log2(x)
		}
	}
	for i, id := range ids {
		it := multirater.ItemResult{ID: id, ClassProbs: make(map[string]float64, len(p.levels)), Class: p.levels[best]}
		for c, x := range p.probs {
			it.ClassProbs[p.levels[c]] = mcmc.Round6(x)
		}
		e := mcmc.Round6(h)
		it.Entropy = &e
		out[i] = it
	}
	return out
}
