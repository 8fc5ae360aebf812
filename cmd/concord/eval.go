package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
	"concord/server"
)

// addTextColumnsFlag adds --text-columns, the columns that make the item
// text (fit, eval, import and predict; the settings' flags are
// addSettingFlags').
func addTextColumnsFlag(fs *flag.FlagSet) *string {
	return fs.String("text-columns", "", "columns of the items file (or fields of a Label Studio export's tasks) joined by a newline into the item text (default: text)")
}

const evalHelp = `
Cross-validate a multi-rater model against baselines (Rogers, Girolami &
Polajnar 2010, fig. 8b and fig. 11) and write the metrics as JSON:

  {"folds": K, "models": [{"name": "multirater" | "majority" | "rater:<id>", "metrics": {...}}]}

The labelled items are dealt into --folds folds at random (--seed). For each
fold the model is fitted to the other folds and the held-out items are
predicted as new items: their labels are hidden, their texts and covariates
kept (the text featuriser is fitted to the training texts only). On the same
folds the same model is fitted to one majority label per item ("majority";
ordinal: the median grade, a midpoint rounded to the even level) and to each
rater's labels alone ("rater:<id>"; bounded: the mean of the item's values
for "majority").

Metrics over all held-out items: ordinal: qwk_vs_rater (quadratic weighted
kappa of the predicted grade, the median of the consensus grade
distribution, against each rater, as scikit-learn's cohen_kappa_score),
qwk_vs_mean and mae_vs_mean (against the raters' mean grade; rounded to the
even level for the kappa), mean_log_pred (mean log predictive probability of
the held-out labels); nominal: accuracy_vs_majority (most probable class
against the majority label), accuracy_vs_gold (items-file gold column),
mean_log_pred; bounded: mse (held-out ratings against the predicted
consensus value, on the rating scale) and mean_log_density (mean log
predictive density, on the rating scale, of the held-out ratings strictly
inside the scale, under the fit's median-dispersion rater).

The auc model (--model auc) is judged by its test AUC instead: the items
with a majority label are dealt into --folds stratified folds (--seed), and
on the same folds the auc model, concord's probit GP classifier (the robust
model with epsilon 0, kernel --gp-kernel learnt by the EP evidence) and
logistic regression (maximum likelihood) are trained and rank the held-out
items; the table gives each model's mean test AUC over the folds with its
standard error, the JSON (schema concord.auc-eval/v1) every fold's.

Every fit uses its model's default engine, as concord fit does (EP for the
ordinal model: the noise model chosen by the evidence in every fold). A
Gibbs fit (--engine gibbs; the classification model's only engine) uses
lighter sampler defaults than concord fit (2 chains of 500 draws after 300
burn-in sweeps, 200 kept draws); raise them with --samples and --burnin.
Chains run in parallel. With items that carry text the kernel
is text by default; numeric item columns are read only by covariate kernels,
and must be named (--covariates) when combined with text. A fit's cost per
sweep grows with the number of items times the rank of the kernel matrix,
which for the text kernel is at most the vocabulary size: --max-features
bounds it on large item sets.

With --jobs (a project in the database: --project, --db) the folds run as
jobs of the workers on that database (concord worker, or concord serve),
one job per fold, which any of them may take; the command waits, names the
worker of each fold and writes the same metrics as without (each fold's
fits are seeded as in one process). An interrupt cancels the folds' jobs.

Examples:
  concord eval --labels ratings.csv --items essays.csv --scheme ordinal:0..12 --folds 10 --out eval.json
  concord eval --db postgres://concord@db/concord --project essays --folds 5 --jobs --out eval.json
  concord eval --labels ratings.csv --items sentences.csv --text-columns sentence --scheme nominal:a,b,c --model classification --out eval.json
  concord eval --labels pima_labels.csv --items pima_items.csv --scheme binary:No,Yes,pos=Yes --model auc --standardize --folds 10 --out auc-eval.json
  concord eval --labels ratings.csv --items sentences.csv --kernel text:relation+text:term1+text:term2+text:sentence \
      --min-df 2 --max-features 300 --rater-baselines none --scheme nominal:a,b,c --model classification --out eval.json
`

