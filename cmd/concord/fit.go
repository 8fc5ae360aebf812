package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
	"concord/reports"
)

const fitHelp = `
Fit a multi-rater model (the model and engine below: Gibbs sampling, EP,
Laplace, variational Bayes or SMC) and write the result document (schema
concord.fit/v1, see docs/fit-schema.md).

The data come either from a project in the database (--project) or straight
from files (--labels, with --items and --scheme as for concord import). The
ordinal model estimates a consensus score for every item (with its rank and
grade distribution), each rater's precision, thresholds and severity, and
flags labels that do not fit. The classification model (--model
classification, for nominal and binary schemes) estimates every item's
class distribution and consensus class, each rater's precision, agreement
and confusion table against the consensus, and flags labels that do not fit.
The confusion model (--model confusion, nominal and binary schemes; the
crowd-labelling model, Dawid-Skene made Bayesian) gives each rater a
confusion matrix (with 95% intervals), an accuracy and a spam score, every
item a class distribution; it is fitted by variational Bayes in seconds
(--engine vb, default) or by Gibbs sampling (--engine gibbs). Its items'
classes come from the class proportions by default (identity kernel: the
labels alone); with --kernel (text, text:COLUMN, covariates, sums) they come
from a multinomial-probit Gaussian process on the items' features
(Girolami & Rogers 2006), so that alike items share their labels and new
items are predicted from their features.

The ordinal model is fitted by EP by default (--engine ep; --engine laplace
alike): every rater's thresholds and noise are learnt by maximising the
evidence, and with several raters the noise model (per rater, shared
thresholds, or shared) and, with a default text kernel and every item
rated, the kernel (text or identity) are chosen by the penalised evidence;
the summary lists every candidate, --noise and --kernel force one. With
--engine gibbs (the ordinal and classification models; the confusion
model's option) several chains run in parallel; the fit is reproducible for
a given --seed, --chains and --sampler, and the summary says plainly
whether the chains have converged (max split R-hat below --max-rhat and min
bulk ESS at least --min-ess); when they have not, run more --samples.

Items with texts get the text kernel by default (the linear kernel on
unit-norm bag-of-words vectors, Rogers et al. sec. 4-5; see
docs/text-predict-eval.md), except in a classification fit whose items all
have labels, where the labels alone (identity) converge faster and the texts
add little (--kernel text, or any text setting, uses them); the vocabulary
and settings are saved in the result, so that concord predict featurises new
documents identically.
Numeric item columns are read only by covariate kernels (linear, rbf), and
must be named with --covariates when combined with text.

Examples:
  concord fit --labels ratings.csv --items essays.csv --scheme ordinal:0..12 --out essays.json
  concord fit --project sirt-writing-k1 --out k1.json
  concord fit --labels ratings.csv --scheme ordinal:0..3 --where criterion=k1 --out -
  concord fit --labels ratings.csv --items items.csv --scheme ordinal:1..5 --kernel rbf:gamma=1 --out toy.json
  concord fit --project rte --model classification --kernel identity --out rte.json
  concord fit --labels labels.csv --scheme nominal:cat,dog,fox --model classification --precisions fixed --out -
  concord fit --labels crowd.csv --duplicates keep --model confusion --out crowd.json
  concord fit --labels crowd.csv --items products.csv --model confusion --kernel text:name_a+text:name_b --out crowd.json
  concord fit --labels pima_labels.csv --items pima_items.csv --scheme binary:No,Yes,pos=Yes --model auc --standardize --out pima.json

The auc model (--model auc, binary schemes; Ridgway et al.'s PAC-Bayesian AUC
scoring) ranks items by a score s(x) of their numeric covariates (--items,
chosen with --covariates) so that positive items come first: linear scores
s = <theta, x> (--scores linear, the default) or a Gaussian process
(--scores gp --kernel rbf|rbf:gamma=G|...). Each item's label is the
majority of its labels. It writes each item's score (mean and sd), the ROC
curve and training AUC, the coefficients of linear scores and the log
evidence; --gamma cv (default) chooses the pseudo-posterior's temperature
by 5-fold cross-validation of the held-out AUC.
`

