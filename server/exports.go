package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
	"concord/raters"
	"concord/reports"
)

// Exports of fits as jobs.
//
// A fit's report document (report.json) and workbook (report.xlsx) carry
// the agreement analysis of its labels, whose bootstrap makes them cost
// seconds to minutes of CPU (a 20,000-item fit: about 16 s of a 20 s
// workbook). Fits with more than Config.ExportJobLabels labels have them
// built by a job (queue "export", annotations.ExportStore): the first
// request stores the export, keyed by the fit, the format and the report
// options (ci, null and the server's bounds), and its job; until it is
// built the route answers 202 with its phase and Retry-After (a repeat
// request joins the job), then the file, which any API node sharing the
// database serves. DELETE /fits/{id}/exports cancels them. Smaller fits'
// files are built within the request, the same bytes.
//
// The report's agreement analysis is the project's own (the agreement
// routes', keyed by project, labels version and options) when the fit's
// labels are the project's labels now: a stored result of the project's
// agreement job is read instead of running the bootstrap again, and
// otherwise it is computed as the agreement routes compute it and kept in
// their cache.

// DefaultExportJobLabels is the default of Config.ExportJobLabels: fits of
// more labels have their report and workbook built by a job (the
// workbook of a 20,000-item fit of 99,824 labels takes 23 CPU s on
// first download within a request, 9 with its agreement stored).
const DefaultExportJobLabels = 50_000

// Query parameters of the report files: the agreement coefficients' tests
// and analytic intervals (as concord report --ci, --null).
const (
	paramCI   = "ci"
	paramNull = "null"
)

// reportOpts are the options of a fit's report: those the request gives
// (CI, Null; CIGiven: an explicit ci asks for its analytic intervals, as
// concord report --ci without --bootstrap) and the server's bounds of the
// agreement analysis (those of the server asked, not the worker's).
type reportOpts struct {
	CI        raters.CIKind
	CIGiven   bool
	Null      float64
	Bootstrap int
	MaxWork   int64
	MaxLabels int
}

// defaultReportOpts are the report options of this server without
// request options.
func (s *Server) defaultReportOpts() reportOpts {
	return reportOpts{Bootstrap: s.cfg.ReportBootstrap, MaxWork: s.cfg.MaxBootstrapWork, MaxLabels: s.cfg.MaxAgreementLabels}
}

// key identifies the options among a fit's reports.
func (ro reportOpts) key() string {
	return fmt.Sprintf("%s/b%d/w%d/l%d", ro.query(), ro.Bootstrap, ro.MaxWork, ro.MaxLabels)
}

// query is the request's part of the options ("" without any).
func (ro reportOpts) query() string {
	if !ro.CIGiven && ro.Null == 0 {
		return ""
	}
	out := ""
	if ro.CIGiven {
		out = "?" + paramCI + "=" + ro.CI.String()
	}
	if ro.Null != 0 {
		if out == "" {
			out = "?"
		} else {
			out += "&"
		}
		out += paramNull + "=" + strconv.FormatFloat(ro.Null, 'g', -1, 64)
	}
	return out
}

// readReportOpts reads the ci and null query parameters into the server's
// report options.
func (s *Server) readReportOpts(q *query) reportOpts {
	ro := s.defaultReportOpts()
	var err error
	if _, ro.CIGiven = q.c.GetQuery(paramCI); ro.CIGiven {
		if ro.CI, err = analysis.ParseCI(q.str(paramCI, 20)); err != nil {
			q.fail("query parameter ci=%s", err)
		}
	}
	if ro.Null, err = analysis.ParseNull(q.str(paramNull, 40)); err != nil {
		q.fail("query parameter null=%s", err)
	}
	return ro
}

