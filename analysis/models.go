package analysis

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/bounded"
	"concord/multirater/classify"
	"concord/multirater/confusion"
	"concord/multirater/ep"
	"concord/multirater/gp"
	"concord/multirater/infer"
	"concord/multirater/kernel"
	"concord/multirater/mcmc"
	"concord/multirater/ordinal"
	"concord/multirater/robust"
)

// Model is one entry of the model table (Models): what a model fits, how
// its spec is completed and checked, how it is fitted and how a fit of it
// predicts new items. Every call of a model family's fit and predict
// functions is made from an entry of the table, so that a family is wired
// to the application in one place.
type Model struct {
	// Name is the model's name in FitSpec.Model and in the fit document
	// (multirater.ModelSettings.Model).
	Name string
	// Doc says in one line what the model estimates.
	Doc string
	// Schemes are the scheme kinds whose labels the model fits.
	Schemes []annotations.Kind
	// Engines are the inference engines that can fit the model
	// (multirater.EngineGibbs, ...), the default (DefaultEngine) first.
	Engines []string
	// Output is the shape of the per-item results of its fits.
	Output multirater.Output

	// settings is the family's Settings type, the declaration of its
	// settings (see Fields).
	settings reflect.Type
	// defaults fills the model's zero spec fields from the family's own
	// option defaults (its WithDefaults).
	defaults func(FitSpec) FitSpec
	// validate checks the spec's model-specific rules (nil: none).
	validate func(FitSpec) error
	// checkScheme checks the scheme beyond its kind (nil: nothing more).
	checkScheme func(annotations.Scheme) error
	// checkGiven rejects settings given explicitly that the model would not
	// use (nil: none).
	checkGiven func(s FitSpec, given func(field string) bool) error
	// fit fits the dataset with the items' covariance cov (nil: computed
	// from the dataset's items).
	fit fitFunc
	// predictor prepares the predictions of a fit result of the model from
	// the covariance matrix of its items.
	predictor func(res *multirater.FitResult, cov mat.Symmetric) (itemPredictor, error)
	// itemsPredictor, when set, predicts new items from a fit result by
	// the model's own features (the auc model's covariates) instead of the
	// kernel's cross-covariances (predictor).
	itemsPredictor func(res *multirater.FitResult) (func([]annotations.Item) (*Predictions, error), error)
}

