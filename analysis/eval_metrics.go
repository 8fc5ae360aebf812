package analysis

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"concord/annotations"
	"concord/multirater"
	"concord/raters"
)

// minPredProb floors predictive probabilities in MeanLogPred: the stored
// distributions are rounded to 6 decimals.
const minPredProb = 1e-6

// QuadraticKappa returns Cohen's (1968) weighted kappa with quadratic
// weights between two gradings a and b of the same items on k ordered
// levels (level indices 0..k-1),
//
//	kappa = 1 - sum_ij (i-j)^2 O_ij / sum_ij (i-j)^2 E_ij,
//
// O the k×k table of observed pairs and E = r c'/n the table expected from
// the margins: scikit-learn's cohen_kappa_score(a, b, weights="quadratic",
// labels=range(k)) (which, without labels, weighs the distances between the
// levels that occur rather than between all k levels). It is computed by
// raters.CohenKappa. The second result is false when kappa is undefined
// (no items, or both gradings constant at the same level).
func QuadraticKappa(a, b []int, k int) (float64, bool) {
	if len(a) != len(b) {
		panic("analysis: QuadraticKappa: gradings of different lengths")
	}
	if len(a) == 0 {
		return math.NaN(), false
	}
	r := raters.NewRatings(len(a), 2, k)
	for i := range a {
		r.Add(i, 0, float64(a[i]))
		r.Add(i, 1, float64(b[i]))
	}
	e, err := raters.CohenKappa(r, 0, 1, raters.CoefOptions{Weights: raters.QuadraticWeights})
	if err != nil || math.IsNaN(e.Value) {
		return math.NaN(), false
	}
	return e.Value, true
}

// ordinalMetrics computes the ordinal metrics of one model's held-out
// predictions (see EvalMetrics).
func ordinalMetrics(ds *annotations.Dataset, ids []string, byItem map[string][]annotations.Label, preds map[string]multirater.ItemResult) EvalMetrics {
	k := ds.Scheme.K()
	codes := ds.Scheme.Codes()
	var m EvalMetrics
	perRater := map[string][2][]int{}
	var meanT, predG []int
	var absErr, logSum float64
	nLog := 0
	for _, id := range ids {
		p := preds[id]
		g := medianGrade(p.GradeProbs, codes)
		sum, n := 0, 0
		for _, l := range byItem[id] {
			t, ok := ds.Scheme.Index(l.Value)
			if !ok {
				continue
			}
			pr := perRater[l.Rater]
			pr[0] = append(pr[0], t)
			pr[1] = append(pr[1], g)
			perRater[l.Rater] = pr
			sum += t
			n++
			prob := p.GradeProbs[codes[t]]
			if rp, ok := p.RaterGradeProbs[l.Rater]; ok && len(rp) == k {
				prob = rp[t]
			}
			logSum += math.Log(math.Max(prob, minPredProb))
			nLog++
		}
		if n == 0 {
			continue
		}
		mean := float64(sum) / float64(n)
		meanT = append(meanT, int(math.RoundToEven(mean)))
		predG = append(predG, g)
		absErr += math.Abs(float64(g) - mean)
	}
	m.QWKVsRater = map[string]float64{}
	for r, pr := range perRater {
		if v, ok := QuadraticKappa(pr[0], pr[1], k); ok {
			m.QWKVsRater[r] = v
		}
	}
	if v, ok := QuadraticKappa(meanT, predG, k); ok {
		m.QWKVsMean = &v
	}
	if len(predG) > 0 {
		v := absErr / float64(len(predG))
		m.MAEVsMean = &v
	}
	if nLog > 0 {
		v := logSum / float64(nLog)
		m.MeanLogPred = &v
	}
	return m
}

// medianGrade returns the index of the median level of a grade
// distribution: the lowest level whose cumulative probability reaches 1/2.
func medianGrade(probs map[string]float64, codes []string) int {
	c := 0.0
	for i, code := range codes {
		c += probs[code]
		if c >= 0.5 {
			return i
		}
	}
	return len(codes) - 1
}

