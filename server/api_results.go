package server

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"concord/annotations"
	"concord/reports"
)

// Content types of the downloads.
const (
	ctJSON = "application/json"
	ctXLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	ctCSV  = "text/csv; charset=utf-8"
	ctPNG  = "image/png"
	ctSVG  = "image/svg+xml"
)

// doneFit resolves :id to a done fit the caller may read, with its project
// and cached result. A fit that is not done is a conflict that says why.
// params are the query parameters the route accepts.
func (s *Server) doneFit(c *gin.Context, params ...string) (reportInput, *cachedFit, error) {
	f, err := s.fitParam(c, read)
	if err != nil {
		return reportInput{}, nil, err
	}
	if err := newQuery(c, params...).err; err != nil {
		return reportInput{}, nil, err
	}
	switch f.Status {
	case annotations.FitDone:
	case annotations.FitQueued:
		return reportInput{}, nil, annotations.Errorf(annotations.ECONFLICT, "fit %d is queued; its results are ready when it is done", f.ID)
	case annotations.FitRunning:
		return reportInput{}, nil, annotations.Errorf(annotations.ECONFLICT, "fit %d is running (%.0f%% done); its results are ready when it is done", f.ID, 100*f.Progress)
	default:
		msg := ""
		if f.Message != "" {
			msg = ": " + f.Message
		}
		return reportInput{}, nil, annotations.Errorf(annotations.ECONFLICT, "fit %d is %s%s; it has no results", f.ID, f.Status, msg)
	}
	ctx := c.Request.Context()
	p, err := s.store.FindProjectByID(ctx, f.ProjectID)
	if err != nil {
		return reportInput{}, nil, err
	}
	cf, err := s.result(ctx, f.ID)
	if err != nil {
		return reportInput{}, nil, err
	}
	return reportInput{Project: p, Fit: f, Result: cf.res, Raw: cf.raw}, cf, nil
}

// download writes a rendered artefact. Done fits never change, so clients
// may cache them (privately: they need credentials).
func download(c *gin.Context, contentType, filename string, body []byte, attachment bool) {
	c.Header("Cache-Control", "private, max-age=300")
	if attachment {
		c.Header("Content-Disposition", fmt.Sprintf("attachment; filename=%q", filename))
	}
	c.Data(http.StatusOK, contentType, body)
}

// fileBase names the downloads of a fit: "PROJECT-fit-ID".
func fileBase(in reportInput) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, in.Project.Name)
	return fmt.Sprintf("%s-fit-%d", clipText(name, 60), in.Fit.ID)
}

// fitResult: GET /api/v1/fits/{id}/result -> the stored result document
// (schema concord.fit/v1).
func (s *Server) fitResult(c *gin.Context) {
	in, _, err := s.doneFit(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	download(c, ctJSON, fileBase(in)+".result.json", in.Raw, false)
}

// reportJSON: GET /api/v1/fits/{id}/report.json -> the report document.
// With ?download=1 it comes as an attachment.
func (s *Server) reportJSON(c *gin.Context) {
	in, cf, err := s.doneFit(c, "download")
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	b, err := cf.render("report.json", func() ([]byte, error) { return s.renderReport(ctx, in, cf, reports.WriteJSON) })
	if err != nil {
		s.fail(c, err)
		return
	}
	download(c, ctJSON, fileBase(in)+".report.json", b, c.Query("download") != "")
}

// reportXLSX: GET /api/v1/fits/{id}/report.xlsx -> the Excel workbook.
func (s *Server) reportXLSX(c *gin.Context) {
	in, cf, err := s.doneFit(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	b, err := cf.render("report.xlsx", func() ([]byte, error) {
		return s.renderReport(ctx, in, cf, func(w io.Writer, rep *reports.Report) error { return reports.WriteXLSX(w, rep, reports.XLSXOptions{}) })
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	download(c, ctXLSX, fileBase(in)+".xlsx", b, true)
}

// reportTable: GET /api/v1/fits/{id}/tables/{name}.csv -> a CSV table of
// the report.
func (s *Server) reportTable(c *gin.Context) {
	// The fit first: a fit the caller may not see is not found, whatever
	// the table.
	in, cf, err := s.doneFit(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	file := c.Param("table")
	name, ok := strings.CutSuffix(file, ".csv")
	if !ok || !validTable(name) {
		s.failf(c, annotations.ENOTFOUND, "no table %q: expected one of %s", file, listWithSuffix(reportTables, ".csv"))
		return
	}
	ctx := c.Request.Context()
	write := reports.WriteItemsCSV
	if name == "raters" {
		write = reports.WriteRatersCSV
	}
	b, err := cf.render("table:"+name, func() ([]byte, error) { return s.renderReport(ctx, in, cf, write) })
	if err != nil {
		s.fail(c, err)
		return
	}
	download(c, ctCSV, fileBase(in)+"."+name+".csv", b, true)
}

// reportPlot: GET /api/v1/fits/{id}/plots/{name}.{png,svg} -> a plot.
func (s *Server) reportPlot(c *gin.Context) {
	in, cf, err := s.doneFit(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	file := c.Param("plot")
	dot := strings.LastIndexByte(file, '.')
	name, format := file, ""
	if dot > 0 {
		name, format = file[:dot], file[dot+1:]
	}
	if (format != "png" && format != "svg") || !slices.Contains(reportPlots, name) {
		s.failf(c, annotations.ENOTFOUND, "no plot %q: expected NAME.png or NAME.svg with NAME one of %s", file, listWithSuffix(reportPlots, ""))
		return
	}
	ctx := c.Request.Context()
	b, err := cf.render("plot:"+file, func() ([]byte, error) {
		return s.renderReport(ctx, in, cf, func(w io.Writer, rep *reports.Report) error { return reports.WritePlot(w, rep, name, format) })
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	ct := ctPNG
	if format == "svg" {
		ct = ctSVG
	}
	download(c, ct, fileBase(in)+"."+file, b, false)
}

func listWithSuffix(names []string, suffix string) string {
	if len(names) == 0 {
		return "(none in this build)"
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + suffix
	}
	return strings.Join(out, ", ")
}
