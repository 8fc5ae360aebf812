package reports

import (
	"math"
	"strconv"

	"concord/multirater"
	"concord/raters"
)

// Schema is the schema name of the report document (Report as JSON),
// described by the JSON Schema that SchemaJSON returns (also published as
// docs/report-schema.json).
const Schema = "concord.report/v1"

// Model kinds (Report.Kind): the fit's output shape, by the names the
// report schema has always used (multirater.OutputScores is "ordinal",
// multirater.OutputClasses "classification"); multirater.OutputValues
// (bounded ratings) is "values".
const (
	KindOrdinal        = "ordinal"
	KindClassification = "classification"
	KindValues         = "values"
)

// Report is the report of one fit: the `concord.report/v1` document. It
// collects what a coordinator needs to read a fit: the project and its
// scheme, every model setting and the seed, the convergence diagnostics,
// the items in consensus order, the raters, their thresholds (ordinal) or
// the classes and confusion tables (classification), the agreement
// coefficients and baseline aggregators when the labels were available,
// and the surprising labels. Build makes one; WriteJSON, WriteXLSX,
// WriteItemsCSV, WriteRatersCSV and WritePlot render it.
type Report struct {
	Schema  string  `json:"schema"`
	Project Project `json:"project"`
	// Model is every setting of the fit, including the seed.
	Model multirater.ModelSettings `json:"model"`
	// Kind is "ordinal", "classification", "values" or "ranking" (the
	// AUC scoring model: scores and an ROC curve, no rater parameters),
	// from the fit's
	// output shape (Fit.Classification, multirater.OutputValues): it
	// decides whether the report has Thresholds or Classes, whether items
	// have scores, and whether they have values on the rating scale
	// (bounded ratings: no levels, no grade or class distributions).
	Kind string `json:"kind"`
	// Levels are the ordinal levels (lowest first) or the classes, in the
	// order of every per-level array of the report; empty for values.
	Levels      []Level     `json:"levels"`
	Summary     Summary     `json:"summary"`
	Diagnostics Diagnostics `json:"diagnostics"`
	// ModelChoice is how the fit chose its model among candidates by the
	// evidence (the crowd consensus's rater models, the bounded model's
	// likelihoods, dispersions and kernels): every candidate's scores, the
	// chosen one and why; nil when the fit made no such choice.
	ModelChoice *ModelChoice `json:"model_choice,omitempty"`
	// Items are in consensus order (see Item.Position).
	Items []Item `json:"items"`
	// Raters are in the fit's order.
	Raters []Rater `json:"raters"`
	// Thresholds holds each rater's thresholds (ordinal).
	Thresholds []RaterThresholds `json:"thresholds,omitempty"`
	// Classes holds the class counts and the raters' confusion tables
	// (classification).
	Classes *Classes `json:"classes,omitempty"`
	// Agreement holds the agreement coefficients and the baseline
	// aggregators; nil when the report was built without them.
	Agreement *Agreement `json:"agreement,omitempty"`
	// Flags are the surprising labels, least probable first.
	Flags []Flag `json:"flags"`
	// LabelErrors holds every label with the probability that it is a
	// labelling error (the robust model), most probable first; absent for
	// the other models.
	LabelErrors []LabelError `json:"label_errors,omitempty"`
	// Lowest are the LowestLabels labels with the lowest probability under
	// the model, flagged or not, least probable first: the posterior
	// predictive probability of the label under the rater's predictive
	// distribution for the item (ordinal and classification fits), or the
	// probability that it is right, 1 - p_error (robust fits). Fits of
	// values have none. Review merges them with the flags.
	Lowest []Flag `json:"lowest,omitempty"`
	// ROC summarises the ROC curves of a two-level scheme.
	ROC []ROC `json:"roc,omitempty"`
	// Ranking is the AUC scoring model's part (kind ranking): gamma, the
	// training ROC curve and AUC, the log evidence, the coefficients.
	Ranking *Ranking `json:"ranking,omitempty"`
	Notes   []string `json:"notes,omitempty"`

	// Traces and Draws are the fit's thinned traces and kept joint draws,
	// for the plots; they are not part of the JSON document.
	Traces *multirater.Traces `json:"-"`
	Draws  *multirater.Draws  `json:"-"`
}

