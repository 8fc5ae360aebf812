package multirater

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
)

// FitSchema is the schema name of the fit result document (FitResult as
// JSON), documented in docs/fit-schema.md.
const FitSchema = "concord.fit/v1"

// FitResult is the outcome of a model fit in the form users and reports
// consume, serialised as the `concord.fit/v1` JSON document. Items, raters
// and levels are named by the string ids and codes the caller passed in.
//
// The ordinal model (ordinal.Fit) fills the ordinal fields (item scores,
// ranks, grade distributions; rater thresholds and severities); the
// classification model fills the class fields instead. Fields that do not
// apply to a model are omitted from the JSON.
type FitResult struct {
	Schema      string        `json:"schema"`
	Model       ModelSettings `json:"model"`
	Diagnostics Diagnostics   `json:"diagnostics"`
	// Levels are the ordinal level codes (lowest first) or the class codes,
	// in the order used by every per-level array of the document.
	Levels []string      `json:"levels"`
	Items  []ItemResult  `json:"items"`
	Raters []RaterResult `json:"raters"`
	// Flags are the surprising labels: observed ratings whose posterior
	// predictive probability is below Model.FlagThreshold, least probable
	// first.
	Flags []Flag `json:"flags"`
	// LabelErrors holds every label with the probability that it is a
	// labelling error (the robust model), most probable first.
	LabelErrors []LabelError `json:"label_errors,omitempty"`
	// Traces are thinned per-chain traces of the rater precisions, for
	// trace plots.
	Traces *Traces `json:"traces,omitempty"`
	// Draws is a bounded set of joint posterior draws, for density plots
	// and for predicting new items without refitting.
	Draws *Draws `json:"draws,omitempty"`
	// Gaussian is the Gaussian posterior of the items' latent consensus of
	// a deterministic fit (engines ep and laplace), in the site form that
	// predicts new items exactly (Chu & Ghahramani eq. 16-18).
	Gaussian *GaussianSites `json:"gaussian,omitempty"`
	// Features records the items' kernel inputs (covariates, text
	// featuriser and bags of words) for predicting new items.
	Features *Features `json:"features,omitempty"`
	// ClassProportions is the posterior of the class proportions (the
	// prior class distribution of an item before its labels are seen), in
	// the order of Levels (confusion model).
	ClassProportions []Estimate `json:"class_proportions,omitempty"`
	// Coefficients are the posterior of the covariates' coefficients of
	// the AUC model's linear scores (s = <theta, x>), in covariate order.
	Coefficients []Coefficient `json:"coefficients,omitempty"`
	// ROC is the ROC curve of the posterior mean scores on the fitted
	// items (AUC model), and TrainAUC the area under it.
	ROC      []ROCPoint `json:"roc,omitempty"`
	TrainAUC *float64   `json:"train_auc,omitempty"`
	// AUC holds the AUC model's settings as run and its choices: gamma
	// (and its cross-validation), the kernel candidates' evidence, the
	// standardisation.
	AUC *AUCFit `json:"auc,omitempty"`
}

// Coefficient is the posterior of one covariate's coefficient of linear
// AUC scores: mean, sd and the posterior inclusion probability (1 under
// the Gaussian prior; spike-and-slab: the probability of the slab).
type Coefficient struct {
	Name      string  `json:"name"`
	Mean      float64 `json:"mean"`
	SD        float64 `json:"sd"`
	Inclusion float64 `json:"inclusion"`
	// MeanSE and SDSE are Monte Carlo standard errors (engine smc).
	MeanSE float64 `json:"mean_se,omitempty"`
	SDSE   float64 `json:"sd_se,omitempty"`
}

// ROCPoint is one point of an ROC curve: the false and true positive
// rates of the rule "positive when the score is at least Threshold".
type ROCPoint struct {
	Threshold float64 `json:"threshold"`
	FPR       float64 `json:"fpr"`
	TPR       float64 `json:"tpr"`
}

// AUCFit is what an AUC scoring fit (Ridgway et al.) ran with and chose.
type AUCFit struct {
	AUCScores
	// Folds is the number of cross-validation folds when GammaByCV, CV
	// each gamma candidate's mean held-out AUC over them and its standard
	// error.
	Folds int       `json:"folds,omitempty"`
	CV    []CVGamma `json:"cv,omitempty"`
	// KernelEvidence is each candidate kernel's log evidence at Gamma
	// (GP scores with several candidates; the largest was used).
	KernelEvidence []KernelEvidence `json:"kernel_evidence,omitempty"`
	// Covariates are the covariates the scores read, in the order of
	// Features.X (raw values); Center and Scale the z-scoring applied
	// before fitting (standardize; absent otherwise).
	Covariates []string  `json:"covariates"`
	Center     []float64 `json:"center,omitempty"`
	Scale      []float64 `json:"scale,omitempty"`
	// Pairs is n+ n-, the number of (positive, negative) pairs of fitted
	// items; Fitted the number of fitted items (the others, without a
	// majority label, are scored by prediction).
	Pairs  int `json:"pairs"`
	Fitted int `json:"fitted"`
	// PairSites is the number of EP's pair sites when they are a seeded
	// sample of the Pairs pairs (MaxPairs the bound that asked for it);
	// absent when every pair is a site.
	PairSites int `json:"pair_sites,omitempty"`
	MaxPairs  int `json:"max_pairs,omitempty"`
	// KernelGamma is the gamma at which KernelEvidence was evaluated and
	// the kernel chosen once, when it is not Gamma (gamma by
	// cross-validation).
	KernelGamma float64 `json:"kernel_gamma,omitempty"`
	// Rank and Residual describe GP scores' low-rank (Nyström) prior: its
	// rank and the fraction of the kernel matrix's trace it leaves out
	// (absent for a dense prior).
	Rank     int     `json:"rank,omitempty"`
	Residual float64 `json:"residual,omitempty"`
}