// itemPredictor is what the families' predictors have in common.
type itemPredictor interface {
	Predict(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult
}

// notedPredictor is a predictor that also says how it predicted (the
// ordinal model's: for an EP fit, the evidence-ratio correction or the
// Gaussian predictive), for the predictions' notes.
type notedPredictor interface {
	PredictNotes(ids []string, cross mat.Matrix, prior []float64) ([]multirater.ItemResult, []string)
}

// Models returns the model table, the default model (ModelOrdinal) first.
func Models() []Model {
	return []Model{
		{
			Name:     ModelOrdinal,
			settings: reflect.TypeFor[ordinal.Settings](),
			Doc:      "multi-rater ordinal Gaussian process (Rogers et al. sec. 2.1-2.2): consensus score, rank and grade per item, rater precisions and thresholds",
			Schemes:  []annotations.Kind{annotations.Ordinal},
			// EP first, the default (issue 29 item 4): it chooses the noise
			// model and the kernel by the penalised evidence, which the
			// Gibbs sampler (per-rater noise only) has no means to do.
			Engines: []string{multirater.EngineEP, multirater.EngineLaplace, multirater.EngineGibbs},
			Output:  multirater.OutputScores,
			defaults: func(s FitSpec) FitSpec {
				o := ordinalOptions(s, nil).WithDefaults()
				s = s.withFamilyDefaults(o.Settings, familyPriors{o.V, o.Lambda, o.FlagThreshold, o.MaxRhat, o.MinESS, o.KeepDraws})
				s.SigmaB = o.SigmaB
				if e := strings.ToLower(s.Engine); s.Noise == "" && (e == multirater.EngineEP || e == multirater.EngineLaplace) {
					s.Noise = ordinal.Auto
				}
				return s
			},
			validate:  validateOrdinal,
			fit:       fitter(OrdinalData, func(d *ordinal.Data) []string { return d.ItemIDs }, fitOrdinalCov),
			predictor: predictorOf(ordinal.NewPredictor),
		},
		{
			Name:        ModelClassification,
			settings:    reflect.TypeFor[classify.Settings](),
			Doc:         "multi-rater Gaussian process classification (Rogers et al. sec. 2.3): class distribution per item, rater precisions and confusions",
			Schemes:     []annotations.Kind{annotations.Nominal, annotations.Binary},
			Engines:     []string{multirater.EngineGibbs},
			Output:      multirater.OutputClasses,
			checkScheme: checkClasses,
			defaults: func(s FitSpec) FitSpec {
				o := classOptions(s, nil).ForKernel(s.hasKernel()).WithDefaults()
				s = s.withFamilyDefaults(o.Settings, familyPriors{o.V, o.Lambda, o.FlagThreshold, o.MaxRhat, o.MinESS, o.KeepDraws})
				s.Precisions = o.Precisions.String()
				s.SigmaB = 0 // no thresholds: the spec that runs has no threshold prior
				return s
			},
			checkGiven: checkClassificationGiven,
			fit:        fitter(ClassData, func(d *classify.Data) []string { return d.ItemIDs }, fitClassificationCov),
			predictor:  predictorOf(classify.NewPredictor),
		},
		{
			Name:     ModelBounded,
			settings: reflect.TypeFor[bounded.Settings](),
			Doc:      "multi-rater bounded Gaussian process (Jensen et al.: beta, truncated-Gaussian, warped or normal likelihood, by default chosen by held-out ratings): consensus value with a predictive interval and latent score per item, rater dispersions",
			Schemes:  []annotations.Kind{annotations.Bounded},
			Engines:  []string{multirater.EngineEP, multirater.EngineLaplace},
			Output:   multirater.OutputValues,
			defaults: func(s FitSpec) FitSpec {
				o := boundedOptions(s, nil).WithDefaults()
				s.Likelihood, s.Dispersions, s.Bounds, s.FlagThreshold = o.Likelihood, o.Dispersions, o.Bounds, o.FlagThreshold
				if s.KeepDraws == 0 {
					s.KeepDraws = o.RankDraws
				}
				return s
			},
			validate:  validateBounded,
			fit:       fitter(BoundedData, func(d *bounded.Data) []string { return d.ItemIDs }, fitBoundedCov),
			predictor: predictorOf(bounded.NewPredictor),
		},
		{
			Name:     ModelRobust,
			settings: reflect.TypeFor[robust.Settings](),
			Doc:      "label-noise-robust Gaussian process classification (Kim & Ghahramani): class probability and latent score per item, each rater's labelling-error rate, the probability that each label is an error",
			Schemes:  []annotations.Kind{annotations.Binary},
			Engines:  []string{multirater.EngineEP},
			Output:   multirater.OutputClasses,
			defaults: func(s FitSpec) FitSpec {
				o := robustOptions(s, nil).WithDefaults()
				s.FlagThreshold = o.FlagThreshold
				if s.KeepDraws == 0 {
					s.KeepDraws = o.RankDraws
				}
				if s.EM == "" {
					s.EM = "tilted"
				}
				return s
			},
			validate:  validateRobust,
			fit:       fitter(RobustData, func(d *robust.Data) []string { return d.ItemIDs }, fitRobustCov),
			predictor: predictorOf(robust.NewPredictor),
		},
		{
			Name:        ModelConfusion,
			settings:    reflect.TypeFor[confusion.Settings](),
			Doc:         "multi-rater classification with a confusion matrix per rater (Bayesian Dawid-Skene with a community prior learnt by empirical Bayes): class distribution per item, each rater's confusion matrix with intervals, accuracy and spam score",
			Schemes:     []annotations.Kind{annotations.Nominal, annotations.Binary, annotations.Ordinal},
			Engines:     []string{multirater.EngineVB, multirater.EngineGibbs},
			Output:      multirater.OutputClasses,
			checkScheme: checkClasses,
			defaults:    confusionDefaults,
			validate:    validateConfusion,
			fit:         fitConfusion,
			predictor:   predictorOf(confusion.NewPredictor),
		},
		aucModel(),
	}
}

// robustOptions maps a spec to the robust family's options (zero fields
// stay zero: the family's defaults).
func robustOptions(spec FitSpec, progress func(multirater.Progress)) robust.Options {
	o := robust.Options{Select: spec.Select, Noise: spec.Sigma, Restarts: spec.Restarts, Seed: spec.Seed,
		FlagThreshold: spec.FlagThreshold, RankDraws: spec.KeepDraws, PaperEM: strings.EqualFold(spec.EM, "paper"), Progress: progress}
	if spec.Epsilon != nil {
		o.FixEpsilon, o.Epsilon = true, *spec.Epsilon
	}
	return o
}

// validateRobust checks the robust model's settings.
func validateRobust(s FitSpec) error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	if s.Select && s.Epsilon != nil {
		return bad("select compares the plain model with the robust one whose error rates are learnt: leave epsilon out")
	}
	switch strings.ToLower(s.EM) {
	case "", "tilted", "paper":
	default:
		return bad("em %q: expected tilted or paper", s.EM)
	}
	return nil
}

// fitRobustCov fits data (from RobustData(ds)) with the items' prior
// covariance cov.
func fitRobustCov(ctx context.Context, ds *annotations.Dataset, data *robust.Data, cov *Covariance, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	data.Kernel = cov.Kernel
	var ks kernel.Spec
	var ok bool
	var err error
	if data.Cov, data.Learn, ks, ok, err = deterministicKernel(spec, cov, data.ItemIDs); err != nil {
		return nil, err
	}
	res, err := robust.Fit(ctx, data, robustOptions(spec, progress))
	if res, err = deterministicFitted(res, err, ds, cov, false, ks, ok); err != nil {
		return res, err
	}
	if note := identityOneLabelNote(ds, data, cov); note != "" {
		res.Diagnostics.Notes = append([]string{note}, res.Diagnostics.Notes...)
	}
	return res, nil
}

