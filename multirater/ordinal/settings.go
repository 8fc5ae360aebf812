package ordinal

import "concord/multirater"

// Settings are the ordinal family's whole input for every engine (gibbs,
// ep, laplace), declared once (see multirater.Fields): the application's
// fit spec, command-line flags, API request, dashboard form and OpenAPI
// schema are derived from these tags. The zero value means the defaults.
type Settings struct {
	multirater.GibbsSettings `engines:"gibbs"`
	multirater.MCMCSettings  `engines:"gibbs"`
	// The precision prior is also the deterministic engines' prior on the
	// learnt rater parameters when there are several raters.
	multirater.PrecisionPrior
	SigmaB float64 `json:"sigma_b,omitempty" range:"[1e-3,1e3]" zero:"the default" default:"1" doc:"sd of the normal prior on thresholds (default 1; 10 with identifiability strong)"`
	multirater.OutputSettings
	// The latent noise sd (the prior sd of the latent is 1).
	Sigma      float64   `json:"sigma,omitempty" range:"[1e-3,1e3]" zero:"learnt" engines:"ep,laplace" doc:"fix every rater's noise sd (default: learnt)"`
	Thresholds []float64 `json:"thresholds,omitempty" len:"1,999" range:"[-1000,1000]" engines:"ep,laplace" doc:"fix every rater's thresholds, K-1 increasing numbers b1,...,b(K-1) on the latent scale (default: learnt)"`
	// Noise is the raters' noise model of the EP and Laplace fits
	// (DetOptions.Noise).
	Noise                       string `json:"noise,omitempty" enum:"auto,per-rater|rater|per_rater|perrater,shared-thresholds|thresholds|shared_thresholds,shared|one|common" default:"auto" engines:"ep,laplace" doc:"the raters' noise: auto (default: per-rater, shared-thresholds or shared, whichever has the largest log evidence less 1/2 ln(ratings) per learnt parameter), per-rater (each rater's thresholds and noise sd), shared-thresholds (one set of thresholds, each rater's noise sd) or shared (one of each for every rater)"`
	multirater.EvidenceSettings `engines:"ep,laplace"`
	multirater.FinalSettings    `engines:"ep,laplace"`
}

// WithDefaults returns s with zero fields set to the family's defaults
// (those of Options.WithDefaults: under strong identifiability lambda 0.1
// and sigma_b 10).
func (s Settings) WithDefaults() Settings {
	lambda, sigmaB := s.Lambda == 0, s.SigmaB == 0
	multirater.SetDefaults(&s)
	if s.Identifiability == multirater.Strong.String() {
		o := Options{}
		o.Identifiability = multirater.Strong
		o = o.WithDefaults()
		if lambda {
			s.Lambda = o.Lambda
		}
		if sigmaB {
			s.SigmaB = o.SigmaB
		}
	}
	return s
}

// Validate checks every setting against its declaration, then that fixed
// thresholds increase, and returns a *multirater.FieldError for the first
// that fails.
func (s Settings) Validate() error {
	increasing := true
	for i := 1; i < len(s.Thresholds); i++ {
		increasing = increasing && s.Thresholds[i] > s.Thresholds[i-1]
	}
	return multirater.CheckSettings(s, multirater.Rule{Broken: !increasing,
		FieldError: multirater.FieldError{Field: "thresholds", Value: "a list that does not increase", Want: "increasing numbers"}})
}