// nominalMetrics computes the nominal metrics of one model's held-out
// predictions (see EvalMetrics). levels are the fit's level codes, the order
// of the predictions' per-rater arrays (FitResult.Levels: the scheme's
// order for most models, [negative, positive] for the robust one); nil
// means the scheme's order.
func nominalMetrics(ds *annotations.Dataset, ids []string, byItem map[string][]annotations.Label, itemByID map[string]annotations.Item, majority map[string]string, preds map[string]multirater.ItemResult, levels []string) EvalMetrics {
	k := ds.Scheme.K()
	index := func(code string) (int, bool) {
		if levels == nil {
			return ds.Scheme.Index(code)
		}
		i := slices.Index(levels, code)
		return i, i >= 0
	}
	var m EvalMetrics
	var nMaj, hitMaj, nGold, hitGold, nLog int
	var logSum float64
	for _, id := range ids {
		p := preds[id]
		if maj, ok := majority[id]; ok {
			nMaj++
			if p.Class == maj {
				hitMaj++
			}
		}
		if it, ok := itemByID[id]; ok && it.Gold != "" {
			if gold, err := ds.Scheme.Normalize(it.Gold); err == nil {
				nGold++
				if p.Class == gold {
					hitGold++
				}
			}
		}
		for _, l := range byItem[id] {
			t, ok := index(l.Value)
			if !ok {
				continue
			}
			prob := p.ClassProbs[l.Value]
			if rp, ok := p.RaterClassProbs[l.Rater]; ok && len(rp) == k {
				prob = rp[t]
			}
			logSum += math.Log(math.Max(prob, minPredProb))
			nLog++
		}
	}
	if nMaj > 0 {
		v := float64(hitMaj) / float64(nMaj)
		m.AccuracyVsMajority = &v
	}
	if nGold > 0 {
		v := float64(hitGold) / float64(nGold)
		m.AccuracyVsGold = &v
	}
	if nLog > 0 {
		v := logSum / float64(nLog)
		m.MeanLogPred = &v
	}
	return m
}

// PairedComparison compares the accuracy of the multirater model and a
// baseline on the same held-out items: Items is the number of items with
// the reference label (Metric accuracy_vs_majority: a unique majority
// class; accuracy_vs_gold: a gold label), MultiraterOnly and BaselineOnly
// count the items only one of the two models predicts correctly, and
// PValue is the exact two-sided McNemar test of equal accuracy: twice the
// Binomial(MultiraterOnly + BaselineOnly, 1/2) probability of a split at
// least as uneven, at most 1 (Rogers et al. compare their models with a
// paired test, sec. 4).
type PairedComparison struct {
	Baseline       string  `json:"baseline"`
	Metric         string  `json:"metric"`
	Items          int     `json:"items"`
	MultiraterOnly int     `json:"multirater_only"`
	BaselineOnly   int     `json:"baseline_only"`
	PValue         float64 `json:"p_value"`
}

// pairedAccuracy compares the multirater predictions a with the baseline's
// b against the majority and, where the items have one, the gold label.
func pairedAccuracy(ds *annotations.Dataset, ids []string, itemByID map[string]annotations.Item, majority map[string]string, a, b map[string]multirater.ItemResult, name string) []PairedComparison {
	maj := PairedComparison{Baseline: name, Metric: "accuracy_vs_majority"}
	gold := PairedComparison{Baseline: name, Metric: "accuracy_vs_gold"}
	count := func(c *PairedComparison, id, want string) {
		c.Items++
		ra, rb := a[id].Class == want, b[id].Class == want
		switch {
		case ra && !rb:
			c.MultiraterOnly++
		case rb && !ra:
			c.BaselineOnly++
		}
	}
	for _, id := range ids {
		if m, ok := majority[id]; ok {
			count(&maj, id, m)
		}
		if it, ok := itemByID[id]; ok && it.Gold != "" {
			if g, err := ds.Scheme.Normalize(it.Gold); err == nil {
				count(&gold, id, g)
			}
		}
	}
	var out []PairedComparison
	for _, c := range []PairedComparison{maj, gold} {
		if c.Items > 0 {
			c.PValue = mcNemarExact(c.MultiraterOnly, c.BaselineOnly)
			out = append(out, c)
		}
	}
	return out
}

// mcNemarExact returns the exact two-sided McNemar p-value for b and c
// discordant pairs: min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2)
// (scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue; 1 when b + c = 0).
func mcNemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	d := distuv.Binomial{N: float64(n), P: 0.5}
	return math.Min(1, 2*d.CDF(float64(min(b, c))))
}