func runEval(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "eval", "(--project NAME | --labels FILE [--items FILE] --scheme SPEC) [flags] --out FILE", evalHelp)
	src := addSourceFlags(fs, sourceHelp{
		project: "project to evaluate (from the database)",
		items:   "items file with --labels: item_id,text,<numeric columns>,gold",
		scheme:  "label scheme with --labels, e.g. ordinal:0..12 (default: inferred)",
	})
	src.textCols = addTextColumnsFlag(fs)
	gpKernel := fs.String("gp-kernel", "", "auc: the probit GP classifier's kernel (default "+analysis.DefaultGPClassifierKernel+", learnt by the evidence)")
	folds := fs.Int("folds", analysis.DefaultFolds, "number of folds")
	baselines := fs.String("rater-baselines", "", fmt.Sprintf("raters with a rater:<id> baseline: all, none or N (default: all raters when there are at most %d, else the %d with the most labels)", analysis.DefaultRaterBaselines, analysis.DefaultRaterBaselines))
	maxWork := fs.Duration("max-work", analysis.DefaultMaxFitWork, "most projected Gibbs work of the whole evaluation (every fold's fit), in one core's time: an evaluation projected to take longer is refused before it starts (0: no limit)")
	jobs := fs.Bool("jobs", false, "with --project: run the folds as jobs of the workers on --db (concord worker, or concord serve), one job per fold, and wait for the result (the same as without)")
	sf := addSettingFlags(fs)
	out := fs.String("out", "", `metrics file ("-" for standard output) (required)`)
	if err := src.parseFitLike(e, fs, args, out); err != nil {
		return err
	}
	if *folds < 2 {
		return annotations.Errorf(annotations.EINVALID, "--folds %d: expected at least 2", *folds)
	}
	// Without --model: the model that suits the scheme (see concord fit).
	spec := analysis.EvalSpec{
		Folds:          *folds,
		RaterBaselines: *baselines,
	}
	choice, err := chooseSpec(sf, &spec.Fit, *src.scheme)
	if err != nil {
		return err
	}
	seed := spec.Fit.Seed
	if *jobs && *src.project == "" {
		return annotations.Errorf(annotations.EINVALID, "--jobs runs the folds of a project in the database on its workers: give --project NAME (and --db DSN)")
	}
	if strings.EqualFold(spec.Fit.Model, analysis.ModelAUC) {
		if *jobs {
			return annotations.Errorf(annotations.EINVALID, "--jobs is not available with --model auc (its folds run in this process)")
		}
		// The auc model is judged by test AUC against two classifiers.
		return runAUCEval(ctx, e, analysis.AUCEvalSpec{Fit: spec.Fit, Folds: *folds, GPKernel: *gpKernel}, src, *out)
	}
	if *gpKernel != "" {
		return annotations.Errorf(annotations.EINVALID, "--gp-kernel is a setting of concord eval --model auc")
	}
	ds, source, err := src.load(ctx, e, "eval")
	if err != nil {
		return err
	}
	if err := choice.forData(ds); err != nil {
		return err
	}
	summary := summaryWriter(e, *out)
	full := spec.EvalDefaults().ForData(ds).Fit.WithDefaults()
	if err := analysis.CheckEvalWork(full, *folds, len(ds.Labels), len(ds.ItemIDs()), *maxWork, "--max-work"); err != nil {
		return err
	}
	if full.Engine == multirater.EngineGibbs {
		fmt.Fprintf(summary, "Evaluating the %s model (kernel %s) on %s by %d-fold cross-validation, seed %d; %d chains x %d draws after %d burn-in sweeps per fit\n",
			full.Model, full.Kernel, source, *folds, seed, full.Chains, full.Samples, max(full.Burnin, 0))
	} else {
		fmt.Fprintf(summary, "Evaluating the %s model (kernel %s) on %s by %d-fold cross-validation, seed %d; %s per fit\n",
			full.Model, full.Kernel, source, *folds, seed, engineName(full.Engine))
	}
	bar := newProgressBar(e, "eval")
	if *jobs {
		res, err := evalOnWorkers(ctx, e, *src.dsn, *src.project, spec, ds, bar, summary)
		bar.Done()
		if err != nil {
			return err
		}
		return writeEval(e, ds, res, *out, summary)
	}
	foldsDone := 0
	res, err := analysis.Eval(ctx, ds, spec, func(p analysis.EvalProgress) {
		bar.Set(p.Fraction, fmt.Sprintf("fold %d/%d %s", p.Fold, *folds, p.Model))
		done := p.Fold - 1
		if p.Fraction == 1 {
			done = *folds
		}
		if !e.tty && done > foldsDone {
			// Without a terminal, one line per fold.
			foldsDone = done
			fmt.Fprintf(e.stderr, "concord eval: %d of %d folds done after %s\n", done, *folds, p.Elapsed.Round(time.Second))
		}
	})
	bar.Done()
	if err != nil {
		return err
	}
	return writeEval(e, ds, res, *out, summary)
}

