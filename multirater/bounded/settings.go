package bounded

import "concord/multirater"

// Settings are the bounded family's whole input for its engines (ep,
// laplace), declared once (see multirater.Fields). The zero value means
// the defaults.
type Settings struct {
	multirater.OutputSettings
	multirater.EvidenceSettings
	multirater.FinalSettings
	Likelihood  string `json:"likelihood,omitempty" enum:"auto,beta,truncnorm|tg|truncgauss|truncated,warped,normal|gauss|gaussian" default:"auto" doc:"auto (default: beta or normal, whichever predicts held-out ratings better), beta (mean Phi(f)), truncnorm (mode Phi(f)), warped (Phi^-1(y) Gaussian) or normal (y Gaussian around f)"`
	Dispersions string `json:"dispersions,omitempty" enum:"auto,per-rater|rater|per_rater|perrater,shared|one|common" default:"auto" doc:"auto (default: per-rater or shared, whichever predicts held-out ratings better), per-rater (each rater's dispersion learnt) or shared (one for every rater)"`
	// Dispersion is nu: a beta's a + b, a truncated or warped Gaussian's
	// precision; past 1e4 a rating's likelihood is a spike narrower than
	// the data's resolution.
	Dispersion float64 `json:"dispersion,omitempty" range:"[1e-3,1e4]" zero:"learnt" doc:"fix every rater's dispersion nu (default: learnt per rater)"`
	Bias       bool    `json:"bias,omitempty" doc:"fit an additive bias per rater on the latent scale"`
	Bounds     string  `json:"bounds,omitempty" enum:"squeeze,censor" default:"squeeze" doc:"values exactly at the scale's ends are squeezed inside by half the data's resolution (squeeze, default) or censored there (censor)"`
}

// WithDefaults returns s with zero fields set to the family's defaults.
func (s Settings) WithDefaults() Settings { return multirater.WithDefaults(s) }

// Validate checks every setting against its declaration, then that shared
// dispersions come without a bias per rater, and returns a
// *multirater.FieldError for the first that fails.
func (s Settings) Validate() error {
	d, _ := ParseDispersions(s.Dispersions)
	return multirater.CheckSettings(s, multirater.Rule{Broken: d == Shared && s.Bias,
		FieldError: multirater.FieldError{Field: "dispersions", Value: `"shared" with bias`, Want: "per-rater dispersions with a bias per rater"}})
}
