package raters

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Consensus is what an aggregator makes of the ratings: one answer per item
// and one quality figure per rater. Every aggregator (majority vote, mean,
// median, Dawid-Skene, one-coin Dawid-Skene) fills the same shape so that
// reports can put them side by side, and beside the models' consensus.
type Consensus struct {
	// Method names the aggregator: "majority", "mean", "median",
	// "dawid_skene", "one_coin", "wawa", "glad", "mace",
	// "zero_based_skill", "kos", "mmsr", "gold_majority" or
	// "prob_majority".
	Method string `json:"method"`
	// Items holds the consensus of each item, in table order.
	Items []ItemConsensus `json:"items"`
	// Raters holds each rater's quality against the consensus, in table
	// order.
	Raters []RaterQuality `json:"raters"`
	// Priors are the estimated class proportions (Dawid-Skene), or the
	// proportions of the consensus classes.
	Priors []float64 `json:"priors,omitempty"`
	// Ties counts the items whose majority vote was a tie.
	Ties int `json:"ties,omitempty"`
	// Fit holds the convergence diagnostics of iterative aggregators.
	Fit *EMDiagnostics `json:"fit,omitempty"`
}

// AggregatorNames lists the Methods of the aggregators in the order reports
// show them: the categorical ones from the simplest, then the continuous
// ones.
func AggregatorNames() []string {
	return []string{"majority", "dawid_skene", "one_coin", "wawa", "glad", "mace", "zero_based_skill", "kos", "mmsr", "gold_majority", "prob_majority", "mean", "median"}
}

// ItemConsensus is an aggregator's answer for one item.
type ItemConsensus struct {
	// ID and Label name the item and its consensus class when known
	// (Analyze fills them from Options).
	ID    string `json:"id,omitempty"`
	Label string `json:"label,omitempty"`
	// Class is the consensus category, -1 when there is none (continuous
	// data, or an item without ratings).
	Class int `json:"class"`
	// Score is the numeric consensus: the mean or median rating, or for
	// categorical aggregators the expected category value under Probs.
	Score float64 `json:"score"`
	// Probs are the class probabilities where the aggregator has them
	// (vote shares for majority vote, posteriors for Dawid-Skene).
	Probs []float64 `json:"probs,omitempty"`
	// Tie reports a majority vote decided by the tie-break rule, and Tied
	// lists the tied classes.
	Tie  bool  `json:"tie,omitempty"`
	Tied []int `json:"tied,omitempty"`
	// N is the number of ratings of the item.
	N int `json:"n"`
	// Easiness is GLAD's β_i > 0, the item's inverse difficulty (Whitehill
	// et al. 2009): the larger, the more likely every rater labels it
	// correctly. It is 0 for the other aggregators and for GLAD's items
	// without labels.
	Easiness float64 `json:"easiness,omitempty"`
}

// RaterQuality is one rater's quality against a consensus.
type RaterQuality struct {
	// ID names the rater when known (Analyze fills it from Options).
	ID string `json:"id,omitempty"`
	// N is the number of the rater's ratings.
	N int `json:"n"`
	// Accuracy is the share of the rater's ratings equal to the consensus
	// class (categorical data); for Dawid-Skene the model's probability of
	// a correct label, Σ_k p_k π_kk; for one-coin Dawid-Skene the rater's
	// accuracy parameter.
	Accuracy float64 `json:"accuracy"`
	// MAE and Bias are the mean absolute and the mean signed difference
	// between the rater's ratings and the item's consensus score.
	MAE  float64 `json:"mae"`
	Bias float64 `json:"bias"`
	// Confusion[k][l] is the probability that the rater says l when the
	// consensus is k: the model's estimate for Dawid-Skene, the empirical
	// row-normalised table against the consensus class otherwise (rows of
	// classes that never were the consensus of an item the rater rated are
	// zero).
	Confusion [][]float64 `json:"confusion,omitempty"`
	// Skill is the aggregator's own quality parameter of the rater, and
	// SkillKind names it: "weight" for Wawa (the rater's accuracy against
	// the majority vote, its vote's weight), "ability" for GLAD (α_j, on
	// the logit scale: 0 is guessing, negative adversarial), "competence"
	// for MACE (θ_j, the probability that the rater does not spam). Other
	// aggregators leave both empty and Skill is then meaningless.
	Skill     float64 `json:"skill,omitempty"`
	SkillKind string  `json:"skill_kind,omitempty"`
}