// writeJSONOut writes v as indented JSON (one space, then a newline) to the
// file out, or to standard output for "-"; what names v in an error.
func writeJSONOut(e *env, out string, v any, what string) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return fmt.Errorf("encoding the %s: %w", what, err)
	}
	b = append(b, '\n')
	if out == "-" {
		_, err = e.stdout.Write(b)
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

// writeEval writes the metrics to out and the summary table.
func writeEval(e *env, ds *annotations.Dataset, res *analysis.EvalResult, out string, summary io.Writer) error {
	if err := writeJSONOut(e, out, res, "metrics"); err != nil {
		return err
	}
	printEvalSummary(summary, ds, res)
	if out != "-" {
		fmt.Fprintf(summary, "Wrote %s\n", out)
	}
	return nil
}

// evalOnWorkers stores the evaluation of project with its folds as jobs
// of the database's workers, waits for its result and says which worker
// ran which fold; an interrupt (ctx) cancels it.
func evalOnWorkers(ctx context.Context, e *env, dsn, project string, spec analysis.EvalSpec, ds *annotations.Dataset, bar *progressBar, summary io.Writer) (*analysis.EvalResult, error) {
	k, err := analysis.EvalFolds(ds, spec)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, e, dsn)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	p, err := findProject(ctx, st, project)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	ev := &annotations.Eval{ProjectID: p.ID, Spec: raw, Folds: k}
	if err := st.CreateEval(ctx, ev); err != nil {
		return nil, err
	}
	start := time.Now()
	fmt.Fprintf(e.stderr, "concord eval: evaluation %d: %d folds queued as jobs; the workers on this database run them (concord worker --db DSN, or concord serve --db DSN)\n", ev.ID, k)
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := st.CancelEval(bg, ev.ID); err != nil {
				fmt.Fprintf(e.stderr, "concord eval: cancelling evaluation %d: %v\n", ev.ID, err)
			}
			return nil, ctx.Err()
		case <-t.C:
		}
		cur, err := st.FindEval(ctx, ev.ID)
		if err != nil {
			return nil, err
		}
		bar.Set(cur.Progress, cur.Message)
		switch cur.Status {
		case annotations.FitRunning:
			continue
		case annotations.FitDone:
		default:
			return nil, annotations.Errorf(annotations.EINVALID, "evaluation %d %s: %s", ev.ID, cur.Status, cur.Message)
		}
		res, err := server.DecodeEvalResult(cur.Result)
		if err != nil {
			return nil, err
		}
		res.Seconds = time.Since(start).Seconds()
		for _, f := range cur.FoldJobs {
			fmt.Fprintf(summary, "Fold %d: worker %s (attempts %d)\n", f.Fold+1, f.Worker, f.Attempts)
		}
		return res, nil
	}
}