// Project names the project and its label scheme.
type Project struct {
	Name string `json:"name"`
	// Scheme is the scheme in its textual form (e.g. "ordinal:0..3");
	// SchemeKind is ordinal, nominal, binary or bounded; Positive the
	// positive class of a binary scheme.
	Scheme     string `json:"scheme"`
	SchemeKind string `json:"scheme_kind"`
	Positive   string `json:"positive,omitempty"`
}

// Level is one level or class: its code and optional human name.
type Level struct {
	Code string `json:"code"`
	Name string `json:"name,omitempty"`
}

// Summary holds the headline numbers.
type Summary struct {
	// Items counts every item of the fit, RatedItems those with at least
	// one label; Labels counts the labels the model saw.
	Items      int    `json:"items"`
	RatedItems int    `json:"rated_items"`
	Raters     int    `json:"raters"`
	Labels     int    `json:"labels"`
	LabelsPer  Number `json:"labels_per_rated_item"`
	Converged  bool   `json:"converged"`
	// Verdict says in words whether the chains converged.
	Verdict string `json:"verdict"`
	Flags   int    `json:"flags"`
	// FlagShare is Flags / Labels.
	FlagShare Number `json:"flag_share"`
	// TopItem is the first item of the consensus order.
	TopItem string `json:"top_item,omitempty"`
	// MostPrecise and LeastPrecise name the raters with the highest and
	// lowest posterior mean precision; MostSevere and MostLenient those
	// with the highest and lowest severity (ordinal).
	MostPrecise  string `json:"most_precise_rater,omitempty"`
	LeastPrecise string `json:"least_precise_rater,omitempty"`
	MostSevere   string `json:"most_severe_rater,omitempty"`
	MostLenient  string `json:"most_lenient_rater,omitempty"`
	// ConsensusAgreement is the share of all labels equal to their item's
	// consensus grade or class.
	ConsensusAgreement Number `json:"consensus_agreement"`
	// Alpha is Krippendorff's alpha at the scheme's level of measurement
	// (when the agreement analysis is in the report).
	Alpha *Coefficient `json:"alpha,omitempty"`
	// MajorityAgreement is the share of items whose majority vote equals
	// the model's consensus (when the agreement analysis is in the report).
	MajorityAgreement Number `json:"majority_agreement"`
	// GoldItems counts the items with a gold label and GoldAccuracy the
	// share of them whose consensus equals it.
	GoldItems    int    `json:"gold_items"`
	GoldAccuracy Number `json:"gold_accuracy"`
	// The robust model: ErrorRates says how the raters' labelling-error
	// rates were set ("learnt" by EM, "fixed" at one value, or "none": the
	// plain classifier), LikelyErrors counts the labels more probably wrong
	// than right (p_error above 0.5), and MostErrorProne and LeastErrorProne
	// name the raters with the highest and lowest error rate. LogEvidence
	// and Selected repeat the diagnostics'.
	ErrorRates      string  `json:"error_rates,omitempty"`
	LikelyErrors    *int    `json:"likely_label_errors,omitempty"`
	MostErrorProne  string  `json:"most_error_prone_rater,omitempty"`
	LeastErrorProne string  `json:"least_error_prone_rater,omitempty"`
	LogEvidence     *Number `json:"log_evidence,omitempty"`
	Selected        string  `json:"selected_model,omitempty"`
}

