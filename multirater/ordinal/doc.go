// Package ordinal is the model family of multi-rater ordinal ratings:
// Rogers et al.'s multi-rater ordinal Gaussian process (sec. 2.1-2.2, app.
// A.1), a latent consensus score per item under the GP prior and, for each
// rater, a precision alpha_l and thresholds b_l. Fit runs the Gibbs sampler
// (mcmc); FitDeterministic fits the same model by EP or Laplace's method
// (infer) with every rater's thresholds and noise learnt by evidence
// maximisation (Chu & Ghahramani 2005). The predictors score new items.
package ordinal
