package reports_test

import (
	"context"
	"fmt"
	"io"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/mcmc"
	"concord/multirater/ordinal"
	"concord/reports"
)

// Example fits the ordinal model to a handful of ratings and renders the
// report: the JSON document, the workbook and a plot.
func Example() {
	data := &ordinal.Data{
		ItemIDs:  []string{"essay1", "essay2", "essay3", "essay4"},
		RaterIDs: []string{"ann", "bob"},
		Levels:   []string{"1", "2", "3"},
		Ratings: []multirater.Rating{
			{Item: 0, Rater: 0, Level: 0}, {Item: 0, Rater: 1, Level: 0},
			{Item: 1, Rater: 0, Level: 1}, {Item: 1, Rater: 1, Level: 2},
			{Item: 2, Rater: 0, Level: 2}, {Item: 2, Rater: 1, Level: 2},
			{Item: 3, Rater: 0, Level: 1},
		},
	}
	res, err := ordinal.Fit(context.Background(), data, ordinal.Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 200, Burnin: 100, Seed: 1}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	project := annotations.Project{Name: "essays", Scheme: annotations.MustParseScheme("ordinal:1..3")}
	rep, err := reports.Build(project, res, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Schema, rep.Kind, len(rep.Items), "items,", len(rep.Raters), "raters")
	fmt.Println("top item:", rep.Items[0].ID)
	fmt.Println("sheets:", reports.SheetNames(rep, reports.XLSXOptions{}))
	if err := reports.WriteJSON(io.Discard, rep); err != nil {
		fmt.Println(err)
	}
	if err := reports.WriteXLSX(io.Discard, rep, reports.XLSXOptions{}); err != nil {
		fmt.Println(err)
	}
	if err := reports.WritePlot(io.Discard, rep, reports.PlotPrecision, reports.SVG); err != nil {
		fmt.Println(err)
	}
	// Output:
	// concord.report/v1 ordinal 4 items, 2 raters
	// top item: essay3
	// sheets: [Summary Review Items Raters Thresholds Agreement Diagnostics Flags Glossary Charts]
}
