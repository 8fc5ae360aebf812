package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/gin-gonic/gin"
	"gonum.org/v1/gonum/mat"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// maxPredictItems bounds the new items of one prediction request.
const maxPredictItems = 1000

// predictor predicts new items from a done fit: the model's predictor, the
// kernel and the training inputs it needs for cross-covariances.
type predictor struct {
	pred  *multirater.OrdinalPredictor
	kern  multirater.Kernel
	train multirater.Inputs
	cols  []string // covariate names, in the column order of train.X
}

// predictorFor builds (once per cached fit) the predictor of a done fit.
// Kernels on covariates need the training items' covariates, which come
// from the project as it is now: if its items changed so that they no
// longer match the fit, prediction is a conflict.
func (s *Server) predictorFor(ctx context.Context, in reportInput, cf *cachedFit) (*predictor, error) {
	cf.predMu.Lock()
	defer cf.predMu.Unlock()
	if cf.predictor != nil {
		return cf.predictor, nil
	}
	res := in.Result
	if res.Model.Model != analysis.ModelOrdinal {
		return nil, annotations.Errorf(annotations.EUNAVAILABLE, "prediction for new items is not available for the %s model in this version", res.Model.Model)
	}
	if res.Draws == nil || res.Draws.N == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "fit %d kept no posterior draws to predict from (keep_draws)", in.Fit.ID)
	}
	kern, err := multirater.ParseKernel(res.Model.Kernel)
	if err != nil {
		return nil, annotations.Errorf(annotations.EUNAVAILABLE, "prediction from fits with kernel %s (text) is not available in this version", res.Model.Kernel)
	}
	ids := make([]string, len(res.Items))
	for i, it := range res.Items {
		ids[i] = it.ID
	}
	p := &predictor{kern: kern, train: multirater.Inputs{N: len(ids)}}
	if kern.Covariates() {
		ds, err := s.store.Dataset(ctx, in.Project.ID)
		if err != nil {
			return nil, err
		}
		p.train, err = analysis.KernelInputs(ds, ids, kern)
		if err != nil {
			return nil, annotations.Errorf(annotations.ECONFLICT, "the items of project %q no longer match fit %d (%s); run a new fit to predict", in.Project.Name, in.Fit.ID, annotations.ErrorMessage(err))
		}
		names := map[string]bool{}
		for _, it := range ds.Items {
			for c := range it.Covariates {
				names[c] = true
			}
		}
		for c := range names {
			p.cols = append(p.cols, c)
		}
		sort.Strings(p.cols)
	}
	var cov mat.SymDense
	kern.GramTo(&cov, p.train)
	p.pred, err = multirater.NewOrdinalPredictor(res, &cov)
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "fit %d cannot predict: %s", in.Fit.ID, strings.TrimPrefix(err.Error(), "multirater: "))
	}
	cf.predictor = p
	return p, nil
}

type predictRequest struct {
	Items []predictItem `json:"items"`
}

type predictItem struct {
	ID         string             `json:"id"`
	Text       string             `json:"text"`
	Covariates map[string]float64 `json:"covariates"`
}

type predictResponse struct {
	Fit    int64                   `json:"fit"`
	Kernel string                  `json:"kernel"`
	Levels []string                `json:"levels"`
	Items  []multirater.ItemResult `json:"items"`
	Notes  []string                `json:"notes,omitempty"`
}

// predict: POST /api/v1/fits/{id}/predictions {"items": [{"id", "text",
// "covariates"}]} -> each new item's predicted consensus score, grade
// distribution (overall and per rater) and most probable grade, from a
// done ordinal fit without refitting (Rogers et al. appendix C).
func (s *Server) predict(c *gin.Context) {
	in, cf, err := s.doneFit(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var req predictRequest
	if err := s.decodeJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	p, err := s.predictorFor(ctx, in, cf)
	if err != nil {
		s.fail(c, err)
		return
	}
	out, err := p.predict(in, req.Items)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// predict validates the new items and predicts them.
func (p *predictor) predict(in reportInput, items []predictItem) (*predictResponse, error) {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	switch {
	case len(items) == 0:
		return nil, bad("field \"items\": expected a non-empty array of {\"id\", \"text\", \"covariates\"}")
	case len(items) > maxPredictItems:
		return nil, bad("field \"items\": %d items (at most %d per request)", len(items), maxPredictItems)
	}
	out := &predictResponse{Fit: in.Fit.ID, Kernel: p.kern.String(), Levels: in.Result.Levels}
	ids := make([]string, len(items))
	seen := map[string]int{}
	texts, extra := 0, 0
	var x *mat.Dense
	if p.kern.Covariates() {
		x = mat.NewDense(len(items), len(p.cols), nil)
	}
	for i, it := range items {
		probe := annotations.Item{ID: it.ID, Text: it.Text, Covariates: it.Covariates}
		if err := probe.Validate(); err != nil {
			return nil, bad("items[%d]: %s", i, annotations.ErrorMessage(err))
		}
		if j, dup := seen[it.ID]; dup {
			return nil, bad("items[%d]: id %q is also items[%d]", i, it.ID, j)
		}
		seen[it.ID] = i
		ids[i] = it.ID
		if it.Text != "" {
			texts++
		}
		if x == nil {
			extra += len(it.Covariates)
			continue
		}
		for j, col := range p.cols {
			v, ok := it.Covariates[col]
			if !ok {
				return nil, bad("items[%d] (%q): covariate %q is missing (kernel %s needs %s)", i, it.ID, col, p.kern, strings.Join(p.cols, ", "))
			}
			x.Set(i, j, v)
		}
		if len(it.Covariates) > len(p.cols) {
			for name := range it.Covariates {
				if _, found := slices.BinarySearch(p.cols, name); !found {
					return nil, bad("items[%d] (%q): unknown covariate %q (the fit used %s)", i, it.ID, name, strings.Join(p.cols, ", "))
				}
			}
		}
	}
	newIn := multirater.Inputs{N: len(items)}
	if x != nil {
		newIn.X = x
	}
	var cross mat.Dense
	p.kern.CrossTo(&cross, newIn, p.train)
	prior := p.kern.DiagTo(nil, newIn)
	out.Items = p.pred.Predict(ids, &cross, prior)
	if texts > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("item text was given for %d item(s) but is not used: kernel %s has no text component", texts, p.kern))
	}
	if extra > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("covariates were given but are not used: kernel %s does not read covariates", p.kern))
	}
	if !p.kern.Covariates() {
		out.Notes = append(out.Notes, fmt.Sprintf("kernel %s relates no new item to the fitted items: each prediction is the model's prior predictive for an unseen item, through each rater's thresholds and precision", p.kern))
	}
	return out, nil
}
