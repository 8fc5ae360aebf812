package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"

	"concord/annotations"
	"concord/multirater"
	"concord/reports"
)

// reportInput is a done fit to render: its project, the fit and its result
// document (raw and parsed).
type reportInput struct {
	Project *annotations.Project
	Fit     *annotations.Fit
	Result  *multirater.FitResult
	Raw     []byte
}

// reportTables are the CSV tables of a report (GET
// /fits/{id}/tables/{name}.csv); label-errors only for fits with label
// errors (the robust model; see tablesFor).
var reportTables = []string{"items", "raters", tableLabelErrors}

// tableLabelErrors is the table of every label by the probability that it
// is a labelling error (robust fits).
const tableLabelErrors = "label-errors"

// tablesFor lists the CSV tables of a fit's report; labelErrors: the
// fit has label errors (the robust model).
func tablesFor(labelErrors bool) []string {
	var out []string
	for _, t := range reportTables {
		if t != tableLabelErrors || labelErrors {
			out = append(out, t)
		}
	}
	return out
}

// reportPlots are the plots of package reports (GET
// /fits/{id}/plots/{name}.{png,svg}); those that do not apply to a fit
// (reports.Plots decides: e.g. ROC curves of an ordinal scheme with more
// than two levels) are not found.
var reportPlots = []string{
	reports.PlotPrecision, reports.PlotDispersion, reports.PlotVariance, reports.PlotTrace, reports.PlotRhat,
	reports.PlotConsensus, reports.PlotThresholds, reports.PlotROC, reports.PlotErrorRates,
	reports.PlotAgreement, reports.PlotConfusion, reports.PlotCoefficients,
}

// plotView is a plot on the fit page: its name (in the plot URLs) and title.
type plotView struct{ Name, Title string }

// mainPlots are the plots the fit page shows at full width: how reliable
// each rater is and what the raters collectively mean. The others are shown
// on demand.
var mainPlots = []string{reports.PlotPrecision, reports.PlotErrorRates, reports.PlotDispersion, reports.PlotConsensus}

// mainRankingPlots are the main plots of a ranking fit (the auc model),
// which has no rater parameters: the ROC curve, the coefficients and the
// scores.
var mainRankingPlots = []string{reports.PlotROC, reports.PlotCoefficients, reports.PlotConsensus}

// splitPlots splits the plots of a fit into the main ones, in mainPlots
// (ranking: mainRankingPlots) order, and the others, in their order.
func splitPlots(names []string, ranking bool) (main, more []plotView) {
	mainPlots := mainPlots
	if ranking {
		mainPlots = mainRankingPlots
	}
	for _, m := range mainPlots {
		if slices.Contains(names, m) {
			main = append(main, plotView{m, reports.PlotTitle(m)})
		}
	}
	for _, n := range names {
		if !slices.Contains(mainPlots, n) {
			more = append(more, plotView{n, reports.PlotTitle(n)})
		}
	}
	return main, more
}

// report builds the fit's concord.report/v1 report with the server's
// report options (reportWith).
func (s *Server) report(ctx context.Context, in reportInput, cf *cachedFit) (*reports.Report, error) {
	return s.reportWith(ctx, in, cf, s.defaultReportOpts())
}

// reportWith builds the fit's concord.report/v1 report with options ro
// once per cached fit and options: the result with the agreement
// coefficients and baseline aggregators of the labels the fit was made
// from (recorded in the result; see reportAgreement), and the gold labels
// of the project's items.
func (s *Server) reportWith(ctx context.Context, in reportInput, cf *cachedFit, ro reportOpts) (*reports.Report, error) {
	cf.repMu.Lock()
	defer cf.repMu.Unlock()
	key := ro.key()
	if b, ok := cf.reps[key]; ok {
		return b.rep, b.err
	}
	fit := reports.FitFromResult(in.Result)
	ds := fit.Dataset(in.Project.Scheme)
	var cur *annotations.Dataset
	if ds != nil {
		var err error
		if cur, err = s.store.Dataset(ctx, in.Project.ID); err == nil {
			// The project's gold labels and texts (the review queue's
			// Text column, the workbook's): the fit document keeps
			// neither.
			byID := make(map[string]*annotations.Item, len(cur.Items))
			for i := range cur.Items {
				byID[cur.Items[i].ID] = &cur.Items[i]
			}
			for i := range ds.Items {
				it, ok := byID[ds.Items[i].ID]
				if !ok {
					continue
				}
				if ds.Items[i].Gold == "" {
					ds.Items[i].Gold = it.Gold
				}
				if ds.Items[i].Text == "" {
					ds.Items[i].Text = it.Text
				}
			}
		} else if annotations.ErrorCode(err) == annotations.EINTERNAL {
			return nil, err
		}
	}
	agr, err := s.reportAgreement(ctx, in, ds, cur, ro)
	if err != nil {
		return nil, err
	}
	rep, err := reports.BuildFit(*in.Project, fit, agr, ds)
	if err != nil {
		// Deterministic: remember it.
		err = annotations.Errorf(annotations.EINVALID, "the report of fit %d cannot be made: %v", in.Fit.ID, err)
	}
	if cf.reps == nil {
		cf.reps = map[string]builtReport{}
	}
	cf.reps[key] = builtReport{rep, err}
	return rep, err
}

// renderReport renders the fit's report with write.
func (s *Server) renderReport(ctx context.Context, in reportInput, cf *cachedFit, write func(io.Writer, *reports.Report) error) ([]byte, error) {
	return s.renderReportWith(ctx, in, cf, s.defaultReportOpts(), write)
}

// renderReportWith renders the fit's report with options ro with write.
func (s *Server) renderReportWith(ctx context.Context, in reportInput, cf *cachedFit, ro reportOpts, write func(io.Writer, *reports.Report) error) ([]byte, error) {
	rep, err := s.reportWith(ctx, in, cf, ro)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := write(&buf, rep); err != nil {
		if errors.Is(err, reports.ErrNoPlot) {
			return nil, annotations.Errorf(annotations.ENOTFOUND, "%s", err)
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

func validTable(name string) bool { return slices.Contains(reportTables, name) }