// Diagnostics reports the convergence of the chains.
type Diagnostics struct {
	Converged bool   `json:"converged"`
	Verdict   string `json:"verdict"`
	// LimitRhat and LimitESS are the convergence limits: every free
	// parameter's split R-hat below LimitRhat and bulk ESS at least
	// LimitESS.
	LimitRhat  float64 `json:"limit_rhat"`
	LimitESS   float64 `json:"limit_ess"`
	MaxRhat    Number  `json:"max_rhat"`
	MinESSBulk Number  `json:"min_ess_bulk"`
	MinESSTail Number  `json:"min_ess_tail"`
	WorstRhat  string  `json:"worst_rhat,omitempty"`
	WorstESS   string  `json:"worst_ess,omitempty"`
	// Seconds is the wall time of the fit, SamplingSeconds that of the
	// chains; Draws the number of kept draws over all chains.
	Seconds         Number `json:"seconds"`
	SamplingSeconds Number `json:"sampling_seconds"`
	SweepsPerSecond Number `json:"sweeps_per_second"`
	// ESSPerCPUSecond is MinESSBulk per CPU second of the sampling (the
	// fit document's ess_per_cpu_second): what a longer run would buy;
	// absent where the CPU time is not known.
	ESSPerCPUSecond Number `json:"ess_per_cpu_second,omitempty"`
	Draws           int    `json:"draws"`
	// Groups summarises the parameters by group (alpha, b, m, ...).
	Groups     []ParamGroup `json:"groups"`
	Parameters []Param      `json:"parameters"`
	// Autocorrelation is each rater's precision autocorrelation by lag.
	Autocorrelation map[string][]float64 `json:"autocorrelation,omitempty"`
	Moves           map[string]float64   `json:"moves,omitempty"`
	Notes           []string             `json:"notes,omitempty"`
	// LogEvidence is the deterministic engine's log marginal likelihood
	// (EP, Laplace); absent for MCMC fits. With model selection (the robust
	// model's --select), Evidence holds the log evidence of each candidate
	// ("plain", "robust") and Selected names the one kept.
	LogEvidence *Number           `json:"log_evidence,omitempty"`
	Evidence    map[string]Number `json:"evidence,omitempty"`
	Selected    string            `json:"selected,omitempty"`
}

// ParamGroup summarises the diagnostics of one group of parameters: the
// part of the name before "[" (alpha for the precisions, b for the
// thresholds, m for the consensus scores).
type ParamGroup struct {
	Group      string `json:"group"`
	Parameters int    `json:"parameters"`
	MaxRhat    Number `json:"max_rhat"`
	MinESSBulk Number `json:"min_ess_bulk"`
	MinESSTail Number `json:"min_ess_tail"`
	// OverRhat and UnderESS count the parameters over the R-hat limit and
	// under the ESS limit.
	OverRhat int `json:"over_rhat"`
	UnderESS int `json:"under_ess"`
}

// Param is the diagnostics of one parameter; Flagged is set when it is
// over the R-hat limit or under the ESS limit.
type Param struct {
	Name    string `json:"name"`
	Group   string `json:"group"`
	Mean    Number `json:"mean"`
	SD      Number `json:"sd"`
	Rhat    Number `json:"rhat"`
	ESSBulk Number `json:"ess_bulk"`
	ESSTail Number `json:"ess_tail"`
	Flagged bool   `json:"flagged"`
}

// Estimate summarises a posterior: mean, standard deviation, 2.5%, 50% and
// 97.5% quantiles.
type Estimate struct {
	Mean Number `json:"mean"`
	SD   Number `json:"sd"`
	Q025 Number `json:"q025"`
	Q50  Number `json:"q50"`
	Q975 Number `json:"q975"`
}

// RankSummary summarises an item's posterior rank (1 = highest score).
type RankSummary struct {
	Mean Number `json:"mean"`
	Q025 Number `json:"q025"`
	Q50  Number `json:"q50"`
	Q975 Number `json:"q975"`
}

// Interval is a posterior mean with its 95% credible interval.
type Interval struct {
	Mean Number `json:"mean"`
	Q025 Number `json:"q025"`
	Q975 Number `json:"q975"`
}

