// Package multirater is concord's statistics: kernels, the Gibbs samplers of
// Rogers, Girolami & Polajnar (2010) for multi-rater ordinal regression and
// classification, diagnostics (split R-hat, effective sample size,
// autocorrelation) and prediction for new items. Everything here is a pure
// function of plain Go values: no database, no HTTP, no global state; every
// sampler takes its own *rand.Rand (math/rand/v2).
package multirater
