package robust

import "concord/multirater"

// Settings are the robust family's whole input (its engine is ep),
// declared once (see multirater.Fields). The zero value means the
// defaults.
type Settings struct {
	multirater.OutputSettings
	// Sigma is the latent noise sd (the prior sd of the latent is 1).
	Sigma float64 `json:"sigma,omitempty" range:"[1e-3,1e3]" zero:"learnt" doc:"fix every rater's latent noise sd (default: learnt)"`
	multirater.EvidenceSettings
	// Epsilon, when given, fixes every rater's labelling-error rate (0 is
	// a value: the plain classifier); nil: learnt by EM.
	Epsilon *float64 `json:"epsilon,omitempty" range:"[0,0.5)" enum:"learn" what:"a labelling-error rate" note:"0 is the plain classifier; leave it out to learn each rater's by EM" doc:"a labelling-error rate in [0, 0.5) fixed for every rater (0: the plain probit classifier; default: every rater's learnt by EM)"`
	Select  bool     `json:"select,omitempty" doc:"fit the plain and the robust classifier and keep the one with the larger evidence (Kim & Ghahramani eq. 21)"`
	EM      string   `json:"em,omitempty" enum:"tilted,paper" default:"tilted" doc:"M-step of the error rates, tilted (default: the label's error responsibility, a stationary point of the EP evidence) or paper (Kim & Ghahramani eq. 20 as printed)"`
}

// WithDefaults returns s with zero fields set to the family's defaults.
func (s Settings) WithDefaults() Settings { return multirater.WithDefaults(s) }

// Validate checks every setting against its declaration, then that select
// comes without a fixed epsilon, and returns a *multirater.FieldError for
// the first that fails.
func (s Settings) Validate() error {
	return multirater.CheckSettings(s, multirater.Rule{Broken: s.Select && s.Epsilon != nil,
		FieldError: multirater.FieldError{Field: "epsilon", Value: "given with select", Want: "epsilon left out: select compares the plain model with the robust one whose error rates are learnt"}})
}