// identityOneLabelNote warns when a robust fit can say nothing about which
// labels are wrong: with the identity kernel an item's latent value is
// informed by its own labels only, so when no item has two, every label of
// a class gets the same p_error. It names what the items offer instead.
func identityOneLabelNote(ds *annotations.Dataset, data *robust.Data, cov *Covariance) string {
	if data.Learn != nil {
		return ""
	}
	ks, err := cov.parsed, error(nil)
	if ks == nil && data.Kernel != "" {
		ks, err = kernel.ParseSpec(data.Kernel)
	}
	if data.Kernel != "" && (err != nil || !ks.Identity()) {
		return ""
	}
	per := make([]int, len(data.ItemIDs))
	for _, l := range data.Labels {
		if per[l.Item]++; per[l.Item] > 1 {
			return ""
		}
	}
	var cols []string
	text := false
	for _, it := range ds.Items {
		text = text || it.Text != ""
		for c := range it.Covariates {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	sort.Strings(cols)
	hint := "give the items' features a kernel"
	switch {
	case len(cols) > 0:
		hint = fmt.Sprintf("the items have numeric columns (%s): --kernel rbf --standardize (or ard) lets alike items inform each other", strings.Join(cols, ", "))
	case text:
		hint = "the items have text: --kernel text lets alike items inform each other"
	}
	return "the kernel is identity and no item has more than one label, so nothing but its own label informs an item: every label of a class gets the same p_error and none can be singled out as wrong; " + hint
}

// boundedOptions maps a spec to the bounded family's options (zero fields
// stay zero: the family's defaults, except the likelihood and the
// dispersion sharing, which are chosen, bounded.Auto, unless given; a fixed
// dispersion is every rater's).
func boundedOptions(spec FitSpec, progress func(multirater.Progress)) bounded.Options {
	o := bounded.Options{Likelihood: spec.Likelihood, Dispersions: spec.Dispersions, Engine: strings.ToLower(spec.Engine), Dispersion: spec.Dispersion,
		Bias: spec.Bias, Bounds: spec.Bounds, Restarts: spec.Restarts, Seed: spec.Seed,
		FlagThreshold: spec.FlagThreshold, RankDraws: spec.KeepDraws, Progress: progress}
	if strings.TrimSpace(o.Likelihood) == "" {
		o.Likelihood = bounded.Auto
	}
	if strings.TrimSpace(o.Dispersions) == "" {
		o.Dispersions = bounded.Auto
		if o.Dispersion > 0 || o.Bias {
			o.Dispersions = bounded.PerRater // nothing to choose
		}
	}
	if l, err := bounded.ParseLikelihood(o.Likelihood); err == nil {
		o.Likelihood = l
	}
	if d, err := bounded.ParseDispersions(o.Dispersions); err == nil {
		o.Dispersions = d
	}
	return o
}

// validateBounded checks the bounded model's settings.
func validateBounded(s FitSpec) error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	if _, err := bounded.ParseLikelihood(s.Likelihood); err != nil {
		return bad("%s", err)
	}
	disp, err := bounded.ParseDispersions(s.Dispersions)
	if err != nil {
		return bad("%s", err)
	}
	if disp == bounded.Shared && s.Bias {
		return bad("dispersions %q with bias: a bias per rater goes with per-rater dispersions (--dispersions per-rater, or leave --bias out)", s.Dispersions)
	}
	switch strings.ToLower(s.Bounds) {
	case "", bounded.BoundsCensor, bounded.BoundsSqueeze:
	default:
		return bad("bounds %q: expected squeeze or censor", s.Bounds)
	}
	return nil
}

// checkSpread refuses to learn the raters' dispersions from ratings that
// are all the same value: nothing bounds them then (the evidence grows
// without limit as the dispersions do, and a fit would report a "converged"
// consensus with absurd precisions). With the dispersion fixed the fit is
// well posed.
func checkSpread(data *bounded.Data, spec FitSpec) error {
	if spec.Dispersion != 0 || len(data.Ratings) == 0 {
		return nil
	}
	v := data.Ratings[0].Value
	for _, r := range data.Ratings[1:] {
		if r.Value != v {
			return nil
		}
	}
	disp := SettingOf(func(s *FitSpec) any { return &s.Dispersion })
	return annotations.Errorf(annotations.EINVALID, "all %d ratings are %v: with no spread in the ratings the raters' dispersions cannot be learnt (they grow without bound); fix one for every rater with --%s (field %q, %s), e.g. 10", len(data.Ratings), v, disp.Flag(), disp.Name, disp.Range())
}

// LearntKernelRank is the default number of inducing items of a learnt
// covariate kernel's FITC prior (FitSpec.Rank 0, from PivotedFromItems
// items): gp.DefaultRank, at most 128, since every evaluation of the
// evidence runs EP or Newton at O(N M^2) per sweep. On the ladder's 1,000
// items (robust, rbf width learnt, 8 covariates) M = 128 took 11 CPU s,
// M = 349 81 CPU s, the dense prior more than 120; the consensus of
// M = 128 had Spearman 0.985 with that of M = 349 and 0.881 accuracy
// against the synthetic truth (0.892).
func LearntKernelRank(n int) int { return min(gp.DefaultRank(n), 128) }

// learntRank is the default number of inducing items of spec's learnt
// covariate kernel on n items: LearntKernelRank(n), and for the robust
// model robust.InducingRank of it, which keeps N M^2 (an EP sweep's work)
// at most that of 4,000 items and 128 (64 at 16,000 items): its EM and
// width search make 60-100 evaluations of the evidence, each a full EP
// run over every item.
func learntRank(spec FitSpec, n int) int {
	m := LearntKernelRank(n)
	if strings.EqualFold(spec.Model, ModelRobust) {
		m = robust.InducingRank(n, m)
	}
	return m
}

// deterministicKernel returns the prior covariance of a family fitted by
// ep or laplace from the items' covariance cov: the fixed part (cov.Cov,
// or nil for the identity) and, when spec's kernel has terms to learn,
// those terms split off (learn), with what learntKernel needs (ks, ok).
func deterministicKernel(spec FitSpec, cov *Covariance, itemIDs []string) (fixedCov mat.Symmetric, learn *infer.LearnKernel, ks kernel.Spec, ok bool, err error) {
	if cov.Cov != nil { // a concrete pointer: a nil one must stay a nil interface
		fixedCov = cov.Cov
	}
	ks, learn, fixed, ok, err := learnKernel(spec, cov, itemIDs, fixedCov)
	if err != nil {
		return nil, nil, nil, false, err
	}
	if ok {
		fixedCov = fixed
		setLearntRank(learn, spec, len(itemIDs))
	}
	return fixedCov, learn, ks, ok, nil
}

// setLearntRank asks for learn's prior in inducing-point (FITC) form, with
// its exact evidence gradient, for n items: spec.Rank inducing items when
// positive, learntRank(spec, n) by default from PivotedFromItems items, the
// dense N×N prior with Rank -1 or fewer items (infer.LearnKernel.NewKernel
// falls back to the dense kernel for terms that are not covariate
// CrossHyper terms or with a fixed part).
func setLearntRank(learn *infer.LearnKernel, spec FitSpec, n int) {
	if spec.Rank > 0 || (spec.Rank == 0 && n >= PivotedFromItems) {
		learn.Rank = spec.Rank
		if learn.Rank == 0 {
			learn.Rank = learntRank(spec, n)
		}
	}
}

// fitBoundedCov fits data (from BoundedData(ds)) with the items' prior
// covariance cov.
func fitBoundedCov(ctx context.Context, ds *annotations.Dataset, data *bounded.Data, cov *Covariance, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	data.Kernel = cov.Kernel
	var ks kernel.Spec
	var ok bool
	var err error
	if data.Cov, data.Learn, ks, ok, err = deterministicKernel(spec, cov, data.ItemIDs); err != nil {
		return nil, err
	}
	if err := checkSpread(data, spec); err != nil {
		return nil, err
	}
	opts := boundedOptions(spec, progress)
	opts.Priors = len(data.RaterIDs) > 1
	if identityAlternative(spec, cov, len(data.ItemIDs), data.Ratings, func(r bounded.Rating) int { return r.Item }) {
		data.Alt = []bounded.Prior{{Kernel: "identity"}}
	}
	final := finalData(cov, ok, &data.Final)
	res, err := bounded.Fit(ctx, data, opts)
	if err != nil && ctx.Err() == nil && errors.Is(err, ep.ErrNotConverged) {
		return nil, annotations.Errorf(annotations.EINVALID, "%v%s", err, boundedAdvice(data, spec))
	}
	if res, err = deterministicFitted(res, err, ds, cov, len(data.Alt) > 0, ks, ok); err == nil && *final != nil {
		finalFitted(res, cov, *final)
	}
	return res, err
}

// deterministicFitted completes an EP or Laplace fit (fitted): when the
// choice among the priors (alt: the identity kernel was among them) kept
// the identity kernel, the texts inform no item and the result has no
// features; else, when the kernel had terms to learn (learn), the result
// records the learnt kernel (learntKernel, of ks).
func deterministicFitted(res *multirater.FitResult, err error, ds *annotations.Dataset, cov *Covariance, alt bool, ks kernel.Spec, learn bool) (*multirater.FitResult, error) {
	chosenIdentity := err == nil && alt && res.Model.Kernel == "identity"
	res, err = fitted(res, err, ds, cov)
	if err != nil {
		return res, err
	}
	if chosenIdentity {
		res.Model.Kernel, res.Features = "identity", nil
		return res, nil
	}
	if !learn {
		return res, nil
	}
	return learntKernel(res, ks, cov)
}

// boundedAdvice says what may let EP settle on a bounded fit that did not:
// the settings that make the likelihood harder (censoring at the bounds,
// per-rater biases) and the engine that needs no convergence of sites.
func boundedAdvice(data *bounded.Data, spec FitSpec) string {
	at := 0
	for _, r := range data.Ratings {
		if r.Value <= data.Lo || r.Value >= data.Hi {
			at++
		}
	}
	var tips []string
	if strings.EqualFold(spec.Bounds, bounded.BoundsCensor) {
		tips = append(tips, fmt.Sprintf("%d of %d ratings lie at a bound, where censored likelihoods are flat: --bounds squeeze (field \"bounds\") moves them just inside", at, len(data.Ratings)))
	}
	if spec.Bias {
		tips = append(tips, "a bias per rater (--bias) adds a direction the ratings may not pin down: leave it out")
	}
	if !strings.EqualFold(spec.Engine, multirater.EngineLaplace) {
		tips = append(tips, "--engine laplace needs no site convergence")
	}
	if spec.Dispersion == 0 {
		tips = append(tips, "--dispersion fixes every rater's dispersion")
	}
	return "; " + strings.Join(tips, "; ")
}

// identityAlternative reports whether the bounded model's (or the ordinal
// EP/Laplace fit's) choice considers the identity kernel beside cov's: when
// the kernel was the default, not the identity, and every one of the n
// items is the item (item(r)) of one of the ratings: an item without a
// rating is predicted from its features, which the identity kernel cannot
// do.
func identityAlternative[R any](spec FitSpec, cov *Covariance, n int, ratings []R, item func(R) int) bool {
	if !spec.KernelDefault || cov.Kernel == "" || cov.Kernel == "identity" {
		return false
	}
	rated := make([]bool, n)
	for _, r := range ratings {
		rated[item(r)] = true
	}
	for _, r := range rated {
		if !r {
			return false
		}
	}
	return true
}

// LookupModel returns the table entry of the model name (case does not
// matter). An unknown name is an EINVALID error listing the known ones.
func LookupModel(name string) (Model, error) {
	for _, m := range Models() {
		if strings.EqualFold(m.Name, name) {
			return m, nil
		}
	}
	return Model{}, annotations.Errorf(annotations.EINVALID, "unknown model %q (expected %s)", name, ModelNames())
}

// ModelNames lists the models' names for messages and help texts:
// "ordinal or classification".
func ModelNames() string {
	var names []string
	for _, m := range Models() {
		names = append(names, m.Name)
	}
	return orList(names)
}

// ModelUsage lists the models with the schemes they fit, for help texts:
// "ordinal (ordinal scheme) or classification (nominal or binary scheme)".
func ModelUsage() string {
	var names []string
	for _, m := range Models() {
		names = append(names, fmt.Sprintf("%s (%s scheme)", m.Name, kindList(m.Schemes, " or ")))
	}
	return orList(names)
}

// DefaultModel returns the model of a fit of labels with scheme s that
// names none when the data are not known (DefaultModelFor chooses with
// them): the first model of the table that fits s, or the default model
// (ModelOrdinal, which CheckScheme then rejects with a precise message)
// when none does.
func DefaultModel(s annotations.Scheme) string {
	for _, m := range Models() {
		if m.Accepts(s.Kind) {
			return m.Name
		}
	}
	return ModelOrdinal
}

// DefaultModelFor returns the model of a fit that names none, given the
// labels' scheme and how many items have a text: the confusion model (its
// rater model chosen by the evidence among one-coin, spammer, confusion or
// communities, subtypes and, for ordered grades, graded; never worse than the baselines it reports beside its
// result: issue 29) for nominal and binary labels when no item has a text,
// else DefaultModel(s) (the classification model, whose default kernel
// reads the texts, for nominal and binary labels with texts). The CLI, the
// API and the dashboard all choose by it.
func DefaultModelFor(s annotations.Scheme, itemsWithText int) string {
	if (s.Kind == annotations.Nominal || s.Kind == annotations.Binary) && itemsWithText == 0 {
		if m, err := LookupModel(ModelConfusion); err == nil && m.CheckScheme(s) == nil {
			return ModelConfusion
		}
	}
	return DefaultModel(s)
}

// ItemsWithText counts the dataset's items that have a text (the argument
// of DefaultModelFor).
func ItemsWithText(ds *annotations.Dataset) int {
	n := 0
	for _, it := range ds.Items {
		if strings.TrimSpace(it.Text) != "" {
			n++
		}
	}
	return n
}

// Accepts reports whether the model fits labels of scheme kind k.
func (m Model) Accepts(k annotations.Kind) bool {
	for _, a := range m.Schemes {
		if a == k {
			return true
		}
	}
	return false
}

// DefaultEngine returns the engine that fits the model when a spec names
// none: the first of its Engines. Every default of the engine (the CLI,
// the API, the dashboard, FitSpec.WithDefaults) is this one.
func (m Model) DefaultEngine() string {
	return m.Engines[0]
}

// CheckScheme returns nil when the model fits labels of scheme s, else an
// EINVALID error that says what the model needs and which models fit s.
func (m Model) CheckScheme(s annotations.Scheme) error {
	if !m.Accepts(s.Kind) {
		var others []string
		for _, o := range Models() {
			if o.Name != m.Name {
				others = append(others, fmt.Sprintf("model %s for %s labels", o.Name, kindList(o.Schemes, " and ")))
			}
		}
		needs := kindList(m.Schemes, " or ")
		return annotations.Errorf(annotations.EINVALID, "the %s model needs %s %s scheme; the scheme is %s (use %s)", m.Name, article(needs), needs, s, strings.Join(others, "; "))
	}
	if m.checkScheme != nil {
		return m.checkScheme(s)
	}
	return nil
}

// Defaults returns s with the zero fields that the model reads set to the
// defaults of its family (the family's own WithDefaults, never restated
// here), and a setting it has no use for (the threshold prior of the
// classification model) cleared.
func (m Model) Defaults(s FitSpec) FitSpec {
	return m.defaults(s)
}

// validateEngine checks that the model has the spec's engine and that
// settings of the other engines are not given.
func (m Model) validateEngine(s FitSpec) error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	eng := strings.ToLower(strings.TrimSpace(s.Engine))
	if eng == "" {
		eng = m.DefaultEngine()
	}
	found := false
	for _, e := range m.Engines {
		found = found || e == eng
	}
	if !found {
		return bad("engine %q: the %s model is fitted by %s", s.Engine, m.Name, orList(m.Engines))
	}
	if err := s.checkFamily(m.Name, eng); err != nil {
		return err
	}
	if m.Name == ModelClassification {
		if ks, err := s.kernelSpec(); err == nil {
			for _, t := range ks {
				if _, ard := t.Cov.(kernel.ARD); ard && t.Learn {
					return bad("kernel %q: ard learns one length-scale per covariate by the ordinal model's EP evidence; give them for the %s model (ard:gamma=G1,G2,...)", s.Kernel, m.Name)
				}
			}
		}
	}
	for i := 1; i < len(s.Thresholds); i++ {
		if !(s.Thresholds[i] > s.Thresholds[i-1]) {
			return bad("thresholds %v: expected increasing numbers", s.Thresholds)
		}
	}
	return nil
}