func runFit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "fit", "(--project NAME | --labels FILE [--items FILE] --scheme SPEC) [flags] --out FILE", fitHelp)
	src := addSourceFlags(fs, sourceHelp{
		project: "project to fit (from the database)",
		labels:  "label file to fit without a database (formats as for concord import)",
		items:   "items file with --labels: item_id,text,<numeric covariates>",
		scheme:  "label scheme with --labels, e.g. ordinal:1..5 (default: inferred)",
		where:   "with --labels: keep only rows whose COLUMN=VALUE (repeatable), e.g. criterion=k1",
	})
	src.textCols = addTextColumnsFlag(fs)
	sf := addSettingFlags(fs)
	out := fs.String("out", "", `result file ("-" for standard output) (required)`)
	top := fs.Int("top", 10, "items of the consensus ranking to print")
	maxWork := fs.Duration("max-work", analysis.DefaultMaxFitWork, "most projected Gibbs work, in one core's time: a fit projected to take longer is refused before it starts (0: no limit)")
	if err := src.parseFitLike(e, fs, args, out); err != nil {
		return err
	}
	var spec analysis.FitSpec
	choice, err := chooseSpec(sf, &spec, *src.scheme)
	if err != nil {
		return err
	}

	ds, source, err := src.load(ctx, e, "fit")
	if err != nil {
		return err
	}
	if err := choice.forData(ds); err != nil {
		return err
	}

	if err := analysis.CheckWork(spec.ForData(ds).WithDefaults(), len(ds.Labels), len(ds.ItemIDs()), *maxWork, "--max-work"); err != nil {
		return err
	}
	summary := summaryWriter(e, *out)
	res, err := fitAndSummarise(ctx, e, ds, spec, source, summary, *top)
	if err != nil {
		return err
	}
	if err := writeFitResult(e, *out, res); err != nil {
		return err
	}
	if *out != "-" {
		fmt.Fprintf(summary, "Wrote %s\n", *out)
	}
	return nil
}

// fitAndSummarise fits ds with spec, showing progress, and prints the
// verdict, the top of the consensus ranking and the rater precisions to w.
// concord demo can call it for its ordinal project.
func fitAndSummarise(ctx context.Context, e *env, ds *annotations.Dataset, spec analysis.FitSpec, source string, w io.Writer, top int) (*multirater.FitResult, error) {
	res, err := fitWithProgress(ctx, e, ds, spec, source, w)
	if err != nil {
		return nil, err
	}
	printFitSummary(w, res, top)
	if ds.Scheme.Categorical() {
		printGoldSummary(w, ds, res, top)
	}
	return res, nil
}

// printGoldSummary prints each rater's accuracy on the gold questions (the
// items of ds with a gold label), those surely least accurate first (by the
// interval's upper end): the top raters when there are many. Nothing when
// no item has gold.
func printGoldSummary(w io.Writer, ds *annotations.Dataset, res *multirater.FitResult, top int) {
	scores := reports.GoldScores(ds)
	if scores == nil {
		return
	}
	nGold := 0
	for _, it := range ds.Items {
		if it.Gold != "" {
			nGold++
		}
	}
	ids := make([]string, 0, len(res.Raters))
	for _, r := range res.Raters {
		ids = append(ids, r.ID)
	}
	// The raters surely least accurate first: by the interval's upper end,
	// then the accuracy; no gold seen last.
	key := func(id string) (float64, float64) {
		if g := scores[id]; g.Labels > 0 {
			return float64(g.Q975), float64(g.Accuracy)
		}
		return math.Inf(1), math.Inf(1)
	}
	sort.SliceStable(ids, func(i, j int) bool {
		hi, a := key(ids[i])
		hj, b := key(ids[j])
		return hi < hj || hi == hj && a < b
	})
	fmt.Fprintf(w, "\nRaters on the %d gold questions (labels equal to the gold label, 95%% Wilson interval; surely least accurate first, by the upper end; \"gold\" in the report):\n", nGold)
	shown := ids
	if top > 0 && len(shown) > top {
		shown = shown[:top]
	}
	for _, id := range shown {
		g := scores[id]
		if g.Labels == 0 {
			fmt.Fprintf(w, "  %-20s no gold seen\n", id)
			continue
		}
		fmt.Fprintf(w, "  %-20s %5.1f%% [%4.1f%%, %5.1f%%]  %d of %d labels on %d gold items\n", id, 100*float64(g.Accuracy), 100*float64(g.Q025), 100*float64(g.Q975), g.Correct, g.Labels, g.Items)
	}
	if len(shown) < len(ids) {
		fmt.Fprintf(w, "  ... and %d more (--top N shows more)\n", len(ids)-len(shown))
	}
}