// reportAgreement is the agreement analysis of a report with options ro:
// of the fit's labels ds (nil: none), the project's labels now being cur
// (nil when not read). nil without an error when the report goes without
// one (over the label bound, or the analysis fails on the data: logged).
func (s *Server) reportAgreement(ctx context.Context, in reportInput, ds, cur *annotations.Dataset, ro reportOpts) (*raters.Report, error) {
	if ds == nil || len(ds.Labels) == 0 {
		return nil, nil
	}
	if ro.MaxLabels > 0 && len(ds.Labels) > ro.MaxLabels {
		// Over the server's bound: the report says it has no agreement
		// analysis.
		s.log.InfoContext(ctx, "report without agreement coefficients", "fit", in.Fit.ID, "reason", annotations.ErrorMessage(agreementTooLarge(len(ds.Labels), ro.MaxLabels)))
		return nil, nil
	}
	o := agreementOpts{boot: ro.Bootstrap, seed: 1, ci: ro.CI, null: ro.Null}
	if ro.CIGiven {
		o.boot = 0
	}
	if cur != nil && sameLabels(ds, cur) {
		res, err := s.projectReportAgreement(ctx, in.Project.ID, len(cur.Labels), o, ro.MaxWork)
		if errors.Is(err, errLabelsMoved) {
			return s.fitAgreement(ctx, in, ds, o, ro)
		}
		if err == nil && res.rep != nil {
			return res.rep, nil
		}
		if err == nil {
			var ar analysis.AgreementReport
			if err := json.Unmarshal(res.json, &ar); err != nil {
				return nil, fmt.Errorf("decoding the agreement analysis: %w", err)
			}
			return ar.Report, nil
		}
		if annotations.ErrorCode(err) == annotations.EINTERNAL {
			return nil, err
		}
		s.log.InfoContext(ctx, "report without agreement coefficients", "fit", in.Fit.ID, "reason", annotations.ErrorMessage(err))
		return nil, nil
	}
	return s.fitAgreement(ctx, in, ds, o, ro)
}

// errLabelsMoved says that the project's labels changed while they were
// compared with a fit's.
var errLabelsMoved = errors.New("the project's labels changed")

// fitAgreement is the agreement analysis of the fit's labels ds apart
// from the project's (which are no longer the fit's).
func (s *Server) fitAgreement(ctx context.Context, in reportInput, ds *annotations.Dataset, o agreementOpts, ro reportOpts) (*raters.Report, error) {
	s.metrics.reportAgreements.WithLabelValues("fit").Inc()
	boot := o.boot
	if boot == 0 {
		boot = -1
	}
	boot, note, _ := analysis.PlanBootstrap(ds, boot, false, max(ro.MaxWork, 0))
	ag, err := analysis.Agreement(ctx, ds, raters.Options{Bootstrap: boot, Seed: 1, CI: ro.CI, Null: ro.Null})
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		s.log.InfoContext(ctx, "report without agreement coefficients", "fit", in.Fit.ID, "reason", annotations.ErrorMessage(err))
		return nil, nil
	}
	if note != "" {
		ag.Notes = append(ag.Notes, note)
	}
	return ag.Report, nil
}

// projectReportAgreement is the project's agreement analysis with options
// o within maxWork, of n labels: from the cache, the stored result of the
// project's agreement job, or computed (and cached) as the agreement
// routes compute it.
func (s *Server) projectReportAgreement(ctx context.Context, project int64, n int, o agreementOpts, maxWork int64) (*agreementResult, error) {
	version, now, err := s.store.LabelsVersion(ctx, project)
	if err != nil {
		return nil, err
	}
	if now != n {
		return nil, errLabelsMoved
	}
	key := agreementKey(project, version, o)
	if maxWork != s.cfg.MaxBootstrapWork {
		key += fmt.Sprintf("/w%d", maxWork)
	}
	if res, ok := s.agreements.cached(key); ok {
		s.metrics.reportAgreements.WithLabelValues("cached").Inc()
		return res, nil
	}
	if b, err := s.store.DoneAgreement(ctx, project, jobKey(agreementKey(project, version, o), maxWork)); err != nil {
		return nil, err
	} else if b != nil {
		s.metrics.reportAgreements.WithLabelValues("stored").Inc()
		return decodeAgreementResult(b)
	}
	s.metrics.reportAgreements.WithLabelValues("computed").Inc()
	return s.agreements.get(ctx, key, func(ctx context.Context) (*agreementResult, error) {
		return s.computeAgreementWithin(ctx, project, o, maxWork)
	})
}

