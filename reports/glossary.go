package reports

// GlossaryEntry explains one number of the reports: what it is and how to
// read it. Key names it for the dashboard's tooltips (Gloss).
type GlossaryEntry struct {
	Key  string
	Term string
	// Where says on which sheets (or in which fits) the number appears.
	Where   string
	Meaning string
	Reading string
}

// Glossary returns the explanations of the reports' numbers, in the order
// of the Glossary sheet: the items, the raters, the review, the fit's
// diagnostics, then the agreement coefficients.
func Glossary() []GlossaryEntry { return append([]GlossaryEntry(nil), glossary...) }

// Gloss returns the one-line explanation of the number named key (its
// meaning and how to read it), for a tooltip; "" for an unknown key.
func Gloss(key string) string {
	for _, g := range glossary {
		if g.Key == key {
			return g.Meaning + " " + g.Reading
		}
	}
	return ""
}

var glossary = []GlossaryEntry{
	{"score", "Consensus score", "Items (ordinal)",
		"The item's position on the latent consensus scale m: what the raters collectively mean, with its 95% credible interval.",
		"Higher is better (a higher grade); only differences between items matter, the zero is arbitrary. Overlapping intervals mean the order of the two items is uncertain."},
	{"rank", "Mean rank (expected rank)", "Items (ordinal, values)",
		"The item's rank among all items (1 = highest score), averaged over the posterior draws, with its 95% interval.",
		"The ranking to quote; a wide rank interval says the data cannot place the item precisely."},
	{"consensus", "Consensus grade / class", "Items, Review",
		"The most probable grade or class of the item under the model (the mode of its consensus distribution).",
		"The label to send back to the annotation tool; check its probability."},
	{"prob", "Probability, P(consensus)", "Items, Review",
		"The model's probability of the item's consensus grade or class.",
		"Close to 1: settled. Close to 1/K (K levels): the raters' labels do not decide the item; review it."},
	{"entropy", "Entropy (bits)", "Items",
		"The uncertainty of the item's consensus distribution: 0 bits when one level is certain, log2 K bits when every level is equally likely.",
		"Sort by it to find the items the model is least sure about."},
	{"majority", "Majority label", "Items",
		"The most common of the item's labels (ties broken by level order).",
		"What a majority vote would say; compare it with the model's consensus."},
	{"majority_share", "Majority share", "Items, Review, dashboard ranking",
		"The share of the item's labels equal to its majority label, before any model.",
		"1 (100%) when every rater agrees; with r raters at least 1/r. Low values are the contested items."},
	{"item_agreement", "Item agreement", "Item agreement, the project's agreement tables",
		"The observed (not chance-corrected) agreement of the item's labels: the mean weight over its pairs of labels, 1 for equal labels and 0 for different classes (nominal), 1 - |difference| / the scale's range (ordinal, bounded); for a rater, the same over the rater's pairs with the other raters' labels (docs/agreement-tables.md).",
		"1 when every pair agrees; for two classes and r raters it falls faster than the majority share (a 7-3 split: majority share 0.70, item agreement 0.53). Low values are the contested items."},
	{"raters_of_item", "Raters", "Items, Review",
		"How many raters labelled the item.",
		"Agreement among 2 raters says less than among 10."},
	{"precision", "Precision α", "Raters",
		"How consistently the rater's labels follow the consensus (Rogers et al.: the inverse of the rater's noise variance), posterior mean and 95% interval.",
		"Higher is more reliable. Compare raters relative to each other; a wide interval means few labels."},
	{"variance", "Variance 1/α", "Raters, variance-density plot",
		"The rater's noise variance, the inverse of the precision: how far their labels scatter around the consensus on the latent scale.",
		"Lower is more consistent. Its posterior density (plot) shows how sure the fit is."},
	{"severity", "Severity", "Raters, Thresholds (ordinal)",
		"How far the rater's grade thresholds sit above the average rater's on the consensus scale.",
		"Positive: severe (gives lower grades for the same item); negative: lenient; an interval covering 0: not distinguishable from the average."},
	{"thresholds", "Thresholds", "Thresholds (ordinal)",
		"Where on the consensus scale the rater moves from one grade to the next.",
		"Thresholds shifted together are severity; unevenly spaced ones mean the rater uses some grades more than others."},
	{"mean_log_pred", "Mean log predictive", "Raters",
		"The average log posterior predictive probability of the rater's own labels (values: log density of the ratings).",
		"Closer to 0 is better: the model expects this rater's labels. Much lower than the others: labels that do not fit."},
	{"consensus_agreement", "Agreement with consensus", "Raters",
		"The share of the rater's labels equal to the item's consensus.",
		"A plain accuracy against the model's answer; it does not allow for the items' difficulty."},
	{"mean_kappa", "Mean kappa", "Raters",
		"The rater's mean pairwise Cohen's kappa with the other raters (unweighted for nominal data, quadratic otherwise).",
		"Chance-corrected agreement with colleagues: 0 is chance, 1 perfect; pairs with few common items are noisy."},
	{"dispersion", "Dispersion ν", "Raters (bounded ratings)",
		"The rater's inverse dispersion: how tightly their ratings stay around the consensus value.",
		"Higher is more consistent (it plays the role of the precision for slider ratings); read on a log scale."},
	{"bias", "Bias", "Raters (bounded ratings)",
		"The rater's additive shift on the latent (probit) scale.",
		"Positive: rates higher than the consensus; negative: lower."},
	{"error_rate", "Error rate ε", "Raters (robust model)",
		"How often the rater's label is flipped whatever the item says (Kim & Ghahramani's labelling-error rate).",
		"0 is a perfect rater, 0.5 a coin toss; learnt by EM unless fixed."},
	{"p_error", "P(error)", "Label errors (robust model)",
		"The posterior probability that a label is a labelling error given the other labels.",
		"Above 0.5: more probably wrong than right; review those first."},
	{"label_prob", "Probability of a label", "Review, Flags",
		"The posterior predictive probability of the label under the rater's predictive distribution for the item (robust model: the probability it is right, 1 - P(error); values: the two-sided tail probability of the rating).",
		"Low values are surprising labels; below the flag threshold they are flagged."},
	{"flags", "Flags", "Items, Raters, Flags",
		"Labels whose probability is below the fit's flag threshold.",
		"Candidates for a second look; a rater with many flags labels unlike the others."},
	{"rhat", "R-hat", "Diagnostics",
		"The split potential scale reduction of a parameter's chains.",
		"Below the limit (1.01): the chains agree. Above it the fit has not converged: run longer."},
	{"ess", "ESS", "Diagnostics",
		"The effective sample size of a parameter's draws (bulk and tail).",
		"At least the limit (400) for stable means and intervals."},
	{"log_evidence", "Log evidence", "Summary (EP, Laplace)",
		"The log marginal likelihood of the data under the model.",
		"Compare it between models of the same labels: higher is better supported."},
	{"gold_accuracy", "Consensus = gold", "Summary",
		"The share of the items with a gold (expert) label whose consensus equals it.",
		"Compare it with the majority vote's share on the same items."},
	{"majority_agreement", "Majority vote = consensus", "Summary",
		"The share of the items whose majority vote equals the model's consensus.",
		"Below 1 where the model weighs raters by their reliability; large gaps deserve a look."},
	{"auc", "ROC AUC", "Summary (two-level schemes)",
		"The area under the ROC curve of the consensus probability of the positive class, against gold labels (or the majority vote when there are none).",
		"0.5 is chance, 1 perfect separation."},
	{"krippendorff_alpha", "Krippendorff's alpha (metric)", "Summary, Agreement",
		"Chance-corrected agreement of all raters for any number of raters and missing labels, with a distance between labels for the level of measurement (nominal, ordinal, interval or ratio metric).",
		"The coefficient to quote: the one at the scheme's level (nominal for nominal and binary schemes, ordinal for ordinal ones, interval for bounded ratings). 1 is perfect, 0 chance; 0.8 is the usual bar for reliable data and 0.667 for tentative conclusions (Krippendorff)."},
	{"krippendorff_alpha_weights", "Krippendorff's alpha (weights)", "Agreement",
		"Krippendorff's alpha computed with irrCAC's agreement weights instead of a metric (Gwet 2014, sec. 5.5). Linear and quadratic weights equal the linear and interval metrics; irrCAC's ordinal weights ignore the label frequencies, so they differ from the ordinal metric.",
		"For comparison with irrCAC; quote the metric alpha."},
	{"fleiss_kappa", "Fleiss' kappa", "Agreement",
		"Chance-corrected agreement of many raters with chance from the pooled label distribution (weighted: with partial credit for near misses).",
		"0 is chance, 1 perfect; it drops when one class dominates (the prevalence paradox)."},
	{"conger_kappa", "Conger's kappa", "Agreement",
		"Fleiss' kappa with chance from each rater's own label distribution (the multi-rater Cohen's kappa).",
		"Read as Fleiss' kappa; the two differ when raters use the labels in different proportions."},
	{"scott_pi", "Scott's pi", "Agreement", "Chance-corrected agreement with chance from the pooled label distribution (equal to Fleiss' kappa here).", "Read as Fleiss' kappa."},
	{"randolph_kappa", "Randolph's free-marginal kappa", "Agreement",
		"Chance-corrected agreement with chance 1/K: every label equally likely.",
		"Use when the raters were free to use the labels in any proportion."},
	{"brennan_prediger", "Brennan-Prediger", "Agreement", "Chance-corrected agreement with uniform chance (Randolph's kappa, weighted when the variant says so).", "As Randolph's kappa."},
	{"gwet_ac1", "Gwet's AC1 / AC2", "Agreement",
		"Chance-corrected agreement whose chance term stays small when one class dominates (AC2: weighted, for ordered labels).",
		"Robust to the prevalence paradox; often higher than kappa on skewed data."},
	{"percent_agreement", "Percent agreement", "Agreement",
		"The share of pairs of labels of the same item that agree (weighted: with partial credit).",
		"Not corrected for chance: high values can come from one dominant class."},
	{"icc", "Intraclass correlation (ICC)", "Agreement",
		"The share of the labels' variance due to the items (Shrout & Fleiss): ICC(1,·) one-way, ICC(2,·) two-way random raters, ICC(3,·) two-way fixed raters; (·,1) one rater, (·,k) the mean of k raters.",
		"For numeric scales: quote ICC(2,1) for a single rater's reliability, ICC(2,k) for the mean of the raters' labels."},
	{"fleiss_kappa_category", "Fleiss' kappa of a category", "Agreement",
		"Fleiss' kappa of one label against all the others.",
		"Shows which labels the raters find hard to agree on."},
	{"cohen_kappa", "Cohen's kappa (pairs)", "Agreement matrix",
		"Chance-corrected agreement of one pair of raters on the items both labelled (unweighted for nominal data, quadratic otherwise).",
		"0 is chance, 1 perfect; negative: systematic disagreement. Pairs with few common items are noisy."},
}

// QuoteCoefficient returns the key and variant of the agreement
// coefficient to quote for a level of measurement (the agreement
// analysis's level: nominal, ordinal, interval or ratio): Krippendorff's
// alpha with the level's metric.
func QuoteCoefficient(level string) (key, variant string) {
	switch level {
	case "ordinal", "interval", "ratio":
		return "krippendorff_alpha", level
	}
	return "krippendorff_alpha", "nominal"
}

// coefficientHelp returns the glossary key of an agreement coefficient.
func coefficientHelp(c *Coefficient) string {
	switch c.Key {
	case "krippendorff_alpha":
		if c.Variant != "" && len(c.Variant) > 8 && c.Variant[len(c.Variant)-8:] == " weights" {
			return Gloss("krippendorff_alpha_weights")
		}
	case "gwet_ac2":
		return Gloss("gwet_ac1")
	}
	return Gloss(c.Key)
}
