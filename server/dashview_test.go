package server

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"concord/annotations"
	"concord/reports"
)

// reportOf builds the report of a real fit of package reports' test data
// (without labels or the agreement analysis), as the server does.
func reportOf(t *testing.T, file, scheme string) *reports.Report {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "reports", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fit, err := reports.ReadFit(f)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := reports.BuildFit(annotations.Project{Name: "p", Scheme: annotations.MustParseScheme(scheme)}, fit, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestFitPageFromReport: a done fit's page is filled from its report
// alone: the view of its kind, rows in the report's order, the raters by
// precision, the plots reports.Plots lists.
func TestFitPageFromReport(t *testing.T) {
	cases := []struct {
		file, scheme string
		kind         string
		check        func(t *testing.T, rep *reports.Report, page *fitPage)
	}{
		{"fit_sirt_k1.json", "ordinal:0..3", reports.KindOrdinal, func(t *testing.T, rep *reports.Report, page *fitPage) {
			if len(page.Ranking) != len(rep.Items) || page.Ranking[0].ID != rep.Items[0].ID {
				t.Errorf("ranking: %d rows, first %q; want %d, %q", len(page.Ranking), page.Ranking[0].ID, len(rep.Items), rep.Items[0].ID)
			}
			for i := 1; i < len(page.Ranking); i++ {
				if page.Ranking[i].HasRank && page.Ranking[i-1].HasRank && page.Ranking[i].Rank < page.Ranking[i-1].Rank {
					t.Fatalf("ranking row %d: rank %v after %v", i, page.Ranking[i].Rank, page.Ranking[i-1].Rank)
				}
			}
			if page.Thresh == "" || page.Chart == "" {
				t.Error("no threshold or precision chart")
			}
			if len(page.Raters[0].Thresholds) != len(rep.Levels)-1 {
				t.Errorf("rater %s: %d thresholds for %d levels", page.Raters[0].ID, len(page.Raters[0].Thresholds), len(rep.Levels))
			}
		}},
		{"fit_snow_valence.json", "bounded:-100..100", reports.KindValues, func(t *testing.T, rep *reports.Report, page *fitPage) {
			if !page.Values || page.Classification || page.AUC != nil {
				t.Fatalf("values page: Values %v, Classification %v, AUC %v", page.Values, page.Classification, page.AUC != nil)
			}
			for i, r := range page.Ranking {
				m, ok := rep.Items[i].Baselines["mean"]
				if r.HasMean != ok || ok && math.Abs(r.Mean-float64(m.Score)) > 1e-12 {
					t.Fatalf("row %s: raters' mean %v (%v), report %v", r.ID, r.Mean, r.HasMean, m.Score)
				}
			}
		}},
		{"fit_snow_rte40_robust.json", "binary:0,1,pos=1", reports.KindClassification, func(t *testing.T, rep *reports.Report, page *fitPage) {
			if !page.Classification || !page.ErrorRates || page.ConfusionModel {
				t.Fatalf("robust page: Classification %v, ErrorRates %v, ConfusionModel %v", page.Classification, page.ErrorRates, page.ConfusionModel)
			}
			if len(page.Consensus) != len(rep.Items) || len(page.ClassDist) != len(rep.Levels) {
				t.Errorf("%d consensus rows, %d classes; want %d, %d", len(page.Consensus), len(page.ClassDist), len(rep.Items), len(rep.Levels))
			}
			if page.LabelErrorsTotal != len(rep.LabelErrors) || len(page.LabelErrors) != min(maxLabelErrorRows, len(rep.LabelErrors)) {
				t.Errorf("label errors: %d of %d shown, report %d", len(page.LabelErrors), page.LabelErrorsTotal, len(rep.LabelErrors))
			}
			if !slices.Contains(page.Tables, tableLabelErrors) {
				t.Errorf("tables %v without %s", page.Tables, tableLabelErrors)
			}
		}},
		{"fit_snow_rte40_confusion.json", "binary:0,1,pos=1", reports.KindClassification, func(t *testing.T, rep *reports.Report, page *fitPage) {
			if !page.ConfusionModel || page.Chart != "" {
				t.Fatalf("confusion page: ConfusionModel %v, chart %d bytes", page.ConfusionModel, len(page.Chart))
			}
			for _, v := range page.Confusions {
				if len(v.Probs) != len(rep.Levels) || v.Accuracy == nil {
					t.Fatalf("rater %s: %d rows of the model's matrix, accuracy %v", v.Rater, len(v.Probs), v.Accuracy)
				}
			}
			if slices.Contains(page.Tables, tableLabelErrors) {
				t.Errorf("tables %v with %s", page.Tables, tableLabelErrors)
			}
		}},
		{"fit_pima80_auc.json", "binary:No,Yes,pos=Yes", reports.KindRanking, func(t *testing.T, rep *reports.Report, page *fitPage) {
			a := page.AUC
			if a == nil || len(a.Rows) == 0 {
				t.Fatal("no AUC view")
			}
			for i := 1; i < len(a.Rows); i++ {
				if a.Rows[i].Score > a.Rows[i-1].Score {
					t.Fatalf("row %d: score %v after %v", i, a.Rows[i].Score, a.Rows[i-1].Score)
				}
			}
			for _, r := range a.Rows {
				if !r.Predicted && r.Positive != (r.Label == rep.Ranking.Positive) {
					t.Fatalf("item %s: label %q, positive %v", r.ID, r.Label, r.Positive)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			rep := reportOf(t, c.file, c.scheme)
			if rep.Kind != c.kind {
				t.Fatalf("kind %q, want %q", rep.Kind, c.kind)
			}
			var page fitPage
			page.fill(rep)
			if page.Report != rep {
				t.Fatal("the page does not hold its report")
			}
			var plots []string
			for _, p := range append(page.MainPlots, page.MorePlots...) {
				plots = append(plots, p.Name)
			}
			var want []string
			for _, p := range reports.Plots(rep) {
				want = append(want, p.Name)
			}
			slices.Sort(plots)
			slices.Sort(want)
			if !slices.Equal(plots, want) {
				t.Errorf("plots %v, want reports.Plots' %v", plots, want)
			}
			for i := 1; i < len(page.Raters); i++ {
				if page.Raters[i].Precision.Mean > page.Raters[i-1].Precision.Mean {
					t.Fatalf("raters not by precision: %v after %v", page.Raters[i].Precision.Mean, page.Raters[i-1].Precision.Mean)
				}
			}
			c.check(t, rep, &page)
		})
	}
}

// TestFitPageTemplate renders a done fit's page from its report, and from
// a report that could not be made (the error instead of the result).
func TestFitPageTemplate(t *testing.T) {
	d, err := newDashboard(nil)
	if err != nil {
		t.Fatal(err)
	}
	done := func() fitPage {
		p := fitPage{basePage: basePage{Title: "fit", Who: &principal{}}, Project: &annotations.Project{ID: 1, Name: "p"}, Done: true}
		p.Fit.Fit = annotations.Fit{ID: 7, Status: annotations.FitDone}
		return p
	}
	cases := []struct {
		name      string
		page      func() fitPage
		want, not []string
	}{
		{"report", func() fitPage {
			p := done()
			p.fill(reportOf(t, "fit_snow_rte40_robust.json", "binary:0,1,pos=1"))
			return p
		}, []string{`id="verdict"`, `id="consensus-table"`, `id="label-errors-table"`, `id="plot-error-rates"`}, []string{`id="report-error"`}},
		{"report error", func() fitPage {
			p := done()
			p.ReportError = "the report of fit 7 cannot be made: boom"
			return p
		}, []string{`id="report-error"`, "boom"}, []string{`id="verdict"`, `id="plots"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := d.pages["fit"].Execute(&buf, c.page()); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("page lacks %s", w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(buf.String(), w) {
					t.Errorf("page has %s", w)
				}
			}
		})
	}
}
