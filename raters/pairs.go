package raters

import (
	"fmt"
	"sort"
)

// Defaults of PairOptions.
const (
	// DefaultMinShared is the fewest items a pair of raters must share for
	// its pairwise statistics when there are more than MaxMatrixRaters
	// raters (with fewer, every pair that shares an item is computed).
	DefaultMinShared = 10
	// DefaultMaxPairs is the most rater pairs whose pairwise statistics
	// are computed and reported by default.
	DefaultMaxPairs = 10_000
	// DefaultPairExtremes is the number of strongest and of weakest pairs
	// the report lists.
	DefaultPairExtremes = 10
	// maxPairWork bounds the co-occurring (item, rater, rater) triples the
	// default pair search counts: past it only the raters with the most
	// labels take part (a fully crossed 3 items × 30,000 raters design has
	// 1.35e9).
	maxPairWork = 50_000_000
)

// PairOptions choose the rater pairs whose Cohen's kappas and pairwise
// agreement are computed. The zero value is the documented default: with
// at most MaxMatrixRaters raters every pair that shares an item; with more,
// the pairs that share at least DefaultMinShared items, at most
// DefaultMaxPairs of them (those that share the most items), found among
// the raters with the most labels when counting every co-occurring pair
// would cost more than 5e7 steps. Per-rater summaries (RaterAgreement)
// never need pairs: they come from per-item counts.
type PairOptions struct {
	// All computes every pair that shares at least one item (--pairs
	// all), whatever the cost: quadratic in the raters on crossed
	// designs.
	All bool
	// MinShared is the fewest shared items; 0 means the default above.
	MinShared int
	// Max is the most pairs; 0 means DefaultMaxPairs, negative no bound.
	Max int
	// Extremes is the number of strongest and of weakest pairs listed;
	// 0 means DefaultPairExtremes, negative none.
	Extremes int
}

func (o PairOptions) minShared(raters int) int {
	switch {
	case o.MinShared > 0:
		return o.MinShared
	case o.All || raters <= MaxMatrixRaters:
		return 1
	}
	return DefaultMinShared
}

func (o PairOptions) maxPairs() int {
	switch {
	case o.All || o.Max < 0:
		return -1
	case o.Max == 0:
		return DefaultMaxPairs
	}
	return o.Max
}

func (o PairOptions) extremes() int { return orDefault(o.Extremes, DefaultPairExtremes) }

// coRated calls f for every table item both raters a and b rated, in item
// order, with their categories x and y: a merge of the two raters' rows.
func (t *table) coRated(a, b int, f func(i int, x, y int32)) {
	pa, ea := t.rs[a], t.rs[a+1]
	pb, eb := t.rs[b], t.rs[b+1]
	for pa < ea && pb < eb {
		ia, ib := t.rit[pa], t.rit[pb]
		switch {
		case ia < ib:
			pa++
		case ia > ib:
			pb++
		default:
			f(int(ia), t.rc[pa], t.rc[pb])
			pa++
			pb++
		}
	}
}

// ratedPair is a pair of raters (a < b) with the number of items both
// rated.
type ratedPair struct {
	a, b, n int
}

// pairSearch says how the pairs were chosen.
type pairSearch struct {
	minShared, max int
	// raters took part in the search (those with at least minShared
	// labels, or the ones with the most labels when the search was
	// bounded); bounded says it was.
	raters  int
	bounded bool
	// found pairs met minShared; dropped of them were past max.
	found, dropped int
}