// AUCScores are the scores an AUC scoring fit made and their
// pseudo-posterior's temperature, in the fit document (AUCFit) and the
// report (reports.Ranking) alike.
type AUCScores struct {
	// Positive is the positive class (the binary scheme's); an item's
	// label is the majority of its labels (ItemResult.Positive).
	Positive string `json:"positive"`
	// Scores is "linear" (s = <theta, x>, theta ~ N(0, PriorScale I)) or
	// "gp" (s ~ N(0, PriorScale K), K the kernel ModelSettings.Kernel).
	Scores string `json:"scores"`
	// Prior is the coefficients' prior of linear scores ("gaussian" or
	// "spike-slab"); PriorScale is V.
	Prior      string  `json:"prior"`
	PriorScale float64 `json:"prior_scale"`
	// Gamma is the temperature of the pseudo-posterior used in the final
	// fit; GammaByCV is true when cross-validation chose it among the
	// candidates.
	Gamma     float64 `json:"gamma"`
	GammaByCV bool    `json:"gamma_by_cv"`
}

// CVGamma is one gamma candidate's cross-validated AUC (mean over the
// folds of the held-out AUC of the posterior mean scores, and its
// standard error).
type CVGamma struct {
	Gamma float64 `json:"gamma"`
	AUC   float64 `json:"auc"`
	SE    float64 `json:"se"`
}

// KernelEvidence is one candidate kernel's log evidence.
type KernelEvidence struct {
	Kernel      string  `json:"kernel"`
	LogEvidence float64 `json:"log_evidence"`
	Chosen      bool    `json:"chosen,omitempty"`
}

// ModelSettings records every setting of a fit, so that it can be repeated
// exactly (same settings, seed and build give the same draws).
type ModelSettings struct {
	// Model is "ordinal" or "classification".
	Model string `json:"model"`
	// Engine is the inference engine that made the fit (EngineGibbs, ...).
	Engine string `json:"engine,omitempty"`
	// Learnt records the kernel hyperparameters learnt by the fit (EP fits
	// with learnt kernel terms), and where they came from.
	Learnt *Learnt `json:"learnt,omitempty"`
	// Output is the shape of the per-item results (OutputScores or
	// OutputClasses); reports, the server and the CLI switch on it, never on
	// Model. Documents written before the field existed leave it empty: use
	// Shape.
	Output Output `json:"output,omitempty"`
	// Scheme is the project's label scheme in textual form, when known.
	Scheme string `json:"scheme,omitempty"`
	// kernel.Kernel is the kernel specification (e.g. "identity", "rbf:gamma=1").
	Kernel string `json:"kernel"`
	// PriorRank is the rank bound of the low-rank prior the fit used (a text
	// kernel's weight-space form, a covariate kernel's pivoted FITC form;
	// see the notes), so that predictions rebuild the same prior; 0 for a
	// dense or identity prior.
	PriorRank int `json:"prior_rank,omitempty"`
	// EvidenceRank, when not 0, is the rank of the low-rank prior on which
	// an EP or Laplace fit maximised the evidence over its rater
	// parameters, before a final run with them held fixed on the prior
	// that PriorRank describes (0 there: the dense matrix) gave the
	// posterior, the log evidence and the document (see the notes).
	EvidenceRank int `json:"evidence_rank,omitempty"`
	// Identifiability is "weak", "strong" or "both"; RefRater names the
	// reference rater of strong identifiability.
	Identifiability string `json:"identifiability"`
	RefRater        string `json:"ref_rater,omitempty"`
	// Sampler is "default" or "paper".
	Sampler string `json:"sampler"`
	Chains  int    `json:"chains"`
	Samples int    `json:"samples"`
	Burnin  int    `json:"burnin"`
	Thin    int    `json:"thin"`
	Seed    uint64 `json:"seed"`
	// V and Lambda are the shape and rate of the Gamma prior on rater
	// precisions; SigmaB the standard deviation of the threshold prior.
	V      float64 `json:"v"`
	Lambda float64 `json:"lambda"`
	SigmaB float64 `json:"sigma_b"`
	// FlagThreshold is the predictive probability below which a label is
	// flagged.
	FlagThreshold float64 `json:"flag_threshold"`
	// MaxRhat and MinESS are the convergence limits of the verdict.
	MaxRhat float64 `json:"max_rhat"`
	MinESS  float64 `json:"min_ess"`
	// KeepDraws bounds the number of joint draws kept in Draws.
	KeepDraws int `json:"keep_draws"`
	// gp.Backend names the linear algebra used: "gonum" (pure Go) or
	// "openblas" (the cblas build).
	Backend string `json:"backend"`
	// Precisions is "inferred", "fixed" (alpha = 1, appendix B
	// representation) or "fixed-full" (alpha = 1, one latent vector per
	// label); classification only.
	Precisions string `json:"precisions,omitempty"`
	// Quadrature is the number of Gauss-Hermite nodes of the predictive
	// class distributions; classification only.
	Quadrature int `json:"quadrature,omitempty"`
	// Likelihood is the bounded model's likelihood (beta, truncnorm,
	// warped); Lo and Hi bound its rating scale.
	Likelihood string   `json:"likelihood,omitempty"`
	Lo         *float64 `json:"lo,omitempty"`
	Hi         *float64 `json:"hi,omitempty"`
	// Dispersions is "per-rater" or "shared" (one dispersion for every
	// rater); bounded only.
	Dispersions string `json:"dispersions,omitempty"`
	// Noise is the raters' noise model of an ordinal EP or Laplace fit
	// with several raters, when not each rater's own: "shared-thresholds"
	// (one set of thresholds, each rater's noise sd) or "shared" (one of
	// each for every rater); "per-rater" when a choice kept it.
	Noise string `json:"noise,omitempty"`
	// Confusion records the confusion model's priors: the settings and
	// what empirical Bayes learnt.
	Confusion *ConfusionPrior `json:"confusion,omitempty"`
	// Robust records the settings of a robust classifier fit
	// (multirater/robust).
	Robust *RobustSettings `json:"robust,omitempty"`
}

