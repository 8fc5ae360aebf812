package analysis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/bounded"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/raters"
	"concord/textfeat"
)

// EvalSpec describes a cross-validated evaluation (Eval).
type EvalSpec struct {
	// Fit is the model, kernel and sampler of every fit; Fit.Seed also
	// draws the folds. Its zero sampler settings take the evaluation's
	// lighter defaults (EvalDefaults), not Fit's.
	Fit FitSpec `json:"fit"`
	// Folds is the number of folds K (default 10).
	Folds int `json:"folds,omitempty"`
	// RaterBaselines selects the raters whose labels alone train a
	// "rater:<id>" baseline: "" (default: every rater when there are at most
	// DefaultRaterBaselines, else the DefaultRaterBaselines raters with the
	// most labels), "all", "none", or a number N (the N raters with the
	// most labels).
	RaterBaselines string `json:"rater_baselines,omitempty"`
}

// Evaluation defaults: every fit of an evaluation predicts held-out items
// from a modest number of draws, since K folds times (2 + raters) models
// are fitted.
const (
	DefaultFolds          = 10
	DefaultRaterBaselines = 10
	EvalChains            = 2
	EvalSamples           = 500
	EvalBurnin            = 300
	EvalKeepDraws         = 200
)

// EvalDefaults returns s with zero fields set to the evaluation defaults.
func (s EvalSpec) EvalDefaults() EvalSpec {
	if s.Folds == 0 {
		s.Folds = DefaultFolds
	}
	// The sampler's work and the kept draws, where the fit has them (a
	// gibbs fit; the models that keep draws).
	full := s.Fit.WithDefaults()
	if strings.EqualFold(full.Engine, multirater.EngineGibbs) {
		if s.Fit.Chains == 0 {
			s.Fit.Chains = EvalChains
		}
		if s.Fit.Samples == 0 {
			s.Fit.Samples = EvalSamples
		}
		if s.Fit.Burnin == 0 {
			s.Fit.Burnin = EvalBurnin
		}
	}
	if s.Fit.KeepDraws == 0 && full.KeepDraws != 0 {
		s.Fit.KeepDraws = EvalKeepDraws
	}
	return s
}

// EvalResult is the evaluation document: {"folds": K, "models": [...]}.
type EvalResult struct {
	Folds  int         `json:"folds"`
	Models []EvalModel `json:"models"`
	// Paired compares the multirater model with each baseline item by item
	// on the same held-out items (nominal schemes).
	Paired []PairedComparison `json:"paired,omitempty"`

	// Not part of the document: what the command line reports besides.
	Items   int      `json:"-"` // items evaluated (those with labels)
	Fits    int      `json:"-"`
	Seconds float64  `json:"-"`
	Notes   []string `json:"-"`
}

// EvalModel is one model's cross-validated metrics. Name is "multirater"
// (the model on every rater's labels), "majority" (the same model on one
// majority label per item) or "rater:<id>" (the same model on one rater's
// labels).
type EvalModel struct {
	Name    string      `json:"name"`
	Metrics EvalMetrics `json:"metrics"`
}