// fitWithProgress runs analysis.Fit with a progress bar on the terminal and
// a one-line description of the fit on w. concord demo uses it too.
func fitWithProgress(ctx context.Context, e *env, ds *annotations.Dataset, spec analysis.FitSpec, source string, w io.Writer) (*multirater.FitResult, error) {
	full := spec.ForData(ds).WithDefaults()
	// A scheme the model cannot fit is said before the description of a
	// fit that will not run.
	if m, err := analysis.LookupModel(full.Model); err == nil {
		if err := m.CheckScheme(ds.Scheme); err != nil {
			return nil, err
		}
	}
	nItems := len(ds.ItemIDs())
	if strings.EqualFold(full.Model, analysis.ModelAUC) {
		what := full.Scores + " scores"
		if full.Kernel != "" {
			what += ", kernel " + full.Kernel
		}
		fmt.Fprintf(w, "Fitting the auc model (%s, gamma %s, %s prior) by %s to %s: %d items, %d raters, %d labels; seed %d\n",
			what, full.Gamma, full.Prior, engineName(full.Engine), source, nItems, len(ds.RaterIDs()), len(ds.Labels), full.Seed)
	} else if full.Engine == multirater.EngineVB {
		fmt.Fprintf(w, "Fitting the %s model (kernel %s, %s prior hierarchy) by %s to %s: %d items, %d raters, %d labels\n",
			full.Model, full.Kernel, full.Hierarchy, engineName(full.Engine), source, nItems, len(ds.RaterIDs()), len(ds.Labels))
	} else if full.Engine != multirater.EngineGibbs {
		how := "rater parameters learnt by maximising the evidence"
		if analysis.OneRun(full) {
			how = "every rater parameter fixed: one run, no evidence maximisation"
		} else if line := analysis.FinalRunLine(full, len(ds.Labels), nItems); line != "" {
			how += " (" + line + ")"
		}
		fmt.Fprintf(w, "Fitting the %s model (kernel %s) by %s to %s: %d items, %d raters, %d labels; %s, seed %d\n",
			full.Model, full.Kernel, engineName(full.Engine), source, nItems, len(ds.RaterIDs()), len(ds.Labels), how, full.Seed)
	} else {
		fmt.Fprintf(w, "Fitting the %s model (kernel %s, %s identifiability, %s sampler) to %s: %d items, %d raters, %d labels; %d chains x %d draws after %d burn-in sweeps (thin %d), seed %d\n",
			full.Model, full.Kernel, full.Identifiability, full.Sampler, source, nItems, len(ds.RaterIDs()), len(ds.Labels),
			full.Chains, full.Samples, max(full.Burnin, 0), full.Thin, full.Seed)
	}
	fmt.Fprintf(w, "expected cost: %s\n", analysis.ExpectedCost(full, len(ds.Labels), nItems))
	bar := newProgressBar(e, "fit")
	res, err := analysis.Fit(ctx, ds, spec, func(p multirater.Progress) {
		note := p.Phase
		if p.MaxRhat > 0 {
			note += fmt.Sprintf(", max R-hat %.3f", p.MaxRhat)
		}
		bar.Set(p.Fraction, note)
	})
	bar.Done()
	return res, err
}

func writeFitResult(e *env, path string, res *multirater.FitResult) error {
	if path != "-" {
		return writeFitFile(path, res)
	}
	return streamFitResult(e.stdout, res)
}

// writeFitFile writes the fit result document to the file path.
func writeFitFile(path string, res *multirater.FitResult) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := streamFitResult(f, res); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// streamFitResult writes the fit result document as concord fit writes it
// (json.MarshalIndent with one space, then a newline) to w piece by piece (multirater.WriteIndented): memory stays that of one item, not of
// the document (hundreds of MB from 16,000 items on).
func streamFitResult(w io.Writer, res *multirater.FitResult) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := multirater.WriteIndented(bw, res); err != nil {
		return fmt.Errorf("encoding the result: %w", err)
	}
	return bw.Flush()
}

