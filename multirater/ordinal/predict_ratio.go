package ordinal

import (
	"cmp"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/lik"
)

// PredictOptions control NewPredictorOptions. The zero value means the
// defaults given for each field.
type PredictOptions struct {
	// Gaussian predicts an EP fit's grade distributions from its Gaussian
	// posterior alone (Chu & Ghahramani eq. 18) instead of by the EP
	// evidence ratio.
	Gaussian bool
	// Block controls the block EP of the evidence ratio (ep.AddOptions;
	// zero fields: its defaults, 64 items).
	Block ep.AddOptions
	// MaxItems is the largest number of fitted items for which the
	// evidence ratio is prepared (a pivoted factor of their covariance and
	// one EP run); 0 means 3000.
	MaxItems int
	// Budget bounds the estimated floating-point work of the evidence
	// ratios of one Predict call (ratioPredictor.work); above it the call
	// predicts from the Gaussian posterior; 0 means 2e10 (about 10 s on
	// this project's 2-core machine: 2000 new items of a fit of 1000, at
	// about 5 ms each beyond the Gaussian predictive's 20 ms,
	// BenchmarkPredictEP).
	Budget float64
}

func (o PredictOptions) withDefaults() PredictOptions {
	o.MaxItems = cmp.Or(o.MaxItems, 3000)
	o.Budget = cmp.Or(o.Budget, 2e10)
	return o
}

// ratioPredictor gives the grade distributions of new items of an EP fit
// by the EP evidence ratio (ep.Added, where the method is derived): for
// rater l,
//
//	P(y* = k | D) = Z_EP(D ∪ {y* = k}) / Z_EP(D) / sum_k' Z_EP(D ∪ {y* = k'}) / Z_EP(D),
//
// the enlarged problem's EP run on the block of the fitted items most
// correlated with the new one (the other sites frozen). Chu & Ghahramani's
// eq. 18 is the same ratio with every fitted site frozen: the tilted
// normaliser of the new site under the Gaussian predictive. The ratio
// lets the fitted sites respond to the new observation, which brings in the
// skewness of the exact predictive distribution of the new latent value;
// on Chu's Pyrimidines task with strong observations (sigma 0.1) the
// largest error of the class probabilities against Stan's NUTS falls from
// 0.0136 to 0.0034, below the 0.0125 of any Gaussian (ep_stan_test.go).
// The normalisation over k removes the part of the ratios' error common to
// the levels (their sum before it is within a few percent of 1).
//
// The fit result keeps the items' summed sites, not each rating's, so the
// EP sites are rebuilt from the ratings the result records (each item's
// Labels and the raters' thresholds and precisions) and EP is run once,
// warm-started from the summed sites split among each item's ratings, with
// the fit's pivoted factor of the covariance (factorTol).
type ratioPredictor struct {
	res   *ep.Result
	fac   *gp.Factor
	liks  []*lik.OrdinalProbit // per rater, in FitResult.Raters order
	block ep.AddOptions
	// budget bounds a Predict call's estimated work (work).
	budget float64
}

// ratioSweeps is the number of block EP sweeps per level that ratioWork
// assumes (5 to 6 on Pyrimidines and sirt k1 at tolerance 1e-6).
const ratioSweeps = 6

// work estimates the floating-point operations of the evidence ratios of
// nNew items: per item the correlations with the fitted items, O(N r),
// the block's covariance, O(b^2 r), and per rater and level the block EP,
// ratioSweeps sweeps of b rank-one updates of O(b^2).
func (p *ratioPredictor) work(nNew int) float64 {
	n, r := float64(p.fac.N), float64(p.fac.R)
	b := float64(p.fac.N + 1)
	if p.block.MaxItems >= 0 {
		b = math.Min(b, float64(p.blockItems())+1)
	}
	levels := float64(len(p.liks[0].B) + 1)
	per := 2*n*r + b*b*r + float64(len(p.liks))*levels*ratioSweeps*b*b*b
	return float64(nNew) * per
}

func (p *ratioPredictor) blockItems() int {
	if p.block.MaxItems == 0 {
		return ep.DefaultAddItems
	}
	return p.block.MaxItems
}