// Item is one row of the consensus ranking.
type Item struct {
	// Position is the item's place in the consensus order, from 1: by
	// posterior mean rank for the ordinal model; by probability of the
	// positive class for a two-class classification; by consensus class,
	// then its probability, for more classes.
	Position int    `json:"position"`
	ID       string `json:"id"`
	NLabels  int    `json:"n_labels"`
	// Labels maps rater id to the label the rater gave.
	Labels map[string]string `json:"labels"`
	// Gold is the item's reference label, when the dataset has one.
	Gold string `json:"gold,omitempty"`
	// Text is the item's text, when the dataset the report was built with
	// has one.
	Text string `json:"text,omitempty"`
	// Score is the latent consensus score and Rank its posterior rank
	// (ordinal).
	Score *Estimate    `json:"score,omitempty"`
	Rank  *RankSummary `json:"rank,omitempty"`
	// Value is the consensus on the rating scale (values: bounded
	// ratings): the predictive distribution of a new rating, with its
	// 95% predictive interval (q025, q975). The raters' mean and median
	// of the item's ratings are Baselines "mean" and "median".
	Value *Estimate `json:"value,omitempty"`
	// Consensus is the consensus grade or class, Prob its probability and
	// Probs the whole distribution in level order; Entropy is that
	// distribution's entropy in bits. Values have none of them ("", null,
	// [], null).
	Consensus string   `json:"consensus"`
	Prob      Number   `json:"prob"`
	Probs     []Number `json:"probs"`
	Entropy   Number   `json:"entropy"`
	// Flags counts the item's surprising labels.
	Flags int `json:"flags"`
	// NRaters counts the raters who labelled the item. Majority is the
	// most common of its labels (ties broken by level order, and
	// MajorityTie set) and MajorityShare the share of its labels equal to
	// it: the item's observed agreement, before any model (1 when every
	// rater agrees; null without labels). Values have no majority.
	NRaters       int    `json:"n_raters"`
	Majority      string `json:"majority,omitempty"`
	MajorityTie   bool   `json:"majority_tie,omitempty"`
	MajorityShare Number `json:"majority_share"`
	// Baselines holds each baseline aggregator's consensus for the item.
	Baselines map[string]Baseline `json:"baselines,omitempty"`
}

// Baseline is a baseline aggregator's answer for one item.
type Baseline struct {
	// Label is the consensus class ("" for none), Score the numeric
	// consensus (mean or median rating, or expected value).
	Label string `json:"label,omitempty"`
	Score Number `json:"score"`
	Tie   bool   `json:"tie,omitempty"`
}

// Rater is one row of the raters table.
type Rater struct {
	ID      string `json:"id"`
	NLabels int    `json:"n_labels"`
	// LevelCounts counts the rater's labels per level.
	LevelCounts []int `json:"level_counts"`
	// Reference marks the reference rater of strong identifiability, whose
	// precision is fixed.
	Reference bool `json:"reference,omitempty"`
	// Model marks a rater that the labels mark as a model (an LLM judge
	// or a classifier).
	Model bool `json:"model,omitempty"`
	// Precision alpha_l and Variance 1/alpha_l (Rogers et al. sec. 2.1);
	// for values the fit repeats the dispersion nu_l in Precision.
	Precision Estimate `json:"precision"`
	Variance  Estimate `json:"variance"`
	// Dispersion is the rater's inverse dispersion nu_l with a 95%
	// interval (values: larger is more consistent with the consensus) and
	// Bias their additive bias on the latent (probit) scale, when fitted.
	Dispersion *Estimate `json:"dispersion,omitempty"`
	Bias       *Estimate `json:"bias,omitempty"`
	// Severity is how far the rater's thresholds sit above the average
	// rater's on the consensus scale (ordinal; positive is severe).
	Severity *Interval `json:"severity,omitempty"`
	// MeanLogPred is the mean log posterior predictive probability of the
	// rater's labels (values: the mean log predictive density of the
	// ratings, on the rating scale).
	MeanLogPred Number `json:"mean_log_pred"`
	// ConsensusAgreement is the share of the rater's labels equal to the
	// item's consensus grade or class.
	ConsensusAgreement Number `json:"consensus_agreement"`
	// Flags counts the rater's surprising labels.
	Flags int `json:"flags"`
	// MeanKappa is the rater's mean pairwise Cohen's kappa with the other
	// raters (the weights of Agreement.Kappa), when the agreement analysis
	// is in the report.
	MeanKappa Number `json:"mean_kappa"`
	// Baselines holds the rater's quality against each baseline
	// aggregator's consensus.
	Baselines map[string]RaterBaseline `json:"baselines,omitempty"`
	// Epsilon is the rater's labelling-error rate (the robust model).
	Epsilon *ErrorRate `json:"epsilon,omitempty"`
	// ConfusionProbs[k][j] is the posterior of pi_l[k, j], the
	// probability that the rater labels an item of true class k as j
	// (the confusion model), in the order of Levels: mean and 95%
	// interval.
	ConfusionProbs [][]Interval `json:"confusion_probs,omitempty"`
	// Accuracy is the posterior of the rater's probability of a correct
	// label, sum_k rho_k pi_l[k, k] (the confusion model).
	Accuracy *Interval `json:"accuracy,omitempty"`
	// MostConfused is the rater's largest off-diagonal confusion
	// probability (the confusion model).
	MostConfused *ClassConfusion `json:"most_confused,omitempty"`
	// SpamScore is the mean total-variation distance between the rows of
	// the rater's mean confusion matrix (0: every row alike, the labels
	// say nothing about the class; 1: a perfect rater); Spammer is set
	// when it is below the fit's spam threshold (the confusion model).
	SpamScore *Number `json:"spam_score,omitempty"`
	Spammer   bool    `json:"spammer,omitempty"`
	// Community is the rater's most probable community of raters (1-based)
	// when the confusion model has several.
	Community int `json:"community,omitempty"`
	// Gold is the rater's accuracy on the gold questions (items with a
	// gold label), when the project has any and the levels are grades or
	// classes; a rater who labelled none has Labels 0 and no accuracy.
	Gold *GoldScore `json:"gold,omitempty"`
}

