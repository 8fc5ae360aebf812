package analysis

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/auc"
)

// AUCEvalSchema names the document of an AUC evaluation (AUCEvalResult).
const AUCEvalSchema = "concord.auc-eval/v1"

// DefaultGPClassifierKernel is the kernel of the probit GP classifier of
// an AUC evaluation: an RBF whose width, and a constant (the classifier's
// bias), are learnt by maximising the EP evidence.
const DefaultGPClassifierKernel = "rbf+const"

// AUCEvalSpec describes a cross-validated evaluation of the AUC model
// (EvalAUC).
type AUCEvalSpec struct {
	// Fit is the auc model's spec (scores, gamma, prior, engine,
	// covariates, standardize); Fit.Seed also deals the folds.
	Fit FitSpec `json:"fit"`
	// Folds is the number of folds K (default 10).
	Folds int `json:"folds,omitempty"`
	// GPKernel is the probit GP classifier's kernel (default
	// DefaultGPClassifierKernel).
	GPKernel string `json:"gp_kernel,omitempty"`
}

// AUCEvalResult is the evaluation document: each model's test AUC over
// the same stratified folds.
type AUCEvalResult struct {
	Schema string `json:"schema"`
	Folds  int    `json:"folds"`
	Seed   uint64 `json:"seed"`
	// Items are the items with a majority label, Positives those whose
	// majority is the positive class; Covariates what every model reads.
	Items      int          `json:"items"`
	Positives  int          `json:"positives"`
	Covariates []string     `json:"covariates"`
	Models     []AUCEvalRow `json:"models"`
	Notes      []string     `json:"notes,omitempty"`
	// Seconds is the wall time (not part of the document).
	Seconds float64 `json:"-"`
}

// AUCEvalRow is one model's test AUC: AUC is the mean over the folds of
// the AUC of the held-out items' scores (FoldAUC), SE its standard error
// (the folds' sd over sqrt(K)).
type AUCEvalRow struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	AUC         float64   `json:"auc"`
	SE          float64   `json:"se"`
	FoldAUC     []float64 `json:"fold_auc"`
	// FoldROC is each fold's ROC curve of the held-out items' scores.
	FoldROC [][]multirater.ROCPoint `json:"fold_roc"`
}

// The models of an AUC evaluation.
const (
	EvalAUCModel    = "auc"
	EvalGPProbit    = "gp-probit"
	EvalLogisticReg = "logistic"
)

// aucEvalItems returns the items of ds that have a label for the auc
// model (aucLabels: the majority of their labels) in the dataset's order,
// whether each is positive, how many are, and how many tied items were
// left out.
func aucEvalItems(ds *annotations.Dataset) (ids []string, positive []bool, npos, ties int) {
	label, ties := aucLabels(ds)
	for _, id := range ds.ItemIDs() {
		if y, ok := label[id]; ok {
			ids = append(ids, id)
			positive = append(positive, y)
			if y {
				npos++
			}
		}
	}
	return ids, positive, npos, ties
}