// Validate checks the spec's rules that are the model's own (a setting of
// another model, say); FitSpec.Validate calls it.
func (m Model) Validate(s FitSpec) error {
	if m.validate == nil {
		return nil
	}
	return m.validate(s)
}

// CheckGiven rejects the settings of s that were given explicitly (given
// reports that of a field by its JSON name) and that the fit would not
// use: a setting the model's engine does not read (CheckGiven), the prior
// of precisions the spec fixes. Requests that tell omitted from zero
// fields (the API) call it; FitSpec itself cannot tell them apart.
func (m Model) CheckGiven(s FitSpec, given func(field string) bool) error {
	eng := strings.ToLower(strings.TrimSpace(s.Engine))
	if eng == "" {
		eng = m.DefaultEngine()
	}
	if err := CheckGiven(m.Name, eng, given); err != nil || m.checkGiven == nil {
		return err
	}
	return m.checkGiven(s, given)
}

// fitFunc fits a dataset with the items' covariance cov (nil: computed
// from the dataset's items).
type fitFunc func(ctx context.Context, ds *annotations.Dataset, cov *Covariance, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error)

// fitter makes a model's fit function from its family's data mapping
// (OrdinalData, ClassData), the mapped data's item ids, and the fit of the
// mapped data with a covariance.
func fitter[D any](data func(*annotations.Dataset) (D, error), itemIDs func(D) []string,
	fit func(context.Context, *annotations.Dataset, D, *Covariance, FitSpec, func(multirater.Progress)) (*multirater.FitResult, error)) fitFunc {
	return func(ctx context.Context, ds *annotations.Dataset, cov *Covariance, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error) {
		d, err := data(ds)
		if err != nil {
			return nil, err
		}
		if cov == nil {
			if cov, err = ItemCovariance(ctx, ds, itemIDs(d), spec); err != nil {
				return nil, err
			}
		}
		return fit(ctx, ds, d, cov, spec, progress)
	}
}