// Modes returns the classes with the most votes, lowest first, counts[k]
// being the votes for class k; nil when no class has a vote. One class is a
// clear majority (plurality), more a tie that the caller breaks by its own
// rule (MajorityVote's, or none).
func Modes(counts []int) []int {
	best := 0
	for _, x := range counts {
		best = max(best, x)
	}
	if best == 0 {
		return nil
	}
	var tied []int
	for k, x := range counts {
		if x == best {
			tied = append(tied, k)
		}
	}
	return tied
}

// Plurality returns the labels with the most votes among labels, by Modes:
// counting only the labels that are levels, in the order of levels, or
// when levels is nil every label, in sorted order. It is nil when no label
// counts.
func Plurality(labels []string, levels []string) []string {
	if levels == nil {
		levels = append([]string(nil), labels...)
		sort.Strings(levels)
		levels = slices.Compact(levels)
	}
	index := make(map[string]int, len(levels))
	for k, l := range levels {
		index[l] = k
	}
	counts := make([]int, len(levels))
	for _, l := range labels {
		if k, ok := index[l]; ok {
			counts[k]++
		}
	}
	var out []string
	for _, k := range Modes(counts) {
		out = append(out, levels[k])
	}
	return out
}

// TieRule says how majority vote and Wawa break a tie between the classes
// with the most votes on an item.
type TieRule int

const (
	// TieFrequent gives the tie to the tied class with the most labels in
	// the whole set, then the lowest category index (concord's default).
	TieFrequent TieRule = iota
	// TieFirst gives it to the tied class that comes first in the tie
	// order (MVOptions.TieOrder; by default the category order), as
	// crowd-kit does: its MajorityVote and Wawa take pandas' idxmax over
	// the classes in sorted order of the label values.
	TieFirst
)

var tieNames = [...]string{"frequent", "first"}

func (t TieRule) String() string { return enumName(tieNames[:], t, "TieRule") }

// ParseTieRule parses "frequent" or "first".
func ParseTieRule(s string) (TieRule, error) {
	if t, ok := enumValue[TieRule](tieNames[:], s); ok {
		return t, nil
	}
	return 0, fmt.Errorf("unknown tie rule %q (frequent or first)", s)
}

// MVOptions control MajorityVoteWith. The zero value is MajorityVote's
// rule.
type MVOptions struct {
	// Ties is the tie rule.
	Ties TieRule
	// TieOrder lists the categories in the order TieFirst prefers them
	// (a permutation of 0..K-1); nil means 0, 1, ..., K-1.
	TieOrder []int
}

// breakTie sets the class of item it to the first of the tied most
// frequent classes with the highest priority prio (tiePriority), and marks
// the tie in it and c when several are tied.
func (c *Consensus) breakTie(it *ItemConsensus, tied, prio []int) {
	win := tied[0]
	for _, k := range tied[1:] {
		if prio[k] > prio[win] {
			win = k
		}
	}
	it.Class = win
	if len(tied) > 1 {
		it.Tie, it.Tied = true, tied
		c.Ties++
	}
}

// tiePriority returns, per class, the number the tie-breaking argmax
// prefers larger: the class totals (TieFrequent), or K minus the class's
// place in the tie order (TieFirst).
func tiePriority(rule TieRule, order []int, total []int) []int {
	if rule == TieFrequent {
		return total
	}
	k := len(total)
	if order != nil && len(order) != k {
		panic("raters: len(TieOrder) != K")
	}
	p := make([]int, k)
	seen := make([]bool, k)
	for x := 0; x < k; x++ {
		c := x
		if order != nil {
			c = order[x]
		}
		if c < 0 || c >= k || seen[c] {
			panic("raters: TieOrder is not a permutation of the categories")
		}
		seen[c] = true
		p[c] = k - x
	}
	return p
}

// MajorityVote returns each item's most frequent rating, counting every
// label (a rater's repeated labels of an item each count). Probs are the
// vote shares and Score their expected category value. Ties are broken
// deterministically: among the classes with the most votes on an item, the
// one with the most ratings in the whole set wins, and among those the
// lowest category index; the item's Tie is set, Tied lists the candidates
// and Consensus.Ties counts such items. It is MajorityVoteWith with the
// zero MVOptions.
func MajorityVote(r *Ratings) *Consensus {
	return MajorityVoteWith(r, MVOptions{})
}