// newRatioPredictor prepares the evidence ratio for an EP fit; it returns
// nil and the reason when it cannot (the predictions are then Gaussian).
func newRatioPredictor(res *multirater.FitResult, cov mat.Symmetric, opts PredictOptions) (*ratioPredictor, string) {
	n := len(res.Items)
	if n > opts.MaxItems {
		return nil, fmt.Sprintf("the fit has %d items, more than the %d for which the evidence-ratio correction is prepared", n, opts.MaxItems)
	}
	rater := make(map[string]int, len(res.Raters))
	liks := make([]*lik.OrdinalProbit, len(res.Raters))
	for l, r := range res.Raters {
		rater[r.ID] = l
		o := &lik.OrdinalProbit{B: make([]float64, len(r.Thresholds)), Sigma: 1 / math.Sqrt(r.Precision.Mean)}
		for k, t := range r.Thresholds {
			o.B[k] = t.Estimate.Mean
		}
		liks[l] = o
	}
	level := make(map[string]int, len(res.Levels))
	for k, lv := range res.Levels {
		level[lv] = k
	}
	var sites []lik.Site
	perItem := make([]int, n)
	for i, it := range res.Items {
		if len(it.Labels) != it.NLabels {
			return nil, fmt.Sprintf("item %q has %d ratings and the fit result records %d of them (a rater's repeated ratings of an item keep one level)", it.ID, it.NLabels, len(it.Labels))
		}
		for _, r := range res.Raters {
			lv, ok := it.Labels[r.ID]
			if !ok {
				continue
			}
			k, ok := level[lv]
			if !ok {
				return nil, fmt.Sprintf("item %q has a rating %q that is not a level of the fit", it.ID, lv)
			}
			sites = append(sites, lik.Site{Item: i, Y: float64(k), Lik: liks[rater[r.ID]]})
			perItem[i]++
		}
	}
	// The fit's factor: exact for a diagonal covariance, else pivoted to
	// the fit's tolerance.
	var fac *gp.Factor
	var err error
	if gp.IsDiagonal(cov) {
		fac, err = gp.NewFactor(cov)
	} else {
		fac, err = gp.NewPivotedFactor(cov, factorTol(liks)/4)
	}
	if err == nil && fac.Extra != nil {
		// A low-rank covariance's factor carries its diagonal correction
		// (gp.Factor.Extra), which EP's block updates of a new item
		// (ep.Result.NewItem) do not take: pivot on C's entries instead.
		fac, err = gp.NewPivotedFactor(entries{cov}, factorTol(liks)/4)
	}
	if err != nil {
		return nil, fmt.Sprintf("the covariance of the fitted items: %v", err)
	}
	tau, nu := make([]float64, len(sites)), make([]float64, len(sites))
	for j, s := range sites {
		tau[j] = res.Gaussian.Precision[s.Item] / float64(perItem[s.Item])
		nu[j] = res.Gaussian.Shift[s.Item] / float64(perItem[s.Item])
	}
	// Parallel EP when items have many sites, as infer.Fit runs it.
	r, err := ep.Run(fac, sites, ep.Options{InitTau: tau, InitNu: nu, Parallel: len(sites) > 4*n})
	if err != nil {
		return nil, fmt.Sprintf("EP on the fitted items' ratings: %v", err)
	}
	return &ratioPredictor{res: r, fac: fac, liks: liks, block: opts.Block, budget: opts.Budget}, ""
}

// entries hides how a covariance is held (a gp.LowRank, say), so that
// gp.NewPivotedFactor pivots on its entries.
type entries struct{ mat.Symmetric }

// gradeProbs sets pr[l] to rater l's grade distribution of the new item
// with covariances k with the fitted items and prior variance kss, and
// returns the largest |sum_k ratio_k - 1| over the raters (the ratios'
// sum before normalisation). An error (block EP not converged or
// improper) leaves the item to the Gaussian predictive.
func (p *ratioPredictor) gradeProbs(pr [][]float64, g, k []float64, kss float64) (float64, error) {
	resid := p.fac.WhitenTo(g, k, kss)
	a := p.res.NewItem(g, resid, p.block)
	dev := 0.0
	for l, o := range p.liks {
		sum := 0.0
		for c := range pr[l] {
			d, _, err := a.LogZRatio(o, float64(c))
			if err != nil {
				return 0, err
			}
			pr[l][c] = math.Exp(d)
			sum += pr[l][c]
		}
		if !(sum > 0) || math.IsInf(sum, 0) {
			return 0, fmt.Errorf("the evidence ratios of rater %d sum to %v", l, sum)
		}
		for c := range pr[l] {
			pr[l][c] /= sum
		}
		dev = math.Max(dev, math.Abs(sum-1))
	}
	return dev, nil
}
