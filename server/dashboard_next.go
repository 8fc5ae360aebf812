package server

import (
	"strings"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
)

// nextPage is the dashboard's list of the items to label next.
type nextPage struct {
	basePage
	Project *annotations.Project
	FitID   int64
	N       int
	Pool    string
	Next    *analysis.NextResult
}

// nextPage: GET /fits/{id}/next?n=&by=&pool= -> the items to label next
// (the API's /api/v1/fits/{id}/next), with a CSV task list to download.
func (d *dashboard) nextPage(c *gin.Context) {
	f, p, ok := d.fitAndProject(c, read)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	if f.Status != annotations.FitDone {
		d.fail(c, annotations.Errorf(annotations.ECONFLICT, "fit %d is %s: the items to label next come from a done fit", f.ID, f.Status))
		return
	}
	cf, err := d.s.result(ctx, f)
	if err != nil {
		d.fail(c, err)
		return
	}
	if c.Query("n") == "" {
		q := c.Request.URL.Query()
		q.Set("n", "50")
		c.Request.URL.RawQuery = q.Encode()
	}
	o, next, err := nextOf(c, cf.res)
	if err != nil {
		d.fail(c, err)
		return
	}
	d.render(c, 200, "next", nextPage{basePage: d.base(c, p.Name+": fit "+itoa(f.ID)+": next items"), Project: p, FitID: f.ID,
		N: o.N, Pool: strings.Join(o.Pool, ","), Next: next})
}