// predictorOf makes a model's predictor function from its family's
// predictor constructor.
func predictorOf[P itemPredictor](newPredictor func(*multirater.FitResult, mat.Symmetric) (P, error)) func(*multirater.FitResult, mat.Symmetric) (itemPredictor, error) {
	return func(res *multirater.FitResult, cov mat.Symmetric) (itemPredictor, error) {
		p, err := newPredictor(res, cov)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
}

// familyPriors are the option values every family defaults: the precision
// prior, the flag threshold, the convergence limits and the kept draws.
type familyPriors struct {
	v, lambda, flag, maxRhat, minESS float64
	keepDraws                        int
}

// withFamilyDefaults sets s's zero sampler and prior fields to a family's
// defaults m and p.
func (s FitSpec) withFamilyDefaults(m mcmc.Settings, p familyPriors) FitSpec {
	s = s.withMCMC(m)
	s.V, s.Lambda, s.FlagThreshold, s.MaxRhat, s.MinESS, s.KeepDraws = p.v, p.lambda, p.flag, p.maxRhat, p.minESS, p.keepDraws
	return s
}

// withMCMC sets s's sampler fields to m (defaults filled in). Burnin stays
// negative (none) when it was.
func (s FitSpec) withMCMC(m mcmc.Settings) FitSpec {
	s.Chains, s.Samples, s.Thin = m.Chains, m.Samples, m.Thin
	if s.Burnin == 0 {
		s.Burnin = m.Burnin
	}
	return s
}

// mcmc is the spec's sampler settings.
func (s FitSpec) mcmc() mcmc.Settings {
	return mcmc.Settings{Chains: s.Chains, Samples: s.Samples, Burnin: s.Burnin, Thin: s.Thin, Seed: s.Seed}
}

// validateOrdinal checks the ordinal model's settings that its tags do not
// cover: the noise model's name.
func validateOrdinal(s FitSpec) error {
	if _, err := ordinal.ParseNoise(s.Noise); err != nil {
		return annotations.Errorf(annotations.EINVALID, "%s", err)
	}
	return nil
}

// ordinalNoise is the ordinal EP or Laplace fit's noise model: the spec's,
// or by default (with several raters) ordinal.Auto, chosen by the
// penalised evidence among per-rater, shared-thresholds and shared.
func ordinalNoise(spec FitSpec, raters int) string {
	if strings.TrimSpace(spec.Noise) == "" {
		if raters > 1 {
			return ordinal.Auto
		}
		return ordinal.PerRater
	}
	d, _ := ordinal.ParseNoise(spec.Noise) // validated with the settings
	return d
}

// ordinalOptions maps a spec to the ordinal family's options (zero fields
// stay zero: the family's defaults).
func ordinalOptions(spec FitSpec, progress func(multirater.Progress)) ordinal.Options {
	return ordinal.Options{Common: spec.common(), RefRater: spec.RefRater, SigmaB: spec.SigmaB, Progress: progress}
}

// classOptions maps a spec to the classification family's options (zero
// fields stay zero: the family's defaults).
func classOptions(spec FitSpec, progress func(multirater.Progress)) classify.Options {
	prec, _ := classify.ParsePrecisions(spec.Precisions)
	return classify.Options{Common: spec.common(), Precisions: prec, RefRater: spec.RefRater, Progress: progress}
}

// hasKernel reports whether s's kernel is one (not the identity, nor
// unparsable), i.e. whether the fit's items get a prior covariance
// (Covariance.Cov, the classification family's Data.Cov).
func (s FitSpec) hasKernel() bool {
	ks, err := s.kernelSpec()
	return err == nil && !ks.Identity()
}

// common maps a spec to the options every MCMC family shares (zero fields
// stay zero: the family's defaults).
func (s FitSpec) common() mcmc.Common {
	ident, _ := multirater.ParseIdentifiability(s.Identifiability)
	smp, _ := mcmc.ParseSampler(s.Sampler)
	return mcmc.Common{Settings: s.mcmc(), Sampler: smp, Identifiability: ident, V: s.V, Lambda: s.Lambda,
		FlagThreshold: s.FlagThreshold, MaxRhat: s.MaxRhat, MinESS: s.MinESS, KeepDraws: s.KeepDraws}
}

// fitOrdinalCov fits data (from OrdinalData(ds)) with the items' prior
// covariance cov (from ItemCovariance, or shared between the fits of a
// cross-validation fold).
func fitOrdinalCov(ctx context.Context, ds *annotations.Dataset, data *ordinal.Data, cov *Covariance, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	data.Kernel = cov.Kernel
	if cov.Cov != nil {
		data.Cov = cov.Cov
	}
	if eng := strings.ToLower(spec.Engine); eng == multirater.EngineEP || eng == multirater.EngineLaplace {
		if len(spec.Thresholds) != 0 && len(spec.Thresholds) != len(data.Levels)-1 {
			return nil, annotations.Errorf(annotations.EINVALID, "thresholds: %d values for %d levels (expected %d)", len(spec.Thresholds), len(data.Levels), len(data.Levels)-1)
		}
		ks, learn, err := learnOrdinalKernel(spec, cov, data)
		if err != nil {
			return nil, err
		}
		noise := ordinalNoise(spec, len(data.RaterIDs))
		if noise == ordinal.Auto && identityAlternative(spec, cov, len(data.ItemIDs), data.Ratings, func(r multirater.Rating) int { return r.Item }) {
			data.Alt = []ordinal.Prior{{Kernel: "identity"}}
		}
		final := finalData(cov, learn, &data.Final)
		res, err := ordinal.FitDeterministic(ctx, data, ordinal.DetOptions{Engine: eng, Sigma: spec.Sigma, Thresholds: spec.Thresholds,
			Noise: noise, Priors: len(data.RaterIDs) > 1, V: spec.V, Lambda: spec.Lambda, SigmaB: spec.SigmaB, Restarts: spec.Restarts,
			Seed: spec.Seed, FlagThreshold: spec.FlagThreshold, KeepDraws: spec.KeepDraws, Progress: progress})
		if res, err = deterministicFitted(res, err, ds, cov, len(data.Alt) > 0, ks, learn); err == nil && *final != nil {
			finalFitted(res, cov, *final)
		}
		return res, err
	}
	opts := ordinalOptions(spec, progress)
	if err := checkRefRater(opts.RefRater, opts.Identifiability != multirater.Weak, data.RaterIDs); err != nil {
		return nil, err
	}
	// Kernel terms to learn (rbf without gamma, ard): EP learns them by the
	// evidence first, then the chains sample with the learnt kernel.
	ed := *data
	ks, learn, err := learnOrdinalKernel(spec, cov, &ed)
	if err != nil {
		return nil, err
	}
	var learnt *multirater.Learnt
	epSeconds := 0.0
	if learn {
		epRes, err := ordinal.FitDeterministic(ctx, &ed, ordinal.DetOptions{Priors: len(data.RaterIDs) > 1,
			V: spec.V, Lambda: spec.Lambda, SigmaB: spec.SigmaB, Seed: spec.Seed, KeepDraws: 1})
		if err != nil {
			return nil, invalidData(err, "learning the kernel by EP before sampling: ")
		}
		if epRes, err = learntKernel(epRes, ks, cov); err != nil {
			return nil, err
		}
		learnt = epRes.Model.Learnt
		learnt.Source = "evidence (ep), before sampling"
		epSeconds = epRes.Diagnostics.Seconds
		ls := spec
		ls.Kernel = epRes.Model.Kernel
		if cov, err = ItemCovariance(ctx, ds, data.ItemIDs, ls); err != nil {
			return nil, err
		}
		data.Kernel, data.Cov = cov.Kernel, nil
		if cov.Cov != nil {
			data.Cov = cov.Cov
		}
	}
	res, err := ordinal.Fit(ctx, data, opts)
	if res, err = fitted(res, err, ds, cov); err != nil || learnt == nil {
		return res, err
	}
	res.Model.Learnt = learnt
	res.Diagnostics.Seconds += epSeconds
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, fmt.Sprintf("kernel learnt by maximising the EP evidence before sampling (%.1f s): %s", epSeconds, res.Model.Kernel))
	return res, nil
}

