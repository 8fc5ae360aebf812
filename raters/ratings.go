package raters

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// Ratings is the input of every coefficient, aggregator and profile: a
// sparse list of labels, each rater j's rating v of item i, built with Add.
// Memory is linear in the labels: there is no items × raters table, an item
// need not be rated by every rater, and a rater may rate an item more than
// once (repeated labels, kept as separate observations).
//
// For categorical data (K > 0) a rating is a category index 0..K-1 and
// Values[k] is the numeric value of category k, used by the interval and
// ratio metrics, the weights and the intraclass correlations. For continuous
// data (K == 0, e.g. a bounded slider) a rating is the real value itself, and
// the categories of the weighted coefficients are the distinct values that
// occur (as irrCAC does).
//
// What uses which labels when a rater repeats an item: the agreement
// coefficients (Fleiss, Krippendorff, Gwet, Conger, percent agreement,
// Cohen's and the pairwise kappas, the ICCs), the agreement tables and the
// rater profiles' pairwise rows take one label per rater and item, the
// rater's first (in the order of Add), as irrCAC's items × raters table
// holds one; the aggregators (majority vote, mean, median, Dawid-Skene,
// one-coin, Wawa, GLAD, MACE) and the rater profiles' label counts,
// distributions and agreement with each consensus take every label, each
// one an observation, as crowd-kit does. Without repeats both are the same.
type Ratings struct {
	// Items and Raters are the numbers of items and raters: labels refer
	// to items 0..Items-1 and raters 0..Raters-1.
	Items, Raters int
	// K is the number of categories; 0 means continuous ratings.
	K int
	// Values are the numeric values of the K categories in increasing
	// order; nil means 1, 2, ..., K.
	Values []float64

	item, rater []int32
	val         []float64
}

// NewRatings returns an empty set of labels of items items and raters
// raters. k is the number of categories, 0 for continuous ratings.
func NewRatings(items, raters, k int) *Ratings {
	if items < 0 || raters < 0 || k < 0 {
		panic("raters: negative dimension")
	}
	if items > math.MaxInt32 || raters > math.MaxInt32 {
		panic("raters: dimension too large")
	}
	return &Ratings{Items: items, Raters: raters, K: k}
}

// Add appends rater j's rating v of item i; a NaN v is a missing rating and
// adds nothing. A categorical rating must be a category index 0..K-1.
// Adding a second rating of the same rater and item keeps both (see
// Ratings for what uses which).
func (r *Ratings) Add(i, j int, v float64) {
	if i < 0 || i >= r.Items || j < 0 || j >= r.Raters {
		panic("raters: index out of range")
	}
	if math.IsNaN(v) {
		return
	}
	if math.IsInf(v, 0) {
		panic("raters: infinite rating")
	}
	if r.K > 0 && (v != math.Trunc(v) || v < 0 || int(v) >= r.K) {
		panic(fmt.Sprintf("raters: rating %v is not a category index in [0, %d)", v, r.K))
	}
	r.item = append(r.item, int32(i))
	r.rater = append(r.rater, int32(j))
	r.val = append(r.val, v)
}

// Len returns the number of labels.
func (r *Ratings) Len() int { return len(r.val) }

// Label returns the x-th label added: item i, rater j, rating v.
func (r *Ratings) Label(x int) (i, j int, v float64) {
	return int(r.item[x]), int(r.rater[x]), r.val[x]
}

// Value returns the numeric value of category k.
func (r *Ratings) Value(k int) float64 {
	if r.Values == nil {
		return float64(k + 1)
	}
	return r.Values[k]
}

