package auc

import (
	"math/rand/v2"
	"slices"

	"concord/multirater/ep"
	"concord/multirater/lik"
)

// allPairsUpTo is the number of pair sites up to which DefaultPairs keeps
// every (positive, negative) pair: 2^16, every pair of a balanced set of
// about 510 items.
const allPairsUpTo = 1 << 16

// pairsPerItem is DefaultPairs' pair sites per item beyond allPairsUpTo
// pairs.
const pairsPerItem = 40

// DefaultPairs returns the default bound on EP's pair sites for n fitted
// items (Options.Pairs 0): max(2^16, 40 n). A set with at most that many
// (positive, negative) pairs keeps every pair (the exact empirical AUC
// risk of Ridgway et al. sec. 2.1; every set of up to about 510 items);
// a larger one gets a seeded sample of about that many (SamplePairs):
// 65,536 pairs at 1,000 items (of up to 250,000), 640,000 at 16,000 (of
// up to 64 million), every item in at least 40 of them.
func DefaultPairs(n int) int { return max(allPairsUpTo, pairsPerItem*n) }

// pairBudget is the bound on the pair sites of n fitted items that opts
// sets (Options.Pairs): DefaultPairs(n) for 0, none (-1) for a negative
// value.
func pairBudget(pairs, n int) int {
	switch {
	case pairs == 0:
		return DefaultPairs(n)
	case pairs < 0:
		return -1
	}
	return pairs
}

// SamplePairs returns the (positive, negative) item pairs that EP's sites
// are on: every pair pos[a], neg[b] in row-major order when there are at
// most budget of them (or budget < 0), and all is true; otherwise a
// stratified sample, so that every item is in O(budget/N) pairs, not only
// the items of the larger class: each positive item is paired with
// ceil(budget / (2 n+)) distinct negatives drawn uniformly (at most n-),
// each negative item with ceil(budget / (2 n-)) distinct positives, and
// the union of these pairs (about budget of them; fewer where both draws
// meet) is returned sorted by positive, then negative. The sampled risk
// (1/M) sum over the M sampled pairs of 1{s_i < s_j} is an unbiased
// estimate of the empirical AUC risk R_n of Ridgway et al. sec. 2.1 (an
// incomplete U-statistic, Janson 1984), so each sampled site carries
// gamma/M where the complete one carries gamma/(n+ n-). rng draws the
// sample (O(budget log budget)).
func SamplePairs(pos, neg []int, budget int, rng *rand.Rand) (pairs [][2]int, all bool) {
	np, nn := len(pos), len(neg)
	if budget < 0 || np*nn <= budget {
		pairs = make([][2]int, 0, np*nn)
		for _, i := range pos {
			for _, j := range neg {
				pairs = append(pairs, [2]int{i, j})
			}
		}
		return pairs, true
	}
	kp := min(nn, (budget+2*np-1)/(2*np))
	kn := min(np, (budget+2*nn-1)/(2*nn))
	keys := make([]uint64, 0, np*kp+nn*kn)
	// draw appends k distinct indices of [0, len(perm)) to dst by a
	// partial Fisher-Yates shuffle of perm, which stays a permutation.
	draw := func(perm []int, k int, key func(t int) uint64) {
		for t := 0; t < k; t++ {
			u := t + rng.IntN(len(perm)-t)
			perm[t], perm[u] = perm[u], perm[t]
			keys = append(keys, key(perm[t]))
		}
	}
	permN, permP := indices(nn), indices(np)
	for a := range pos {
		draw(permN, kp, func(b int) uint64 { return uint64(a)*uint64(nn) + uint64(b) })
	}
	for b := range neg {
		draw(permP, kn, func(a int) uint64 { return uint64(a)*uint64(nn) + uint64(b) })
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	pairs = make([][2]int, len(keys))
	for t, k := range keys {
		pairs[t] = [2]int{pos[k/uint64(nn)], neg[k%uint64(nn)]}
	}
	return pairs, false
}

// indices returns 0, 1, ..., n-1.
func indices(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// pairStream is the stream of the pair sample's generator
// (rand.NewPCG(Options.Seed, pairStream + model.stream)).
const pairStream = 0x70616972

// pairSites returns EP's pair sites of the model's items with labels y at
// gamma: the pairs of SamplePairs (every pair, or Options.Pairs' sample,
// drawn once per model from its own generator seeded by Options.Seed and
// the model's stream, so that the sample does not depend on gamma, on the
// candidate kernel or on the order of the fits), each with the AUC step
// lik.AUCStep(gamma / M) for M sites.
func (m *model) pairSites(y []bool, gamma float64, o *Options) []ep.PairSite {
	if m.pairs == nil {
		pos, neg := splitClasses(y)
		rng := rand.New(rand.NewPCG(o.Seed, pairStream+m.stream))
		m.pairs, m.allPairs = SamplePairs(pos, neg, pairBudget(o.Pairs, len(y)), rng)
	}
	l := lik.NewAUCStep(gamma / float64(len(m.pairs)))
	sites := make([]ep.PairSite, len(m.pairs))
	for k, p := range m.pairs {
		sites[k] = ep.PairSite{I: p[0], J: p[1], Lik: l}
	}
	return sites
}
