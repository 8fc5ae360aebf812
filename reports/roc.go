package reports

import (
	"maps"
	"math"
	"slices"
	"sort"

	"concord/raters"
)

// rocCurve is an ROC curve with its summary.
type rocCurve struct {
	ROC
	// FPR and TPR are the curve's points, from (0, 0) to (1, 1).
	FPR, TPR []float64
}

// rocCurves returns the ROC curves of a report whose scheme has two levels:
// the model's probability of the positive class against the gold labels
// when at least one item of each class has one, else against the majority
// vote of the raters' labels (items whose vote is tied are left out). With
// gold labels the baseline aggregators are scored too (by their numeric
// consensus, which increases with their probability of the second level).
// It returns nil for other schemes and when the reference has a single
// class.
func rocCurves(rep *Report) []rocCurve {
	if len(rep.Levels) != 2 {
		return nil
	}
	codes := []string{rep.Levels[0].Code, rep.Levels[1].Code}
	pos := positiveIndex(rep, codes)
	posCode := codes[pos]

	// Reference labels.
	ref := make([]int, len(rep.Items)) // 1 positive, 0 negative, -1 none
	reference := "gold"
	np, nn := 0, 0
	for i := range rep.Items {
		ref[i] = -1
		switch g := rep.Items[i].Gold; {
		case g == "":
		case g == posCode:
			ref[i] = 1
			np++
		case g == codes[1-pos]:
			ref[i] = 0
			nn++
		}
	}
	if np == 0 || nn == 0 {
		reference = "majority"
		np, nn = 0, 0
		for i := range rep.Items {
			ref[i] = -1
			won := raters.Plurality(slices.Collect(maps.Values(rep.Items[i].Labels)), codes)
			switch {
			case len(won) != 1:
			case won[0] == posCode:
				ref[i] = 1
				np++
			default:
				ref[i] = 0
				nn++
			}
		}
	}
	if np == 0 || nn == 0 {
		return nil
	}

	type scorer struct {
		name  string
		score func(it *Item) (float64, bool)
	}
	scorers := []scorer{{"model", func(it *Item) (float64, bool) {
		if rep.Kind == KindRanking {
			// The AUC model's score: higher is more likely positive.
			if it.Score == nil || !it.Score.Mean.Valid() {
				return 0, false
			}
			return float64(it.Score.Mean), true
		}
		if len(it.Probs) != 2 || !it.Probs[pos].Valid() {
			return 0, false
		}
		return float64(it.Probs[pos]), true
	}}}
	if reference == "gold" && rep.Agreement != nil {
		sign := 1.0
		if pos == 0 {
			sign = -1
		}
		for _, a := range rep.Agreement.Aggregators {
			name := a.Name
			scorers = append(scorers, scorer{name, func(it *Item) (float64, bool) {
				bl, ok := it.Baselines[name]
				if !ok || !bl.Score.Valid() {
					return 0, false
				}
				return sign * float64(bl.Score), true
			}})
		}
	}
	var out []rocCurve
	for _, sc := range scorers {
		var s []float64
		var y []bool
		for i := range rep.Items {
			if ref[i] < 0 {
				continue
			}
			v, ok := sc.score(&rep.Items[i])
			if !ok {
				continue
			}
			s = append(s, v)
			y = append(y, ref[i] == 1)
		}
		c := roc(s, y)
		if c == nil {
			continue
		}
		c.Scorer, c.Reference, c.Positive = sc.name, reference, posCode
		out = append(out, *c)
	}
	return out
}

// roc returns the ROC curve of scores s for labels y (true = positive),
// with tied scores forming one step, and its area by the trapezoid rule
// (equal to the Mann-Whitney probability that a positive outscores a
// negative, ties counting one half). Nil when a class is missing.
func roc(s []float64, y []bool) *rocCurve {
	idx := make([]int, len(s))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s[idx[a]] > s[idx[b]] })
	var np, nn int
	for _, v := range y {
		if v {
			np++
		} else {
			nn++
		}
	}
	if np == 0 || nn == 0 {
		return nil
	}
	c := &rocCurve{FPR: []float64{0}, TPR: []float64{0}}
	c.N, c.Positives = len(s), np
	tp, fp := 0, 0
	var auc float64
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && s[idx[j]] == s[idx[i]] {
			if y[idx[j]] {
				tp++
			} else {
				fp++
			}
			j++
		}
		x0, y0 := c.FPR[len(c.FPR)-1], c.TPR[len(c.TPR)-1]
		x1, y1 := float64(fp)/float64(nn), float64(tp)/float64(np)
		auc += (x1 - x0) * (y0 + y1) / 2
		c.FPR = append(c.FPR, x1)
		c.TPR = append(c.TPR, y1)
		i = j
	}
	c.AUC = Number(math.Min(math.Max(auc, 0), 1))
	return c
}