// GoldScore is a rater's record on the gold questions: of Labels labels on
// Items gold items (every repeated label counts), Correct equal the gold
// label; Accuracy = Correct / Labels with the 95% Wilson score interval
// [Q025, Q975] (Wilson 1927; scipy's binomtest(...).proportion_ci(method=
// "wilson")), null when the rater labelled no gold item.
type GoldScore struct {
	Items    int    `json:"items"`
	Labels   int    `json:"labels"`
	Correct  int    `json:"correct"`
	Accuracy Number `json:"accuracy"`
	Q025     Number `json:"q025"`
	Q975     Number `json:"q975"`
}

// ClassConfusion is a rater's confusion: items of class True labelled
// Label with probability Prob (posterior mean).
type ClassConfusion struct {
	True  string `json:"true"`
	Label string `json:"label"`
	Prob  Number `json:"prob"`
}

// ErrorRate is a rater's labelling-error rate epsilon (the robust model:
// how often the rater's label is flipped whatever the item says). Learnt
// is set when it was learnt by EM; Steps is the number of EM steps and
// History its value after each of them (the first entry is the starting
// value). A fixed rate has no steps.
type ErrorRate struct {
	Value   Number    `json:"value"`
	Learnt  bool      `json:"learnt"`
	Steps   int       `json:"steps"`
	History []float64 `json:"history,omitempty"`
}

// LabelError is one label with the probability that it is a labelling
// error (the robust model), beside its item's consensus.
type LabelError struct {
	Item  string `json:"item"`
	Rater string `json:"rater"`
	Label string `json:"label"`
	// PError is the posterior probability that the label is an error
	// given the other labels.
	PError Number `json:"p_error"`
	// Consensus is the item's consensus class, ConsensusProb its
	// probability, and Position the item's place in the consensus order.
	Consensus     string `json:"consensus"`
	ConsensusProb Number `json:"consensus_prob"`
	Position      int    `json:"position"`
	// Flagged is set when the label is among the flags: the probability
	// that it is right, 1 - PError, is below the flag threshold.
	Flagged bool `json:"flagged"`
}

// RaterBaseline is a rater's quality against one aggregator's consensus:
// the share of labels equal to its class (Dawid-Skene: the model's
// probability of a correct label) and the mean absolute difference from
// its score; and, for the aggregators that estimate one, the aggregator's
// own parameter of the rater (raters.RaterQuality.Skill), named by
// SkillKind: Wawa's "weight", GLAD's "ability", MACE's "competence".
type RaterBaseline struct {
	Accuracy  Number  `json:"accuracy"`
	MAE       Number  `json:"mae"`
	Skill     *Number `json:"skill,omitempty"`
	SkillKind string  `json:"skill_kind,omitempty"`
}

