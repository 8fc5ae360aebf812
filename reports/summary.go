package reports

import (
	"maps"
	"math"
	"slices"
	"sort"

	"concord/annotations"
	"concord/multirater"
	"concord/raters"
)

// SummaryTop is how many items of the consensus ranking FitSummary.Top
// names.
const SummaryTop = 5

// FitSummary is the headline of a fit result: its convergence, its size and
// what it found, by output shape: for scores (ordinal) the items per most
// probable grade and the top of the consensus ranking, for classes
// (classification) the items per consensus class and the mean entropy of
// the items' class distributions. It is the one summary of a fit that
// `concord fit` prints and the API returns (as JSON, the fit's "summary"),
// made without building the report (the dashboard renders from the
// Report); the fields without JSON names are the orderings the CLI renders
// from.
type FitSummary struct {
	Model      string  `json:"model"`
	Kernel     string  `json:"kernel"`
	Precisions string  `json:"precisions,omitempty"`
	Converged  bool    `json:"converged"`
	Verdict    string  `json:"verdict"`
	MaxRhat    Number  `json:"max_rhat"` // null when R-hat is not available (too few draws)
	MinESSBulk float64 `json:"min_ess_bulk"`
	Seconds    float64 `json:"seconds"`
	Items      int     `json:"items"`
	// Predicted counts the items nobody labelled (predicted from the
	// Gaussian process alone).
	Predicted int `json:"predicted_items"`
	Raters    int `json:"raters"`
	Labels    int `json:"labels"`
	Flags     int `json:"flags"`
	// Grades (scores) and Classes (classes) count, for each level in
	// scheme order, the items whose consensus it is and the labels that
	// gave it.
	Grades  []LevelSummary `json:"grades,omitempty"`
	Classes []LevelSummary `json:"classes,omitempty"`
	// Top are the first SummaryTop ranked items of the consensus ranking
	// (scores).
	Top []TopItem `json:"top,omitempty"`
	// MeanEntropy is the mean entropy, in bits, of the items' consensus
	// class distributions (classes; 0 is certain, log2 K uniform).
	MeanEntropy *float64 `json:"mean_entropy,omitempty"`

	// Shape is the fit's output shape (res.Model.Shape()).
	Shape multirater.Output `json:"-"`
	// Ranking is every item by expected rank, items without a rank last
	// (scores; nil for classes). The items are the result's.
	Ranking []*multirater.ItemResult `json:"-"`
	// Uncertain is every item by decreasing entropy of its class
	// distribution, items without one counting as 0 (classes; nil for
	// scores). The items are the result's.
	Uncertain []*multirater.ItemResult `json:"-"`
	// ByPrecision is a copy of the raters, by decreasing posterior mean
	// precision.
	ByPrecision []multirater.RaterResult `json:"-"`
}

// LevelSummary counts one level's consensus items and labels.
type LevelSummary struct {
	Level  string `json:"level"`
	Name   string `json:"name,omitempty"`
	Items  int    `json:"items"`
	Labels int    `json:"labels"`
	// ProbSum is the sum over all items of the level's consensus
	// probability (classes; 0 for scores): the expected number of items of
	// the class.
	ProbSum float64 `json:"-"`
}

// TopItem is an item at the top of the consensus ranking.
type TopItem struct {
	ID    string  `json:"id"`
	Rank  float64 `json:"rank"`
	Score float64 `json:"score"`
	Grade string  `json:"grade,omitempty"`
}

