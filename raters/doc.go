// Package raters holds the rater analytics that are not one model: agreement
// coefficients (Krippendorff's alpha, Fleiss' and Cohen's kappa, Scott's pi,
// Gwet's AC1/AC2, intraclass correlations, ...) with confidence intervals,
// baseline aggregators (majority vote, mean and median, Dawid-Skene) and
// per-rater profiles. It works on plain Go values and imports nothing of
// concord's but, if ever needed, multirater's numeric helpers.
package raters
