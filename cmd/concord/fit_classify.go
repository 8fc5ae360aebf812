package main

import (
	"fmt"
	"io"
	"sort"

	"concord/multirater"
)

// printClassSummary prints the classification part of the fit summary: the
// consensus class counts, the least certain items and the raters'
// precisions with their agreement with the consensus.
func printClassSummary(w io.Writer, res *multirater.FitResult, top int) {
	d := res.Diagnostics
	k := len(res.Levels)
	counts := make([]int, k)
	probSum := make([]float64, k)
	predicted := 0
	idx := make(map[string]int, k)
	for c, l := range res.Levels {
		idx[l] = c
	}
	for _, it := range res.Items {
		if it.NLabels == 0 {
			predicted++
		}
		if c, ok := idx[it.Class]; ok {
			counts[c]++
		}
		for c, l := range res.Levels {
			probSum[c] += it.ClassProbs[l]
		}
	}
	fmt.Fprintf(w, "\nConsensus classes of %d items (%d without labels, predicted):\n", len(res.Items), predicted)
	fmt.Fprintf(w, "  %-20s %7s %7s %15s\n", "class", "items", "share", "expected share")
	for c, l := range res.Levels {
		fmt.Fprintf(w, "  %-20s %7d %6.1f%% %14.1f%%\n", clip(l, 20), counts[c], 100*float64(counts[c])/float64(max(len(res.Items), 1)), 100*probSum[c]/float64(max(len(res.Items), 1)))
	}
	items := append([]multirater.ItemResult(nil), res.Items...)
	ent := func(it multirater.ItemResult) float64 {
		if it.Entropy == nil {
			return 0
		}
		return *it.Entropy
	}
	sort.SliceStable(items, func(i, j int) bool { return ent(items[i]) > ent(items[j]) })
	top = min(top, len(items))
	if top > 0 {
		fmt.Fprintf(w, "\nLeast certain %d items (highest entropy of the class distribution):\n", top)
		fmt.Fprintf(w, "  %-22s %-12s %6s %8s  %s\n", "item", "class", "prob", "entropy", "labels")
		for _, it := range items[:top] {
			fmt.Fprintf(w, "  %-22s %-12s %6.3f %8.3f  %s\n", clip(it.ID, 22), clip(it.Class, 12), it.ClassProbs[it.Class], ent(it), labelList(it, res.Raters))
		}
	}
	fmt.Fprintf(w, "\nRater precisions (higher = more consistent with the consensus):\n")
	fmt.Fprintf(w, "  %-20s %6s  %-24s %9s %13s\n", "rater", "labels", "precision (95% interval)", "agreement", "mean log pred")
	raters := append([]multirater.RaterResult(nil), res.Raters...)
	sort.SliceStable(raters, func(i, j int) bool { return raters[i].Precision.Mean > raters[j].Precision.Mean })
	for i, r := range raters {
		if skip := elideRow(w, i, len(raters), top); skip {
			continue
		}
		note := ""
		switch {
		case res.Model.Precisions == "fixed" || res.Model.Precisions == "fixed-full":
			note = " (fixed)"
		case r.Reference:
			note = " (reference, fixed)"
		}
		agree := 0.0
		if r.ConsensusAgreement != nil {
			agree = *r.ConsensusAgreement
		}
		fmt.Fprintf(w, "  %-20s %6d  %6.2f (%5.2f, %5.2f)     %8.1f%% %13.3f%s\n", clip(r.ID, 20), r.NLabels, r.Precision.Mean, r.Precision.Q025, r.Precision.Q975, 100*agree, r.MeanLogPred, note)
	}
	fmt.Fprintf(w, "\n%d surprising label(s) with posterior predictive probability below %g (\"flags\" in the result).\n", len(res.Flags), res.Model.FlagThreshold)
	if !d.Converged {
		fmt.Fprintf(w, "WARNING: NOT converged (see above).\n")
	}
}
