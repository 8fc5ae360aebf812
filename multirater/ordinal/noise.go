package ordinal

import (
	"math"

	"concord/multirater/infer"
	"concord/multirater/lik"
)

// noiseModel are the rater likelihoods of one noise model and the owners
// of their learnt parameters (infer.Problem's Liks and Owner).
type noiseModel struct {
	mode string
	// liks[l] is rater l's likelihood (detResult's view of it), site[l]
	// the likelihood of rater l's sites: liks[l] itself, or under
	// SharedThresholds a view that routes its gradient into the shared owner.
	liks []*lik.OrdinalProbit
	site []lik.Likelihood
	// owners are the owners' likelihoods.
	owners []lik.LaplaceLearnable
}

// newNoiseModel returns the likelihoods of nl raters on nk levels under
// mode (PerRater, SharedThresholds or Shared).
func newNoiseModel(mode string, nl, nk int) *noiseModel {
	nm := &noiseModel{mode: mode, liks: make([]*lik.OrdinalProbit, nl), site: make([]lik.Likelihood, nl)}
	switch mode {
	case Shared:
		o := &lik.OrdinalProbit{B: make([]float64, nk-1), Sigma: 1}
		for l := range nm.liks {
			nm.liks[l], nm.site[l] = o, o
		}
		nm.owners = []lik.LaplaceLearnable{o}
	case SharedThresholds:
		t := &tiedCuts{b: make([]float64, nk-1), views: nm.liks}
		for l := range nm.liks {
			nm.liks[l] = &lik.OrdinalProbit{B: t.b, Sigma: 1}
			nm.site[l] = &tiedSite{t: t, l: l, buf: make([]float64, 3*nk)}
		}
		nm.owners = []lik.LaplaceLearnable{t}
	default:
		nm.owners = make([]lik.LaplaceLearnable, nl)
		for l := range nm.liks {
			nm.liks[l] = &lik.OrdinalProbit{B: make([]float64, nk-1), Sigma: 1}
			nm.site[l], nm.owners[l] = nm.liks[l], nm.liks[l]
		}
	}
	return nm
}

// owner returns the index of rater l's owner.
func (nm *noiseModel) owner(l int) int {
	if len(nm.owners) == 1 {
		return 0
	}
	return l
}

// startTo sets dst (every owner's parameters) to thresholds b and noise
// sd sigma for every rater.
func (nm *noiseModel) startTo(dst, b []float64, sigma float64) {
	o := lik.OrdinalProbit{B: b, Sigma: sigma}
	p := o.ParamsTo(make([]float64, len(b)+1))
	if nm.mode == SharedThresholds {
		copy(dst, p[:len(b)])
		for l := range nm.liks {
			dst[len(b)+l] = p[len(b)]
		}
		return
	}
	for l := range nm.owners {
		copy(dst[l*len(p):], p)
	}
}

// logPrior is owner l's log prior (raterLogPrior; under SharedThresholds the
// shared thresholds' once and every rater's precision's) and adds its
// gradient to grad when not nil.
func (nm *noiseModel) logPrior(l int, opts DetOptions, grad []float64) float64 {
	if nm.mode != SharedThresholds {
		return raterLogPrior(nm.owners[l].(*lik.OrdinalProbit), opts, grad)
	}
	t := nm.owners[0].(*tiedCuts)
	nb := len(t.b)
	var gb []float64
	if grad != nil {
		gb = grad[:nb]
	}
	val := thresholdLogPrior(t.b, opts, gb)
	for r, o := range t.views {
		var gs *float64
		if grad != nil {
			gs = &grad[nb+r]
		}
		val += sigmaLogPrior(o.Sigma, opts, gs)
	}
	return val
}

// tiedCuts owns the parameters of the SharedThresholds model: one set of
// thresholds for every rater and each rater's noise sd, (b_0, ln Delta_1,
// ..., ln Delta_{K-2}, ln sigma_0, ..., ln sigma_{L-1}); views[l] is rater
// l's OrdinalProbit, whose B is b. Its own likelihood methods are rater
// 0's; the sites use tiedSite.
type tiedCuts struct {
	b     []float64
	views []*lik.OrdinalProbit
}

func (t *tiedCuts) LogLik(y, f float64) (lp, d1, d2, d3 float64) { return t.views[0].LogLik(y, f) }
func (t *tiedCuts) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	return t.views[0].Tilted(y, mu, s2)
}

// NumParams is K - 1 thresholds and one sd per rater.
func (t *tiedCuts) NumParams() int { return len(t.b) + len(t.views) }

// ParamsTo sets dst to the thresholds in Chu's parametrisation and each
// rater's ln sigma.
func (t *tiedCuts) ParamsTo(dst []float64) []float64 {
	nb := len(t.b)
	dst[0] = t.b[0]
	for k := 1; k < nb; k++ {
		dst[k] = math.Log(t.b[k] - t.b[k-1])
	}
	for l, o := range t.views {
		dst[nb+l] = math.Log(o.Sigma)
	}
	return dst
}