// MajorityVoteWith is MajorityVote with o's tie rule.
func MajorityVoteWith(r *Ratings, o MVOptions) *Consensus {
	r.check()
	if r.K == 0 {
		panic("raters: MajorityVote needs categorical ratings")
	}
	total := make([]int, r.K)
	for _, v := range r.val {
		total[int(v)]++
	}
	prio := tiePriority(o.Ties, o.TieOrder, total)
	start, order := r.byItem()
	c := &Consensus{Method: "majority", Items: make([]ItemConsensus, r.Items)}
	counts := make([]int, r.K)
	for i := 0; i < r.Items; i++ {
		for k := range counts {
			counts[k] = 0
		}
		n := 0
		for _, x := range order[start[i]:start[i+1]] {
			counts[int(r.val[x])]++
			n++
		}
		it := ItemConsensus{Class: -1, Score: math.NaN(), N: n}
		if n > 0 {
			tied := Modes(counts)
			c.breakTie(&it, tied, prio)
			it.Probs = make([]float64, r.K)
			for k, x := range counts {
				it.Probs[k] = float64(x) / float64(n)
			}
			it.Score = expectedValue(r, it.Probs)
		}
		c.Items[i] = it
	}
	c.finish(r)
	return c
}

func expectedValue(r *Ratings, probs []float64) float64 {
	s := 0.0
	for k, p := range probs {
		s += p * r.Value(k)
	}
	return s
}

// nearestClass returns the category whose value is nearest to v (the lower
// one on a tie).
func nearestClass(r *Ratings, v float64) int {
	best, bd := -1, math.Inf(1)
	for k := 0; k < r.K; k++ {
		if d := math.Abs(r.Value(k) - v); d < bd {
			best, bd = k, d
		}
	}
	return best
}

// MeanRating returns each item's mean rating (category values for
// categorical data); the consensus class is the category nearest to it.
func MeanRating(r *Ratings) *Consensus {
	return centre(r, "mean", func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	})
}

// MedianRating returns each item's median rating (the mean of the two middle
// ratings for an even count, as R's median); the consensus class is the
// category nearest to it (the lower one when it falls half-way).
func MedianRating(r *Ratings) *Consensus {
	return centre(r, "median", func(v []float64) float64 {
		sort.Float64s(v)
		n := len(v)
		if n%2 == 1 {
			return v[n/2]
		}
		return (v[n/2-1] + v[n/2]) / 2
	})
}

func centre(r *Ratings, method string, f func([]float64) float64) *Consensus {
	r.check()
	c := &Consensus{Method: method, Items: make([]ItemConsensus, r.Items)}
	var vals []float64
	start, order := r.byItem()
	for i := 0; i < r.Items; i++ {
		vals = vals[:0]
		for _, x := range order[start[i]:start[i+1]] {
			v := r.val[x]
			if r.K > 0 {
				v = r.Value(int(v))
			}
			vals = append(vals, v)
		}
		it := ItemConsensus{Class: -1, Score: math.NaN(), N: len(vals)}
		if len(vals) > 0 {
			it.Score = f(vals)
			if r.K > 0 {
				it.Class = nearestClass(r, it.Score)
			}
		}
		c.Items[i] = it
	}
	c.finish(r)
	return c
}

// finish fills the rater qualities (and class proportions) against the
// item consensus.
func (c *Consensus) finish(r *Ratings) {
	c.Raters = make([]RaterQuality, r.Raters)
	k := r.K
	start, order := r.byRater()
	for j := 0; j < r.Raters; j++ {
		q := RaterQuality{Accuracy: math.NaN(), MAE: math.NaN(), Bias: math.NaN()}
		var conf [][]float64
		if k > 0 {
			conf = make([][]float64, k)
			for x := range conf {
				conf[x] = make([]float64, k)
			}
		}
		hits, nc := 0, 0
		var ad, sd float64
		nd := 0
		for _, lx := range order[start[j]:start[j+1]] {
			v := r.val[lx]
			q.N++
			it := c.Items[r.item[lx]]
			x := v
			if k > 0 {
				x = r.Value(int(v))
				if it.Class >= 0 {
					nc++
					if int(v) == it.Class {
						hits++
					}
					conf[it.Class][int(v)]++
				}
			}
			if !math.IsNaN(it.Score) {
				ad += math.Abs(x - it.Score)
				sd += x - it.Score
				nd++
			}
		}
		if nc > 0 {
			q.Accuracy = float64(hits) / float64(nc)
			for _, row := range conf {
				normalize(row)
			}
			q.Confusion = conf
		}
		if nd > 0 {
			q.MAE, q.Bias = ad/float64(nd), sd/float64(nd)
		}
		c.Raters[j] = q
	}
	if k > 0 && c.Priors == nil {
		c.Priors = make([]float64, k)
		n := 0.0
		for _, it := range c.Items {
			if it.Class >= 0 {
				c.Priors[it.Class]++
				n++
			}
		}
		if n > 0 {
			for x := range c.Priors {
				c.Priors[x] /= n
			}
		}
	}
}
