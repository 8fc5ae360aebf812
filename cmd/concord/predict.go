package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
	"concord/reports"
)

const predictHelp = `
Predict new items from a fit result without refitting (Rogers, Girolami &
Polajnar 2010, sec. 2.3.1 and appendix C) and write the predictions as JSON
(schema concord.predictions/v1): for the ordinal model each item's consensus
score with its interval, its consensus and per-rater grade distributions and
most probable grade; for the classification model its consensus and
per-rater class distributions and most probable class.

The new items file has the layout of concord import's items files
(item_id,text,<numeric columns>). Texts are featurised with the vocabulary
and settings saved in the fit result, and related to the fitted items
through the fit's kernel; covariate kernels read the same named columns as
the fit did. The fit's posterior draws (keep_draws) carry the uncertainty;
a deterministic fit (--engine ep or laplace) predicts from its Gaussian
posterior, and an ordinal EP fit's grade distributions are by default those
of the EP evidence ratio P(y = k) = Z_EP(fit + rating k)/Z_EP(fit), which
corrects the Gaussian predictive for the skewness of the exact one (the
predictions' notes say which was used, and why not).

Examples:
  concord predict --fit essays.json --items new-essays.csv --out predictions.json
  concord predict --fit essays.json --items new-essays.csv
`

func runPredict(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "predict", "--fit FILE --items FILE [--out FILE]", predictHelp)
	fitPath := fs.String("fit", "", "fit result written by concord fit (required)")
	items := fs.String("items", "", "new items: item_id,text,<numeric columns> (required)")
	textCols := addTextColumnsFlag(fs)
	out := fs.String("out", "-", `predictions file ("-" for standard output)`)
	if err := parseNoArgsUsage(e, fs, args, ""); err != nil {
		return err
	}
	if *fitPath == "" || *items == "" {
		return annotations.Errorf(annotations.EINVALID, "--fit FILE and --items FILE are required")
	}
	res, err := readFitResult(*fitPath)
	if err != nil {
		return err
	}
	f, err := os.Open(*items)
	if err != nil {
		return err
	}
	its, err := annotations.ReadItems(f, annotations.ReadOptions{Name: *items, TextColumns: splitList(*textCols)})
	f.Close()
	if err != nil {
		return err
	}
	p, err := analysis.Predict(res, its)
	if err != nil {
		return fmt.Errorf("%s: %w", *fitPath, err)
	}
	b, err := json.MarshalIndent(p, "", " ")
	if err != nil {
		return fmt.Errorf("encoding the predictions: %w", err)
	}
	b = append(b, '\n')
	summary := e.stdout
	if *out == "-" {
		summary = e.stderr
		if _, err := e.stdout.Write(b); err != nil {
			return err
		}
	} else if err := os.WriteFile(*out, b, 0o644); err != nil {
		return err
	}
	printPredictSummary(summary, p, *out)
	return nil
}

// readFitResult reads a fit result document.
func readFitResult(path string) (*multirater.FitResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := checkFitSchema(path, b); err != nil {
		return nil, err
	}
	var res multirater.FitResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: not a fit result (%s)", path, err)
	}
	return &res, nil
}

// checkFitSchema looks at the "schema" field of the JSON document b (read
// from path, given to --fit) before it is decoded as a fit result, so that
// a report, a predictions file or another document is named for what it is
// rather than reported as a decoding error.
func checkFitSchema(path string, b []byte) error {
	var head struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return annotations.Errorf(annotations.EINVALID, "%s: not a fit result: %s (give the file written by concord fit --out)", path, jsonProblem(err))
	}
	switch {
	case head.Schema == nil:
		return annotations.Errorf(annotations.EINVALID, "%s: not a fit result: no \"schema\" field (give the file written by concord fit --out, schema %s)", path, multirater.FitSchema)
	case *head.Schema == multirater.FitSchema:
		return nil
	case *head.Schema == reports.Schema:
		return annotations.Errorf(annotations.EINVALID, "%s is a report (%s), not a fit result: give the file written by concord fit --out (schema %s)", path, reports.Schema, multirater.FitSchema)
	case *head.Schema == analysis.PredictionsSchema:
		return annotations.Errorf(annotations.EINVALID, "%s holds predictions (%s), not a fit result: give the file written by concord fit --out (schema %s)", path, analysis.PredictionsSchema, multirater.FitSchema)
	default:
		return annotations.Errorf(annotations.EINVALID, "%s: schema %q, not a fit result: give the file written by concord fit --out (schema %s)", path, *head.Schema, multirater.FitSchema)
	}
}

// jsonProblem says in words why a file is not JSON.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("not JSON (%s at byte %d)", syn, syn.Offset)
	}
	return err.Error()
}

func printPredictSummary(w io.Writer, p *analysis.Predictions, out string) {
	if p.Kernel == "" {
		fmt.Fprintf(w, "Predicted %d item(s) with the %s model (linear scores).\n", len(p.Items), p.Model)
	} else {
		fmt.Fprintf(w, "Predicted %d item(s) with the %s model (kernel %s).\n", len(p.Items), p.Model, p.Kernel)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "Note: %s.\n", n)
	}
	if g := p.Gold; g != nil {
		fmt.Fprintf(w, "AUC of the scores against the items' gold labels: %.4f (%d items, %d positive).\n", g.AUC, g.Items, g.Positives)
	}
	if out != "-" {
		fmt.Fprintf(w, "Wrote %s\n", out)
	}
}