// RaterThresholds are one rater's K-1 thresholds on the consensus scale.
type RaterThresholds struct {
	Rater      string      `json:"rater"`
	Thresholds []Threshold `json:"thresholds"`
}

// Threshold is the boundary b_lk between two adjacent levels.
type Threshold struct {
	// Index is k, from 1.
	Index   int       `json:"index"`
	Between [2]string `json:"between"`
	Estimate
	// Fixed marks the threshold fixed at 0 by strong identifiability.
	Fixed bool `json:"fixed,omitempty"`
}

// Classes describes the classes of a classification fit.
type Classes struct {
	Counts []ClassCount `json:"counts"`
	// Confusion holds each rater's labels against the consensus.
	Confusion []RaterConfusion `json:"confusion"`
}

// ClassCount counts one class.
type ClassCount struct {
	Class string `json:"class"`
	Name  string `json:"name,omitempty"`
	// Labels counts the labels of this class, LabelShare their share of
	// all labels.
	Labels     int    `json:"labels"`
	LabelShare Number `json:"label_share"`
	// Consensus counts the items whose consensus is this class;
	// MeanProb is the mean over items of the class's probability.
	Consensus      int    `json:"consensus"`
	ConsensusShare Number `json:"consensus_share"`
	MeanProb       Number `json:"mean_prob"`
	// Gold counts the items whose gold label is this class.
	Gold int `json:"gold"`
}

// RaterConfusion is a rater's confusion table against the consensus:
// Counts[k][l] items with consensus class k that the rater labelled l.
type RaterConfusion struct {
	Rater     string  `json:"rater"`
	Agreement Number  `json:"agreement"`
	Counts    [][]int `json:"counts"`
}

// Agreement holds the agreement coefficients and baseline aggregators of
// package raters, reshaped for the report.
type Agreement struct {
	Level     string  `json:"level"`
	Items     int     `json:"items"`
	Raters    int     `json:"raters"`
	Labels    int     `json:"labels"`
	Bootstrap int     `json:"bootstrap"`
	Seed      uint64  `json:"seed"`
	ConfLevel float64 `json:"conf_level"`
	// CI is the kind of the analytic intervals and tests, "t" (irrCAC's)
	// or "normal" (statsmodels' and SAS's), and Null the value every
	// coefficient is also tested against (concord report --null), when
	// there is one.
	CI   string  `json:"ci,omitempty"`
	Null *Number `json:"null,omitempty"`
	// Coefficients lists every coefficient with its interval.
	Coefficients []Coefficient `json:"coefficients"`
	// Kappa is the matrix of pairwise Cohen's kappas.
	Kappa *KappaMatrix `json:"kappa,omitempty"`
	// Pairs lists Cohen's kappa of every pair of raters under each
	// weighting.
	Pairs []KappaPair `json:"pairs,omitempty"`
	// AgreementScore says how ItemAgreement and RaterAgreement score
	// agreement (see raters.AgreementTables); ItemAgreement has a row
	// per labelled item, lowest agreement first, RaterAgreement a row per
	// rater.
	AgreementScore string                  `json:"agreement_score,omitempty"`
	ItemAgreement  []raters.ItemAgreement  `json:"item_agreement,omitempty"`
	RaterAgreement []raters.RaterAgreement `json:"rater_agreement,omitempty"`
	Aggregators    []Aggregator            `json:"aggregators"`
	Notes          []string                `json:"notes,omitempty"`
}

// Coefficient is one agreement coefficient.
type Coefficient struct {
	// Key names the coefficient (as in the agreement document, e.g.
	// krippendorff_alpha, fleiss_kappa, icc) and Variant the metric,
	// weights, category or form ("ordinal", "quadratic weights",
	// "ICC2k", ...); Label says both in words.
	Key      string `json:"key"`
	Variant  string `json:"variant,omitempty"`
	Label    string `json:"label"`
	Value    Number `json:"value"`
	SE       Number `json:"se"`
	CILow    Number `json:"ci_low"`
	CIHigh   Number `json:"ci_high"`
	CIMethod string `json:"ci_method,omitempty"`
	// Z and P test the coefficient against 0 (raters.Estimate's Z and P:
	// t as irrCAC, or normal with concord agreement --ci normal); absent
	// without a standard error.
	Z *Number `json:"z,omitempty"`
	P *Number `json:"p_value,omitempty"`
	// ZNull and PNull test it against Agreement.Null (raters.Estimate's
	// ZNull and PNull); absent without a second test.
	ZNull *Number `json:"z_null,omitempty"`
	PNull *Number `json:"p_value_null,omitempty"`
}