// fitClassificationCov fits data (from ClassData(ds)) with the items' prior
// covariance cov (from ItemCovariance, or shared between the fits of a
// cross-validation fold).
func fitClassificationCov(ctx context.Context, ds *annotations.Dataset, data *classify.Data, cov *Covariance, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	data.Kernel = cov.Kernel
	if cov.Cov != nil {
		data.Cov = cov.Cov
	}
	opts := classOptions(spec, progress)
	if err := checkRefRater(opts.RefRater, opts.Identifiability != multirater.Weak && opts.Precisions == classify.InferredPrecisions, data.RaterIDs); err != nil {
		return nil, err
	}
	res, err := classify.Fit(ctx, data, opts)
	return fitted(res, err, ds, cov)
}

// checkRefRater checks that the reference rater ref, when used, is one of
// the raters.
func checkRefRater(ref string, used bool, raters []string) error {
	if ref == "" || !used {
		return nil
	}
	for _, r := range raters {
		if r == ref {
			return nil
		}
	}
	return annotations.Errorf(annotations.EINVALID, "reference rater %q has no labels in this dataset", ref)
}

// fitted completes a family's result with the dataset's scheme and the
// covariance's kernel, features and notes; a family's data error
// (multirater.DataError) becomes an EINVALID error, other failures
// (cancellation, numerical failures) stay as they are.
func fitted(res *multirater.FitResult, err error, ds *annotations.Dataset, cov *Covariance) (*multirater.FitResult, error) {
	if err != nil {
		return nil, invalidData(err, "")
	}
	res.Model.Scheme = ds.Scheme.String()
	res.Model.Kernel = cov.Kernel
	if cov.Cov != nil && cov.Cov.LowRank() != nil {
		res.Model.PriorRank = cov.Cov.LowRank().MaxRank
	}
	res.Features = cov.Features
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, cov.Notes...)
	markModelRaters(res, ds)
	return res, nil
}