// RobustSettings are the settings a robust classifier fit was made with
// (Kim & Ghahramani): how the raters' labelling-error rates and latent
// noise were obtained, and whether the plain model was considered.
type RobustSettings struct {
	// Epsilon is every rater's fixed error rate; nil when each is learnt
	// by EM.
	Epsilon *float64 `json:"epsilon,omitempty"`
	// EM names the M-step of learnt error rates: "tilted" (the tilted
	// responsibilities, a stationary point of the EP evidence) or "paper"
	// (Kim & Ghahramani eq. 20 as printed); StartEpsilon, MaxEM and EMTol
	// are EM's start, step bound and tolerance.
	EM           string  `json:"em,omitempty"`
	StartEpsilon float64 `json:"start_epsilon,omitempty"`
	MaxEM        int     `json:"max_em,omitempty"`
	EMTol        float64 `json:"em_tol,omitempty"`
	// Noise is every rater's fixed latent noise sd; 0 when each is learnt
	// by the evidence.
	Noise float64 `json:"noise,omitempty"`
	// Select: the plain and the robust model were both fitted and the one
	// with the larger evidence kept (diagnostics.selected).
	Select bool `json:"select"`
	// Restarts is the number of starting points of the first evidence
	// maximisation.
	Restarts int `json:"restarts"`
	// Positive is the code of the positive class (the sign of the latent
	// score); FitResult.Levels has both classes in the scheme's order.
	Positive string `json:"positive,omitempty"`
}

// ConfusionPrior is the prior of the confusion model (package
// multirater/confusion): rater l's row k is pi_l[k, :] ~
// Dirichlet(Concentration[k] Community[k, :]), the class proportions
// Dirichlet(ClassPrior, ..., ClassPrior).
type ConfusionPrior struct {
	// Hierarchy is "pooled" (the community mean learnt by empirical Bayes)
	// or "none" (fixed at Diagonal).
	Hierarchy string `json:"hierarchy"`
	// Diagonal is the starting (hierarchy none: fixed) prior mean of a
	// correct label, the off-diagonal cells sharing the rest equally.
	Diagonal float64 `json:"diagonal"`
	// ClassPrior is the Dirichlet pseudo-count of each class proportion.
	ClassPrior float64 `json:"class_prior"`
	// LearnConcentration is true when the concentrations were learnt by
	// empirical Bayes too (else fixed).
	LearnConcentration bool `json:"learn_concentration,omitempty"`
	// Concentration[k] is the prior's pseudo-count total of row k and
	// Community[k][j] its mean (rows in the order of Levels), as used by
	// the fit (learnt by empirical Bayes with hierarchy pooled).
	// With several communities they are the communities' weighted mean
	// (the prior of a row before the rater's community is known).
	Concentration []float64   `json:"concentration"`
	Community     [][]float64 `json:"community"`
	// Communities holds each community of raters (hierarchy communities,
	// Venanzi et al. 2014): its weight, row concentrations and mean
	// confusion matrix, and how many raters belong to it most probably.
	Communities []ConfusionCommunity `json:"communities,omitempty"`
	// Candidates is the evidence lower bound of each number of
	// communities tried when the number was chosen by it.
	Candidates []CommunityCandidate `json:"community_candidates,omitempty"`
	// RaterModel is the model of the raters' labels the fit used:
	// "one-coin", "confusion", "communities", "spammer", "graded" or
	// "subtypes";
	// RaterModelCandidates, when it was chosen by the evidence (rater
	// model auto), every candidate's score; RaterModelChoice says which
	// won and why.
	RaterModel           string                `json:"rater_model,omitempty"`
	RaterModelCandidates []RaterModelCandidate `json:"rater_model_candidates,omitempty"`
	RaterModelChoice     string                `json:"rater_model_choice,omitempty"`
	// Gold is the number of items whose class was fixed at their gold
	// label (only when asked for).
	Gold int `json:"gold,omitempty"`
	// MAP is true for EM-MAP point estimates (Dirichlet modes) instead of
	// variational Bayes.
	MAP bool `json:"map,omitempty"`
	// Probit is the multinomial-probit Gaussian-process prior of the items'
	// classes of a fit with a kernel other than the identity (nil: the
	// class proportions).
	Probit *ConfusionProbit `json:"probit,omitempty"`
}

