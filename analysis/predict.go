package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/gp"
	"concord/multirater/kernel"
)

// PredictionsSchema names the predictions document (Predictions as JSON).
const PredictionsSchema = "concord.predictions/v1"

// Predictions are a fit's predictions for new items: the document `concord
// predict` writes. Items follow the order of the items given; each is a
// multirater.ItemResult with NLabels 0 and, for the ordinal model, the
// consensus score (Score), the consensus and per-rater grade distributions
// (GradeProbs, RaterGradeProbs) and the most probable grade (Grade); for the
// classification model the consensus and per-rater class distributions
// (ClassProbs, RaterClassProbs) and the most probable class (Class).
type Predictions struct {
	Schema string `json:"schema"`
	// FitOf names the fit's model and kernel; Levels are its level or
	// class codes, in the order of the per-rater arrays.
	FitOf
	Levels []string                `json:"levels"`
	Items  []multirater.ItemResult `json:"items"`
	// Notes say what of the input was not used, or could not inform the
	// predictions.
	Notes []string `json:"notes,omitempty"`
	// Gold is the AUC model's check against the new items' gold labels
	// (items-file column gold), when both classes have some.
	Gold *GoldAUC `json:"gold,omitempty"`
}

// GoldAUC is the AUC and ROC curve of predicted scores against gold labels:
// Items were scored, Positives of them are of the positive class.
type GoldAUC struct {
	Items     int                   `json:"items"`
	Positives int                   `json:"positives"`
	AUC       float64               `json:"auc"`
	ROC       []multirater.ROCPoint `json:"roc"`
}

// Predictor predicts new items from a fit result without refitting
// (Rogers et al. sec. 2.3.1 and appendix C): the kept posterior draws of
// the fitted items' latent values are carried to new items through the
// Gaussian-process conditional, with the covariances between new and fitted
// items computed from the features the result records (FitResult.Features:
// the text featuriser, the fitted items' bags of words, their covariates).
// Building it decomposes the fitted items' covariance matrix once, O(N^3);
// then each prediction costs O(N r) per item and draw. Safe for concurrent
// use.
type Predictor struct {
	res   *multirater.FitResult
	ks    kernel.Spec
	train *itemFeatures
	pred  itemPredictor
	// items, when set, predicts instead (Model.itemsPredictor).
	items func([]annotations.Item) (*Predictions, error)
}

// NewPredictor prepares predictions from a fit result (as returned by Fit
// or read back from its JSON). It returns an EINVALID error when the result
// cannot predict: no kept draws, a kernel it does not know, features that
// are missing (results of older versions with covariate kernels) or
// malformed.
func NewPredictor(res *multirater.FitResult) (*Predictor, error) {
	if res == nil {
		return nil, annotations.Errorf(annotations.EINVALID, "no fit result to predict from")
	}
	if m, err := LookupModel(res.Model.Model); err == nil && m.itemsPredictor != nil {
		f, err := m.itemsPredictor(res)
		if err != nil {
			return nil, err
		}
		return &Predictor{res: res, items: f}, nil
	}
	ks, err := kernel.ParseSpec(res.Model.Kernel)
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "the fit result's kernel: %s", err)
	}
	train, err := featuresOf(res, ks)
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "%s", err)
	}
	return newPredictor(res, ks, train, train.fitPrior(ks, res))
}

// fitPrior rebuilds the prior covariance that the fit result res was
// made on from the fitted items' features: its low-rank prior
// (priorLowRank), the dense kernel matrix, or nil for the identity.
func (f *itemFeatures) fitPrior(ks kernel.Spec, res *multirater.FitResult) *gp.Gram {
	if lr := f.priorLowRank(ks, res); lr != nil {
		return gp.NewGramLowRank(lr)
	}
	if c, _ := f.gram(ks); c != nil {
		return gp.NewGram(c)
	}
	return nil
}

// newPredictor builds a predictor from the fitted items' features and their
// covariance matrix (nil for the identity kernel), which may be shared with
// the fit that made res.
func newPredictor(res *multirater.FitResult, ks kernel.Spec, train *itemFeatures, cov *gp.Gram) (*Predictor, error) {
	p := &Predictor{res: res, ks: ks, train: train}
	var c mat.Symmetric
	if cov != nil {
		c = cov
	} else {
		c = identityCov(len(res.Items))
	}
	m, err := LookupModel(res.Model.Model)
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "the fit result's model %q cannot predict new items (expected %s)", res.Model.Model, ModelNames())
	}
	if p.pred, err = m.predictor(res, c); err != nil {
		return nil, invalidData(err, "the fit result cannot predict: ")
	}
	return p, nil
}

// identityCov is the n×n identity as a diagonal matrix.
func identityCov(n int) mat.Symmetric {
	d := make([]float64, n)
	for i := range d {
		d[i] = 1
	}
	return mat.NewDiagDense(n, d)
}

