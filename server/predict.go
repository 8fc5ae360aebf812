package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
)

// maxPredictItems bounds the new items of one prediction request.
const maxPredictItems = 1000

// predictorFor returns the predictor of a done fit, built once per cached
// fit (it decomposes the fitted items' covariance matrix). Everything it
// needs (the kernel, the fitted items' covariates and bags of words, the
// text featuriser) is recorded in the fit's result, so the project's items
// may have changed since.
func (s *Server) predictorFor(in reportInput, cf *cachedFit) (*analysis.Predictor, error) {
	cf.predMu.Lock()
	defer cf.predMu.Unlock()
	if cf.predictor != nil || cf.predErr != nil {
		return cf.predictor, cf.predErr
	}
	p, err := analysis.NewPredictor(in.Result)
	if err != nil {
		if annotations.ErrorCode(err) == annotations.EINVALID {
			err = annotations.Errorf(annotations.EINVALID, "fit %d cannot predict new items: %s", in.Fit.ID, annotations.ErrorMessage(err))
			cf.predErr = err // deterministic
		}
		return nil, err
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

// predict: POST /api/v1/fits/{id}/predictions {"items": [{"id", "text",
// "covariates"}]} -> the concord.predictions/v1 document: each new item's
// predicted consensus score, grade distributions (overall and per rater)
// and most probable grade, from a done fit without refitting (Rogers et al.
// appendix C), through the fit's kernel (texts for text kernels, covariates
// by name).
func (s *Server) predict(c *gin.Context) {
	in, cf, ok := s.doneFitOrFail(c)
	if !ok {
		return
	}
	req := bodyOf[predictRequest](s, c)
	if req == nil || !nonEmpty(s, c, req.Items, "items", `{"id", "text", "covariates"}`) {
		return
	}
	if len(req.Items) > maxPredictItems {
		s.failf(c, annotations.EINVALID, "field \"items\": %d items (at most %d per request)", len(req.Items), maxPredictItems)
		return
	}
	p, err := s.predictorFor(in, cf)
	if err != nil {
		s.fail(c, err)
		return
	}
	items := make([]annotations.Item, len(req.Items))
	for i, it := range req.Items {
		items[i] = annotations.Item{ID: it.ID, Text: it.Text, Covariates: it.Covariates}
	}
	out, err := p.Predict(items)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