// essPerCPU says the fit's min bulk ESS per CPU second of sampling
// (diagnostics.ess_per_cpu_second), or "" when it is not known.
func essPerCPU(d multirater.Diagnostics) string {
	if !(d.ESSPerCPUSecond > 0) {
		return ""
	}
	return fmt.Sprintf("; min bulk ESS %.0f, %.3g per CPU second of sampling", d.MinESSBulk, d.ESSPerCPUSecond)
}

// printFitSummary prints the verdict, the top of the consensus ranking and
// the rater precisions, from the fit's summary (reports.SummariseFit).
func printFitSummary(w io.Writer, res *multirater.FitResult, top int) {
	sum := reports.SummariseFit(res, annotations.Scheme{})
	d := res.Diagnostics
	took := (time.Duration(sum.Seconds * float64(time.Second))).Round(10 * time.Millisecond)
	if d.Engine != nil && d.Engine.Name != multirater.EngineGibbs {
		fmt.Fprintf(w, "Done in %s (%s).\n", took, engineName(d.Engine.Name))
	} else {
		fmt.Fprintf(w, "Done in %s (%.0f sweeps/s per chain%s).\n", took, d.SweepsPerSecond, essPerCPU(d))
	}
	// The verdict is the one the fit stored (diagnostics.verdict), whatever
	// the engine: it is never recomputed here.
	if sum.Converged {
		fmt.Fprintf(w, "%s.\n", upperFirst(d.Verdict))
	} else {
		fmt.Fprintf(w, "WARNING: the chains have %s.\n", d.Verdict)
		fmt.Fprintf(w, "WARNING: do not rely on these numbers.\n")
	}
	for _, n := range d.Notes {
		fmt.Fprintf(w, "Note: %s.\n", n)
	}
	switch sum.Shape {
	case multirater.OutputRanking:
		printRankingSummary(w, res, top)
	case multirater.OutputClasses:
		printClassSummary(w, res, sum, top)
		if res.Model.Model == analysis.ModelRobust {
			printErrorSummary(w, res, top)
		}
	case multirater.OutputValues:
		printValueSummary(w, res, sum, top)
	default:
		printScoreSummary(w, res, sum, top)
	}
	if sum.Shape == multirater.OutputRanking {
		// The auc model flags no labels.
	} else if sum.Shape == multirater.OutputValues {
		fmt.Fprintf(w, "\n%d surprising rating(s) in a two-sided predictive tail below %g (\"flags\" in the result).\n", sum.Flags, res.Model.FlagThreshold)
	} else {
		fmt.Fprintf(w, "\n%d surprising label(s) with posterior predictive probability below %g (\"flags\" in the result).\n", sum.Flags, res.Model.FlagThreshold)
	}
	if !sum.Converged {
		fmt.Fprintf(w, "WARNING: NOT converged (see above).\n")
	}
}

// printErrorSummary prints the robust model's part of the fit summary:
// the raters' labelling-error rates and the labels most probably wrong.
func printErrorSummary(w io.Writer, res *multirater.FitResult, top int) {
	d := res.Diagnostics
	if d.Selected != "" {
		fmt.Fprintf(w, "\nModel selection by the evidence: plain %.4f, robust %.4f with the error rates integrated out (%.4f at the learnt ones): %s.\n",
			d.Evidence["plain"], d.Evidence["robust_integrated"], d.Evidence["robust"], d.Selected)
	}
	fmt.Fprintf(w, "\nLabelling-error rates (epsilon: how often the rater's label is flipped):\n")
	fmt.Fprintf(w, "  %-20s %6s  %9s %s\n", "rater", "labels", "epsilon", "EM steps")
	for r := range shownRows(w, res.Raters, top) {
		if r.Epsilon != nil {
			fmt.Fprintf(w, "  %-20s %6d  %9.4f %d\n", clip(r.ID, 20), r.NLabels, r.Epsilon.Value, max(len(r.Epsilon.History)-1, 0))
		}
	}
	n := min(top, len(res.LabelErrors))
	if n > 0 {
		fmt.Fprintf(w, "\nThe %d labels most probably wrong (\"label_errors\" in the result has every label):\n", n)
		fmt.Fprintf(w, "  %-22s %-20s %-10s %s\n", "item", "rater", "label", "p_error")
		for _, le := range res.LabelErrors[:n] {
			fmt.Fprintf(w, "  %-22s %-20s %-10s %.4f\n", clip(le.Item, 22), clip(le.Rater, 20), le.Label, le.PError)
		}
	}
}

