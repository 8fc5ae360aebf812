// Package classify is the model family of multi-rater classification:
// Rogers et al.'s multi-rater classification Gaussian process (sec. 2.3,
// app. A.2, B, C), a latent function per class under the GP prior and a
// precision per rater, fitted by Gibbs sampling (mcmc), with the
// predictive class distribution of new items (eq. 18).
package classify
