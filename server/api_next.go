package server

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// maxNextN bounds the items of one next request.
const maxNextN = 10000

// nextParams reads the next ranking's query parameters: n (default
// analysis.DefaultNextN, 1 to maxNextN), pool (comma-separated rater ids)
// and by (information or accuracy).
func nextParams(c *gin.Context) (analysis.NextOptions, error) {
	q := newQuery(c, "n", "pool", "by", "format")
	o := analysis.NextOptions{N: q.intIn("n", analysis.DefaultNextN, 1, maxNextN), By: q.str("by", 20), Pool: commaList(q.str("pool", 100_000))}
	return o, q.err
}

// nextOf ranks the items to label next in the fit result res as the
// request's query says (nextParams).
func nextOf(c *gin.Context, res *multirater.FitResult) (analysis.NextOptions, *analysis.NextResult, error) {
	o, err := nextParams(c)
	if err != nil {
		return o, nil, err
	}
	next, err := analysis.NextItems(res, o)
	return o, next, err
}

// nextItems: GET /api/v1/fits/{id}/next?n=N&pool=R1,R2&by=information|
// accuracy&format=json|csv -> the items to label next, best first
// (concord.next/v1, what concord next --json writes), or as a CSV task
// list.
func (s *Server) nextItems(c *gin.Context) {
	in, _, err := s.doneFit(c, "n", "pool", "by", "format")
	if err != nil {
		s.fail(c, err)
		return
	}
	format := c.DefaultQuery("format", "json")
	if format != "json" && format != "csv" {
		s.failf(c, annotations.EINVALID, "query parameter format=%q: expected json or csv", format)
		return
	}
	_, next, err := nextOf(c, in.Result)
	if err != nil {
		s.fail(c, err)
		return
	}
	if format == "csv" {
		var buf bytes.Buffer
		if err := next.WriteCSV(&buf); err != nil {
			s.fail(c, err)
			return
		}
		c.Header("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fileBase(in)+".next.csv"))
		c.Data(http.StatusOK, ctCSV, buf.Bytes())
		return
	}
	c.JSON(http.StatusOK, next)
}
