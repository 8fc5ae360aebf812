package server

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
	"concord/raters"
	"concord/reports"
)

// itemAgreementPage is the default number of per-item rows of one page.
const itemAgreementPage = 100

// itemAgreementRow is a per-item row of the items table with the item's
// labels counted by value.
type itemAgreementRow struct {
	raters.ItemAgreement
	Counts map[string]int `json:"counts"`
}

// agreementTable: GET /api/v1/projects/{id}/agreement/{table}?format&
// bootstrap&seed -> one of the agreement tables of the project's labels, as
// JSON or (format=csv) as a CSV download:
//
//	matrix  the pairwise Cohen's kappas, rater by rater (at most
//	        raters.MaxMatrixRaters raters), with the shared items
//	pairs   the pairs of raters of the pair selection (pairs=all: every
//	        pair with a common item; by default bounded, see
//	        raters.PairOptions): shared items, kappa and its interval;
//	        offset and limit page (JSON: 100 rows by default, with the
//	        total; CSV: every row unless they are given)
//	items   the per-item agreement, lowest first; below=X keeps the items
//	        scoring under X, offset and limit page (JSON: 100 rows by
//	        default; CSV: every row unless they are given)
//	raters  the per-rater agreement
//
// The tables come from the analysis of the agreement endpoint with the
// same bootstrap and seed (shared and cached with it); they do not depend
// on the bootstrap, so bootstrap=0 is the cheapest way to them alone. Over
// Config.AgreementJobLabels labels they answer 202 like the agreement
// endpoint until its background analysis is done.
func (s *Server) agreementTable(c *gin.Context) {
	p := s.project(c, read)
	if p == nil {
		return
	}
	table := c.Param("table")
	if !slices.Contains(reports.AgreementTables, table) {
		s.failf(c, annotations.ENOTFOUND, "no agreement table %q: expected one of %s", table, strings.Join(reports.AgreementTables, ", "))
		return
	}
	req, err := readTableRequest(c, table)
	if err != nil {
		s.fail(c, err)
		return
	}
	res := s.agreementOrAnswer(c, p.ID, req.opts)
	if res == nil {
		return
	}
	req.project, req.tb = p.ID, res.tables
	switch table {
	case reports.AgreementMatrix:
		s.matrixTable(c, req)
	case reports.AgreementPairs:
		s.pairsTable(c, req)
	case reports.AgreementItems:
		s.itemsTable(c, req)
	case reports.AgreementRaters:
		s.ratersTable(c, req)
	}
}

// tableRequest is a request for one agreement table: its options, format,
// page and filter, then the project and its tables.
type tableRequest struct {
	table, format string
	opts          agreementOpts
	below         *float64
	paged         bool // offset or limit given
	page          annotations.Page
	project       int64
	tb            *agreementTables
}

// readTableRequest reads the query parameters of a table request.
func readTableRequest(c *gin.Context, table string) (*tableRequest, error) {
	known := append([]string{"format"}, agreementParams...)
	switch table {
	case reports.AgreementItems:
		known = append(known, "below", "offset", "limit")
	case reports.AgreementPairs:
		known = append(known, "offset", "limit")
	}
	q := newQuery(c, known...)
	req := &tableRequest{table: table, format: q.c.DefaultQuery("format", "json")}
	if req.format != "json" && req.format != "csv" {
		q.fail("query parameter format=%q: expected json or csv", clipText(req.format, 20))
	}
	req.opts = readAgreementOpts(q, false)
	if v, ok := c.GetQuery("below"); ok && table == reports.AgreementItems {
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			q.fail("query parameter below=%q: expected a number (the agreement scores are from 0 to 1)", clipText(v, 40))
		} else {
			req.below = &x
		}
	}
	_, hasOffset := c.GetQuery("offset")
	_, hasLimit := c.GetQuery("limit")
	req.paged = hasOffset || hasLimit
	if table == reports.AgreementItems || table == reports.AgreementPairs {
		req.page = q.page(itemAgreementPage, maxPage)
	}
	return req, q.err
}

// csvTable answers a table as a CSV download.
func (s *Server) csvTable(c *gin.Context, req *tableRequest, write func(w io.Writer) error) {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fmt.Sprintf("project-%d-agreement-%s.csv", req.project, req.table)))
	c.Data(http.StatusOK, ctCSV, buf.Bytes())
}

