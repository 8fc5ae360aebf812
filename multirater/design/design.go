// Package design is the rating design shared by every multi-rater model
// family: the checks of the ratings (caller mistakes panic, problems of the
// data return a *multirater.DataError), counts per rater, and the reference
// rater of strong identifiability (Rogers et al. sec. 2.1.1, 2.5).
package design

import (
	"fmt"
	"sort"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
)

// Words name the observations of a family in messages: Noun "ratings" and
// Verb "rated" (ordinal), or "labels" and "labelled" (classification).
type Words struct {
	Noun, Verb string
}

// Design describes the observations of a fit: N = len(ItemIDs) items,
// L = len(RaterIDs) raters, K levels or classes and the ratings, each
// Rating's Level indexing the K levels.
type Design struct {
	// What names the data type for panics, e.g. "OrdinalData".
	What     string
	ItemIDs  []string
	RaterIDs []string
	K        int
	Ratings  []multirater.Rating
	// Cov is the prior covariance of the items (nil: identity).
	Cov   mat.Symmetric
	Words Words
	// Repeats allows several ratings of one item by one rater (repeated
	// labels, the crowd case): each is one more observation.
	Repeats bool
}

// Check validates the design and returns the number of ratings of each
// rater. It panics on caller mistakes (no items or raters, K < 2, a
// rating's indices out of range, Cov of the wrong size) and returns a
// *multirater.DataError for problems of the data: no ratings, a rater who
// rated an item twice (unless Repeats), a rater without ratings. The first
// duplicate reported is the first in the order (rater, item).
func (d *Design) Check() (perRater []int, err error) {
	n, nl, nk := len(d.ItemIDs), len(d.RaterIDs), d.K
	if n == 0 || nl == 0 {
		panic(fmt.Sprintf("multirater: %s has no items or no raters", d.What))
	}
	if nk < 2 {
		panic(fmt.Sprintf("multirater: %s needs at least 2 levels or classes, got %d", d.What, nk))
	}
	if len(d.Ratings) == 0 {
		return nil, multirater.DataErrorf("no %s to fit", d.Words.Noun)
	}
	for _, r := range d.Ratings {
		if r.Item < 0 || r.Item >= n || r.Rater < 0 || r.Rater >= nl || r.Level < 0 || r.Level >= nk {
			panic(fmt.Sprintf("multirater: %s %+v out of range (N=%d, L=%d, K=%d)", d.Words.Noun[:len(d.Words.Noun)-1], r, n, nl, nk))
		}
	}
	if d.Cov != nil && d.Cov.SymmetricDim() != n {
		panic(fmt.Sprintf("multirater: Cov is %d×%d, want %d×%d", d.Cov.SymmetricDim(), d.Cov.SymmetricDim(), n, n))
	}
	// Duplicates: one bit per (rater, item) pair, raters in order.
	seen := make(map[[2]int]bool, len(d.Ratings))
	perRater = make([]int, nl)
	first := [2]int{-1, -1}
	for _, r := range d.Ratings {
		k := [2]int{r.Rater, r.Item}
		if seen[k] {
			if first[0] < 0 || k[0] < first[0] || (k[0] == first[0] && k[1] < first[1]) {
				first = k
			}
		}
		seen[k] = true
		perRater[r.Rater]++
	}
	if first[0] >= 0 && !d.Repeats {
		return nil, multirater.DataErrorf("rater %q %s item %q more than once", d.RaterIDs[first[0]], d.Words.Verb, d.ItemIDs[first[1]])
	}
	for l, c := range perRater {
		if c == 0 {
			return nil, multirater.DataErrorf("rater %q has no %s", d.RaterIDs[l], d.Words.Noun)
		}
	}
	return perRater, nil
}

// Sorted checks the design (Check) and returns a copy of its ratings
// sorted by rater, then (byLevel) by level, then by item, as the Gibbs
// samplers index them; repeated reports whether some rater rated some item
// more than once, as Repeats allows.
func (d *Design) Sorted(byLevel bool) (rs []multirater.Rating, repeated bool, err error) {
	if _, err := d.Check(); err != nil {
		return nil, false, err
	}
	repeated = d.Repeats && Repeated(d.Ratings)
	rs = append([]multirater.Rating(nil), d.Ratings...)
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Rater != b.Rater {
			return a.Rater < b.Rater
		}
		if byLevel && a.Level != b.Level {
			return a.Level < b.Level
		}
		return a.Item < b.Item
	})
	return rs, repeated, nil
}

// Repeated reports whether some rater rated some item more than once.
func Repeated(ratings []multirater.Rating) bool {
	seen := make(map[[2]int]bool, len(ratings))
	for _, r := range ratings {
		k := [2]int{r.Rater, r.Item}
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// RefRater returns the index of the reference rater of strong
// identifiability: the rater named id, or when id is "" the rater with the
// most ratings (the first such). It returns a *multirater.DataError when no
// rater is named id.
func RefRater(raterIDs []string, id string, perRater []int) (int, error) {
	if id == "" {
		best := 0
		for l, c := range perRater {
			if c > perRater[best] {
				best = l
			}
		}
		return best, nil
	}
	for l, r := range raterIDs {
		if r == id {
			return l, nil
		}
	}
	return -1, multirater.DataErrorf("reference rater %q is not one of the raters", id)
}

// ByItem returns the observations grouped by item (compressed rows):
// observation o is on item obsItem[o], item i has count[i] of them, and
// obs[start[i]:start[i+1]] are item i's in increasing order.
func ByItem(n int, count []int, obsItem []int32) (start []int, obs []int32) {
	start = make([]int, n+1)
	for i := 0; i < n; i++ {
		start[i+1] = start[i] + count[i]
	}
	obs = make([]int32, len(obsItem))
	fill := append([]int(nil), start[:n]...)
	for o, it := range obsItem {
		obs[fill[it]] = int32(o)
		fill[it]++
	}
	return start, obs
}
