// Package raters holds the rater analytics that are not one model: agreement
// coefficients (Krippendorff's alpha, Fleiss' and Cohen's kappa, Scott's pi,
// Gwet's AC1/AC2, intraclass correlations, ...) with confidence intervals,
// baseline aggregators (majority vote, mean and median, Dawid-Skene,
// one-coin Dawid-Skene, Wawa, GLAD, MACE, Zero-Based Skill, KOS, M-MSR,
// gold majority vote) and
// per-rater profiles. It works on plain Go values and imports nothing of
// concord's but, if ever needed, multirater's numeric helpers.
//
// # Data
//
// Every coefficient takes a Ratings table: items × raters, NaN for a missing
// rating, category indices 0..K-1 with numeric category values for
// categorical data, or real values (K = 0) for continuous data. Missing
// ratings are allowed everywhere. Items nobody rated are ignored.
//
// # Definitions and references
//
// The multi-rater chance-corrected coefficients with missing ratings follow
// Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., exactly as his
// R package irrCAC 1.4 computes them (pa.coeff.raw, fleiss.kappa.raw,
// conger.kappa.raw, gwet.ac1.raw, bp.coeff.raw, krippen.alpha.raw), weights
// included, with the same standard errors and t intervals. Items with a
// single rating count in the classification probabilities but not in the
// observed agreement. By default the categories are all K of the scheme
// (irrCAC with categ.labels); CoefOptions.ObservedCategoriesOnly gives
// irrCAC's default of the categories that occur.
//
// Krippendorff's alpha follows Krippendorff (2011), "Computing
// Krippendorff's Alpha-Reliability": the coincidence matrix, with the
// nominal, ordinal (from the pairable values' frequencies), interval and
// ratio metrics. Cohen's kappa is computed per pair on the items both rated
// (as irr, psych, statsmodels and scikit-learn do), with the Fleiss, Cohen &
// Everitt (1969) standard error. The ICCs are Shrout & Fleiss's (1979) as
// R's psych::ICC defines them, mean squares from REML variance components
// (psych's default lmer = TRUE) or, on request, from the classical ANOVA on
// complete rows; intervals are psych's F-based ones.
//
// Dawid-Skene is the EM of Dawid & Skene (1979) with class priors and one
// confusion matrix per rater (or one accuracy per rater, one-coin), started
// from the majority-vote shares and from random points. Wawa, GLAD
// (Whitehill et al. 2009) and MACE (Hovy et al. 2013) are crowd-kit's other
// standard aggregators, with its defaults; each rater's own parameter
// (Wawa's weight, GLAD's ability, MACE's competence) is RaterQuality.Skill.
//
// Zero-Based Skill, KOS, M-MSR and the gold majority vote are crowd-kit
// 1.4.1's; Dawid-Skene also takes crowd-kit's known true labels and initial
// error matrices (DSOptions). M-MSR (MMSR) holds rater-pair statistics
// only for the pairs that label an item in common, never crowd-kit's items
// × raters table or dense rater × rater matrix, and on sparse designs
// takes its signs from the covariances weighted by common items (see
// MMSR for where it differs from crowd-kit and why).
//
// # Tables and counts
//
// AnalyzeTable takes a two-rater K × K contingency table and AnalyzeCounts
// per-item category counts, with the variances of irrCAC's table and
// distribution functions (kappa2.table, ..., fleiss.kappa.dist, ...).
//
// # Tests of the coefficients
//
// Every estimate with a standard error carries z and a two-sided p-value
// against 0 and, with Options.Null, against that value: t on n - 1
// degrees of freedom as irrCAC (CIT), or normal as statsmodels and SAS
// (CINormal, which also gives normal intervals and tests Cohen's kappa on
// its standard error under independence, Estimate.SENull).
//
// The tests check every coefficient against independent implementations
// run on real data with missing ratings (irrCAC, NLTK, statsmodels,
// scikit-learn, psych/lme4, and a numpy Dawid-Skene); testdata/README.md
// lists the sources and the scripts that made the reference numbers.
//
// # Agreement tables
//
// Beside the overall coefficients, Analyze (and AgreementTables alone) give
// what annotation platforms show to act on: the matrix of pairwise Cohen's
// kappas with the items each pair shares (unweighted for nominal data,
// quadratic otherwise; up to MaxMatrixRaters raters), an observed agreement
// score per item and a row per rater. An item's score is the mean weight of
// its pairs of ratings, w(x, y) = [x = y] for nominal data (the share of
// agreeing pairs) and 1 - |x - y| / (max - min) for ordinal and interval
// data (1 - mean pairwise |difference| / the scale's range); it is not
// chance corrected, and undefined with fewer than 2 ratings. A rater's row
// has the same mean weight over the rater's (item, other rater) pairs, the
// mean of the rater's pairwise kappas and the pooled kappa: Cohen's kappa
// of the table of those pairs (the rater against everybody else), checked
// against scikit-learn's cohen_kappa_score (testdata/README.md).
//
// # Intervals
//
// Analyze gives every coefficient a percentile bootstrap interval over items
// (Options.Bootstrap replicates, seeded, reproducible) except the ICCs,
// which keep psych's F-based intervals; the analytic standard errors are
// reported beside them. Without bootstrap the intervals are the analytic
// ones.
package raters