// ConfusionProbit is the confusion model's multinomial-probit
// Gaussian-process prior (Girolami & Rogers 2006): f_.k ~ GP(0, C + b 11'),
// y_nk = f_nk + N(0, 1), z_n = argmax_k y_nk, with C ≈ G G' a pivoted
// Cholesky factor.
type ConfusionProbit struct {
	// BiasVariance is b, the variance of each class's constant.
	BiasVariance float64 `json:"bias_variance"`
	// Rank is the rank of the factor of C, MaxRank its bound and Residual
	// the trace of C - G G' (0: exact).
	Rank     int     `json:"rank"`
	MaxRank  int     `json:"max_rank"`
	Residual float64 `json:"residual"`
	// Quadrature is the number of Gauss-Hermite nodes of the probit
	// integrals (K > 2).
	Quadrature int `json:"quadrature"`
	// Targets[n][k] is the posterior mean of item n's auxiliary variable
	// y_nk (items in Items order): the latent functions' (variational)
	// posterior mean is C (I + C)^-1 Targets_.k, and new items are
	// predicted by GP regression on them.
	Targets [][]float64 `json:"targets"`
	// TargetDraws[s][n][k] are draws of y_nk kept by a Gibbs fit (up to
	// 100, evenly spaced): new items are predicted by GP regression on each
	// and the class distributions averaged.
	TargetDraws [][][]float64 `json:"target_draws,omitempty"`
}

// Learnt are kernel hyperparameters a fit learnt.
type Learnt struct {
	// Source says how: "evidence (ep)".
	Source string `json:"source"`
	// Terms are the learnt kernel terms in the kernel grammar, in the order
	// of the specification's learnt terms (e.g. "rbf:gamma=0.12").
	Terms []string `json:"terms"`
	// Relevance is the learnt inverse squared length-scale gamma_d of each
	// covariate of an ARD term, by covariate name (larger: the covariate
	// matters more).
	Relevance map[string]float64 `json:"relevance,omitempty"`
}

// Output is the shape of a fit's per-item results.
type Output string

const (
	// OutputScores: a latent consensus score per item (ItemResult.Score,
	// Rank, GradeProbs) and rater thresholds (ordinal models).
	OutputScores Output = "scores"
	// OutputClasses: a class distribution per item (ItemResult.ClassProbs,
	// Class) and rater confusion tables (classification models).
	OutputClasses Output = "classes"
	// OutputValues: a latent consensus score per item (ItemResult.Score,
	// Rank) with the consensus value on the rating scale (ItemResult.Value)
	// and rater dispersions and biases (bounded models).
	OutputValues Output = "values"
	// OutputRanking: a score per item (ItemResult.Score, mean and sd;
	// higher = more likely positive), the ROC curve and training AUC,
	// coefficients of linear scores (the AUC model). No rater results.
	OutputRanking Output = "ranking"
)

// Engines that make fits.
const (
	// EngineGibbs is Markov chain Monte Carlo (Gibbs sweeps with extra
	// moves); its fits fill every MCMC field of Diagnostics.
	EngineGibbs = "gibbs"
	// EngineEP is expectation propagation and EngineLaplace Laplace's
	// method: deterministic Gaussian approximations of the posterior, with
	// the log evidence in Diagnostics.Engine.
	EngineEP      = "ep"
	EngineLaplace = "laplace"
	// EngineVB is mean-field variational Bayes; its fits report the
	// evidence lower bound (ELBO) in Diagnostics.Engine.LogEvidence.
	EngineVB = "vb"
	// EngineSMC is tempering sequential Monte Carlo (the AUC model); its
	// log evidence has a Monte Carlo standard error
	// (Diagnostics.LogEvidenceSE).
	EngineSMC = "smc"
)

// Shape returns the output shape of the fit: Output, or for documents
// written before that field existed, the shape their model name implies
// ("classification" gave classes, everything else scores).
func (s ModelSettings) Shape() Output {
	if s.Output != "" {
		return s.Output
	}
	if s.Model == "classification" {
		return OutputClasses
	}
	return OutputScores
}

// Estimate summarises the posterior of a scalar: mean, standard deviation
// and the 2.5%, 50% and 97.5% quantiles.
type Estimate struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	Q025 float64 `json:"q025"`
	Q50  float64 `json:"q50"`
	Q975 float64 `json:"q975"`
}

// RankSummary summarises the posterior of an item's rank among all items
// (1 = highest consensus score).
type RankSummary struct {
	Mean float64 `json:"mean"`
	Q025 float64 `json:"q025"`
	Q50  float64 `json:"q50"`
	Q975 float64 `json:"q975"`
}

