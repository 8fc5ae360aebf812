package confusion

import "concord/multirater"

// Settings are the confusion family's whole input for its engines (vb,
// gibbs), declared once (see multirater.Fields). The zero value means the
// defaults; the gibbs engine's chains have their own (DefaultSamples,
// DefaultBurnin).
type Settings struct {
	multirater.MCMCSettings `engines:"gibbs" defaults:"samples=1000,burnin=500"`
	FlagThreshold           float64 `json:"flag_threshold,omitempty" range:"[1e-12,1)" zero:"the default" default:"0.05" alias:"flag" doc:"flag labels whose posterior predictive probability is below this"`
	RaterModel              string  `json:"rater_model,omitempty" enum:"auto,one-coin|onecoin|one_coin,confusion,communities,spammer,graded,subtypes" default:"auto" doc:"the raters' model, auto (default: one-coin, spammer-aware, the confusion model of hierarchy and subtypes fitted, and graded for an ordinal scheme of three or more grades, and the one with the best evidence kept), one-coin (one accuracy per rater), confusion (a confusion matrix per rater, Dawid-Skene, one shared prior), communities (confusion matrices with the communities prior), spammer (MACE: each label competent or the rater's own spam), graded (ordinal schemes: each label the true grade moved by the rater's own shift distribution) or subtypes (EBCC: two item subtypes per class, a second confusion matrix for the raters of a bloc that the evidence finds, so that raters who err together on the same items are explained by the item)"`
	Gold                    bool    `json:"gold,omitempty" doc:"fix the classes of items with a gold label in the items file (default: gold labels are for evaluation only)"`
	Hierarchy               string  `json:"hierarchy,omitempty" enum:"communities,pooled,none" default:"communities" doc:"communities (default: each rater's confusion rows get the prior of one of several communities of raters, such as reliable raters and spammers, learnt by empirical Bayes), pooled (one community shared by every rater) or none (a fixed prior, stronger on the diagonal)"`
	Communities             int     `json:"communities,omitempty" range:"[1,8]" zero:"chosen by the evidence lower bound" doc:"the number of communities with hierarchy communities (default: chosen by the evidence lower bound from 1 to 4, at most one per 10 raters)"`
	Concentration           float64 `json:"concentration,omitempty" range:"[1e-3,1e4]" zero:"the default, 4" default:"4" doc:"the prior's pseudo-count total per confusion row (the prior's mean is learnt by empirical Bayes unless hierarchy none)"`
	MaxIter                 int     `json:"max_iter,omitempty" range:"[1,1000000]" zero:"the default, 1000" default:"1000" engines:"vb" doc:"the limit of the variational iterations (they stop earlier once no class probability changes by more than 1e-6 or the evidence lower bound by less than 1e-8 of itself)"`
	SpamThreshold           float64 `json:"spam_threshold,omitempty" range:"[1e-6,1)" zero:"the default, 0.15" doc:"raters whose spam score (how alike the rows of their confusion matrix are) is below this are flagged as spammers"`
}

// WithDefaults returns s with zero fields set to the family's defaults
// (those of Options.WithDefaults, whose chains are shorter than the other
// Gibbs families').
func (s Settings) WithDefaults() Settings { return multirater.WithDefaults(s) }

// Validate checks every setting against its declaration, then that a
// number of communities comes with hierarchy communities, and returns a
// *multirater.FieldError for the first that fails.
func (s Settings) Validate() error {
	h, _ := ParseHierarchy(s.Hierarchy)
	return multirater.CheckSettings(s, multirater.Rule{Broken: s.Communities > 0 && h != Communities,
		FieldError: multirater.FieldError{Field: "communities", Value: "given with hierarchy " + h.String(), Want: "hierarchy communities"}})
}
