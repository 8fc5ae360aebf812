package raters

import (
	"context"
	"math"
)

// ProbMajorityVote is the majority vote of labels that carry probabilities
// (a model rater's confidence in its label): each label is the soft vote
// the consensus models read it as, probability p for the class given and
// (1 - p)/(K - 1) for each other class, and a label without one (probs[x]
// = 0, a human's) the hard vote, 1 for its class. An item's class is the
// largest sum of its votes, Probs the sums over the item's labels (each
// label counts, repeats included, as in MajorityVote); a tie is broken by
// o's rule over the classes' hard-vote totals, as MajorityVoteWith breaks
// it. probs[x] is the probability of the label r.Label(x) (len r.Len();
// nil: none, which is MajorityVoteWith's vote). Two votes tie when they
// differ by less than 1e-12 of the item's labels.
//
// A calibrated p = 1/K says nothing, and p = 1 is a human's vote; a
// probability outside [0, 1] is a caller bug and panics.
func ProbMajorityVote(r *Ratings, probs []float64, o MVOptions) *Consensus {
	r.check()
	if r.K < 2 {
		panic("raters: ProbMajorityVote needs categorical ratings of 2 or more classes")
	}
	if probs != nil && len(probs) != r.Len() {
		panic("raters: len(probs) != r.Len()")
	}
	k := r.K
	total := make([]int, k)
	for _, v := range r.val {
		total[int(v)]++
	}
	prio := tiePriority(o.Ties, o.TieOrder, total)
	start, order := r.byItem()
	c := &Consensus{Method: "prob_majority", Items: make([]ItemConsensus, r.Items)}
	votes := make([]float64, k)
	for i := 0; i < r.Items; i++ {
		clear(votes)
		n := 0
		for _, x := range order[start[i]:start[i+1]] {
			y := int(r.val[x])
			p := 0.0
			if probs != nil {
				p = probs[x]
			}
			if !(p >= 0 && p <= 1) {
				panic("raters: a label probability outside [0, 1]")
			}
			if p == 0 {
				p = 1
			}
			rest := (1 - p) / float64(k-1)
			for cl := range votes {
				votes[cl] += rest
			}
			votes[y] += p - rest
			n++
		}
		it := ItemConsensus{Class: -1, Score: math.NaN(), N: n}
		if n > 0 {
			best := 0.0
			for _, v := range votes {
				best = math.Max(best, v)
			}
			tol := 1e-12 * float64(n)
			var tied []int
			for cl, v := range votes {
				if best-v <= tol {
					tied = append(tied, cl)
				}
			}
			c.breakTie(&it, tied, prio)
			it.Probs = make([]float64, k)
			for cl, v := range votes {
				it.Probs[cl] = v / float64(n)
			}
			it.Score = expectedValue(r, it.Probs)
		}
		c.Items[i] = it
	}
	c.finish(r)
	return c
}

// probAggregators are the report's aggregators of this file: the
// probability-weighted majority vote, only when some label carries a
// probability (Options.LabelProbs).
func probAggregators() []aggregatorRun {
	return []aggregatorRun{
		{"prob_majority", "probability-weighted majority vote", func(_ context.Context, in *aggInput) (*Consensus, error) {
			if !anyProb(in.o.LabelProbs) || in.r.K < 2 {
				return nil, nil // no label probabilities: not applicable
			}
			return ProbMajorityVote(in.r, in.o.LabelProbs, MVOptions{Ties: in.o.Ties, TieOrder: in.o.TieOrder}), nil
		}},
	}
}

func anyProb(p []float64) bool {
	for _, v := range p {
		if v > 0 {
			return true
		}
	}
	return false
}