// EvalMetrics are computed once over the pooled held-out predictions (each
// labelled item is held out in exactly one fold). The predicted grade of an
// item (ordinal) is the median of its consensus grade distribution
// (GradeProbs), the point prediction that minimises the expected absolute
// error in level steps; the most probable grade (ItemResult.Grade) drifts
// towards the most frequent level when the distribution is broad, as it is
// for raters with much noise. The predicted class (nominal) is the most
// probable one (ItemResult.Class), as in Rogers et al. fig. 8b. Metrics that
// do not apply, or are undefined (a kappa of raters who never vary), are
// omitted.
type EvalMetrics struct {
	// QWKVsRater is, for each rater, the quadratic weighted kappa between
	// the predicted grade and the rater's grade on the held-out items the
	// rater graded (ordinal). QWK is Cohen's (1968) weighted kappa with
	// weights (i - j)^2 on level indices: scikit-learn's
	// cohen_kappa_score(a, b, weights="quadratic", labels=range(K)).
	QWKVsRater map[string]float64 `json:"qwk_vs_rater,omitempty"`
	// QWKVsMean is the kappa between the predicted grade and the item's
	// rounded mean grade: the mean of its level indices rounded to the
	// nearest level, halves to the even index (ordinal). MAEVsMean is the
	// mean absolute difference between the predicted grade's index and the
	// unrounded mean, in level steps.
	QWKVsMean *float64 `json:"qwk_vs_mean,omitempty"`
	MAEVsMean *float64 `json:"mae_vs_mean,omitempty"`
	// AccuracyVsMajority is the share of held-out items with a majority
	// class (a unique most frequent label) whose predicted class is it;
	// AccuracyVsGold the share of held-out items with a gold label whose
	// predicted class is it (nominal).
	AccuracyVsMajority *float64 `json:"accuracy_vs_majority,omitempty"`
	AccuracyVsGold     *float64 `json:"accuracy_vs_gold,omitempty"`
	// MeanLogPred is the mean over the held-out labels of the log
	// predictive probability of the label: the model's distribution for
	// that rater where it has learnt the rater, its consensus distribution
	// otherwise (Rogers et al. fig. 11). Probabilities are floored at 1e-6,
	// the resolution of the stored distributions.
	MeanLogPred *float64 `json:"mean_log_pred,omitempty"`
	// MSE is the mean squared difference between the held-out ratings and
	// the predicted consensus value (bounded, on the rating scale);
	// MeanLogDensity the mean log predictive density, on the rating scale,
	// of the held-out ratings strictly inside the scale under the consensus
	// rater (the fit's median dispersion); NLogDensity counts them.
	MSE            *float64 `json:"mse,omitempty"`
	MeanLogDensity *float64 `json:"mean_log_density,omitempty"`
	NLogDensity    int      `json:"n_log_density,omitempty"`
}

// EvalProgress reports an evaluation's progress.
type EvalProgress struct {
	// Fraction of the fits done (0..1), the current fold (1-based) and
	// model, and the time since the start.
	Fraction float64
	Fold     int
	Model    string
	Elapsed  time.Duration
}

// evalModel is one model of a fold: its name, training labels and items.
type evalModel struct {
	name   string
	rater  string // for rater:<id>, the rater whose distribution it learns
	labels []annotations.Label
	// ids are the items of the fit; nil means every training item.
	ids []string
}

// ForData returns s with the defaults that depend on the data filled in:
// without a kernel, "text" when some item has a text, else "identity"
// (DefaultKernel): every fold predicts its held-out items, and their texts
// are what the text kernel predicts them from.
func (s EvalSpec) ForData(ds *annotations.Dataset) EvalSpec {
	if strings.TrimSpace(s.Fit.Kernel) == "" {
		s.Fit.Kernel = DefaultKernel(ds)
	}
	return s
}

// foldModels returns the models fitted in fold f (0-based) on its
// training items train: the multi-rater model on every training label,
// majority on the training items' majority labels, and each baseline
// rater's model on that rater's training labels (on the items they
// labelled; nil ids when those are every training item, so that it shares
// the full model's kernel matrix).
func foldModels(ds *annotations.Dataset, train []string, byItem map[string][]annotations.Label, majority map[string]string, baselines []string, f int) ([]evalModel, error) {
	trainSet := make(map[string]bool, len(train))
	for _, id := range train {
		trainSet[id] = true
	}
	models := []evalModel{{name: "multirater"}, {name: "majority"}}
	for _, l := range ds.Labels {
		if trainSet[l.Item] {
			models[0].labels = append(models[0].labels, l)
		}
	}
	for _, id := range train {
		if v, ok := majority[id]; ok {
			models[1].labels = append(models[1].labels, annotations.Label{Item: id, Rater: "majority", Value: v})
		}
	}
	for _, r := range baselines {
		m := evalModel{name: "rater:" + r, rater: r}
		for _, id := range train {
			rated := false
			for _, l := range byItem[id] {
				if l.Rater == r {
					m.labels = append(m.labels, l) // repeated labels too
					rated = true
				}
			}
			if rated {
				m.ids = append(m.ids, id)
			}
		}
		if len(m.labels) == 0 {
			return nil, annotations.Errorf(annotations.EINVALID, "rater %q has no labels outside fold %d, so the rater:%s baseline cannot be fitted there (choose other raters with rater baselines, or fewer folds)", r, f+1, r)
		}
		if len(m.ids) == len(train) {
			m.ids = nil // the same items as the full model: share its kernel matrix
		}
		models = append(models, m)
	}
	return models, nil
}