// SetParams sets the thresholds and every rater's sd.
func (t *tiedCuts) SetParams(p []float64) {
	nb := len(t.b)
	t.b[0] = p[0]
	for k := 1; k < nb; k++ {
		t.b[k] = t.b[k-1] + math.Exp(p[k])
	}
	for l, o := range t.views {
		o.Sigma = math.Exp(p[nb+l])
	}
}

func (t *tiedCuts) TiltedGradTo(dst []float64, y, mu, s2 float64) []float64 {
	return (&tiedSite{t: t, buf: make([]float64, 3*(len(t.b)+1))}).TiltedGradTo(dst, y, mu, s2)
}

func (t *tiedCuts) LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64) {
	(&tiedSite{t: t, buf: make([]float64, 3*(len(t.b)+1))}).LogLikGradTo(dlp, dd1, dd2, y, f)
}

// tiedSite is rater l's likelihood under SharedThresholds: its OrdinalProbit,
// with gradients in the owner's parameters (the thresholds' and l's ln
// sigma; zero elsewhere). buf is scratch (the engines ask for gradients
// one site at a time).
type tiedSite struct {
	t   *tiedCuts
	l   int
	buf []float64
}

func (s *tiedSite) LogLik(y, f float64) (lp, d1, d2, d3 float64) { return s.t.views[s.l].LogLik(y, f) }
func (s *tiedSite) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) {
	return s.t.views[s.l].Tilted(y, mu, s2)
}
func (s *tiedSite) NumParams() int                   { return s.t.NumParams() }
func (s *tiedSite) ParamsTo(dst []float64) []float64 { return s.t.ParamsTo(dst) }
func (s *tiedSite) SetParams(p []float64)            { s.t.SetParams(p) }

// spread sets dst to the rater's gradient g (K - 1 thresholds, ln sigma)
// in the owner's parameters.
func (s *tiedSite) spread(dst, g []float64) {
	nb := len(s.t.b)
	for i := range dst {
		dst[i] = 0
	}
	copy(dst, g[:nb])
	dst[nb+s.l] = g[nb]
}

func (s *tiedSite) TiltedGradTo(dst []float64, y, mu, s2 float64) []float64 {
	np := len(s.t.b) + 1
	g := s.t.views[s.l].TiltedGradTo(s.buf[:np], y, mu, s2)
	s.spread(dst, g)
	return dst
}

func (s *tiedSite) LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64) {
	np := len(s.t.b) + 1
	a, b, c := s.buf[:np], s.buf[np:2*np], s.buf[2*np:3*np]
	s.t.views[s.l].LogLikGradTo(a, b, c, y, f)
	s.spread(dlp, a)
	s.spread(dd1, b)
	s.spread(dd2, c)
}

// lnZeroWidth is ln Delta of a level fixed at width 0 (emptyWidths):
// Delta = e^-9, about 1.2e-4, where L-BFGS's approach to 0 used to stop
// (ASAP set 8's rater: the empty levels' widths below 5e-4 after about 100
// iterations a start), small enough that the ratings at the level above
// lose about Delta phi/sigma each of their log probability (the evidence
// is within 0.01 nats of its supremum there), and wide enough that EP can
// still condition on a rating at the level (the evidence-ratio predictor
// rates every level: at e^-30 its EP runs did not converge).
const lnZeroWidth = -9

// emptyWidths reports, per owner of nm's parameters, which of its
// threshold parameters (Chu's: b_1, ln Delta_2, ...) are the widths of
// interior levels that none of the owner's ratings (prob's sites) use, when
// on (learnt thresholds without priors). Only the ratings at the levels
// either side of such a level depend on where its thresholds lie, and
// they gain from the level's width going to 0 (the rating above it has
// probability Phi((b_{k+1} - f)/sigma) - Phi((b_k - f)/sigma), largest
// at b_k = b_{k-1}): the evidence is maximised at width 0, which an
// optimiser approaches along a flat direction without reaching it
// (on ASAP set 8's rater, 5 empty levels of 26, L-BFGS took about 100
// iterations a start), and which leaves the curvature there singular.
// Such a width is fixed at lnZeroWidth instead of learnt.
func emptyWidths(prob *infer.Problem, nm *noiseModel, nk int, on bool) [][]bool {
	out := make([][]bool, len(nm.owners))
	for l := range out {
		out[l] = make([]bool, nk-1)
	}
	if !on || nk < 3 {
		return out
	}
	used := make([][]bool, len(nm.owners))
	for l := range used {
		used[l] = make([]bool, nk)
	}
	for j, s := range prob.Sites {
		used[prob.Owner[j]][int(s.Y)] = true
	}
	for l, u := range used {
		lo, hi := -1, -1
		for k, x := range u {
			if x {
				if lo < 0 {
					lo = k
				}
				hi = k
			}
		}
		// Level k (0 < k < nk-1) lies between b_{k-1} and b_k; its width
		// is parameter k.
		for k := lo + 1; k < hi; k++ {
			out[l][k] = !u[k]
		}
	}
	return out
}