// sameLabels reports whether datasets a and b hold the same labels (in any
// order).
func sameLabels(a, b *annotations.Dataset) bool {
	if len(a.Labels) != len(b.Labels) {
		return false
	}
	type label struct{ item, rater, value string }
	count := make(map[label]int, len(a.Labels))
	for _, l := range a.Labels {
		count[label{l.Item, l.Rater, l.Value}]++
	}
	for _, l := range b.Labels {
		k := label{l.Item, l.Rater, l.Value}
		if count[k] == 0 {
			return false
		}
		count[k]--
	}
	return true
}

// exportSpec is an export's format and report options as stored with its
// job.
type exportSpec struct {
	Format string
	Report reportOpts
}

// reportFiles are the report files that may be built as jobs: their
// content type, file name suffix and writer.
var reportFiles = map[string]struct {
	ct, ext string
	write   func(io.Writer, *reports.Report) error
}{
	"xlsx": {ctXLSX, ".xlsx", func(w io.Writer, rep *reports.Report) error { return reports.WriteXLSX(w, rep, reports.XLSXOptions{}) }},
	"json": {ctJSON, ".report.json", reports.WriteJSON},
}

// fitLabels is the number of labels a fit was made from.
func fitLabels(in reportInput) int {
	n := 0
	for i := range in.Result.Items {
		n += len(in.Result.Items[i].Labels)
	}
	return n
}

// reportFile answers GET (and POST) /fits/{id}/report.{format}: the report
// file with the request's options, built within the request for fits of up
// to Config.ExportJobLabels labels, else by a job (202 until it is built).
// params are the route's query parameters.
func (s *Server) reportFile(format string, params ...string) gin.HandlerFunc {
	rf := reportFiles[format]
	params = append(params, paramCI, paramNull)
	return func(c *gin.Context) {
		in, cf, ok := s.doneFitOrFail(c, params...)
		if !ok {
			return
		}
		q := newQuery(c, params...)
		ro := s.readReportOpts(q)
		if q.err != nil {
			s.fail(c, q.err)
			return
		}
		attach := format == "xlsx" || c.Query("download") != ""
		key, name := "report."+format+ro.query(), fileBase(in)+rf.ext
		if jl := s.cfg.ExportJobLabels; jl < 0 || fitLabels(in) <= jl {
			// The report is shared by every reader of the fit, so one
			// reader leaving does not stop it.
			ctx := context.WithoutCancel(c.Request.Context())
			s.serveArtefact(c, cf, key, rf.ct, name, attach, func() ([]byte, error) {
				return s.renderReportWith(ctx, in, cf, ro, rf.write)
			})
			return
		}
		if body, ok := cf.renderedBody(key); ok {
			s.serveArtefact(c, cf, key, rf.ct, name, attach, func() ([]byte, error) { return body, nil })
			return
		}
		spec := exportSpec{Format: format, Report: ro}
		opts, err := json.Marshal(spec)
		if err != nil {
			s.fail(c, err)
			return
		}
		e := &annotations.ExportJob{FitID: in.Fit.ID, ProjectID: in.Project.ID, Key: format + "/" + ro.key(), Options: opts}
		created, err := s.store.StartExport(c.Request.Context(), e)
		if err != nil {
			s.fail(c, err)
			return
		}
		switch e.Status {
		case annotations.FitDone:
			body := e.Result
			s.serveArtefact(c, cf, key, rf.ct, name, attach, func() ([]byte, error) { return body, nil })
		case annotations.FitRunning:
			s.answerExportPending(c, in, e, format, !created)
		default:
			code := e.ErrorCode
			if code == "" {
				code = annotations.EINTERNAL
			}
			s.fail(c, &annotations.Error{Code: code, Message: fmt.Sprintf("building the %s of fit %d %s: %s", format, in.Fit.ID, e.Status, e.Message)})
		}
	}
}

// exportJobBody is the 202 answer of a report file built by a job.
type exportJobBody struct {
	// Status is queued or running; Phase what it does now.
	Status   string  `json:"status"`
	Phase    string  `json:"phase"`
	Progress float64 `json:"progress"`
	// ExportID is the export's job; Joined says that this request found
	// it already queued or running (one job).
	ExportID          int64     `json:"export_id"`
	Joined            bool      `json:"joined"`
	Labels            int       `json:"labels"`
	StartedAt         time.Time `json:"started_at"`
	ElapsedSeconds    float64   `json:"elapsed_seconds"`
	RetryAfterSeconds int       `json:"retry_after_seconds"`
	Message           string    `json:"message"`
}