// ItemResult is what a fit says about one item.
type ItemResult struct {
	ID string `json:"id"`
	// NLabels is the number of ratings the item received; 0 for items
	// that were predicted from the Gaussian process alone.
	NLabels int `json:"n_labels"`
	// Labels maps rater id to the level code they gave.
	Labels map[string]string `json:"labels,omitempty"`

	// Score is the latent consensus m_n (ordinal).
	Score *Estimate `json:"score,omitempty"`
	// Value is the consensus on the rating scale (bounded models): the
	// predictive distribution of a new rating (mean, sd and the 2.5%, 50%
	// and 97.5% quantiles: a 95% predictive interval).
	Value *Estimate `json:"value,omitempty"`
	// Rank is the item's rank among all items, computed per draw.
	Rank *RankSummary `json:"rank,omitempty"`
	// GradeProbs is the consensus grade distribution: the average over
	// raters of their posterior predictive distributions P(t_nl = k), by
	// level code; Grade is its most probable level.
	GradeProbs map[string]float64 `json:"grade_probs,omitempty"`
	Grade      string             `json:"grade,omitempty"`
	// RaterGradeProbs holds the posterior predictive grade distribution
	// of each rater who labelled the item, by rater id, in the order of
	// FitResult.Levels: per label, so that the document stays linear in
	// the labels (another rater's follows from the item's score and that
	// rater's thresholds; GradeProbs averages every rater's).
	RaterGradeProbs map[string][]float64 `json:"rater_grade_probs,omitempty"`

	// ClassProbs is the consensus predictive class distribution
	// (classification; Rogers et al. eq. 18 with precision sum_l alpha_l),
	// by class code; Class is its most probable class and Entropy its
	// entropy in bits.
	ClassProbs map[string]float64 `json:"class_probs,omitempty"`
	Class      string             `json:"class,omitempty"`
	Entropy    *float64           `json:"entropy,omitempty"`
	// ArgmaxProbs is the posterior probability that each class has the
	// largest latent value M_nk, by class code.
	ArgmaxProbs map[string]float64 `json:"argmax_probs,omitempty"`
	// RaterClassProbs holds raters' own predictive class distributions
	// (eq. 18 with precision alpha_l) for the item, by rater id, in the
	// order of FitResult.Levels.
	RaterClassProbs map[string][]float64 `json:"rater_class_probs,omitempty"`

	// Positive is the item's label for the AUC model: true when the
	// majority of its labels is the positive class (nil: no majority, or
	// no labels; the item is scored by prediction).
	Positive *bool `json:"positive,omitempty"`
}

// Threshold summarises one rater threshold b_lk, the boundary between
// levels Between[0] and Between[1] on the latent scale.
type Threshold struct {
	Estimate
	Between [2]string `json:"between"`
	// Fixed is true for the reference rater's first threshold under strong
	// identifiability (fixed at 0).
	Fixed bool `json:"fixed,omitempty"`
}

// RaterResult is what a fit says about one rater.
type RaterResult struct {
	ID      string `json:"id"`
	NLabels int    `json:"n_labels"`
	// LevelCounts counts the rater's labels per level, in the order of
	// FitResult.Levels.
	LevelCounts []int `json:"level_counts"`
	// Reference is true for the reference rater of strong
	// identifiability, whose precision is fixed at 1.
	Reference bool `json:"reference,omitempty"`
	// Model is true for a rater marked as a model (an LLM judge or a
	// classifier) in the labels.
	Model bool `json:"model,omitempty"`
	// Precision is alpha_l; Variance is 1/alpha_l.
	Precision Estimate `json:"precision"`
	Variance  Estimate `json:"variance"`
	// Dispersion is the rater's inverse dispersion nu_l (bounded models:
	// larger is more consistent; for the warped likelihood 1/sigma_l),
	// with a 95% interval from Laplace's approximation on ln nu_l;
	// Precision repeats it. Bias is the rater's additive bias on the
	// latent scale, when fitted.
	Dispersion *Estimate `json:"dispersion,omitempty"`
	Bias       *Estimate `json:"bias,omitempty"`
	// Thresholds are the rater's K-1 thresholds b_l1 < ... < b_l,K-1
	// (ordinal).
	Thresholds []Threshold `json:"thresholds,omitempty"`
	// Severity is the posterior mean of the mean of the rater's thresholds
	// minus the mean over all raters of theirs, on the consensus (latent)
	// scale: a rater with severity 0.5 needs an item to score 0.5 higher
	// than the average rater does to give it the same grade. Positive is
	// severe, negative lenient. SeverityQ025 and SeverityQ975 bound its
	// 95% credible interval.
	Severity     float64 `json:"severity"`
	SeverityQ025 float64 `json:"severity_q025"`
	SeverityQ975 float64 `json:"severity_q975"`
	// MeanLogPred is the mean over the rater's labels of the log posterior
	// predictive probability of the label (in sample).
	MeanLogPred float64 `json:"mean_log_pred"`
	// ConsensusAgreement is the share of the rater's labels equal to the
	// item's consensus class, and Confusion[k][j] counts the items with
	// consensus class k that the rater labelled j, in the order of
	// FitResult.Levels (classification).
	ConsensusAgreement *float64 `json:"consensus_agreement,omitempty"`
	Confusion          [][]int  `json:"confusion,omitempty"`
	// Epsilon is the rater's labelling-error rate (robust model).
	Epsilon *ErrorRate `json:"epsilon,omitempty"`
	// ConfusionProbs[k][j] is the posterior of pi_l[k, j], the probability
	// that the rater labels an item of class k as j (confusion model), in
	// the order of FitResult.Levels: mean, sd and 95% interval.
	ConfusionProbs [][]Estimate `json:"confusion_probs,omitempty"`
	// Accuracy is the posterior of the rater's expected probability of a
	// correct label, sum_k rho_k pi_l[k, k] with rho the class proportions
	// (confusion model).
	Accuracy *Estimate `json:"accuracy,omitempty"`
	// MostConfused is the rater's largest off-diagonal confusion
	// probability (confusion model).
	MostConfused *ClassConfusion `json:"most_confused,omitempty"`
	// SpamScore is the mean total-variation distance between the rows of
	// the rater's posterior mean confusion matrix (0: every row alike, the
	// labels say nothing about the class; 1: a perfect rater); Spammer is
	// true when it is below the fit's spam threshold (confusion model).
	SpamScore *float64 `json:"spam_score,omitempty"`
	Spammer   bool     `json:"spammer,omitempty"`
	// Community is the rater's most probable community (1-based, in the
	// order of ModelSettings.Confusion.Communities) when the confusion
	// model has several.
	Community int `json:"community,omitempty"`
}

