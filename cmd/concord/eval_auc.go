package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"concord/analysis"
)

// runAUCEval is concord eval --model auc: the auc model's test AUC against
// the probit GP classifier and logistic regression on the same folds.
func runAUCEval(ctx context.Context, e *env, spec analysis.AUCEvalSpec, src *sourceFlags, out string) error {
	if err := spec.Fit.Validate(); err != nil {
		return err
	}
	ds, source, err := src.load(ctx, e, "eval")
	if err != nil {
		return err
	}
	summary := summaryWriter(e, out)
	k := spec.Folds
	full := spec.Fit.WithDefaults()
	fmt.Fprintf(summary, "Evaluating the auc model (%s scores, gamma %s, engine %s) on %s by stratified %d-fold cross-validation, seed %d, against a probit GP classifier and logistic regression\n",
		full.Scores, full.Gamma, full.Engine, source, k, full.Seed)
	bar := newProgressBar(e, "eval")
	res, err := analysis.EvalAUC(ctx, ds, spec, func(p analysis.EvalProgress) {
		bar.Set(p.Fraction, fmt.Sprintf("fold %d/%d %s", p.Fold, k, p.Model))
	})
	bar.Done()
	if err != nil {
		return err
	}
	if err := writeJSONOut(e, out, res, "evaluation"); err != nil {
		return err
	}
	printAUCEvalSummary(summary, res)
	if out != "-" {
		fmt.Fprintf(summary, "Wrote %s\n", out)
	}
	return nil
}

// printAUCEvalSummary prints the test AUC table.
func printAUCEvalSummary(w io.Writer, res *analysis.AUCEvalResult) {
	fmt.Fprintf(w, "%d folds of %d items (%d positive) in %s.\n", res.Folds, res.Items, res.Positives, (time.Duration(res.Seconds * float64(time.Second))).Round(100*time.Millisecond))
	for _, n := range res.Notes {
		fmt.Fprintf(w, "Note: %s.\n", n)
	}
	fmt.Fprintf(w, "\n%-10s %9s %8s  %s\n", "model", "test AUC", "se", "")
	for _, m := range res.Models {
		fmt.Fprintf(w, "%-10s %9.4f %8.4f  %s\n", m.Name, m.AUC, m.SE, m.Description)
	}
}