// EvalAUC runs stratified K-fold cross-validation of the AUC model on the
// items of ds with a majority label (as the auc fit labels them) and, on
// the same folds, of two classifiers ranked by their scores: concord's
// probit GP classifier (the robust model with labelling-error rate 0,
// Kim & Ghahramani's plain EP classifier, kernel spec.GPKernel learnt by
// the evidence; its latent posterior mean ranks the items) and logistic
// regression by maximum likelihood (FitLogistic; the log odds rank). Each
// fold's test AUC is the Mann-Whitney statistic of the held-out items'
// scores (auc.AUC). The folds are stratified by label and dealt by a
// generator seeded with spec.Fit.Seed (auc.Folds). progress, when set,
// gets each fold's progress. Problems with the spec or data are EINVALID
// errors; ctx cancels.
func EvalAUC(ctx context.Context, ds *annotations.Dataset, spec AUCEvalSpec, progress func(EvalProgress)) (*AUCEvalResult, error) {
	start := time.Now()
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	if spec.Fit.Model == "" {
		spec.Fit.Model = ModelAUC
	}
	if !strings.EqualFold(spec.Fit.Model, ModelAUC) {
		return nil, bad("EvalAUC evaluates the auc model, not %q", spec.Fit.Model)
	}
	spec.Fit = spec.Fit.withKernel() // parsed once for every fold's fits
	if err := spec.Fit.Validate(); err != nil {
		return nil, err
	}
	fit := spec.Fit.WithDefaults().withKernel()
	k := spec.Folds
	if k == 0 {
		k = DefaultFolds
	}
	if k < 2 {
		return nil, bad("folds = %d: expected at least 2", k)
	}
	gpKernel := spec.GPKernel
	if gpKernel == "" {
		gpKernel = DefaultGPClassifierKernel
	}
	if err := aucModel().CheckScheme(ds.Scheme); err != nil {
		return nil, err
	}
	opts, err := aucOptions(fit, nil)
	if err != nil {
		return nil, err
	}
	ids, positive, npos, ties := aucEvalItems(ds)
	cols, x, err := aucCovariates(ds, ids, fit)
	if err != nil {
		return nil, err
	}
	if npos < k || len(ids)-npos < k {
		return nil, bad("%d-fold cross-validation needs at least %d positive and %d negative items (every fold holds both); there are %d positive and %d negative: use fewer folds", k, k, k, npos, len(ids)-npos)
	}
	folds := auc.Folds(positive, k, newFoldRand(fit.Seed))
	out := &AUCEvalResult{Schema: AUCEvalSchema, Folds: k, Seed: fit.Seed, Items: len(ids), Positives: npos, Covariates: cols}
	if ties > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d item(s) with as many positive as negative labels are left out", ties))
	}
	if len(ds.RaterIDs()) > 1 {
		out.Notes = append(out.Notes, "each item's label is the majority of its labels")
	}
	rows := []AUCEvalRow{
		{Name: EvalAUCModel, Description: fmt.Sprintf("auc model: %s scores, gamma %s, %s prior, engine %s", fit.Scores, fit.Gamma, fit.Prior, fit.Engine)},
		{Name: EvalGPProbit, Description: fmt.Sprintf("probit GP classifier (robust model with epsilon 0, EP), kernel %s learnt by the evidence; ranked by the latent mean", gpKernel)},
		{Name: EvalLogisticReg, Description: "logistic regression (maximum likelihood, IRLS); ranked by the log odds"},
	}
	if fit.Scores == ScoresGP {
		rows[0].Description = fmt.Sprintf("auc model: gp scores (kernel %s), gamma %s, engine %s", fit.Kernel, fit.Gamma, fit.Engine)
	}
	if fit.Standardize {
		out.Notes = append(out.Notes, "the auc model and the GP classifier z-score the covariates with each fold's training items")
	}
	byID := make(map[string]annotations.Item, len(ds.Items))
	for _, it := range ds.Items {
		byID[it.ID] = it
	}
	codes := ds.Scheme.Codes()
	negative := codes[0]
	if negative == ds.Scheme.Positive {
		negative = codes[1]
	}
	total := float64(k * len(rows))
	for f := 0; f < k; f++ {
		var train, test []int
		for i := range ids {
			if folds[i] == f {
				test = append(test, i)
			} else {
				train = append(train, i)
			}
		}
		ytrain, ytest := pick(positive, train), pick(positive, test)
		xtrain, xtest := rowsOf(x, train), rowsOf(x, test)
		report := func(m int, name string) {
			if progress != nil {
				progress(EvalProgress{Fraction: float64(f*len(rows)+m) / total, Fold: f + 1, Model: name, Elapsed: time.Since(start)})
			}
		}

		report(0, EvalAUCModel)
		res, err := auc.Fit(ctx, auc.Data{X: xtrain, Positive: ytrain, Names: cols}, opts)
		if err != nil {
			return nil, invalidData(err, fmt.Sprintf("fold %d, auc model: ", f+1))
		}
		rows[0].add(res.PredictMeansTo(nil, xtest), ytest)

		report(1, EvalGPProbit)
		gpScores, err := gpProbitScores(ctx, ds.Scheme, byID, ids, train, test, ytrain, negative, cols, gpKernel, fit)
		if err != nil {
			return nil, fmt.Errorf("fold %d, probit GP classifier: %w", f+1, err)
		}
		rows[1].add(gpScores, ytest)

		report(2, EvalLogisticReg)
		lr, err := FitLogistic(xtrain, ytrain)
		if err != nil {
			return nil, bad("fold %d: %s", f+1, err)
		}
		rows[2].add(lr.LinearPredictorsTo(nil, xtest), ytest)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for i := range rows {
		m, sd := stat.MeanStdDev(rows[i].FoldAUC, nil)
		rows[i].AUC, rows[i].SE = m, sd/math.Sqrt(float64(k))
	}
	out.Models = rows
	out.Seconds = time.Since(start).Seconds()
	if progress != nil {
		progress(EvalProgress{Fraction: 1, Fold: k, Elapsed: time.Since(start)})
	}
	return out, nil
}