// printEvalSummary prints the metrics as a table.
func printEvalSummary(w io.Writer, ds *annotations.Dataset, res *analysis.EvalResult) {
	fmt.Fprintf(w, "%d fits over %d folds of %d labelled items in %s.\n", res.Fits, res.Folds, res.Items, (time.Duration(res.Seconds * float64(time.Second))).Round(time.Second))
	for _, n := range res.Notes {
		fmt.Fprintf(w, "Note: %s.\n", n)
	}
	f := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.4f", *p)
	}
	if ds.Scheme.Kind == annotations.Ordinal {
		var rs []string
		for _, m := range res.Models {
			for r := range m.Metrics.QWKVsRater {
				if !slices.Contains(rs, r) {
					rs = append(rs, r)
				}
			}
		}
		sort.Strings(rs)
		if len(rs) > 8 {
			rs = rs[:8]
		}
		fmt.Fprintf(w, "\n%-22s", "model")
		for _, r := range rs {
			fmt.Fprintf(w, " %12s", clip("qwk "+r, 12))
		}
		fmt.Fprintf(w, " %9s %9s %10s\n", "qwk mean", "mae mean", "log pred")
		for _, m := range res.Models {
			fmt.Fprintf(w, "%-22s", clip(m.Name, 22))
			for _, r := range rs {
				if v, ok := m.Metrics.QWKVsRater[r]; ok {
					fmt.Fprintf(w, " %12.4f", v)
				} else {
					fmt.Fprintf(w, " %12s", "-")
				}
			}
			fmt.Fprintf(w, " %9s %9s %10s\n", f(m.Metrics.QWKVsMean), f(m.Metrics.MAEVsMean), f(m.Metrics.MeanLogPred))
		}
		return
	}
	if ds.Scheme.Kind == annotations.Bounded {
		fmt.Fprintf(w, "\n%-22s %12s %16s %8s\n", "model", "mse", "log density", "ratings")
		for _, m := range res.Models {
			fmt.Fprintf(w, "%-22s %12s %16s %8d\n", clip(m.Name, 22), f(m.Metrics.MSE), f(m.Metrics.MeanLogDensity), m.Metrics.NLogDensity)
		}
		return
	}
	fmt.Fprintf(w, "\n%-22s %12s %12s %10s\n", "model", "acc majority", "acc gold", "log pred")
	for _, m := range res.Models {
		fmt.Fprintf(w, "%-22s %12s %12s %10s\n", clip(m.Name, 22), f(m.Metrics.AccuracyVsMajority), f(m.Metrics.AccuracyVsGold), f(m.Metrics.MeanLogPred))
	}
	if len(res.Paired) > 0 {
		fmt.Fprintf(w, "\nmultirater against each baseline, item by item (exact McNemar test):\n")
		fmt.Fprintf(w, "%-22s %-22s %7s %12s %12s %8s\n", "baseline", "metric", "items", "only multi", "only base", "p")
		for _, c := range res.Paired {
			fmt.Fprintf(w, "%-22s %-22s %7d %12d %12d %8.3g\n", clip(c.Baseline, 22), c.Metric, c.Items, c.MultiraterOnly, c.BaselineOnly, c.PValue)
		}
	}
}

// load reads the dataset of fit-like commands: a project from the
// database, or label (and items) files. It returns the dataset and a name
// for it.
func (src *sourceFlags) load(ctx context.Context, e *env, cmd string) (*annotations.Dataset, string, error) {
	if *src.project != "" {
		if *src.rf.probCol != "" || *src.rf.models != "" {
			return nil, "", annotations.Errorf(annotations.EINVALID, "--prob-col and --model-raters go with --labels: a project's probabilities and model raters are those of its imports (concord import --model-raters marks stored raters)")
		}
		p, ds, err := projectDataset(ctx, e, *src.dsn, *src.project)
		if err != nil {
			return nil, "", err
		}
		return ds, "project " + p.Name, nil
	}
	opts := src.loadOptions()
	if *src.scheme != "" {
		s, err := annotations.ParseScheme(*src.scheme)
		if err != nil {
			return nil, "", err
		}
		opts.Scheme = &s
	}
	ld, err := readLabelFiles(e, []string{*src.labels}, opts)
	if err != nil {
		return nil, "", err
	}
	if ld.Inferred {
		fmt.Fprintf(e.stderr, "concord %s: scheme %s inferred (%s); give --scheme to set it\n", cmd, ld.Dataset.Scheme, ld.Reason)
	}
	reportDuplicates(e, cmd, ld.Dataset)
	return ld.Dataset, *src.labels, nil
}
