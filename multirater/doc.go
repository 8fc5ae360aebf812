// Package multirater is the vocabulary of concord's statistics: the rating
// (Rating), identifiability, progress reports, typed data errors
// (DataError) and the concord.fit/v1 document every model writes
// (FitResult, with its engine and output shape). It holds no algorithm and
// imports nothing of concord.
//
// The models live in sub-packages, a fit being prior x likelihood x engine
// (docs/architecture.md): numeric, diag and kernel (leaves), gp (the
// Gaussian-process prior and its linear algebra), design (the rating design),
// mcmc (the chain runner and MCMC summaries), and the model families ordinal
// and classify. Everything is a pure function of plain Go values: no
// database, no HTTP, no global state; every sampler takes its own *rand.Rand
// (math/rand/v2).
package multirater