// Eval runs K-fold cross-validation over the items of ds that have labels
// (the comparisons of Rogers et al. fig. 8b and fig. 11). The items are
// dealt into K folds at random (seeded by spec.Fit.Seed). For each fold the
// model is fitted to the other folds' items and labels, and the held-out
// items are predicted from the fit as new items (Predictor): their labels
// are hidden, their texts and covariates kept. The text featuriser is fitted
// to the training items' texts only, so a held-out essay is featurised like
// any new document. (Keeping the held-out items in the fit as unlabelled
// items would give the same posterior, since a Gaussian process's
// predictions for unlabelled items are its conditional given the labelled
// ones; predicting from the fit exercises the path `concord predict` uses
// and lets the sampler use its faster complete-design step.)
//
// On the same folds Eval fits two kinds of baseline with the same kernel and
// settings: "majority", trained on one label per item (ordinal: the median
// of the item's level indices, a midpoint rounded to the even index, which
// for two raters is their rounded mean and for any number is the grade more
// than half of them gave when there is one; nominal: the unique most
// frequent class, items without one left unlabelled), and "rater:<id>",
// trained on that rater's labels alone (on the training items the rater
// labelled). The models of one fold share the kernel matrix and its
// eigendecomposition.
//
// Problems with the spec or the data are EINVALID errors; ctx cancels.
func Eval(ctx context.Context, ds *annotations.Dataset, spec EvalSpec, progress func(EvalProgress)) (*EvalResult, error) {
	start := time.Now()
	pl, err := newEvalPlan(ds, spec)
	if err != nil {
		return nil, err
	}
	folds := make([]*EvalFoldResult, pl.k)
	for f := range folds {
		if folds[f], err = pl.fold(ctx, f, start, progress); err != nil {
			return nil, err
		}
	}
	out := pl.combine(folds)
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

// evalPlan is what every fold of an evaluation shares: the spec with its
// defaults, the labelled items and their folds, the baselines and the
// models' names.
type evalPlan struct {
	ds        *annotations.Dataset
	spec      EvalSpec
	model     Model
	byItem    map[string][]annotations.Label
	ids       []string
	k         int
	baselines []string
	notes     []string
	foldOf    []int
	majority  map[string]string
	itemByID  map[string]annotations.Item
	names     []string
}

// newEvalPlan checks spec against ds and plans the evaluation.
func newEvalPlan(ds *annotations.Dataset, spec EvalSpec) (*evalPlan, error) {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	spec = spec.EvalDefaults()
	spec.Fit = spec.Fit.withKernel() // parsed once for every fold's fits
	if err := spec.Fit.Validate(); err != nil {
		return nil, err
	}
	spec = spec.ForData(ds)
	spec.Fit = spec.Fit.WithDefaults().withKernel()
	if ds == nil || len(ds.Labels) == 0 {
		return nil, bad("no labels to evaluate")
	}
	model, err := LookupModel(spec.Fit.Model)
	if err != nil {
		return nil, err
	}
	if model.Name == ModelAUC {
		return nil, bad("the auc model is evaluated by its test AUC against classifiers on the same folds: use EvalAUC (concord eval --model auc)")
	}
	if err := model.CheckScheme(ds.Scheme); err != nil {
		return nil, err
	}
	pl := &evalPlan{ds: ds, spec: spec, model: model, byItem: map[string][]annotations.Label{}}
	// Labelled items, in dataset order, and their labels.
	for _, l := range ds.Labels {
		pl.byItem[l.Item] = append(pl.byItem[l.Item], l)
	}
	for _, id := range ds.ItemIDs() {
		if len(pl.byItem[id]) > 0 {
			pl.ids = append(pl.ids, id)
		}
	}
	pl.k = spec.Folds
	if pl.k < 2 || pl.k > len(pl.ids) {
		return nil, bad("folds = %d: expected 2 to %d (the number of labelled items)", pl.k, len(pl.ids))
	}
	if pl.baselines, pl.notes, err = pickRaterBaselines(ds, spec.RaterBaselines); err != nil {
		return nil, err
	}
	pl.foldOf = assignFolds(pl.ids, pl.k, spec.Fit.Seed)
	pl.majority = majorityLabels(ds, pl.byItem)
	pl.itemByID = make(map[string]annotations.Item, len(ds.Items))
	for _, it := range ds.Items {
		pl.itemByID[it.ID] = it
	}
	pl.names = []string{"multirater", "majority"}
	for _, r := range pl.baselines {
		pl.names = append(pl.names, "rater:"+r)
	}
	return pl, nil
}

// EvalFoldResult is what one fold of an evaluation gives: each model's
// predictions of the held-out items, its fit's levels and (bounded) the
// held-out log densities, and the fits' convergence. It is encoded with
// encoding/gob between the worker that runs the fold and the one that
// combines the folds.
type EvalFoldResult struct {
	Fold   int
	Models []EvalFoldModel
	// Fits counts the fits, NotConverged those that missed the
	// convergence limits, WorstRhat their largest split R-hat.
	Fits, NotConverged int
	WorstRhat          float64
}

// EvalFoldModel is one model's part of a fold's result.
type EvalFoldModel struct {
	Name    string
	Levels  []string
	Items   []multirater.ItemResult
	LogDens []float64
}

// fold runs fold f (0-based): fits its models on the other folds' items
// and predicts its held-out items. start is when the evaluation started,
// for the progress reports.
func (pl *evalPlan) fold(ctx context.Context, f int, start time.Time, progress func(EvalProgress)) (*EvalFoldResult, error) {
	ds, spec, model := pl.ds, pl.spec, pl.model
	total := float64(pl.k * len(pl.names))
	done := f * len(pl.names)
	out := &EvalFoldResult{Fold: f}
	var train, test []string
	for i, id := range pl.ids {
		if pl.foldOf[i] == f {
			test = append(test, id)
		} else {
			train = append(train, id)
		}
	}
	// The models of this fold.
	models, err := foldModels(ds, train, pl.byItem, pl.majority, pl.baselines, f)
	if err != nil {
		return nil, err
	}
	// The fold's kernel matrix, from the training items alone.
	dsTrain := subsetDataset(ds, pl.itemByID, train, nil)
	cov, ks, feats, err := buildCovariance(ctx, dsTrain, train, spec.Fit)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("fold %d: %w", f+1, err)
	}
	testItems := make([]annotations.Item, len(test))
	for i, id := range test {
		it, ok := pl.itemByID[id]
		if !ok {
			it = annotations.Item{ID: id}
		}
		testItems[i] = it
	}
	for _, m := range models {
		mids, mcov, mfeats := train, cov, feats
		if m.ids != nil {
			mids = m.ids
			mcov, mfeats, err = subsetCovariance(cov, ks, feats, train, m.ids)
			if err != nil {
				return nil, err
			}
		}
		dsm := subsetDataset(ds, pl.itemByID, mids, m.labels)
		base := float64(done)
		res, err := model.fit(ctx, dsm, mcov, spec.Fit, func(p multirater.Progress) {
			if progress != nil {
				progress(EvalProgress{Fraction: (base + p.Fraction) / total, Fold: f + 1, Model: m.name, Elapsed: time.Since(start)})
			}
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("fold %d, model %s: %w", f+1, m.name, err)
		}
		out.Fits++
		fm := EvalFoldModel{Name: m.name, Levels: res.Levels}
		if !res.Diagnostics.Converged {
			out.NotConverged++
		}
		out.WorstRhat = max(out.WorstRhat, res.Diagnostics.MaxRhat)
		pr, err := evalPredictor(res, ks, mfeats, mcov.Cov)
		if err != nil {
			return nil, fmt.Errorf("fold %d, model %s: %w", f+1, m.name, err)
		}
		p, err := pr.Predict(testItems)
		if err != nil {
			return nil, fmt.Errorf("fold %d, model %s: %w", f+1, m.name, err)
		}
		fm.Items = p.Items
		if ds.Scheme.Kind == annotations.Bounded {
			if fm.LogDens, err = heldOutLogDensities(ds, res, p.Items, pl.byItem); err != nil {
				return nil, fmt.Errorf("fold %d, model %s: %w", f+1, m.name, err)
			}
		}
		out.Models = append(out.Models, fm)
		done++
		if progress != nil {
			progress(EvalProgress{Fraction: float64(done) / total, Fold: f + 1, Model: m.name, Elapsed: time.Since(start)})
		}
	}
	return out, nil
}

// combine pools the folds' held-out predictions (folds[f] of fold f) and
// computes the metrics.
func (pl *evalPlan) combine(folds []*EvalFoldResult) *EvalResult {
	preds := make(map[string]map[string]multirater.ItemResult, len(pl.names))
	levels := make(map[string][]string, len(pl.names)) // each model's FitResult.Levels
	for _, n := range pl.names {
		preds[n] = make(map[string]multirater.ItemResult, len(pl.ids))
	}
	// Bounded: the log predictive density of each held-out rating inside
	// the scale, per model, computed from the fit that held it out.
	logDens := make(map[string][]float64, len(pl.names))
	out := &EvalResult{Folds: pl.k, Items: len(pl.ids), Notes: pl.notes}
	notConverged := 0
	var worstRhat float64
	for _, fr := range folds {
		out.Fits += fr.Fits
		notConverged += fr.NotConverged
		worstRhat = max(worstRhat, fr.WorstRhat)
		for _, m := range fr.Models {
			levels[m.Name] = m.Levels
			for _, it := range m.Items {
				preds[m.Name][it.ID] = it
			}
			if pl.ds.Scheme.Kind == annotations.Bounded {
				logDens[m.Name] = append(logDens[m.Name], m.LogDens...)
			}
		}
	}
	if notConverged > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d of %d fits did not meet the convergence limits (largest split R-hat %.3f); the held-out predictions average over the draws all the same, but more samples may change the figures slightly", notConverged, out.Fits, worstRhat))
	}
	h := heldOut{ds: pl.ds, ids: pl.ids, byItem: pl.byItem, itemByID: pl.itemByID, majority: pl.majority}
	out.Models, out.Paired = h.metrics(pl.names, preds, levels, logDens)
	return out
}

