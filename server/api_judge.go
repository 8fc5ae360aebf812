package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// judgeParams reads the judge report's query parameters: judges
// (comma-separated rater ids; default: the project's model raters),
// epsilon, q, min_humans and min_instances (as concord judge's flags).
func judgeParams(c *gin.Context) (analysis.JudgeOptions, error) {
	q := newQuery(c, "judges", "epsilon", "q", "min_humans", "min_instances")
	var o analysis.JudgeOptions
	o.Judges = commaList(q.str("judges", 100_000))
	float := func(name string, def float64) float64 {
		v, ok := c.GetQuery(name)
		if !ok || strings.TrimSpace(v) == "" {
			return def
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			q.fail("query parameter %s=%q: expected a number", name, v)
			return def
		}
		return x
	}
	o.Epsilon = float("epsilon", analysis.DefaultJudgeEpsilon)
	o.Q = float("q", analysis.DefaultJudgeQ)
	o.MinHumans = q.intIn("min_humans", analysis.DefaultJudgeMinHumans, 1, 1_000_000)
	o.MinInstances = q.intIn("min_instances", analysis.DefaultJudgeMinInstances, 2, 1_000_000)
	return o, q.err
}

// judgeReport: GET /api/v1/projects/{id}/judge?judges=R1,R2&epsilon=0.15&q=0.05
// &min_humans=2&min_instances=30 -> the judge report of the project's
// labels (concord.judges/v1, what concord judge --json prints): for each
// model rater (the project's, or those named) the alternative annotator
// test against the humans, its agreement with the humans' majority and each
// human's with the other humans', with 95% Wilson intervals.
func (s *Server) judgeReport(c *gin.Context) {
	p := s.project(c, read)
	if p == nil {
		return
	}
	doc, err := s.judgeDoc(c, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, doc.JSON())
}

// judgeDoc reads the query and the project's labels and runs the test.
func (s *Server) judgeDoc(c *gin.Context, p *annotations.Project) (*analysis.JudgeReportDoc, error) {
	o, err := judgeParams(c)
	if err != nil {
		return nil, err
	}
	ds, err := s.store.Dataset(c.Request.Context(), p.ID)
	if err != nil {
		return nil, err
	}
	return analysis.JudgeReport(ds, o)
}

// judgePage is the dashboard's judge report.
type judgePage struct {
	basePage
	Project *annotations.Project
	Judges  string
	Epsilon float64
	Doc     *analysis.JudgeReportDoc
	// Problem is why there is no report (no model raters, too few
	// humans), shown in place of it.
	Problem string
}

// judgePage: GET /projects/{id}/judge?judges=&epsilon= -> the judge
// report (the API's /api/v1/projects/{id}/judge) as a page.
func (d *dashboard) judgePage(c *gin.Context) {
	p, ok := d.projectParam(c, read)
	if !ok {
		return
	}
	pg := judgePage{basePage: d.base(c, p.Name+": model raters"), Project: p, Judges: c.Query("judges"), Epsilon: analysis.DefaultJudgeEpsilon}
	if v, err := strconv.ParseFloat(c.Query("epsilon"), 64); err == nil {
		pg.Epsilon = v
	}
	doc, err := d.s.judgeDoc(c, p)
	switch code := annotations.ErrorCode(err); {
	case err == nil:
		pg.Doc = doc
	case code == annotations.EINVALID:
		pg.Problem = annotations.ErrorMessage(err)
	default:
		d.fail(c, err)
		return
	}
	d.render(c, http.StatusOK, "judge", pg)
}

// fitJudgeReport: GET /api/v1/fits/{id}/judge?judges=&epsilon=&q=
// &min_humans=&min_instances= -> the judge report on the labels the done
// fit used and the raters it marked as models (analysis.JudgeFit).
func (s *Server) fitJudgeReport(c *gin.Context) {
	in, _, ok := s.doneFitOrFail(c, "judges", "epsilon", "q", "min_humans", "min_instances")
	if !ok {
		return
	}
	o, err := judgeParams(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	doc, err := analysis.JudgeFit(in.Result, o)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, doc.JSON())
}

// fitJudge is the fit page's judge report: nil when the fit has no model
// raters; the problem in words when there is no report (too few humans).
func fitJudge(res *multirater.FitResult) (*analysis.JudgeReportDoc, string) {
	models := false
	for _, r := range res.Raters {
		models = models || r.Model
	}
	if !models {
		return nil, ""
	}
	doc, err := analysis.JudgeFit(res, analysis.JudgeOptions{})
	if err != nil {
		return nil, annotations.ErrorMessage(err)
	}
	return doc, ""
}