// ConfusionCommunity is one community of raters of the confusion model.
type ConfusionCommunity struct {
	Weight        float64     `json:"weight"`
	Raters        int         `json:"raters"`
	Concentration []float64   `json:"concentration"`
	Mean          [][]float64 `json:"mean"`
}

// CommunityCandidate is a number of communities and the evidence lower
// bound of the variational fit with it.
type CommunityCandidate struct {
	Communities int     `json:"communities"`
	ELBO        float64 `json:"elbo"`
	Chosen      bool    `json:"chosen,omitempty"`
	// Degenerate is true when some community is no rater's most probable
	// one (fewer communities in effect): such a candidate is not chosen.
	Degenerate bool `json:"degenerate,omitempty"`
	// Failed, when not empty, says why the candidate's fit failed
	// numerically: it dropped out of the choice (its ELBO is 0).
	Failed string `json:"failed,omitempty"`
}

// RaterModelCandidate is one rater model fitted when the model was chosen
// by the evidence: its evidence lower bound, the number of prior
// parameters that empirical Bayes learnt and their cost (1/2 ln(raters)
// each), the score (ELBO - penalty) that chose, and its fit's iterations,
// convergence and time.
type RaterModelCandidate struct {
	Model           string  `json:"model"`
	ELBO            float64 `json:"elbo"`
	Hyperparameters int     `json:"hyperparameters"`
	Penalty         float64 `json:"penalty"`
	Score           float64 `json:"score"`
	// HeldOut is the leave-one-label-out log predictive probability of
	// the labels (each label predicted from the item's other labels and
	// the rater's other labels, nothing refitted).
	HeldOut float64 `json:"held_out"`
	// Excluded, when not empty, says why the candidate could not be
	// chosen: it predicted held-out labels worse than a simpler one.
	Excluded string `json:"excluded,omitempty"`
	// Communities is the number of communities of a communities fit.
	Communities int     `json:"communities,omitempty"`
	Iterations  int     `json:"iterations"`
	Converged   bool    `json:"converged"`
	Seconds     float64 `json:"seconds"`
	Chosen      bool    `json:"chosen,omitempty"`
	// Failed, when not empty, says why the candidate failed numerically:
	// it dropped out of the choice.
	Failed string `json:"failed,omitempty"`
}

// ClassConfusion is a confusion of a rater: items of class True labelled
// Label with probability Prob (posterior mean).
type ClassConfusion struct {
	True  string  `json:"true"`
	Label string  `json:"label"`
	Prob  float64 `json:"prob"`
}

// LabelError is one label with the probability that it is a labelling
// error (robust model; see package robust for the definition).
type LabelError struct {
	Item   string  `json:"item"`
	Rater  string  `json:"rater"`
	Label  string  `json:"label"`
	PError float64 `json:"p_error"`
}

// ErrorRate is a rater's labelling-error rate epsilon (robust model): its
// value at the end of the fit and, when it was learnt by EM, its value
// after each EM step (the first entry is the starting value).
type ErrorRate struct {
	Value   float64   `json:"value"`
	History []float64 `json:"history,omitempty"`
}

// Flag is a surprising label: the posterior predictive probability of the
// label the rater gave is below the flag threshold.
type Flag struct {
	Item  string  `json:"item"`
	Rater string  `json:"rater"`
	Label string  `json:"label"`
	Prob  float64 `json:"prob"`
	// Expected is the level the model found most probable for this rater
	// and item.
	Expected string `json:"expected"`
}

// SortFlags orders flags as a fit's result lists them, the most surprising
// first: by probability, then by item and rater (a stable sort).
func SortFlags(flags []Flag) {
	sort.SliceStable(flags, func(i, j int) bool {
		a, b := flags[i], flags[j]
		if a.Prob != b.Prob {
			return a.Prob < b.Prob
		}
		if a.Item != b.Item {
			return a.Item < b.Item
		}
		return a.Rater < b.Rater
	})
}