// EvalFolds returns the number of folds of the evaluation of spec on ds
// (checking both as Eval does).
func EvalFolds(ds *annotations.Dataset, spec EvalSpec) (int, error) {
	pl, err := newEvalPlan(ds, spec)
	if err != nil {
		return 0, err
	}
	return pl.k, nil
}

// EvalFold runs fold f (0-based) of the evaluation of spec on ds, as Eval
// runs it (the folds are dealt by the seed, the fits seeded alike), for a
// worker that runs one fold of an evaluation fanned out over workers;
// progress reports the fold's own fraction done.
func EvalFold(ctx context.Context, ds *annotations.Dataset, spec EvalSpec, f int, progress func(EvalProgress)) (*EvalFoldResult, error) {
	pl, err := newEvalPlan(ds, spec)
	if err != nil {
		return nil, err
	}
	if f < 0 || f >= pl.k {
		return nil, annotations.Errorf(annotations.EINVALID, "fold %d of an evaluation of %d folds", f+1, pl.k)
	}
	start := time.Now()
	var report func(EvalProgress)
	if progress != nil {
		report = func(p EvalProgress) {
			// The fold's own fraction, from the evaluation's.
			p.Fraction = min(max(p.Fraction*float64(pl.k)-float64(f), 0), 1)
			progress(p)
		}
	}
	return pl.fold(ctx, f, start, report)
}