// ratedPairs returns the pairs of raters (a < b, in order) that share at
// least o's minimum of items, at most o's maximum (those sharing the most
// items, ties to the earlier pair), counting co-occurrences row by row (the
// sparse product of the item-rater incidence with its transpose) in
// O(Σ_i m_i²) over the raters taking part, memory O(raters + pairs).
func (t *table) ratedPairs(o PairOptions) ([]ratedPair, pairSearch) {
	s := pairSearch{minShared: o.minShared(t.r), max: o.maxPairs()}
	nl := make([]int, t.r)
	for j := range nl {
		nl[j] = t.rs[j+1] - t.rs[j]
	}
	in := make([]bool, t.r)
	for j := range in {
		in[j] = nl[j] >= s.minShared
	}
	work := func() int64 {
		var w int64
		for i := 0; i < t.n; i++ {
			var m int64
			for p := t.ls[i]; p < t.ls[i+1]; p++ {
				if in[t.lr[p]] {
					m++
				}
			}
			w += m * (m - 1) / 2
		}
		return w
	}
	if !o.All && work() > maxPairWork {
		// Keep the raters with the most labels: the largest prefix of
		// them whose work fits (binary search on its length).
		var cand []int
		for j := range in {
			if in[j] {
				cand = append(cand, j)
			}
		}
		sort.SliceStable(cand, func(x, y int) bool { return nl[cand[x]] > nl[cand[y]] })
		set := func(k int) {
			for j := range in {
				in[j] = false
			}
			for _, j := range cand[:k] {
				in[j] = true
			}
		}
		lo, hi := 0, len(cand) // work(lo) fits, work(hi) does not
		for hi-lo > 1 {
			mid := (lo + hi) / 2
			set(mid)
			if work() <= maxPairWork {
				lo = mid
			} else {
				hi = mid
			}
		}
		set(lo)
		s.bounded = true
	}
	for _, b := range in {
		if b {
			s.raters++
		}
	}
	cnt := make([]int32, t.r)
	var touched []int32
	var pairs []ratedPair
	for a := 0; a < t.r; a++ {
		if !in[a] {
			continue
		}
		touched = touched[:0]
		for p := t.rs[a]; p < t.rs[a+1]; p++ {
			i := t.rit[p]
			for q := t.ls[i]; q < t.ls[i+1]; q++ {
				b := t.lr[q]
				if int(b) <= a || !in[b] {
					continue
				}
				if cnt[b] == 0 {
					touched = append(touched, b)
				}
				cnt[b]++
			}
		}
		sort.Slice(touched, func(x, y int) bool { return touched[x] < touched[y] })
		for _, b := range touched {
			if int(cnt[b]) >= s.minShared {
				pairs = append(pairs, ratedPair{a: a, b: int(b), n: int(cnt[b])})
			}
			cnt[b] = 0
		}
	}
	s.found = len(pairs)
	if s.max >= 0 && len(pairs) > s.max {
		sort.SliceStable(pairs, func(x, y int) bool { return pairs[x].n > pairs[y].n })
		s.dropped = len(pairs) - s.max
		pairs = pairs[:s.max]
		sort.Slice(pairs, func(x, y int) bool {
			if pairs[x].a != pairs[y].a {
				return pairs[x].a < pairs[y].a
			}
			return pairs[x].b < pairs[y].b
		})
	}
	return pairs, s
}

// note says how the pairs were chosen when not every pair sharing an item
// was computed; "" otherwise.
func (s pairSearch) note(raters int) string {
	if s.minShared <= 1 && !s.bounded && s.dropped == 0 {
		return ""
	}
	msg := fmt.Sprintf("pairwise statistics (cohen_kappa, the profiles' pairwise rows, the pairwise matrix) cover %d rater pairs: those sharing at least %d items", s.found-s.dropped, s.minShared)
	if s.dropped > 0 {
		msg += fmt.Sprintf(", the %d sharing the most of the %d found", s.max, s.found)
	}
	if s.bounded {
		msg += fmt.Sprintf(", among the %d of %d raters with the most labels (counting every co-occurring pair would cost more than %d steps)", s.raters, raters, maxPairWork)
	}
	return msg + "; --pairs all (API: pairs=all) computes every pair that shares an item, --min-shared sets the minimum; the per-rater rows (rater_agreement) use every pair"
}

// PairKappa is Cohen's kappa between two raters under several weights.
type PairKappa struct {
	A, B int
	// N is the number of items both rated.
	N int
	// Kappa[w] is the kappa with weights w, for the weights asked for.
	Kappa map[Weights]Estimate
}

// PairwiseCohen returns Cohen's kappa for the pairs of raters (a < b) that
// rated at least one item in common (with o.Pairs' defaults and bounds: see
// PairOptions), under each of the given weights, in the order (0,1), (0,2),
// ..., (1,2), ....
func PairwiseCohen(r *Ratings, ws []Weights, o CoefOptions) ([]PairKappa, error) {
	t := prepare(r, o.ObservedCategoriesOnly)
	pairs, _ := t.ratedPairs(o.Pairs)
	return t.pairwise(pairs, ws, true, o.level())
}

func (t *table) pairwise(pairs []ratedPair, ws []Weights, withSE bool, level float64) ([]PairKappa, error) {
	wms := make([]*weightMat, len(ws))
	for x, w := range ws {
		var err error
		if wms[x], err = t.weights(w); err != nil {
			return nil, err
		}
	}
	out := make([]PairKappa, 0, len(pairs))
	for _, p := range pairs {
		pk := PairKappa{A: p.a, B: p.b, N: p.n, Kappa: make(map[Weights]Estimate, len(ws))}
		for x, w := range ws {
			pk.Kappa[w] = t.pairStats(p.a, p.b, wms[x], nil, withSE, level)
		}
		out = append(out, pk)
	}
	return out, nil
}