// Diagnostics reports convergence and cost. Engine, Converged, Verdict,
// Seconds and Notes are filled by every engine; the other fields are those
// of MCMC fits (EngineGibbs) and stay zero for deterministic engines.
type Diagnostics struct {
	// Engine names the engine and its iterations (and, for deterministic
	// engines, the log evidence).
	Engine *EngineDiagnostics `json:"engine,omitempty"`
	// MaxRhat is the largest rank-normalised split R-hat and MinESSBulk and
	// MinESSTail the smallest bulk and tail effective sample sizes (Vehtari
	// et al. 2021) over every free parameter: precisions, thresholds and
	// latent scores. Parameters fixed by strong identifiability are
	// excluded. MaxRhat is NaN, written as JSON null, when R-hat is not
	// available: the chains kept fewer than 4 draws each (see diag).
	MaxRhat    float64 `json:"max_rhat"`
	MinESSBulk float64 `json:"min_ess_bulk"`
	MinESSTail float64 `json:"min_ess_tail"`
	// WorstRhat and WorstESS name the parameters that attain them.
	WorstRhat string `json:"worst_rhat"`
	WorstESS  string `json:"worst_ess"`
	// Converged is MaxRhat < ModelSettings.MaxRhat and
	// MinESSBulk >= ModelSettings.MinESS; Verdict says it in words.
	Converged bool   `json:"converged"`
	Verdict   string `json:"verdict"`
	// Seconds is the wall time of the whole fit; SamplingSeconds that of
	// the chains alone.
	Seconds         float64 `json:"seconds"`
	SamplingSeconds float64 `json:"sampling_seconds"`
	// Draws is the number of posterior draws kept, over all chains.
	Draws int `json:"draws"`
	// SweepsPerSecond is the sampler's speed per chain.
	SweepsPerSecond float64 `json:"sweeps_per_second"`
	// ESSPerCPUSecond is MinESSBulk divided by the CPU time (user +
	// system, all threads) the whole process used while the chains ran,
	// from their start until the last one finished (getrusage around the
	// sampling phase: the chains run in parallel, so it is not per chain;
	// the model's set-up, any EP fit before the chains and the summary are
	// not in it). Absent when the CPU time is not known (a platform
	// without getrusage, or chains that ran in other processes and did not
	// report theirs).
	ESSPerCPUSecond float64 `json:"ess_per_cpu_second,omitempty"`
	// Parameters lists R-hat and ESS for every free parameter, named
	// "alpha[RATER]", "b[RATER,K]" and "m[ITEM]" (ordinal) or
	// "m[ITEM,CLASS]", the class-centred latent value M_nk - mean_j M_nj
	// (classification).
	Parameters []ParamDiag `json:"parameters"`
	// Autocorrelation is the autocorrelation function of each rater's
	// precision (lags 0, 1, ...), averaged over chains, by rater id.
	Autocorrelation map[string][]float64 `json:"autocorrelation"`
	// Moves reports the acceptance or work statistics of the sampler's
	// moves.
	Moves map[string]float64 `json:"moves,omitempty"`
	// Notes carry warnings about the data or the fit.
	Notes []string `json:"notes,omitempty"`
	// LogEvidence repeats Engine.LogEvidence for models whose choice it
	// decides (robust). With model selection, Evidence holds the log
	// evidence of each candidate model by name and Selected names the one
	// kept ("plain" or "robust").
	LogEvidence *float64           `json:"log_evidence,omitempty"`
	Evidence    map[string]float64 `json:"evidence,omitempty"`
	// LogEvidenceSE is the Monte Carlo standard error of LogEvidence
	// (engine smc).
	LogEvidenceSE *float64 `json:"log_evidence_se,omitempty"`
	Selected      string   `json:"selected,omitempty"`
	// ModelCandidates are the models a fit chose among (the bounded
	// model's likelihoods, dispersion sharing and kernels; the ordinal
	// model's noise models and kernels), each with its score, the chosen
	// one marked; Choice says how and why.
	ModelCandidates []ModelCandidate `json:"model_candidates,omitempty"`
	Choice          string           `json:"choice,omitempty"`
}