// CombineEval pools the results of every fold of the evaluation of spec
// on ds (folds[f] of fold f, from EvalFold) into the result Eval gives.
func CombineEval(ds *annotations.Dataset, spec EvalSpec, folds []*EvalFoldResult) (*EvalResult, error) {
	pl, err := newEvalPlan(ds, spec)
	if err != nil {
		return nil, err
	}
	if len(folds) != pl.k {
		return nil, annotations.Errorf(annotations.EINVALID, "%d fold results for an evaluation of %d folds", len(folds), pl.k)
	}
	for f, fr := range folds {
		if fr == nil || fr.Fold != f {
			return nil, annotations.Errorf(annotations.EINVALID, "fold %d: missing or out of order", f+1)
		}
	}
	return pl.combine(folds), nil
}

// heldOut are the held-out predictions' data: the labelled items ids,
// their labels, the items and their majority labels.
type heldOut struct {
	ds       *annotations.Dataset
	ids      []string
	byItem   map[string][]annotations.Label
	itemByID map[string]annotations.Item
	majority map[string]string
}

// metrics scores each model's held-out predictions (preds; levels: each
// model's fit levels; logDens: a bounded model's held-out log densities)
// with the metrics of the scheme, and for categorical schemes compares the
// multi-rater model with each baseline item by item.
func (h heldOut) metrics(names []string, preds map[string]map[string]multirater.ItemResult, levels map[string][]string, logDens map[string][]float64) ([]EvalModel, []PairedComparison) {
	var models []EvalModel
	for _, n := range names {
		var mt EvalMetrics
		switch h.ds.Scheme.Kind {
		case annotations.Ordinal:
			mt = ordinalMetrics(h.ds, h.ids, h.byItem, preds[n])
		case annotations.Bounded:
			mt = boundedMetrics(h.ds, h.ids, h.byItem, preds[n], logDens[n])
		default:
			mt = nominalMetrics(h.ds, h.ids, h.byItem, h.itemByID, h.majority, preds[n], levels[n])
		}
		models = append(models, EvalModel{Name: n, Metrics: mt})
	}
	if h.ds.Scheme.Kind == annotations.Ordinal || h.ds.Scheme.Kind == annotations.Bounded {
		return models, nil
	}
	var paired []PairedComparison
	for _, n := range names[1:] {
		paired = append(paired, pairedAccuracy(h.ds, h.ids, h.itemByID, h.majority, preds["multirater"], preds[n], n)...)
	}
	return models, paired
}