// printScoreSummary prints the scores part of the fit summary: the top of
// the consensus ranking and the raters' precisions, variances and
// severities.
func printScoreSummary(w io.Writer, res *multirater.FitResult, sum *reports.FitSummary, top int) {
	top = min(top, len(sum.Ranking))
	if top > 0 {
		fmt.Fprintf(w, "\nTop %d of the consensus ranking (of %d items):\n", top, sum.Items)
		fmt.Fprintf(w, "  %-5s %-22s %-26s %-10s %-7s %s\n", "rank", "item", "score (95% interval)", "rank 95%", "grade", "labels")
		for _, it := range sum.Ranking[:top] {
			rank, rint := rankCells(it)
			score := ""
			if it.Score != nil {
				score = fmt.Sprintf("%6.2f (%.2f, %.2f)", it.Score.Mean, it.Score.Q025, it.Score.Q975)
			}
			fmt.Fprintf(w, "  %-5s %-22s %-26s %-10s %-7s %s\n", rank, clip(it.ID, 22), score, rint, it.Grade, labelList(it, res.Raters))
		}
	}
	printCandidates(w, res)
	fmt.Fprintf(w, "\nRater precisions (higher = more consistent with the consensus):\n")
	switch res.Model.Noise {
	case "shared":
		fmt.Fprintf(w, "  (one noise sd and one set of thresholds shared by every rater)\n")
	case "shared-thresholds":
		fmt.Fprintf(w, "  (one set of thresholds shared by every rater, each rater's own noise sd)\n")
	}
	fmt.Fprintf(w, "  %-20s %6s  %-24s %9s %9s\n", "rater", "labels", "precision (95% interval)", "variance", "severity")
	for r := range shownRows(w, sum.ByPrecision, top) {
		ref := ""
		if r.Reference {
			ref = " (reference, fixed)"
		}
		if r.Model {
			ref += "  MODEL"
		}
		fmt.Fprintf(w, "  %-20s %6d  %-26s%9.3f %+9.3f%s\n", clip(r.ID, 20), r.NLabels, estimateCell(r.Precision), r.Variance.Mean, r.Severity, ref)
	}
}

// printValueSummary prints the bounded part of the fit summary: the top of
// the consensus ranking with each item's consensus value on the rating
// scale, and the raters' dispersions.
func printValueSummary(w io.Writer, res *multirater.FitResult, sum *reports.FitSummary, top int) {
	top = min(top, len(sum.Ranking))
	if top > 0 {
		fmt.Fprintf(w, "\nTop %d of the consensus ranking (of %d items):\n", top, sum.Items)
		fmt.Fprintf(w, "  %-5s %-22s %-30s %-10s %s\n", "rank", "item", "value (95% predictive)", "rank 95%", "labels")
		for _, it := range sum.Ranking[:top] {
			rank, rint := rankCells(it)
			value := ""
			if it.Value != nil {
				value = fmt.Sprintf("%8.4g (%.4g, %.4g)", it.Value.Mean, it.Value.Q025, it.Value.Q975)
			}
			fmt.Fprintf(w, "  %-5s %-22s %-30s %-10s %s\n", rank, clip(it.ID, 22), value, rint, labelList(it, res.Raters))
		}
	}
	printCandidates(w, res)
	fmt.Fprintf(w, "\nRater dispersions nu (higher = more consistent with the consensus):\n")
	if res.Model.Dispersions == "shared" {
		fmt.Fprintf(w, "  (one dispersion shared by every rater)\n")
	}
	fmt.Fprintf(w, "  %-20s %6s  %-26s %9s %s\n", "rater", "labels", "nu (95% interval)", "bias", "mean log pred. density")
	for r := range shownRows(w, sum.ByPrecision, top) {
		bias := "-"
		if r.Bias != nil {
			bias = fmt.Sprintf("%+.3f", r.Bias.Mean)
		}
		fmt.Fprintf(w, "  %-20s %6d  %8.3g (%6.3g, %6.3g)     %9s %.3f\n", clip(r.ID, 20), r.NLabels, r.Precision.Mean, r.Precision.Q025, r.Precision.Q975, bias, r.MeanLogPred)
	}
}