// gpProbitScores fits the probit GP classifier (the robust model with
// epsilon 0) to the training items (ids[train], one label each) and returns
// the latent posterior means of the test items, predicted as new items.
func gpProbitScores(ctx context.Context, scheme annotations.Scheme, byID map[string]annotations.Item, ids []string, train, test []int, ytrain []bool, negative string, cols []string, kernelSpec string, fit FitSpec) ([]float64, error) {
	sub := &annotations.Dataset{Scheme: scheme}
	for k, i := range train {
		id := ids[i]
		sub.Items = append(sub.Items, byID[id])
		v := negative
		if ytrain[k] {
			v = scheme.Positive
		}
		sub.Labels = append(sub.Labels, annotations.Label{Item: id, Rater: "majority", Value: v})
	}
	zero := 0.0
	spec := FitSpec{Model: ModelRobust, Epsilon: &zero, Kernel: kernelSpec, Covariates: strings.Join(cols, ","), Standardize: fit.Standardize, Seed: fit.Seed}
	res, err := Fit(ctx, sub, spec, nil)
	if err != nil {
		return nil, err
	}
	items := make([]annotations.Item, len(test))
	for k, i := range test {
		items[k] = byID[ids[i]]
	}
	p, err := Predict(res, items)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(test))
	for k, it := range p.Items {
		switch {
		case it.Score != nil:
			out[k] = it.Score.Mean
		case it.ClassProbs != nil:
			out[k] = it.ClassProbs[scheme.Positive]
		default:
			return nil, fmt.Errorf("the classifier's prediction of item %q has neither a latent score nor class probabilities", it.ID)
		}
	}
	return out, nil
}

// add records a fold's held-out scores s of items labelled y: their AUC
// and ROC curve.
func (r *AUCEvalRow) add(s []float64, y []bool) {
	r.FoldAUC = append(r.FoldAUC, auc.AUC(s, y))
	r.FoldROC = append(r.FoldROC, rocPoints(auc.ROC(s, y)))
}

// rocPoints converts the family's ROC curve to the document's.
func rocPoints(c []auc.ROCPoint) []multirater.ROCPoint {
	out := make([]multirater.ROCPoint, len(c))
	for i, p := range c {
		out[i] = multirater.ROCPoint{Threshold: p.Threshold, FPR: p.FPR, TPR: p.TPR}
	}
	return out
}

// newFoldRand is the generator that deals an AUC evaluation's folds.
func newFoldRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x617563)) }

// pick returns v[idx].
func pick[T any](v []T, idx []int) []T {
	out := make([]T, len(idx))
	for k, i := range idx {
		out[k] = v[i]
	}
	return out
}