// heldOutLogDensities returns the log predictive density, under a
// bounded fit res, of each rating inside the scale of the held-out items
// (predicted as items), in item and label order.
func heldOutLogDensities(ds *annotations.Dataset, res *multirater.FitResult, items []multirater.ItemResult, byItem map[string][]annotations.Label) ([]float64, error) {
	var out []float64
	for _, it := range items {
		if it.Score == nil {
			continue
		}
		for _, l := range byItem[it.ID] {
			v, err := ds.Scheme.Value(l.Value)
			if err != nil || v <= ds.Scheme.Lo || v >= ds.Scheme.Hi {
				continue
			}
			lp, err := bounded.ConsensusLogDensity(res, v, it.Score.Mean, it.Score.SD*it.Score.SD)
			if err != nil {
				return nil, err
			}
			out = append(out, lp)
		}
	}
	return out, nil
}

// evalPredictor is newPredictor for a fold's fit: with the fold's kernel
// spec ks and covariance cov, unless the fit made a final run on another
// prior (Model.EvidenceRank), which is rebuilt, or the fit learnt kernel hyperparameters
// (rbf without gamma, ard, ...), whose values only the fit knows: then the
// predictor's kernel is the learnt one (res.Model.Kernel), its covariance
// rebuilt from the training items' features.
func evalPredictor(res *multirater.FitResult, ks kernel.Spec, train *itemFeatures, cov *gp.Gram) (*Predictor, error) {
	if res.Model.EvidenceRank != 0 {
		// A final run's prior (finalFitted), rebuilt as predict does.
		return newPredictor(res, ks, train, train.fitPrior(ks, res))
	}
	if res.Model.Learnt == nil {
		return newPredictor(res, ks, train, cov)
	}
	lks, err := kernel.ParseSpec(res.Model.Kernel)
	if err != nil {
		return nil, fmt.Errorf("analysis: the learnt kernel %q: %w", res.Model.Kernel, err)
	}
	var lcov *gp.Gram
	if c, _ := train.gram(lks); c != nil {
		lcov = gp.NewGram(c)
	}
	return newPredictor(res, lks, train, lcov)
}