// markModelRaters flags the dataset's model raters in the fit's rater
// table and notes, for the models other than confusion, that the labels'
// probabilities were not read.
func markModelRaters(res *multirater.FitResult, ds *annotations.Dataset) {
	if len(ds.ModelRaters) > 0 {
		for i := range res.Raters {
			res.Raters[i].Model = ds.IsModel(res.Raters[i].ID)
		}
	}
	if res.Model.Confusion == nil && ds.HasProbs() {
		res.Diagnostics.Notes = append(res.Diagnostics.Notes, "the labels' probabilities were not used: the "+res.Model.Model+" model reads labels only (the confusion model reads them as soft evidence)")
	}
}

// checkClasses checks that a nominal or binary scheme has at least two
// classes.
func checkClasses(s annotations.Scheme) error {
	if s.K() < 2 {
		return annotations.Errorf(annotations.EINVALID, "the classification model needs at least 2 classes; the scheme %s has %d (name both classes, e.g. binary:0,1,pos=1)", s, s.K())
	}
	return nil
}

// checkClassificationGiven rejects the threshold prior (the classification
// model has no thresholds) and, with fixed precisions, the precision prior
// and a reference rater's identifiability.
func checkClassificationGiven(s FitSpec, given func(string) bool) error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	prec, _ := classify.ParsePrecisions(s.Precisions)
	if prec == classify.InferredPrecisions {
		return nil
	}
	ident, _ := multirater.ParseIdentifiability(s.Identifiability)
	v, lambda := SettingOf(func(s *FitSpec) any { return &s.V }), SettingOf(func(s *FitSpec) any { return &s.Lambda })
	switch {
	case given(v.Name) || given(lambda.Name):
		return bad("fields %q and %q are the prior of inferred precisions; with precisions %q every precision is fixed at 1 (leave them out, or use precisions inferred)", v.Name, lambda.Name, s.Precisions)
	case ident != multirater.Weak:
		return bad("identifiability %q fixes one rater's precision; with precisions %q every precision is already fixed at 1 (use identifiability weak)", s.Identifiability, s.Precisions)
	}
	return nil
}