// KappaMatrix is the symmetric matrix of pairwise Cohen's kappas under one
// weighting (unweighted for nominal data, quadratic otherwise); the
// diagonal and pairs without common items are null. N counts the items
// both raters labelled.
type KappaMatrix struct {
	Weights string     `json:"weights"`
	Raters  []string   `json:"raters"`
	Values  [][]Number `json:"values"`
	N       [][]int    `json:"n"`
}

// KappaPair is Cohen's kappa of one pair of raters, by weighting.
type KappaPair struct {
	A     string                 `json:"a"`
	B     string                 `json:"b"`
	N     int                    `json:"n"`
	Kappa map[string]Coefficient `json:"kappa"`
}

// Aggregator summarises a baseline aggregator beside the model.
type Aggregator struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// Items counts the items it gave a consensus class, and
	// AgreementWithModel the share of them where it equals the model's.
	Items              int    `json:"items"`
	AgreementWithModel Number `json:"agreement_with_model"`
	// ScoreCorrelation is the Pearson correlation between its numeric
	// consensus and the model's consensus score (ordinal).
	ScoreCorrelation Number `json:"score_correlation"`
	// Ties counts majority-vote ties; Converged and Iterations describe
	// EM aggregators.
	Ties       int   `json:"ties,omitempty"`
	Converged  *bool `json:"converged,omitempty"`
	Iterations int   `json:"iterations,omitempty"`
}

// Flag is a surprising label.
type Flag struct {
	Item  string `json:"item"`
	Rater string `json:"rater"`
	Label string `json:"label"`
	// Prob is the label's posterior predictive probability; Expected the
	// level the model found most probable for this rater and item. For
	// values, Label is the rating, Prob its two-sided predictive tail
	// probability 2 min(F(y), 1 - F(y)) under the rater's predictive
	// distribution, and Expected that distribution's mean.
	Prob     Number `json:"prob"`
	Expected string `json:"expected,omitempty"`
	// ItemValue is the item's consensus value with its 95% predictive
	// interval (values).
	ItemValue *Interval `json:"item_value,omitempty"`
	// Consensus and Position are the item's consensus and its place in
	// the consensus order.
	Consensus string `json:"consensus"`
	Position  int    `json:"position"`
	// Flagged is set when Prob is below the fit's flag threshold.
	Flagged bool `json:"flagged"`
}

// LowestLabels is the length of Report.Lowest.
const LowestLabels = 20

// ROC summarises one ROC curve of a two-level scheme: how well Scorer's
// probability of the positive class separates the items whose Reference
// label is positive. Reference is "gold" when items have gold labels
// (both classes present), else "majority" (the majority vote of the
// raters' labels, ties left out).
type ROC struct {
	Scorer    string `json:"scorer"`
	Reference string `json:"reference"`
	Positive  string `json:"positive"`
	// N counts the items scored, Positives those whose reference is
	// positive.
	N         int    `json:"n"`
	Positives int    `json:"positives"`
	AUC       Number `json:"auc"`
}

// Number is a float64 written to JSON as null when it is not finite (NaN
// for undefined values).
type Number float64

// MarshalJSON writes the number, or null when it is NaN or infinite.
func (n Number) MarshalJSON() ([]byte, error) {
	v := float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON reads a number, or null as NaN.
func (n *Number) UnmarshalJSON(b []byte) error { return multirater.ReadNumber(b, (*float64)(n)) }

// Valid reports whether n is finite.
func (n Number) Valid() bool {
	v := float64(n)
	return !math.IsNaN(v) && !math.IsInf(v, 0)
}

var nan = Number(math.NaN())
