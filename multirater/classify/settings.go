package classify

import (
	"cmp"

	"concord/multirater"
)

// Settings are the classification family's whole input (its one engine is
// gibbs), declared once (see multirater.Fields). The zero value means the
// defaults.
type Settings struct {
	multirater.GibbsSettings
	multirater.MCMCSettings `defaults:"samples=2000 (1500 with a kernel),burnin=1000 (500 with a kernel)"`
	multirater.PrecisionPrior
	multirater.OutputSettings
	Precisions string `json:"precisions,omitempty" enum:"inferred,fixed,fixed-full" default:"inferred" doc:"inferred (default), fixed (all 1, the paper's appendix B representation) or fixed-full (all 1, one latent vector per label)"`
}

// WithDefaults returns s with zero fields set to the family's defaults
// (those of Options.WithDefaults: lambda 0.1 under strong identifiability
// with inferred precisions; the chain lengths of a fit without a kernel,
// which s does not name: Options.ForKernel gives those with one).
func (s Settings) WithDefaults() Settings {
	lambda := s.Lambda == 0
	multirater.SetDefaults(&s)
	d := Options{}.WithDefaults()
	s.Samples = cmp.Or(s.Samples, d.Samples)
	s.Burnin = cmp.Or(s.Burnin, d.Burnin)
	prec, err := ParsePrecisions(s.Precisions)
	if lambda && err == nil && s.Identifiability == multirater.Strong.String() {
		o := Options{Precisions: prec}
		o.Identifiability = multirater.Strong
		s.Lambda = o.WithDefaults().Lambda
	}
	return s
}

// Validate checks every setting against its declaration and returns a
// *multirater.FieldError for the first that is outside it.
func (s Settings) Validate() error { return multirater.CheckSettings(s) }