// printCandidates prints the models a fit chose among, each with its
// scores and seconds, and why the chosen one won.
func printCandidates(w io.Writer, res *multirater.FitResult) {
	d := res.Diagnostics
	if len(d.ModelCandidates) == 0 {
		return
	}
	if d.ModelCandidates[0].LOO == nil && (d.ModelCandidates[0].Score != nil || d.ModelCandidates[0].Error != "") {
		printEvidenceCandidates(w, d)
		return
	}
	fmt.Fprintf(w, "\nModel choice (likelihood/dispersions/kernel; leave-one-out log predictive probability per rating of a new rater's rating, higher is better):\n")
	fmt.Fprintf(w, "  %-30s %10s %12s %14s %8s\n", "candidate", "loo", "loo own", "log evidence", "seconds")
	for _, c := range d.ModelCandidates {
		mark := ""
		if c.Chosen {
			mark = "  <- chosen"
		}
		if c.LOO == nil {
			fmt.Fprintf(w, "  %-30s failed: %s\n", c.Name, c.Error)
			continue
		}
		ev, own := "-", "-"
		if c.LogEvidence != nil {
			ev = fmt.Sprintf("%.2f", *c.LogEvidence)
		}
		if c.LOOOwn != nil {
			own = fmt.Sprintf("%.4f", *c.LOOOwn)
		}
		fmt.Fprintf(w, "  %-30s %10.4f %12s %14s %8.2f%s\n", c.Name, *c.LOO, own, ev, c.Seconds, mark)
	}
	fmt.Fprintf(w, "  %s.\n  Force one with --likelihood, --dispersions and --kernel.\n", d.Choice)
}

// printEvidenceCandidates prints the candidates of a choice by the
// penalised log evidence (the ordinal model's noise models and kernels).
func printEvidenceCandidates(w io.Writer, d multirater.Diagnostics) {
	fmt.Fprintf(w, "\nModel choice (noise/kernel; log evidence less 1/2 ln(ratings) per learnt parameter, higher is better):\n")
	fmt.Fprintf(w, "  %-30s %12s %14s %6s %9s %8s\n", "candidate", "score", "log evidence", "params", "penalty", "seconds")
	for _, c := range d.ModelCandidates {
		mark := ""
		if c.Chosen {
			mark = "  <- chosen"
		}
		if c.Score == nil || c.LogEvidence == nil {
			fmt.Fprintf(w, "  %-30s failed: %s\n", c.Name, c.Error)
			continue
		}
		fmt.Fprintf(w, "  %-30s %12.2f %14.2f %6d %9.2f %8.2f%s\n", c.Name, *c.Score, *c.LogEvidence, c.Parameters, c.Penalty, c.Seconds, mark)
	}
	fmt.Fprintf(w, "  %s.\n  Force one with --noise and --kernel.\n", d.Choice)
}

// rankCells are the cells of an item's expected rank and its 95% interval
// in the fit summary (empty without a rank).
func rankCells(it *multirater.ItemResult) (rank, interval string) {
	if it.Rank == nil {
		return "", ""
	}
	return fmt.Sprintf("%.1f", it.Rank.Mean), fmt.Sprintf("%.0f-%.0f", it.Rank.Q025, it.Rank.Q975)
}

// shownRows keeps long tables of raters short: of the n rows it yields the
// first and last top (all of them when n <= 2*top+2) and prints one line
// in place of the rest.
func shownRows[T any](w io.Writer, rows []T, top int) iter.Seq[T] {
	return func(yield func(T) bool) {
		n, top := len(rows), max(top, 1)
		for i, r := range rows {
			if n > 2*top+2 && i >= top && i < n-top {
				if i == top {
					fmt.Fprintf(w, "  ... %d more raters (every rater is in the result)\n", n-2*top)
				}
				continue
			}
			if !yield(r) {
				return
			}
		}
	}
}