// ModelCandidate is one model a fit considered: its settings, its scores
// and the seconds its fit took. A candidate whose fit failed has Error and
// no scores.
type ModelCandidate struct {
	// Name is the candidate's settings in one word
	// ("normal/shared/identity").
	Name string `json:"name"`
	// Likelihood, Dispersions (bounded), Noise (ordinal) and Kernel are
	// its settings.
	Likelihood  string `json:"likelihood,omitempty"`
	Dispersions string `json:"dispersions,omitempty"`
	Noise       string `json:"noise,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	// LogEvidence is the engine's objective at the fitted parameters (the
	// log evidence, plus the log prior of the rater parameters where
	// there is one); comparable only among candidates of one likelihood.
	LogEvidence *float64 `json:"log_evidence,omitempty"`
	// Score, when set, is what the choice compares instead of LOO: the
	// log evidence (without the rater parameters' log prior) less
	// Penalty, 1/2 ln(n) per learnt parameter, n the ratings that inform
	// it (a BIC-like correction for the parameters that evidence
	// maximisation fitted; the ordinal model's choice). Parameters
	// counts them.
	Score      *float64 `json:"score,omitempty"`
	Penalty    float64  `json:"penalty,omitempty"`
	Parameters int      `json:"parameters,omitempty"`
	// LOO is the score the choice compares: the mean over the ratings of
	// the leave-one-out log predictive probability of the rating's cell
	// at the data's resolution under the consensus's predictive (a new
	// rater's); LOOOwn the same under each rating's own rater's
	// likelihood, for comparison.
	LOO     *float64 `json:"loo,omitempty"`
	LOOOwn  *float64 `json:"loo_own,omitempty"`
	Seconds float64  `json:"seconds"`
	Chosen  bool     `json:"chosen"`
	Error   string   `json:"error,omitempty"`
}

// EngineDiagnostics is the part of the diagnostics that only says which
// engine ran and how far; together with Diagnostics' Converged, Verdict,
// Seconds and Notes (which every engine fills) it is what any fit reports.
type EngineDiagnostics struct {
	// Name is the engine (EngineGibbs, ...).
	Name string `json:"name"`
	// Iterations is the number of iterations per chain (MCMC sweeps,
	// including burn-in) or of the deterministic engine's updates.
	Iterations int `json:"iterations"`
	// LogEvidence is the log marginal likelihood (EP/Laplace); nil for
	// MCMC.
	LogEvidence *float64 `json:"log_evidence,omitempty"`
}

// ParamDiag is the convergence diagnostics of one parameter. Rhat is NaN,
// written as JSON null, when it is not available (chains of fewer than 4
// draws).
type ParamDiag struct {
	Name    string  `json:"name"`
	Mean    float64 `json:"mean"`
	SD      float64 `json:"sd"`
	Rhat    float64 `json:"rhat"`
	ESSBulk float64 `json:"ess_bulk"`
	ESSTail float64 `json:"ess_tail"`
}

// nullNaN is a float64 written to JSON as null when it is NaN, and read
// from null as NaN (a number not available). An absent field is left alone.
type nullNaN struct{ p *float64 }

func (n nullNaN) MarshalJSON() ([]byte, error) {
	if math.IsNaN(*n.p) {
		return []byte("null"), nil
	}
	return json.Marshal(*n.p)
}

func (n nullNaN) UnmarshalJSON(b []byte) error { return ReadNumber(b, n.p) }

// ReadNumber reads the JSON number b into *p, or null as NaN (a number not
// available): how the documents' numbers that may be undefined are read.
func ReadNumber(b []byte, p *float64) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*p = math.NaN()
		return nil
	}
	return json.Unmarshal(b, p)
}

// MarshalJSON writes d with max_rhat null when R-hat is not available.
func (d Diagnostics) MarshalJSON() ([]byte, error) {
	type plain Diagnostics
	return json.Marshal(struct {
		plain
		MaxRhat nullNaN `json:"max_rhat"`
	}{plain(d), nullNaN{&d.MaxRhat}})
}

// UnmarshalJSON reads max_rhat null as NaN (R-hat not available).
func (d *Diagnostics) UnmarshalJSON(b []byte) error {
	type plain Diagnostics
	return json.Unmarshal(b, &struct {
		*plain
		MaxRhat nullNaN `json:"max_rhat"`
	}{(*plain)(d), nullNaN{&d.MaxRhat}})
}

// MarshalJSON writes p with rhat null when R-hat is not available.
func (p ParamDiag) MarshalJSON() ([]byte, error) {
	type plain ParamDiag
	return json.Marshal(struct {
		plain
		Rhat nullNaN `json:"rhat"`
	}{plain(p), nullNaN{&p.Rhat}})
}

// UnmarshalJSON reads rhat null as NaN (R-hat not available).
func (p *ParamDiag) UnmarshalJSON(b []byte) error {
	type plain ParamDiag
	return json.Unmarshal(b, &struct {
		*plain
		Rhat nullNaN `json:"rhat"`
	}{(*plain)(p), nullNaN{&p.Rhat}})
}

// Traces are thinned per-chain traces for plots.
type Traces struct {
	// Every is the number of kept draws between trace points.
	Every int `json:"every"`
	// Alpha maps rater id to one trace per chain of the rater's precision.
	Alpha map[string][][]float64 `json:"alpha"`
}

// GaussianSites is FitResult.Gaussian.
type GaussianSites struct {
	// Precision[n] and Shift[n] are item n's summed site precision and
	// precision-weighted site mean (items in FitResult.Items order): the
	// posterior of the latent consensus m is
	//
	//	q(m) ∝ N(m; 0, C) exp(-1/2 m' diag(Precision) m + Shift' m),
	//
	// i.e. N(Sigma Shift, Sigma), Sigma = (C^-1 + diag(Precision))^-1: EP's
	// sites (Chu eq. 17 with Pi = diag(Precision)), or Laplace's W at the
	// mode with Shift = W f_MAP + grad log p(y | f_MAP) (Chu eq. 16).
	Precision []float64 `json:"precision"`
	Shift     []float64 `json:"shift"`
}

// Draws is a bounded set of joint posterior draws, evenly spaced over all
// chains. Draw s of every array belongs to the same state of the sampler.
type Draws struct {
	N int `json:"n"`
	// Alpha[s][l] is rater l's precision (raters in FitResult.Raters
	// order).
	Alpha [][]float64 `json:"alpha"`
	// Thresholds[s][l] are rater l's K-1 thresholds (ordinal).
	Thresholds [][][]float64 `json:"thresholds,omitempty"`
	// M[s][n] is item n's latent consensus (items in FitResult.Items
	// order).
	M [][]float64 `json:"m"`
	// MClass[s] holds every item's class latent values in draw s:
	// MClass[s].Row(n)[k] is item n's latent value of class k
	// (classification; M is then empty). In the document m_class[s][n][k].
	MClass []ClassDraw `json:"m_class,omitempty"`
}

// CheckPredictable returns a *DataError unless res is a fit result of
// model (article "a" or "an" before its name in the message) whose items
// have the covariance cov (nil: not checked): what every family's
// NewPredictor checks first.
func CheckPredictable(res *FitResult, article, model string, cov mat.Symmetric) error {
	if res == nil || res.Model.Model != model {
		return DataErrorf("predictor needs %s %s fit result", article, model)
	}
	if cov != nil && cov.SymmetricDim() != len(res.Items) {
		return DataErrorf("covariance is %d×%d, the fit has %d items", cov.SymmetricDim(), cov.SymmetricDim(), len(res.Items))
	}
	return nil
}

// NormalEstimate is the Estimate of a normal distribution N(mu, sd^2):
// its mean, sd, and 2.5%, 50% and 97.5% quantiles (the Gaussian
// approximations' latent scores).
func NormalEstimate(mu, sd float64) *Estimate {
	const z = 1.959963984540054
	return &Estimate{Mean: mu, SD: sd, Q025: mu - z*sd, Q50: mu, Q975: mu + z*sd}
}

// SortFlags orders the flags least probable first (stably: ties keep
// their order) and makes none an empty list, as the document has it.
func (r *FitResult) SortFlags() {
	sort.SliceStable(r.Flags, func(i, j int) bool { return r.Flags[i].Prob < r.Flags[j].Prob })
	if r.Flags == nil {
		r.Flags = []Flag{}
	}
}