// pickRaterBaselines returns the raters of the rater:<id> baselines.
func pickRaterBaselines(ds *annotations.Dataset, sel string) ([]string, []string, error) {
	raters := ds.RaterIDs()
	count := map[string]int{}
	for _, l := range ds.Labels {
		count[l.Rater]++
	}
	byCount := append([]string(nil), raters...)
	sort.SliceStable(byCount, func(i, j int) bool { return count[byCount[i]] > count[byCount[j]] })
	n := 0
	switch s := strings.ToLower(strings.TrimSpace(sel)); s {
	case "":
		n = min(len(raters), DefaultRaterBaselines)
	case "all":
		n = len(raters)
	case "none":
		n = 0
	default:
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return nil, nil, annotations.Errorf(annotations.EINVALID, "rater baselines %q: expected all, none or a number of raters", sel)
		}
		n = min(v, len(raters))
	}
	var notes []string
	if n < len(raters) && n > 0 {
		notes = append(notes, fmt.Sprintf("rater baselines for the %d of %d raters with the most labels", n, len(raters)))
	}
	picked := byCount[:n]
	// Keep the raters' own order.
	sel2 := map[string]bool{}
	for _, r := range picked {
		sel2[r] = true
	}
	var out []string
	for _, r := range raters {
		if sel2[r] {
			out = append(out, r)
		}
	}
	return out, notes, nil
}

// assignFolds deals ids into k folds of sizes differing by at most one, in
// a random order drawn from PCG(seed, foldStream).
func assignFolds(ids []string, k int, seed uint64) []int {
	const foldStream = 0xf01d5
	rng := rand.New(rand.NewPCG(seed, foldStream))
	perm := rng.Perm(len(ids))
	fold := make([]int, len(ids))
	for pos, i := range perm {
		fold[i] = pos % k
	}
	return fold
}

// majorityLabels returns each item's majority label (see Eval): for an
// ordinal scheme the median level, for a nominal one the unique most
// frequent class (items without one are left out).
func majorityLabels(ds *annotations.Dataset, byItem map[string][]annotations.Label) map[string]string {
	out := make(map[string]string, len(byItem))
	codes := ds.Scheme.Codes()
	for id, ls := range byItem {
		if ds.Scheme.Kind == annotations.Bounded {
			// The mean of the item's values.
			sum, n := 0.0, 0
			for _, l := range ls {
				if v, err := ds.Scheme.Value(l.Value); err == nil {
					sum += v
					n++
				}
			}
			if n > 0 {
				out[id] = strconv.FormatFloat(sum/float64(n), 'g', -1, 64)
			}
			continue
		}
		if ds.Scheme.Kind == annotations.Ordinal {
			idx := make([]int, 0, len(ls))
			for _, l := range ls {
				if k, ok := ds.Scheme.Index(l.Value); ok {
					idx = append(idx, k)
				}
			}
			if len(idx) == 0 {
				continue
			}
			sort.Ints(idx)
			n := len(idx)
			if n%2 == 1 {
				out[id] = codes[idx[n/2]]
			} else {
				out[id] = codes[roundHalfEven2(idx[n/2-1]+idx[n/2])]
			}
			continue
		}
		values := make([]string, len(ls))
		for i, l := range ls {
			values[i] = l.Value
		}
		if won := raters.Plurality(values, codes); len(won) == 1 {
			out[id] = won[0]
		}
	}
	return out
}