// check panics when the labels are malformed (a caller bug).
func (r *Ratings) check() {
	if r == nil {
		panic("raters: nil Ratings")
	}
	if r.Items < 0 || r.Raters < 0 || r.K < 0 {
		panic("raters: negative dimension")
	}
	if len(r.item) != len(r.val) || len(r.rater) != len(r.val) {
		panic("raters: malformed labels")
	}
	if r.Values != nil {
		if len(r.Values) != r.K {
			panic(fmt.Sprintf("raters: len(Values) = %d, want K = %d", len(r.Values), r.K))
		}
		for k := 1; k < r.K; k++ {
			if !(r.Values[k] > r.Values[k-1]) {
				panic("raters: category values must be finite and increasing")
			}
		}
	}
	for x, v := range r.val {
		if i, j := int(r.item[x]), int(r.rater[x]); i >= r.Items || j >= r.Raters {
			panic("raters: index out of range")
		}
		if r.K > 0 && int(v) >= r.K {
			panic(fmt.Sprintf("raters: rating %v is not a category index in [0, %d)", v, r.K))
		}
	}
}

// byItem returns the labels in compressed sparse rows by item: item i's
// labels are order[start[i]:start[i+1]] (indices into the labels), sorted
// by rater and, for one rater, in the order they were added. Time and
// memory are linear in the labels (plus items and raters).
func (r *Ratings) byItem() (start []int, order []int32) {
	return csrRows(r.item, r.Items, r.rater, r.Raters)
}

// byRater returns the labels in compressed sparse rows by rater: rater j's
// labels are order[start[j]:start[j+1]], sorted by item and, for one item,
// in the order they were added.
func (r *Ratings) byRater() (start []int, order []int32) {
	return csrRows(r.rater, r.Raters, r.item, r.Items)
}

// csrRows groups the labels by row (row[x] in [0, nRows), the label x's
// row) in compressed sparse rows, within a row sorted by col (in [0,
// nCols)) and then by x: a counting sort by col, then a stable counting
// sort by row.
func csrRows(row []int32, nRows int, col []int32, nCols int) (start []int, order []int32) {
	start = make([]int, nRows+1)
	for _, i := range row {
		start[i+1]++
	}
	for i := 0; i < nRows; i++ {
		start[i+1] += start[i]
	}
	cs := make([]int, nCols+1)
	for _, j := range col {
		cs[j+1]++
	}
	for j := 0; j < nCols; j++ {
		cs[j+1] += cs[j]
	}
	tmp := make([]int32, len(row))
	for x, j := range col {
		tmp[cs[j]] = int32(x)
		cs[j]++
	}
	order = make([]int32, len(row))
	next := slices.Clone(start[:nRows])
	for _, x := range tmp {
		i := row[x]
		order[next[i]] = x
		next[i]++
	}
	return start, order
}

// table is Ratings prepared for the coefficients: one label per rater and
// item (the first), items without any rating dropped, ratings mapped to
// category indices 0..q-1 (the scheme's categories, or the distinct values
// of continuous data, or only the categories that occur), per item the
// counts of each category that occurs, and the labels by item and by rater,
// all in compressed sparse rows.
type table struct {
	n, r int       // items with at least one rating; raters
	q    int       // categories
	vals []float64 // category values, increasing
	// cats[k] is the Ratings category of table category k (categorical
	// ratings only).
	cats []int
	// Item i's labels: raters lr[ls[i]:ls[i+1]] (increasing) with
	// categories lc[...].
	ls     []int
	lr, lc []int32
	// Rater j's labels: items ri2[rs[j]:rs[j+1]] (increasing, table
	// indices) with categories rc[...].
	rs      []int
	rit, rc []int32
	// item i's category counts are cat[start[i]:start[i+1]] with
	// counts cnt[...]; ri[i] is the number of ratings of item i.
	start []int
	cat   []int32
	cnt   []float64
	ri    []float64
	// orig[i] is the item index in the Ratings of table item i.
	orig []int
	// continuous reports whether the categories are distinct values.
	continuous bool
	// repeats counts the labels left out because they repeat a rater's
	// label of an item.
	repeats int
}