// answerExportPending answers 202 with the state of export e and a
// Retry-After header: a fifth of the time it has taken so far, 1 to 10 s.
func (s *Server) answerExportPending(c *gin.Context, in reportInput, e *annotations.ExportJob, format string, joined bool) {
	elapsed := time.Since(e.CreatedAt)
	retry := min(max(int(elapsed.Seconds()/5), 1), 10)
	status := "running"
	if e.Message == "queued" || e.Message == "" {
		status = "queued"
	}
	j := ""
	if joined {
		j = "the same file was already asked for: this request joined its job; "
	}
	n := fitLabels(in)
	c.Header("Retry-After", strconv.Itoa(retry))
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusAccepted, exportJobBody{
		Status: status, Phase: e.Message, Progress: math.Round(e.Progress*1000) / 1000, ExportID: e.ID, Joined: joined, Labels: n,
		StartedAt: e.CreatedAt.UTC().Truncate(time.Millisecond), ElapsedSeconds: math.Round(elapsed.Seconds()*10) / 10, RetryAfterSeconds: retry,
		Message: fmt.Sprintf("%sthe %s of fit %d (%d labels) is built in the background (fits over %d labels: concord serve --export-job-labels); ask again in %d s: this route answers 200 with the file once it is built (DELETE /api/v1/fits/%d/exports cancels it)",
			j, format, in.Fit.ID, n, s.cfg.ExportJobLabels, retry, in.Fit.ID),
	})
}

// cancelExports: DELETE /api/v1/fits/{id}/exports -> cancels the fit's
// report files being built by jobs: {"cancelled": N}.
func (s *Server) cancelExports(c *gin.Context) {
	f, err := s.fitParam(c, write)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.answerCancelled(c, func(ctx context.Context) (int, error) { return s.store.CancelExports(ctx, f.ID) })
}

// RunExport builds the file of export e (annotations.ExportRunner): the
// fit's report with the stored options, rendered as the route renders it
// within a request. A cancel (report's error) stops the agreement
// analysis within a replicate.
func (p *pool) RunExport(jobsCtx context.Context, e *annotations.ExportJob, report func(float64, string) error) ([]byte, error) {
	s := p.s
	var spec exportSpec
	if err := json.Unmarshal(e.Options, &spec); err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "the stored export options cannot be read: %v", err)
	}
	rf, ok := reportFiles[spec.Format]
	if !ok {
		return nil, annotations.Errorf(annotations.EINVALID, "no export format %q", spec.Format)
	}
	f, err := s.store.FindFitByID(jobsCtx, e.FitID)
	if err != nil {
		return nil, p.agreementJobErr(jobsCtx, err)
	}
	if f.Status != annotations.FitDone {
		return nil, annotations.Errorf(annotations.ECONFLICT, "fit %d is %s", f.ID, f.Status)
	}
	cf, err := s.result(jobsCtx, f)
	if err != nil {
		return nil, p.agreementJobErr(jobsCtx, err)
	}
	phase := "building the report (the agreement analysis of its labels)"
	if err := report(0.1, phase); err != nil {
		return nil, err
	}
	s.metrics.exportsRunning.Inc()
	defer s.metrics.exportsRunning.Dec()
	ctx, cancel := context.WithCancelCause(jobsCtx)
	defer cancel(nil)
	stop := every(ctx, s.cfg.ProgressInterval, cancel, func() error { return report(0.1, phase) })
	t0 := time.Now()
	in := reportInput{Project: cf.project, Fit: f, Result: cf.res, Raw: cf.raw}
	body, err := s.renderReportWith(ctx, in, cf, spec.Report, rf.write)
	stop()
	if cause := context.Cause(ctx); err != nil && cause != nil && jobsCtx.Err() == nil {
		return nil, cause // report's error: the export was cancelled or is gone
	}
	if err != nil {
		return nil, p.agreementJobErr(jobsCtx, err)
	}
	s.log.Info("export built", "export", e.ID, "fit", e.FitID, "format", spec.Format, "bytes", len(body), "seconds", time.Since(t0).Seconds())
	return body, nil
}