// kindList joins scheme kinds with sep before the last: "nominal or
// binary".
func kindList(kinds []annotations.Kind, last string) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return joinLast(s, last)
}

// orList joins names as "a, b or c".
func orList(names []string) string { return joinLast(names, " or ") }

func joinLast(s []string, last string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + last + s[len(s)-1]
}

// article is "an" before a vowel, else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// invalidData turns a family's *multirater.DataError into an EINVALID error
// whose message is prefix followed by the data error's message; any other
// error is returned as it is.
func invalidData(err error, prefix string) error {
	var de *multirater.DataError
	if errors.As(err, &de) {
		return annotations.Errorf(annotations.EINVALID, "%s%s", prefix, de.Msg)
	}
	return err
}

// isDataError reports whether err is a family's *multirater.DataError.
func isDataError(err error) bool {
	var de *multirater.DataError
	return errors.As(err, &de)
}

// learnKernel prepares an EP or Laplace fit whose kernel has terms to learn
// (rbf without gamma, ard): learn gets those terms on the items' covariates,
// and fixed the rest of the covariance (base, the kernel built with the
// terms at their starting values, minus their Gram matrices; nil when the
// kernel has nothing else). ok reports whether there is anything to learn.
func learnKernel(spec FitSpec, cov *Covariance, itemIDs []string, base mat.Symmetric) (ks kernel.Spec, learn *infer.LearnKernel, fixed mat.Symmetric, ok bool, err error) {
	ks, err = spec.kernelSpec()
	if err != nil {
		return nil, nil, nil, false, annotations.Errorf(annotations.EINVALID, "%s", err)
	}
	var terms []kernel.Hyper
	others := false
	for _, t := range ks {
		if t.Learn {
			terms = append(terms, t.Cov.(kernel.Hyper))
		} else {
			others = true
		}
	}
	if len(terms) == 0 {
		return ks, nil, nil, false, nil
	}
	if cov.Features == nil || len(cov.Features.X) != len(itemIDs) {
		return nil, nil, nil, false, annotations.Errorf(annotations.EINVALID, "kernel %q: its learnt terms need numeric item covariates", spec.Kernel)
	}
	x := mat.NewDense(len(itemIDs), len(cov.Features.Covariates), nil)
	for i, row := range cov.Features.X {
		x.SetRow(i, row)
	}
	in := kernel.Inputs{N: len(itemIDs), X: x}
	learn = &infer.LearnKernel{Terms: terms, Inputs: in}
	if others {
		f := mat.NewSymDense(in.N, nil)
		if base != nil {
			f.CopySym(base)
		} else {
			for i := 0; i < in.N; i++ {
				f.SetSym(i, i, 1)
			}
		}
		for _, t := range terms {
			var g mat.SymDense
			t.GramTo(&g, in)
			for i := 0; i < in.N; i++ {
				for j := i; j < in.N; j++ {
					f.SetSym(i, j, f.At(i, j)-g.At(i, j))
				}
			}
		}
		fixed = f
	}
	return ks, learn, fixed, true, nil
}

// learnOrdinalKernel sets data.Learn and data.Cov for learnKernel's terms,
// with the inducing-point rank of setLearntRank (the EP fit that learns the
// kernel before the Gibbs chains included).
func learnOrdinalKernel(spec FitSpec, cov *Covariance, data *ordinal.Data) (kernel.Spec, bool, error) {
	ks, learn, fixed, ok, err := learnKernel(spec, cov, data.ItemIDs, data.Cov)
	if err != nil || !ok {
		return ks, false, err
	}
	setLearntRank(learn, spec, len(data.ItemIDs))
	data.Learn, data.Cov = learn, fixed
	return ks, true, nil
}

// learntKernel records the learnt kernel: the specification with the learnt
// terms in place of the ones to learn (what predict reads), and each ARD
// covariate's learnt gamma by name.
func learntKernel(res *multirater.FitResult, ks kernel.Spec, cov *Covariance) (*multirater.FitResult, error) {
	learnt := res.Model.Learnt
	if learnt == nil {
		return nil, fmt.Errorf("analysis: the EP fit recorded no learnt kernel")
	}
	parts := make([]string, len(ks))
	next := 0
	for i, t := range ks {
		parts[i] = t.String()
		if !t.Learn {
			continue
		}
		if next >= len(learnt.Terms) {
			return nil, fmt.Errorf("analysis: %d learnt kernel terms for %s", len(learnt.Terms), ks)
		}
		parts[i] = learnt.Terms[next]
		next++
		lt, err := kernel.ParseSpec(parts[i])
		if err != nil {
			return nil, fmt.Errorf("analysis: learnt kernel term %q: %w", parts[i], err)
		}
		if ard, ok := lt[0].Cov.(kernel.ARD); ok && len(ard.Gammas) == len(cov.Features.Covariates) {
			if learnt.Relevance == nil {
				learnt.Relevance = map[string]float64{}
			}
			for d, name := range cov.Features.Covariates {
				learnt.Relevance[name] = ard.Gammas[d]
			}
		}
	}
	res.Model.Kernel = strings.Join(parts, "+")
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, fmt.Sprintf("kernel learnt by maximising the EP evidence: %s", res.Model.Kernel))
	return res, nil
}