// boundedMetrics computes the bounded model's metrics of one model's
// held-out predictions (see EvalMetrics).
func boundedMetrics(ds *annotations.Dataset, ids []string, byItem map[string][]annotations.Label, preds map[string]multirater.ItemResult, logDens []float64) EvalMetrics {
	var m EvalMetrics
	se, n := 0.0, 0
	for _, id := range ids {
		p, ok := preds[id]
		if !ok || p.Value == nil {
			continue
		}
		for _, l := range byItem[id] {
			v, err := ds.Scheme.Value(l.Value)
			if err != nil {
				continue
			}
			d := v - p.Value.Mean
			se += d * d
			n++
		}
	}
	if n > 0 {
		mse := se / float64(n)
		m.MSE = &mse
	}
	if len(logDens) > 0 {
		s := 0.0
		for _, v := range logDens {
			s += v
		}
		mean := s / float64(len(logDens))
		m.MeanLogDensity, m.NLogDensity = &mean, len(logDens)
	}
	return m
}

// roundHalfEven2 returns s/2 rounded to the nearest integer, halves to the
// even one.
func roundHalfEven2(s int) int {
	if s%2 == 0 {
		return s / 2
	}
	lo := (s - 1) / 2
	if lo%2 == 0 {
		return lo
	}
	return lo + 1
}

// subsetDataset returns the dataset of the items ids (in that order, with
// their texts and covariates) and the given labels (nil: every label of
// those items).
func subsetDataset(ds *annotations.Dataset, itemByID map[string]annotations.Item, ids []string, labels []annotations.Label) *annotations.Dataset {
	out := &annotations.Dataset{Scheme: ds.Scheme, Items: make([]annotations.Item, len(ids))}
	in := make(map[string]bool, len(ids))
	for i, id := range ids {
		it, ok := itemByID[id]
		if !ok {
			it = annotations.Item{ID: id}
		}
		out.Items[i] = it
		in[id] = true
	}
	if labels != nil {
		out.Labels = labels
		return out
	}
	for _, l := range ds.Labels {
		if in[l.Item] {
			out.Labels = append(out.Labels, l)
		}
	}
	return out
}

// subsetCovariance restricts a covariance (of the items all) and its
// features to the items ids, a subset of all: the same kernel and text
// featuriser, a sub-matrix of C (decomposed through the text features when
// the kernel has them, as buildCovariance does).
func subsetCovariance(cov *Covariance, ks kernel.Spec, f *itemFeatures, all, ids []string) (*Covariance, *itemFeatures, error) {
	pos := indexOf(all)
	idx := make([]int, len(ids))
	for i, id := range ids {
		idx[i] = pos[id]
	}
	g := &itemFeatures{n: len(ids), cols: f.cols, std: f.std}
	for _, t := range f.text {
		u := textField{column: t.column, vec: t.vec, docs: make([]textfeat.Vector, len(ids)), counts: make([]multirater.TermCounts, len(ids))}
		for i, j := range idx {
			u.docs[i], u.counts[i] = t.docs[j], t.counts[j]
		}
		g.text = append(g.text, u)
	}
	if f.x != nil {
		g.x = mat.NewDense(len(ids), len(f.cols), nil)
		for i, j := range idx {
			g.x.SetRow(i, f.x.RawRowView(j))
		}
	}
	out := &Covariance{Kernel: cov.Kernel, Notes: cov.Notes}
	if cov.Cov != nil {
		c := mat.NewSymDense(len(ids), nil)
		for i, a := range idx {
			for j := i; j < len(idx); j++ {
				c.SetSym(i, j, cov.Cov.At(a, idx[j]))
			}
		}
		if x := g.textFeatures(ks); x != nil {
			out.Cov = gp.NewGramFeatures(c, x)
		} else {
			out.Cov = gp.NewGram(c)
		}
	}
	var err error
	if out.Features, err = g.record(); err != nil {
		return nil, nil, err
	}
	return out, g, nil
}
