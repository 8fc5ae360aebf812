package server

import (
	"context"

	"concord/annotations"
	"concord/multirater"
)

// reportInput is what the renderers get: the project, the fit and its
// result document (raw and parsed).
type reportInput struct {
	Project *annotations.Project
	Fit     *annotations.Fit
	Result  *multirater.FitResult
	Raw     []byte
}

// renderer renders a done fit for download: the report document, the
// workbook, the CSV tables and the plots. Tables and Plots list the names
// the API offers (GET /fits/{id}/tables/{name}.csv and
// /fits/{id}/plots/{name}.{png,svg}).
type renderer struct {
	ReportJSON func(ctx context.Context, in reportInput) ([]byte, error)
	Workbook   func(ctx context.Context, in reportInput) ([]byte, error)
	Table      func(ctx context.Context, in reportInput, name string) ([]byte, error)
	Plot       func(ctx context.Context, in reportInput, name, format string) ([]byte, error)
	Tables     []string
	Plots      []string
}

// defaultRenderer serves the stored concord.fit/v1 result document as the
// JSON report; the workbook, tables and plots come from package reports.
func defaultRenderer() renderer {
	unavailable := func(what string) error {
		return annotations.Errorf(annotations.EUNAVAILABLE, "%s is not available in this build (it needs the reports package)", what)
	}
	return renderer{
		ReportJSON: func(_ context.Context, in reportInput) ([]byte, error) { return in.Raw, nil },
		Workbook: func(context.Context, reportInput) ([]byte, error) {
			return nil, unavailable("the XLSX workbook")
		},
		Table: func(_ context.Context, _ reportInput, name string) ([]byte, error) {
			return nil, unavailable("the CSV table " + name)
		},
		Plot: func(_ context.Context, _ reportInput, name, format string) ([]byte, error) {
			return nil, unavailable("the plot " + name + "." + format)
		},
	}
}
