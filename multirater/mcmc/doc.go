// Package mcmc is the MCMC engine of the model families: parallel chains,
// each with its own seeded generator, with progress and cancellation (Run,
// Fit), the options every MCMC family shares (Common), slice sampling, the
// summaries of the rater precisions, traces and autocorrelation, the
// convergence verdict (split R-hat and ESS, package diag) and move
// statistics.
package mcmc