// upperFirst returns s with its first letter in upper case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func labelList(it *multirater.ItemResult, raters []multirater.RaterResult) string {
	var parts []string
	for _, r := range raters {
		if v, ok := it.Labels[r.ID]; ok {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		return "(none: predicted)"
	}
	return strings.Join(parts, " ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// engineName names an engine in sentences.
func engineName(engine string) string {
	switch engine {
	case multirater.EngineEP:
		return "expectation propagation"
	case multirater.EngineLaplace:
		return "Laplace's method"
	case multirater.EngineVB:
		return "variational Bayes"
	case multirater.EngineSMC:
		return "tempering sequential Monte Carlo"
	}
	return "Gibbs sampling"
}

// defaultEngine returns the engine flag, or the model's default engine
// when the flag was not given.
func defaultEngine(engine, model string) string {
	if engine != "" {
		return engine
	}
	if m, err := analysis.LookupModel(model); err == nil {
		return m.DefaultEngine()
	}
	return multirater.EngineGibbs
}

// provisionalModel returns the model a fit-like command validates its flags
// against before the labels are read: the --model flag, else the model that
// suits --scheme, else the bounded model when its flags were given, else
// the ordinal model. Once the labels are read, a command without --model
// switches to the model that suits their scheme (analysis.DefaultModel).
func provisionalModel(model, schemeSpec string, boundedFlags bool) string {
	if model != "" {
		return model
	}
	if sc, err := annotations.ParseScheme(schemeSpec); schemeSpec != "" && err == nil {
		return analysis.DefaultModel(sc)
	}
	if boundedFlags {
		return analysis.ModelBounded
	}
	return analysis.ModelOrdinal
}

// summaryWriter is where a command writing its result to out prints its
// summary: standard error when the result goes to standard output.
func summaryWriter(e *env, out string) io.Writer {
	if out == "-" {
		return e.stderr
	}
	return e.stdout
}

// specChoice is the spec of a fit-like command while its model is being
// chosen: without --model the model is the one that suits the scheme,
// known for sure once the labels are read; until then the scheme flag, or
// the bounded model's flags, say which it will be (provisionalModel).
type specChoice struct {
	sf   *settingFlags
	spec *analysis.FitSpec
	// model and engine are the --model and --engine flags.
	model, engine string
}

// chooseSpec sets spec from the setting flags sf and the provisional
// model, and checks it.
func chooseSpec(sf *settingFlags, spec *analysis.FitSpec, schemeSpec string) (*specChoice, error) {
	if err := sf.apply(spec); err != nil {
		return nil, err
	}
	c := &specChoice{sf: sf, spec: spec, model: spec.Model, engine: spec.Engine}
	spec.Model = provisionalModel(c.model, schemeSpec, sf.only(analysis.ModelBounded))
	return c, c.check()
}

// check sets the engine (the model's default without --engine) and checks
// the spec and the flags given against the model and engine.
func (c *specChoice) check() error {
	c.spec.Engine = defaultEngine(c.engine, c.spec.Model)
	if err := c.spec.Validate(); err != nil {
		return err
	}
	return c.sf.check(*c.spec)
}

// forData switches a spec without --model to the model that suits the
// labels read, ds, and checks it again.
func (c *specChoice) forData(ds *annotations.Dataset) error {
	if m := analysis.DefaultModelFor(ds.Scheme, analysis.ItemsWithText(ds)); c.model == "" && m != c.spec.Model {
		c.spec.Model = m
		return c.check()
	}
	return nil
}

// estimateCell formats an estimate with its 95% interval, or as a point
// estimate when it has none (the deterministic engines' learnt
// hyperparameters).
func estimateCell(e multirater.Estimate) string {
	if e.Q025 == e.Q975 {
		return fmt.Sprintf("%6.2f (point estimate)", e.Mean)
	}
	return fmt.Sprintf("%6.2f (%5.2f, %5.2f)", e.Mean, e.Q025, e.Q975)
}