// SummariseFit makes the summary of a fit result; scheme, when not zero,
// names the levels. The summary points into res (Ranking, Uncertain):
// res must not change afterwards.
func SummariseFit(res *multirater.FitResult, scheme annotations.Scheme) *FitSummary {
	d := res.Diagnostics
	sum := &FitSummary{Model: res.Model.Model, Kernel: res.Model.Kernel, Precisions: res.Model.Precisions,
		Converged: d.Converged, Verdict: d.Verdict, MaxRhat: Number(d.MaxRhat), MinESSBulk: d.MinESSBulk, Seconds: d.Seconds,
		Items: len(res.Items), Raters: len(res.Raters), Flags: len(res.Flags), Shape: res.Model.Shape()}
	classes := sum.Shape == multirater.OutputClasses
	levels := make([]LevelSummary, len(res.Levels))
	index := make(map[string]int, len(res.Levels))
	for k, code := range res.Levels {
		levels[k].Level = code
		index[code] = k
		if i, ok := scheme.Index(code); ok {
			levels[k].Name = scheme.Levels[i].Name
		}
	}
	for _, r := range res.Raters {
		sum.Labels += r.NLabels
		for k, n := range r.LevelCounts {
			if k < len(levels) {
				levels[k].Labels += n
			}
		}
	}
	entropy, withEntropy := 0.0, 0
	for i := range res.Items {
		it := &res.Items[i]
		if it.NLabels == 0 {
			sum.Predicted++
		}
		consensus := it.Grade
		if classes {
			consensus = it.Class
		}
		if k, ok := index[consensus]; ok {
			levels[k].Items++
		}
		if it.Entropy != nil {
			entropy += *it.Entropy
			withEntropy++
		}
		if classes {
			for k := range levels {
				levels[k].ProbSum += it.ClassProbs[levels[k].Level]
			}
		}
	}
	sum.ByPrecision = append([]multirater.RaterResult(nil), res.Raters...)
	sort.SliceStable(sum.ByPrecision, func(i, j int) bool {
		return sum.ByPrecision[i].Precision.Mean > sum.ByPrecision[j].Precision.Mean
	})
	if classes {
		sum.Classes = levels
		if withEntropy > 0 {
			m := entropy / float64(withEntropy)
			sum.MeanEntropy = &m
		}
		sum.Uncertain = itemsBy(res, func(a, b *multirater.ItemResult) bool { return entropyOf(a) > entropyOf(b) })
		return sum
	}
	sum.Grades = levels
	sum.Ranking = itemsBy(res, func(a, b *multirater.ItemResult) bool {
		if a.Rank == nil || b.Rank == nil {
			return a.Rank != nil
		}
		return a.Rank.Mean < b.Rank.Mean
	})
	for _, it := range sum.Ranking {
		if len(sum.Top) == SummaryTop || it.Rank == nil {
			break
		}
		top := TopItem{ID: it.ID, Rank: it.Rank.Mean, Grade: it.Grade}
		if it.Score != nil {
			top.Score = it.Score.Mean
		}
		sum.Top = append(sum.Top, top)
	}
	return sum
}

// itemsBy returns pointers to the result's items, stably sorted by less.
func itemsBy(res *multirater.FitResult, less func(a, b *multirater.ItemResult) bool) []*multirater.ItemResult {
	out := make([]*multirater.ItemResult, len(res.Items))
	for i := range res.Items {
		out[i] = &res.Items[i]
	}
	sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

// entropyOf is the item's class entropy, 0 when it has none.
func entropyOf(it *multirater.ItemResult) float64 {
	if it.Entropy == nil {
		return 0
	}
	return *it.Entropy
}

// MajorityGoldAccuracy is the share of the report's items with a gold label
// and labels whose majority vote equals the gold label, a tie counting as
// 1/(number of tied classes); NaN without such items. It is the baseline
// beside Summary.GoldAccuracy.
func MajorityGoldAccuracy(rep *Report) float64 {
	hits, n := 0.0, 0
	for _, it := range rep.Items {
		if it.Gold == "" || len(it.Labels) == 0 {
			continue
		}
		tied := raters.Plurality(slices.Collect(maps.Values(it.Labels)), nil)
		n++
		if slices.Contains(tied, it.Gold) {
			hits += 1 / float64(len(tied))
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return hits / float64(n)
}
