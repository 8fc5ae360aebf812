package main

import (
	"fmt"
	"io"

	"concord/multirater"
	"concord/reports"
)

// printClassSummary prints the classes part of the fit summary: the
// consensus class counts, the least certain items and the raters'
// precisions with their agreement with the consensus.
func printClassSummary(w io.Writer, res *multirater.FitResult, sum *reports.FitSummary, top int) {
	n := float64(max(sum.Items, 1))
	fmt.Fprintf(w, "\nConsensus classes of %d items (%d without labels, predicted):\n", sum.Items, sum.Predicted)
	fmt.Fprintf(w, "  %-20s %7s %7s %15s\n", "class", "items", "share", "expected share")
	for _, c := range sum.Classes {
		fmt.Fprintf(w, "  %-20s %7d %6.1f%% %14.1f%%\n", clip(c.Level, 20), c.Items, 100*float64(c.Items)/n, 100*c.ProbSum/n)
	}
	top = min(top, len(sum.Uncertain))
	if top > 0 {
		fmt.Fprintf(w, "\nLeast certain %d items (highest entropy of the class distribution):\n", top)
		fmt.Fprintf(w, "  %-22s %-12s %6s %8s  %s\n", "item", "class", "prob", "entropy", "labels")
		for _, it := range sum.Uncertain[:top] {
			entropy := 0.0
			if it.Entropy != nil {
				entropy = *it.Entropy
			}
			fmt.Fprintf(w, "  %-22s %-12s %6.3f %8.3f  %s\n", clip(it.ID, 22), clip(it.Class, 12), it.ClassProbs[it.Class], entropy, labelList(it, res.Raters))
		}
	}
	if res.Model.Confusion != nil {
		printConfusionRaters(w, res, top)
		return
	}
	fmt.Fprintf(w, "\nRater precisions (higher = more consistent with the consensus):\n")
	fmt.Fprintf(w, "  %-20s %6s  %-24s %9s %13s\n", "rater", "labels", "precision (95% interval)", "agreement", "mean log pred")
	for r := range shownRows(w, sum.ByPrecision, top) {
		note := ""
		switch {
		case res.Model.Precisions == "fixed" || res.Model.Precisions == "fixed-full":
			note = " (fixed)"
		case r.Reference:
			note = " (reference, fixed)"
		}
		if r.Model {
			note += "  MODEL"
		}
		agree := 0.0
		if r.ConsensusAgreement != nil {
			agree = *r.ConsensusAgreement
		}
		fmt.Fprintf(w, "  %-20s %6d  %-26s%8.1f%% %13.3f%s\n", clip(r.ID, 20), r.NLabels, estimateCell(r.Precision), 100*agree, r.MeanLogPred, note)
	}
}

// printConfusionRaters prints the confusion model's raters: accuracy with
// its 95% interval, spam score and the classes they confuse most.
func printConfusionRaters(w io.Writer, res *multirater.FitResult, top int) {
	if cp := res.Model.Confusion; cp != nil && len(cp.RaterModelCandidates) > 0 {
		fmt.Fprintf(w, "\nRater models (chosen by the evidence lower bound less 1/2 ln(raters) per learnt prior parameter, among those that predict held-out labels no worse than a simpler one; force one with --rater-model):\n")
		fmt.Fprintf(w, "  %-12s %12s %8s %12s %12s %6s  %s\n", "model", "ELBO", "penalty", "score", "held-out", "iters", "")
		for _, c := range cp.RaterModelCandidates {
			note := ""
			switch {
			case c.Failed != "":
				note = "failed: " + c.Failed
			case c.Chosen:
				note = "CHOSEN"
			case c.Excluded != "":
				note = "not chosen: " + c.Excluded
			}
			if c.Communities > 1 {
				note = fmt.Sprintf("%d communities  %s", c.Communities, note)
			}
			if c.Failed != "" {
				fmt.Fprintf(w, "  %-12s %s\n", c.Model, note)
				continue
			}
			fmt.Fprintf(w, "  %-12s %12.1f %8.1f %12.1f %12.1f %6d  %s\n", c.Model, c.ELBO, c.Penalty, c.Score, c.HeldOut, c.Iterations, note)
		}
	}
	if cp := res.Model.Confusion; cp != nil && len(cp.Communities) > 1 {
		fmt.Fprintf(w, "\nCommunities of raters (prior confusion matrices learnt from the raters in them; mean diagonal = prior probability of a correct label):\n")
		for c, cm := range cp.Communities {
			var d float64
			for k := range cm.Mean {
				d += cm.Mean[k][k]
			}
			fmt.Fprintf(w, "  community %d: %4d raters, weight %.2f, mean diagonal %.2f\n", c+1, cm.Raters, cm.Weight, d/float64(len(cm.Mean)))
		}
	}
	fmt.Fprintf(w, "\nRater accuracies (expected probability of a correct label) and spam scores (0: every row of the confusion matrix alike):\n")
	fmt.Fprintf(w, "  %-20s %6s  %-23s %6s  %s\n", "rater", "labels", "accuracy (95% interval)", "spam", "most confused")
	for r := range shownRows(w, res.Raters, top) {
		acc, spam, conf := "", "", ""
		if r.Accuracy != nil {
			acc = fmt.Sprintf("%5.3f (%5.3f, %5.3f)", r.Accuracy.Mean, r.Accuracy.Q025, r.Accuracy.Q975)
		}
		if r.SpamScore != nil {
			spam = fmt.Sprintf("%6.3f", *r.SpamScore)
		}
		if r.MostConfused != nil {
			conf = fmt.Sprintf("%s labelled %s (%.2f)", r.MostConfused.True, r.MostConfused.Label, r.MostConfused.Prob)
		}
		if r.Spammer {
			conf += "  SPAMMER"
		}
		if r.Model {
			conf += "  MODEL"
		}
		if r.Community > 0 {
			conf += fmt.Sprintf("  community %d", r.Community)
		}
		fmt.Fprintf(w, "  %-20s %6d  %-23s %6s  %s\n", clip(r.ID, 20), r.NLabels, acc, spam, conf)
	}
}