func (s *Server) matrixTable(c *gin.Context, req *tableRequest) {
	tb := req.tb
	m := tb.matrix
	if m == nil {
		s.failf(c, annotations.EINVALID, "the project has %d raters: the matrix is given for at most %d; the pairs table lists every pair (agreement/pairs)", len(tb.raters), raters.MaxMatrixRaters)
		return
	}
	if req.format == "csv" {
		s.csvTable(c, req, func(w io.Writer) error { return reports.WriteMatrixCSV(w, m) })
		return
	}
	c.JSON(http.StatusOK, gin.H{"scheme": tb.scheme, "level": tb.level, "coefficient": m.Coefficient, "weights": m.Weights, "raters": m.Raters, "kappa": m.Kappa, "n": m.N})
}

// pairsTable: every pair of the selection (pairs=all: every pair sharing
// an item), in the analysis' order, paged like the items.
func (s *Server) pairsTable(c *gin.Context, req *tableRequest) {
	tb := req.tb
	pairs := tb.pairs
	if req.format == "csv" {
		if req.paged {
			pairs = pageOf(pairs, req.page)
		}
		s.csvTable(c, req, func(w io.Writer) error { return reports.WritePairsCSV(w, pairs, tb.weights) })
		return
	}
	total := len(pairs)
	pairs = pageOf(pairs, req.page)
	type pairRow struct {
		A     string          `json:"a"`
		B     string          `json:"b"`
		N     int             `json:"n"`
		Kappa raters.Estimate `json:"kappa"`
	}
	rows := make([]pairRow, len(pairs))
	for i := range pairs {
		pr := &pairs[i]
		rows[i] = pairRow{A: pr.A, B: pr.B, N: pr.N, Kappa: reports.PairEstimate(pr, tb.weights)}
	}
	c.JSON(http.StatusOK, gin.H{"scheme": tb.scheme, "level": tb.level, "coefficient": "cohen_kappa", "weights": tb.weights,
		"total": total, "offset": req.page.Offset, "limit": req.page.Limit, "pairs": rows})
}

func (s *Server) itemsTable(c *gin.Context, req *tableRequest) {
	tb := req.tb
	rows := tb.items
	if req.below != nil {
		rows = raters.ItemsBelow(rows, *req.below)
	}
	matching := len(rows)
	if req.format == "csv" {
		if req.paged {
			rows = pageOf(rows, req.page)
		}
		s.csvTable(c, req, func(w io.Writer) error { return reports.WriteItemAgreementCSV(w, rows) })
		return
	}
	rows = pageOf(rows, req.page)
	scored := len(raters.ItemsBelow(tb.items, math.Inf(1)))
	c.JSON(http.StatusOK, gin.H{"scheme": tb.scheme, "level": tb.level, "agreement_score": tb.score,
		"total": len(tb.items), "scored": scored, "matching": matching, "below": req.below,
		"offset": req.page.Offset, "limit": req.page.Limit, "items": itemRows(tb.counts, rows)})
}

func (s *Server) ratersTable(c *gin.Context, req *tableRequest) {
	tb := req.tb
	if req.format == "csv" {
		s.csvTable(c, req, func(w io.Writer) error { return reports.WriteRaterAgreementCSV(w, tb.raters) })
		return
	}
	c.JSON(http.StatusOK, gin.H{"scheme": tb.scheme, "level": tb.level, "agreement_score": tb.score, "weights": tb.weights, "raters": tb.raters})
}

// pageOf returns the rows of a page.
func pageOf[T any](rows []T, pg annotations.Page) []T {
	lo := min(pg.Offset, len(rows))
	hi := len(rows)
	if pg.Limit > 0 {
		hi = min(lo+pg.Limit, len(rows))
	}
	return rows[lo:hi]
}

// itemRows adds to per-item rows their items' labels counted by value.
func itemRows(vc *valueCounts, rows []raters.ItemAgreement) []itemAgreementRow {
	out := make([]itemAgreementRow, len(rows))
	for i, r := range rows {
		out[i] = itemAgreementRow{ItemAgreement: r, Counts: vc.of(r.Item)}
	}
	return out
}

