// Package multirater is the vocabulary of concord's statistics: the rating
// (Rating), identifiability, progress reports, typed data errors
// (DataError) and the concord.fit/v1 document every model writes
// (FitResult, with its engine and output shape). It holds no algorithm and
// imports nothing of concord.
//
// The models live in sub-packages, a fit being prior x likelihood x engine
// (docs/architecture.md has the layers and the rules between them):
//
//   - leaves: numeric (truncated normals, stable normal CDF logarithms,
//     quadrature rules), diag (R-hat, ESS, autocorrelation) and kernel
//     (covariance functions and the kernel grammar);
//   - the prior, the likelihoods and the design: gp (the Gaussian-process
//     prior and its linear algebra), lik (one site's likelihood, answering
//     Laplace's and EP's questions) and design (the rating design shared by
//     the families);
//   - engines: mcmc (chains, slice sampling, summaries; mcmc/mcmctest holds
//     its test helpers), ep (expectation propagation) and laplace
//     (Laplace's method);
//   - infer, the deterministic driver: runs ep or laplace and maximises the
//     log evidence over the likelihoods' and the kernel's parameters;
//   - the model families: ordinal, classify, bounded, robust, auc and
//     confusion.
//
// Everything is a pure function of plain Go values: no database, no HTTP,
// no global state; every sampler takes its own *rand.Rand (math/rand/v2).
package multirater