// Predict predicts new items from a fit result: NewPredictor(res) then
// Predict(items). Servers that predict repeatedly from one fit should keep
// the Predictor instead, which decomposes the covariance matrix once.
func Predict(res *multirater.FitResult, items []annotations.Item) (*Predictions, error) {
	p, err := NewPredictor(res)
	if err != nil {
		return nil, err
	}
	return p.Predict(items)
}

// seenItems are the ids of the new items to predict checked so far, with
// their index.
type seenItems map[string]int

// check checks the new item it of index i: valid, and not given before.
func (seen seenItems) check(i int, it *annotations.Item) error {
	if err := it.Validate(); err != nil {
		return annotations.Errorf(annotations.EINVALID, "item %d: %s", i+1, annotations.ErrorMessage(err))
	}
	if j, dup := seen[it.ID]; dup {
		return annotations.Errorf(annotations.EINVALID, "item %q is given twice (items %d and %d)", it.ID, j+1, i+1)
	}
	seen[it.ID] = i
	return nil
}

// Predict returns the predictions for items, which are new items (an id
// that is also a fitted item's is predicted afresh, as a distinct item).
// Items are featurised as the fitted ones were: the text with the saved
// featuriser (unknown words ignored), the covariates by name. Invalid
// items, duplicate ids and missing covariates are EINVALID errors naming the
// item; unused input (texts for a kernel without text, covariates the
// kernel does not read) is reported in Notes.
func (p *Predictor) Predict(items []annotations.Item) (*Predictions, error) {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	if p.items != nil {
		return p.items(items)
	}
	if len(items) == 0 {
		return nil, bad("no items to predict")
	}
	out := &Predictions{Schema: PredictionsSchema, FitOf: FitOf{Model: p.res.Model.Model, Kernel: p.ks.String()}, Levels: p.res.Levels}
	ids := make([]string, len(items))
	seen := make(seenItems, len(items))
	g := &itemFeatures{n: len(items)}
	texts := make([]string, len(items))
	withText := 0
	unusedCov := map[string]bool{}
	if p.train.x != nil {
		g.cols = p.train.cols
		g.x = mat.NewDense(len(items), len(g.cols), nil)
	}
	for i := range items {
		it := &items[i]
		if err := seen.check(i, it); err != nil {
			return nil, err
		}
		ids[i] = it.ID
		texts[i] = it.Text
		if strings.TrimSpace(it.Text) != "" {
			withText++
		}
		for j, c := range g.cols {
			v, ok := it.Covariates[c]
			if isCategorical(c, p.train.cat) {
				v, ok = newItemIndicator(it, c, p.train.cat)
			}
			if !ok {
				return nil, bad("%s (kernel %s reads %s)", missingCovariate(it, c), p.ks, strings.Join(g.cols, ", "))
			}
			if st := p.train.std; st != nil {
				v = st.Z(j, v)
			}
			g.x.Set(i, j, v)
		}
		for c := range it.Covariates {
			if !containsString(g.cols, c) && !slices.Contains(p.train.cat, c) {
				unusedCov[c] = true
			}
		}
	}
	for _, t := range p.train.text {
		ft := texts
		if t.column != "" {
			ft = make([]string, len(items))
			for i := range items {
				ft[i] = columnText(&items[i], t.column)
			}
		}
		u := textField{column: t.column, vec: t.vec, docs: t.vec.TransformAll(ft)}
		empty := 0
		for _, d := range u.docs {
			if d.NNZ() == 0 {
				empty++
			}
		}
		g.text = append(g.text, u)
		switch {
		case empty == 0:
		case len(p.ks) == 1:
			out.Notes = append(out.Notes, fmt.Sprintf("%d of %d item(s) have no term of the fit's vocabulary in their %s: they are predicted as items the text says nothing about (prior variance 1, no covariance with the fitted items)", empty, len(items), u.what()))
		default:
			out.Notes = append(out.Notes, fmt.Sprintf("%d of %d item(s) have no term of the fit's vocabulary in their %s", empty, len(items), u.what()))
		}
	}
	if !p.ks.Text() && withText > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d item(s) have a text, which is not used: kernel %s has no text term", withText, p.ks))
	}
	if len(unusedCov) > 0 {
		names := make([]string, 0, len(unusedCov))
		for c := range unusedCov {
			names = append(names, c)
		}
		sort.Strings(names)
		out.Notes = append(out.Notes, fmt.Sprintf("covariate(s) %s are not used by kernel %s", strings.Join(names, ", "), p.ks))
	}
	if !p.ks.Text() && !p.ks.Covariates() {
		out.Notes = append(out.Notes, fmt.Sprintf("kernel %s relates no new item to the fitted items: each prediction is the model's prior predictive for an unseen item, through each rater's thresholds and precision", p.ks))
	}
	cross, prior := p.train.cross(p.ks, g)
	if np, ok := p.pred.(notedPredictor); ok {
		var notes []string
		out.Items, notes = np.PredictNotes(ids, cross, prior)
		out.Notes = append(out.Notes, notes...)
	} else {
		out.Items = p.pred.Predict(ids, cross, prior)
	}
	return out, nil
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