// tableAgreementRequest is the body of POST /api/v1/agreement: a
// contingency table or per-item counts, as numbers (table or counts) or as
// CSV text (csv, with input "table" or "counts": the layouts of concord
// agreement --table and --counts), and the options.
type tableAgreementRequest struct {
	Table      [][]float64 `json:"table"`
	Counts     [][]float64 `json:"counts"`
	CSV        string      `json:"csv"`
	Input      string      `json:"input"`
	Categories []string    `json:"categories"`
	Items      []string    `json:"items"`
	Weights    []string    `json:"weights"`
	// WeightsMatrix are custom agreement weights (K x K, symmetric, 1 on
	// the diagonal; or one row of K toeplitz weights by distance), the
	// weighted coefficients "custom" (concord agreement --weights-file).
	WeightsMatrix [][]float64 `json:"weights_matrix"`
	CI            string      `json:"ci"`
	Null          float64     `json:"null"`
	Population    int         `json:"population"`
	ConfLevel     float64     `json:"conf_level"`
}

// tableAgreement: POST /api/v1/agreement -> the agreement coefficients of
// a two-rater contingency table or of per-item category counts with
// irrCAC's table and distribution functions (analysis.TableAgreement):
// the agreement document with input "table" or "counts". Any key may ask;
// nothing is stored.
func (s *Server) tableAgreement(c *gin.Context) {
	req := bodyOf[tableAgreementRequest](s, c)
	if req == nil {
		return
	}
	kind, in, err := req.input()
	if err != nil {
		s.fail(c, err)
		return
	}
	o, err := req.options()
	if err != nil {
		s.fail(c, err)
		return
	}
	if req.WeightsMatrix != nil {
		if o.WeightMatrix, err = analysis.NewWeightMatrix("weights_matrix", req.WeightsMatrix, len(in.Categories)); err != nil {
			s.fail(c, err)
			return
		}
	}
	rep, err := analysis.TableAgreement(c.Request.Context(), kind, in, o)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, rep)
}

// input checks that the request gives one input and reads it.
func (r *tableAgreementRequest) input() (string, *analysis.CountsInput, error) {
	given := 0
	for _, ok := range []bool{r.Table != nil, r.Counts != nil, r.CSV != ""} {
		if ok {
			given++
		}
	}
	if given != 1 {
		return "", nil, annotations.Errorf(annotations.EINVALID, "give one of table (a K x K contingency table), counts (per-item category counts) or csv (with input table or counts)")
	}
	switch {
	case r.Table != nil:
		in, err := analysis.NewCountsInput("table", r.Table, r.Categories, r.Items)
		return "table", in, err
	case r.Counts != nil:
		in, err := analysis.NewCountsInput("counts", r.Counts, r.Categories, r.Items)
		return "counts", in, err
	}
	if r.Categories != nil || r.Items != nil {
		return "", nil, annotations.Errorf(annotations.EINVALID, "categories and items go with table or counts; csv names them in its header and first column")
	}
	read := map[string]func(string, io.Reader) (*analysis.CountsInput, error){"table": analysis.ReadContingencyTable, "counts": analysis.ReadCounts}[r.Input]
	if read == nil {
		return "", nil, annotations.Errorf(annotations.EINVALID, "input %q: expected table or counts (the layout of csv)", clipText(r.Input, 20))
	}
	in, err := read("csv", strings.NewReader(r.CSV))
	return r.Input, in, err
}

// options reads the request's options.
func (r *tableAgreementRequest) options() (raters.TableOptions, error) {
	o := raters.TableOptions{Null: r.Null, ConfLevel: r.ConfLevel, Population: r.Population}
	if r.ConfLevel != 0 && !(r.ConfLevel > 0 && r.ConfLevel < 1) {
		return o, annotations.Errorf(annotations.EINVALID, "conf_level %v: expected a number between 0 and 1", r.ConfLevel)
	}
	if r.Population < 0 {
		return o, annotations.Errorf(annotations.EINVALID, "population %d: expected a whole number of subjects, at least the table's total count or the items of counts (0: an infinite population, no correction)", r.Population)
	}
	var err error
	if o.CI, err = analysis.ParseCI(r.CI); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "ci %s", err)
	}
	if o.Weights, err = analysis.ParseWeightsList(strings.Join(r.Weights, ",")); err != nil {
		return o, annotations.Errorf(annotations.EINVALID, "weights %s", err)
	}
	return o, nil
}
