package server

import (
	"bytes"
	"compress/gzip"
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
	// A done fit changes only by being deleted: one checked in the store
	// within the cache TTL is served without asking the store again
	// (deletions through this process forget it at once).
	if id, err := idParam(c, "id", "fit"); err == nil {
		if f, cf := s.cache.recentDone(id, s.cfg.KeyCacheTTL); f != nil {
			if err := checkProject(c, f.ProjectID, read); err != nil {
				return reportInput{}, nil, annotations.Errorf(annotations.ENOTFOUND, "fit %d not found", id)
			}
			if err := newQuery(c, params...).err; err != nil {
				return reportInput{}, nil, err
			}
			c.Set(ctxFit, id)
			return reportInput{Project: cf.project, Fit: f, Result: cf.res, Raw: cf.raw}, cf, nil
		}
	}
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
	cf, err := s.result(c.Request.Context(), f)
	if err != nil {
		return reportInput{}, nil, err
	}
	return reportInput{Project: cf.project, Fit: f, Result: cf.res, Raw: cf.raw}, cf, nil
}

// doneFitOrFail is doneFit for a handler: on failure it answers the error
// and returns false.
func (s *Server) doneFitOrFail(c *gin.Context, params ...string) (reportInput, *cachedFit, bool) {
	in, cf, err := s.doneFit(c, params...)
	if err != nil {
		s.fail(c, err)
		return in, nil, false
	}
	return in, cf, true
}

// serveArtefact answers with the artefact named key of a done fit,
// rendering it with fn on first use. Done fits never change, so the answer
// has an ETag (a matching If-None-Match gets 304) and may be cached
// privately; text artefacts are sent gzip-compressed (compressed once) to
// clients that accept it.
func (s *Server) serveArtefact(c *gin.Context, cf *cachedFit, key, contentType, filename string, attachment bool, fn func() ([]byte, error)) {
	etag := fmt.Sprintf(`"%s-f%d-%s"`, s.cfg.Version, cf.id, key)
	c.Header("ETag", etag)
	c.Header("Cache-Control", "private, max-age=300")
	c.Header("Vary", "Accept-Encoding")
	if attachment {
		c.Header("Content-Disposition", fmt.Sprintf("attachment; filename=%q", filename))
	}
	if inm := c.GetHeader("If-None-Match"); inm != "" && (inm == etag || strings.Contains(inm, etag) || inm == "*") {
		c.Status(http.StatusNotModified)
		return
	}
	body, err := cf.render(key, fn)
	if err != nil {
		// An error is a JSON answer to read, not a file to save.
		c.Writer.Header().Del("Content-Disposition")
		c.Writer.Header().Del("ETag")
		c.Writer.Header().Del("Cache-Control")
		s.fail(c, err)
		return
	}
	if len(body) > 1024 && compressible(contentType) && acceptsGzip(c.GetHeader("Accept-Encoding")) {
		gz, err := cf.render(key+".gz", func() ([]byte, error) { return gzipBytes(body) })
		if err == nil {
			c.Header("Content-Encoding", "gzip")
			c.Data(http.StatusOK, contentType, gz)
			return
		}
	}
	c.Data(http.StatusOK, contentType, body)
}

func compressible(contentType string) bool {
	return strings.HasPrefix(contentType, "application/json") || strings.HasPrefix(contentType, "text/") || strings.HasPrefix(contentType, "image/svg")
}

// acceptsGzip reads an Accept-Encoding header: gzip (or *) without q=0.
func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
			return false
		}
		return true
	}
	return false
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
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
	in, cf, ok := s.doneFitOrFail(c)
	if !ok {
		return
	}
	s.serveArtefact(c, cf, "result", ctJSON, fileBase(in)+".result.json", false, func() ([]byte, error) { return in.Raw, nil })
}

// reportTable: GET /api/v1/fits/{id}/tables/{name}.csv -> a CSV table of
// the report.
func (s *Server) reportTable(c *gin.Context) {
	// The fit first: a fit the caller may not see is not found, whatever
	// the table.
	in, cf, ok := s.doneFitOrFail(c)
	if !ok {
		return
	}
	file := c.Param("table")
	name, ok := strings.CutSuffix(file, ".csv")
	if !ok || !validTable(name) {
		s.failf(c, annotations.ENOTFOUND, "no table %q: expected one of %s", file, listWithSuffix(reportTables, ".csv"))
		return
	}
	if !slices.Contains(tablesFor(len(in.Result.LabelErrors) > 0), name) {
		s.failf(c, annotations.ENOTFOUND, "no table %q for fit %d: its tables are %s", file, in.Fit.ID, listWithSuffix(tablesFor(len(in.Result.LabelErrors) > 0), ".csv"))
		return
	}
	ctx := c.Request.Context()
	write := reports.WriteItemsCSV
	switch name {
	case "raters":
		write = reports.WriteRatersCSV
	case tableLabelErrors:
		write = reports.WriteLabelErrorsCSV
	}
	s.serveArtefact(c, cf, "table-"+name, ctCSV, fileBase(in)+"."+name+".csv", true, func() ([]byte, error) {
		return s.renderReport(ctx, in, cf, write)
	})
}

// reportPlot: GET /api/v1/fits/{id}/plots/{name}.{png,svg} -> a plot.
func (s *Server) reportPlot(c *gin.Context) {
	in, cf, ok := s.doneFitOrFail(c)
	if !ok {
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
	ct := ctPNG
	if format == "svg" {
		ct = ctSVG
	}
	s.serveArtefact(c, cf, "plot-"+file, ct, fileBase(in)+"."+file, false, func() ([]byte, error) {
		return s.renderReport(ctx, in, cf, func(w io.Writer, rep *reports.Report) error { return reports.WritePlot(w, rep, name, format) })
	})
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
