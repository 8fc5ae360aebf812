package bounded

import (
	"math"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/lik"
)

// gl64X, gl64W are the 64-node Gauss-Legendre rule on [0, 1] of the
// predictive second moment.
var gl64X, gl64W = func() ([]float64, []float64) {
	x, w := make([]float64, 64), make([]float64, 64)
	quad.Legendre{}.FixedLocations(x, w, 0, 1)
	return x, w
}()

// Predictor predicts new items from a bounded fit: the latent predictive
// N(mu, s^2) of gp.SitePredictor (Chu & Ghahramani eq. 16-17, Jensen et al.
// sec. 4.3) and the consensus value, the predictive distribution of a new
// rating by a rater with the fit's median dispersion and no bias (E[y*] =
// Phi(mu/sqrt(1 + s^2)) for the beta likelihood, by quadrature otherwise).
type Predictor struct {
	res    *multirater.FitResult
	n      int
	sp     *gp.SitePredictor
	cons   lik.Bounded
	lo, hi float64
}

// NewPredictor prepares the predictions of a bounded fit result whose
// items have the covariance cov.
func NewPredictor(res *multirater.FitResult, cov mat.Symmetric) (*Predictor, error) {
	if err := multirater.CheckPredictable(res, "a", Name, cov); err != nil {
		return nil, err
	}
	n := len(res.Items)
	if res.Gaussian == nil || res.Model.Lo == nil || res.Model.Hi == nil || !(*res.Model.Lo < *res.Model.Hi) {
		return nil, multirater.DataErrorf("the bounded fit result has no gaussian posterior or no rating scale")
	}
	name, err := ParseLikelihood(res.Model.Likelihood)
	if err != nil {
		return nil, multirater.DataErrorf("the fit result's %v", err)
	}
	liks := make([]lik.Bounded, len(res.Raters))
	for l, r := range res.Raters {
		if r.Dispersion == nil || !(r.Dispersion.Mean > 0) || math.IsInf(r.Dispersion.Mean, 0) {
			return nil, multirater.DataErrorf("rater %q has no valid dispersion in the fit result", r.ID)
		}
		liks[l] = newLik(name, r.Dispersion.Mean)
	}
	if len(liks) == 0 {
		return nil, multirater.DataErrorf("the fit result has no raters")
	}
	sp, err := gp.NewSitePredictor(res.Gaussian.Precision, res.Gaussian.Shift, cov)
	if err != nil {
		return nil, multirater.DataErrorf("the fit's gaussian posterior: %v", err)
	}
	return &Predictor{res: res, n: n, sp: sp, cons: consensusLik(name, liks), lo: *res.Model.Lo, hi: *res.Model.Hi}, nil
}

// Predict returns the results of new items: ids names them, cross holds
// their covariances with the fit's items (len(ids)×N) and prior their prior
// variances. Each result has NLabels 0, the latent score and the consensus
// value; Rank is nil.
func (p *Predictor) Predict(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult {
	r, c := cross.Dims()
	if r != len(ids) || c != p.n || len(prior) != len(ids) {
		panic("bounded: Predict: cross must be len(ids)×N and prior of length len(ids)")
	}
	out := make([]multirater.ItemResult, len(ids))
	kv := make([]float64, p.n)
	for i, id := range ids {
		mat.Row(kv, i, cross)
		mu, vr := p.sp.Latent(kv, prior[i])
		sd := math.Sqrt(vr)
		out[i] = multirater.ItemResult{ID: id,
			Score: multirater.NormalEstimate(mu, sd),
			Value: valueEstimate(p.cons, mu, vr, p.lo, p.hi)}
	}
	return out
}

// Latent returns the latent predictive mean and variance of a new item
// with covariances k (length N) with the fit's items and prior variance
// prior. Not for concurrent use.
func (p *Predictor) Latent(k []float64, prior float64) (mu, vr float64) {
	return p.sp.Latent(k, prior)
}

// LogDensity returns the log predictive density, on the rating scale, of a
// new rating v strictly inside (Lo, Hi) of an item with latent predictive
// N(mu, vr), by a rater with the fit's median dispersion and no bias:
// log ∫ p(y | f) N(f | mu, vr) df - log(Hi - Lo), y = (v - Lo)/(Hi - Lo).
func (p *Predictor) LogDensity(v, mu, vr float64) float64 {
	y := (v - p.lo) / (p.hi - p.lo)
	if !(y > 0 && y < 1) {
		panic("bounded: LogDensity: value not strictly inside the scale")
	}
	lz, _, _ := p.cons.Tilted(y, mu, vr)
	return lz - math.Log(p.hi-p.lo)
}

// ConsensusLogDensity returns the log predictive density, on the rating
// scale, of a rating v strictly inside (Lo, Hi) of an item whose latent
// predictive is N(mu, vr), under a bounded fit's consensus rater (the
// median dispersion, no bias): Predictor.LogDensity without the prior's
// factorisation, for held-out ratings.
func ConsensusLogDensity(res *multirater.FitResult, v, mu, vr float64) (float64, error) {
	if res == nil || res.Model.Model != Name || res.Model.Lo == nil || res.Model.Hi == nil {
		return 0, multirater.DataErrorf("needs a bounded fit result")
	}
	name, err := ParseLikelihood(res.Model.Likelihood)
	if err != nil {
		return 0, multirater.DataErrorf("the fit result's %v", err)
	}
	liks := make([]lik.Bounded, len(res.Raters))
	for l, r := range res.Raters {
		if r.Dispersion == nil || !(r.Dispersion.Mean > 0) {
			return 0, multirater.DataErrorf("rater %q has no valid dispersion in the fit result", r.ID)
		}
		liks[l] = newLik(name, r.Dispersion.Mean)
	}
	if len(liks) == 0 {
		return 0, multirater.DataErrorf("the fit result has no raters")
	}
	p := &Predictor{cons: consensusLik(name, liks), lo: *res.Model.Lo, hi: *res.Model.Hi}
	return p.LogDensity(v, mu, vr), nil
}
