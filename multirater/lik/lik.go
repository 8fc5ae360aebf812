// Package lik holds the likelihoods of one site, p(y | f) for a scalar latent
// value f (an item's latent consensus, or a'f for a pair site), answering
// whatever an inference engine asks, as GPML's lik functions and GPflow's
// likelihoods do: log p and its derivatives in f for Laplace's method
// (LogLik), or the log normaliser of the tilted distribution
// p(y | f) N(f | mu, s2) and its derivatives in mu for expectation
// propagation (Tilted). In concord one site is one rating, and the site's
// likelihood belongs to the rater who gave it (thresholds and noise for
// ordinal ratings; later a labelling-error rate, a dispersion, a confusion
// row).
//
// Likelihoods with parameters to learn also implement Learnable: their
// parameters in an unconstrained parametrisation and the gradient of the
// tilted log normaliser with respect to them (what EP's evidence gradient
// needs).
package lik

// Likelihood is the likelihood of one site.
type Likelihood interface {
	// LogLik returns log p(y | f) and its first three derivatives in f.
	LogLik(y, f float64) (lp, d1, d2, d3 float64)
	// Tilted returns log Z = log ∫ p(y | f) N(f | mu, s2) df and its first
	// two derivatives in mu. s2 >= 0.
	Tilted(y, mu, s2 float64) (logZ, d1, d2 float64)
}

// TiltedDeriver is a likelihood that gives Tilted's derivatives in mu
// without log Z, more cheaply than Tilted: all that an EP site update
// needs (ep.RunPairs uses it when the sites' likelihood has it).
type TiltedDeriver interface {
	TiltedDerivs(y, mu, s2 float64) (d1, d2 float64)
}

// Learnable is a likelihood with parameters learnt by evidence
// maximisation, in an unconstrained parametrisation.
type Learnable interface {
	Likelihood
	// NumParams is the number of parameters.
	NumParams() int
	// ParamsTo sets dst (length NumParams) to the parameters and returns it.
	ParamsTo(dst []float64) []float64
	// SetParams sets the parameters from p (length NumParams).
	SetParams(p []float64)
	// TiltedGradTo sets dst (length NumParams) to the gradient of Tilted's
	// log Z with respect to the parameters and returns it.
	TiltedGradTo(dst []float64, y, mu, s2 float64) []float64
}

// TiltedGrader is a Learnable likelihood that gives Tilted's log Z and
// TiltedGradTo's gradient from one computation of the tilted distribution
// (one quadrature instead of two), bit for bit the values of the two
// calls: EP's evidence search needs both at every site's cavity.
type TiltedGrader interface {
	// TiltedLogZGradTo sets dst (length NumParams) to TiltedGradTo's
	// gradient and returns Tilted's log Z.
	TiltedLogZGradTo(dst []float64, y, mu, s2 float64) float64
}

// LaplaceLearnable is a Learnable likelihood that also gives what Laplace's
// evidence gradient needs: the gradients in its parameters of log p(y | f)
// and of its first two derivatives in f.
type LaplaceLearnable interface {
	Learnable
	// LogLikGradTo sets dlp, dd1 and dd2 (each NumParams long) to the
	// gradients of LogLik's lp, d1 and d2.
	LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64)
}

// Site is one observation for an inference engine: the likelihood Lik of
// observation Y on the latent value f_Item of one item (one rating).
type Site struct {
	Item int
	Y    float64
	Lik  Likelihood
}
