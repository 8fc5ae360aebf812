package main

import (
	"fmt"
	"io"
	"sort"

	"concord/multirater"
)

// printRankingSummary prints the auc model's part of the fit summary:
// gamma, the training AUC, the coefficients and the top of the ranking.
func printRankingSummary(w io.Writer, res *multirater.FitResult, top int) {
	a := res.AUC
	if a == nil {
		return
	}
	how := "fixed"
	if a.GammaByCV {
		how = "chosen by cross-validation"
	}
	fmt.Fprintf(w, "\n%s scores, gamma %g (%s); %d fitted items, %d pairs; positive class %q.\n", a.Scores, a.Gamma, how, a.Fitted, a.Pairs, a.Positive)
	if len(a.CV) > 0 {
		fmt.Fprintf(w, "Cross-validated AUC by gamma:")
		for _, c := range a.CV {
			fmt.Fprintf(w, " %g: %.4f (%.4f)", c.Gamma, c.AUC, c.SE)
		}
		fmt.Fprintln(w)
	}
	for _, k := range a.KernelEvidence {
		mark := ""
		if k.Chosen {
			mark = " (used)"
		}
		fmt.Fprintf(w, "Kernel %s: log evidence %.4f%s\n", k.Kernel, k.LogEvidence, mark)
	}
	if res.TrainAUC != nil {
		fmt.Fprintf(w, "Training AUC of the posterior mean scores: %.4f\n", *res.TrainAUC)
	}
	if len(res.Coefficients) > 0 {
		fmt.Fprintf(w, "\nCoefficients (linear scores):\n  %-20s %10s %10s %9s\n", "covariate", "mean", "sd", "inclusion")
		for _, c := range res.Coefficients {
			fmt.Fprintf(w, "  %-20s %10.4f %10.4f %9.3f\n", clip(c.Name, 20), c.Mean, c.SD, c.Inclusion)
		}
	}
	ranked := rankByScore(res.Items)
	top = min(top, len(ranked))
	if top > 0 {
		fmt.Fprintf(w, "\nTop %d of the ranking (of %d items; higher score = more likely positive):\n", top, len(ranked))
		fmt.Fprintf(w, "  %-5s %-22s %10s %8s  %s\n", "rank", "item", "score", "sd", "label")
		for i, it := range ranked[:top] {
			fmt.Fprintf(w, "  %-5d %-22s %10.4f %8.4f  %s\n", i+1, clip(it.ID, 22), it.Score.Mean, it.Score.SD, aucLabel(it, a.Positive, res.Levels))
		}
	}
}

// rankByScore returns the items with a score, highest posterior mean
// first (ties by id).
func rankByScore(items []multirater.ItemResult) []*multirater.ItemResult {
	var out []*multirater.ItemResult
	for i := range items {
		if items[i].Score != nil {
			out = append(out, &items[i])
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score.Mean != out[j].Score.Mean {
			return out[i].Score.Mean > out[j].Score.Mean
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// aucLabel describes an item's label for the auc model: the positive
// class or the other of the levels.
func aucLabel(it *multirater.ItemResult, positive string, levels []string) string {
	switch {
	case it.Positive == nil:
		return "(no majority: predicted)"
	case *it.Positive:
		return positive
	}
	for _, l := range levels {
		if l != positive {
			return l
		}
	}
	return "not " + positive
}