// prepare builds the table in time and memory linear in the labels.
// observedOnly keeps only the categories of a categorical table that occur
// in the data.
func prepare(r *Ratings, observedOnly bool) *table {
	r.check()
	t := &table{r: r.Raters}
	// Categories.
	var remap []int32 // categorical: scheme index -> table index
	if r.K > 0 {
		used := make([]bool, r.K)
		for _, v := range r.val {
			used[int(v)] = true
		}
		remap = make([]int32, r.K)
		for k := 0; k < r.K; k++ {
			if observedOnly && !used[k] {
				remap[k] = -1
				continue
			}
			remap[k] = int32(len(t.vals))
			t.vals = append(t.vals, r.Value(k))
			t.cats = append(t.cats, k)
		}
	} else {
		t.continuous = true
		vs := slices.Clone(r.val)
		sort.Float64s(vs)
		t.vals = slices.Compact(vs)
	}
	t.q = len(t.vals)
	index := func(v float64) int32 {
		if remap != nil {
			return remap[int(v)]
		}
		return int32(sort.SearchFloat64s(t.vals, v))
	}
	start, order := r.byItem()
	t.start = append(t.start, 0)
	t.ls = append(t.ls, 0)
	for i := 0; i < r.Items; i++ {
		ls := order[start[i]:start[i+1]]
		if len(ls) == 0 {
			continue
		}
		t.orig = append(t.orig, i)
		first := len(t.cat)
		m := 0.0
		for y, x := range ls {
			j := r.rater[x]
			if y > 0 && r.rater[ls[y-1]] == j {
				t.repeats++
				continue
			}
			c := index(r.val[x])
			t.lr = append(t.lr, j)
			t.lc = append(t.lc, c)
			m++
			found := false
			for p := first; p < len(t.cat); p++ {
				if t.cat[p] == c {
					t.cnt[p]++
					found = true
					break
				}
			}
			if !found {
				t.cat = append(t.cat, c)
				t.cnt = append(t.cnt, 1)
			}
		}
		t.ri = append(t.ri, m)
		t.start = append(t.start, len(t.cat))
		t.ls = append(t.ls, len(t.lr))
	}
	t.n = len(t.orig)
	t.byRater()
	return t
}

// byRater fills the rater rows from the item rows.
func (t *table) byRater() {
	t.rs = make([]int, t.r+1)
	for _, j := range t.lr {
		t.rs[j+1]++
	}
	for j := 0; j < t.r; j++ {
		t.rs[j+1] += t.rs[j]
	}
	t.rit = make([]int32, len(t.lr))
	t.rc = make([]int32, len(t.lr))
	next := slices.Clone(t.rs[:t.r])
	for i := 0; i < t.n; i++ {
		for p := t.ls[i]; p < t.ls[i+1]; p++ {
			j := t.lr[p]
			t.rit[next[j]] = int32(i)
			t.rc[next[j]] = t.lc[p]
			next[j]++
		}
	}
}

// cell returns rater j's category on table item i, -1 when j did not rate
// it (a binary search of the item's raters).
func (t *table) cell(i, j int) int32 {
	lr := t.lr[t.ls[i]:t.ls[i+1]]
	p, ok := slices.BinarySearch(lr, int32(j))
	if !ok {
		return -1
	}
	return t.lc[t.ls[i]+p]
}

// raterCounts returns, for the items weighted by mult (nil: each once), the
// number of ratings of each rater in each category (r × q, row-major) and the
// number of ratings of each rater.
func (t *table) raterCounts(mult []float64) (counts, ng []float64) {
	counts = make([]float64, t.r*t.q)
	ng = make([]float64, t.r)
	for j := 0; j < t.r; j++ {
		for p := t.rs[j]; p < t.rs[j+1]; p++ {
			w := weightOf(mult, int(t.rit[p]))
			if w == 0 {
				continue
			}
			counts[j*t.q+int(t.rc[p])] += w
			ng[j] += w
		}
	}
	return counts, ng
}

func weightOf(mult []float64, i int) float64 {
	if mult == nil {
		return 1
	}
	return mult[i]
}

// Repeats returns the number of labels that repeat a rater's label of an
// item (what the coefficients leave out: see Ratings).
func (r *Ratings) Repeats() int {
	start, order := r.byItem()
	n := 0
	for i := 0; i < r.Items; i++ {
		ls := order[start[i]:start[i+1]]
		for y := 1; y < len(ls); y++ {
			if r.rater[ls[y]] == r.rater[ls[y-1]] {
				n++
			}
		}
	}
	return n
}
