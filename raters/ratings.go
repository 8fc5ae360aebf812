package raters

import (
	"fmt"
	"math"
	"sort"
)

// Ratings is the input of every coefficient: an items × raters table of
// ratings in which any entry may be missing (a rater who skipped an item).
//
// For categorical data (K > 0) a rating is a category index 0..K-1 and
// Values[k] is the numeric value of category k, used by the interval and
// ratio metrics, the weights and the intraclass correlations. For continuous
// data (K == 0, e.g. a bounded slider) a rating is the real value itself, and
// the categories of the weighted coefficients are the distinct values that
// occur (as irrCAC does).
type Ratings struct {
	// Items and Raters are the table's dimensions.
	Items, Raters int
	// Data holds the table row by row: Data[i*Raters+j] is rater j's
	// rating of item i, NaN when missing.
	Data []float64
	// K is the number of categories; 0 means continuous ratings.
	K int
	// Values are the numeric values of the K categories in increasing
	// order; nil means 1, 2, ..., K.
	Values []float64
}

// NewRatings returns an items × raters table with every rating missing. k is
// the number of categories, 0 for continuous ratings.
func NewRatings(items, raters, k int) *Ratings {
	if items < 0 || raters < 0 || k < 0 {
		panic("raters: negative dimension")
	}
	d := make([]float64, items*raters)
	for i := range d {
		d[i] = math.NaN()
	}
	return &Ratings{Items: items, Raters: raters, Data: d, K: k}
}

// At returns rater j's rating of item i (NaN when missing).
func (r *Ratings) At(i, j int) float64 {
	if i < 0 || i >= r.Items || j < 0 || j >= r.Raters {
		panic("raters: index out of range")
	}
	return r.Data[i*r.Raters+j]
}

// Set stores rater j's rating of item i; NaN makes it missing. A categorical
// rating must be a category index 0..K-1.
func (r *Ratings) Set(i, j int, v float64) {
	if i < 0 || i >= r.Items || j < 0 || j >= r.Raters {
		panic("raters: index out of range")
	}
	if !math.IsNaN(v) {
		if math.IsInf(v, 0) {
			panic("raters: infinite rating")
		}
		if r.K > 0 && (v != math.Trunc(v) || v < 0 || int(v) >= r.K) {
			panic(fmt.Sprintf("raters: rating %v is not a category index in [0, %d)", v, r.K))
		}
	}
	r.Data[i*r.Raters+j] = v
}

// Value returns the numeric value of category k.
func (r *Ratings) Value(k int) float64 {
	if r.Values == nil {
		return float64(k + 1)
	}
	return r.Values[k]
}

// check panics when the table is malformed (a caller bug).
func (r *Ratings) check() {
	if r == nil {
		panic("raters: nil Ratings")
	}
	if r.Items < 0 || r.Raters < 0 || r.K < 0 {
		panic("raters: negative dimension")
	}
	if len(r.Data) != r.Items*r.Raters {
		panic(fmt.Sprintf("raters: len(Data) = %d, want Items*Raters = %d", len(r.Data), r.Items*r.Raters))
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
	for _, v := range r.Data {
		if math.IsNaN(v) {
			continue
		}
		if math.IsInf(v, 0) {
			panic("raters: infinite rating")
		}
		if r.K > 0 && (v != math.Trunc(v) || v < 0 || int(v) >= r.K) {
			panic(fmt.Sprintf("raters: rating %v is not a category index in [0, %d)", v, r.K))
		}
	}
}

// table is Ratings prepared for the coefficients: items without any rating
// dropped, ratings mapped to category indices 0..q-1 (the scheme's categories,
// or the distinct values of continuous data, or only the categories that
// occur), and per item the counts of each category that occurs, in compressed
// sparse rows.
type table struct {
	n, r int       // items with at least one rating; raters
	q    int       // categories
	vals []float64 // category values, increasing
	// cell[i*r+j] is the category of rater j on item i, -1 when missing.
	cell []int32
	// item i's category counts are cat[start[i]:start[i+1]] with
	// counts cnt[...]; ri[i] is the number of ratings of item i.
	start []int
	cat   []int32
	cnt   []float64
	ri    []float64
	// orig[i] is the row of item i in the Ratings.
	orig []int
	// continuous reports whether the categories are distinct values.
	continuous bool
}

// prepare builds the table. observedOnly keeps only the categories of a
// categorical table that occur in the data.
func prepare(r *Ratings, observedOnly bool) *table {
	r.check()
	t := &table{r: r.Raters}
	// Categories.
	var remap []int32 // categorical: scheme index -> table index
	if r.K > 0 {
		used := make([]bool, r.K)
		for _, v := range r.Data {
			if !math.IsNaN(v) {
				used[int(v)] = true
			}
		}
		remap = make([]int32, r.K)
		for k := 0; k < r.K; k++ {
			if observedOnly && !used[k] {
				remap[k] = -1
				continue
			}
			remap[k] = int32(len(t.vals))
			t.vals = append(t.vals, r.Value(k))
		}
	} else {
		t.continuous = true
		var vs []float64
		for _, v := range r.Data {
			if !math.IsNaN(v) {
				vs = append(vs, v)
			}
		}
		sort.Float64s(vs)
		for i, v := range vs {
			if i == 0 || v != vs[i-1] {
				t.vals = append(t.vals, v)
			}
		}
	}
	t.q = len(t.vals)
	index := func(v float64) int32 {
		if remap != nil {
			return remap[int(v)]
		}
		return int32(sort.SearchFloat64s(t.vals, v))
	}
	t.start = append(t.start, 0)
	row := make([]int32, r.Raters)
	for i := 0; i < r.Items; i++ {
		any := false
		for j := 0; j < r.Raters; j++ {
			v := r.Data[i*r.Raters+j]
			if math.IsNaN(v) {
				row[j] = -1
				continue
			}
			row[j] = index(v)
			any = true
		}
		if !any {
			continue
		}
		t.orig = append(t.orig, i)
		t.cell = append(t.cell, row...)
		first := len(t.cat)
		m := 0.0
		for j := 0; j < r.Raters; j++ {
			c := row[j]
			if c < 0 {
				continue
			}
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
	}
	t.n = len(t.orig)
	return t
}

// raterCounts returns, for the items weighted by mult (nil: each once), the
// number of ratings of each rater in each category (r × q, row-major) and the
// number of ratings of each rater.
func (t *table) raterCounts(mult []float64) (counts, ng []float64) {
	counts = make([]float64, t.r*t.q)
	ng = make([]float64, t.r)
	for i := 0; i < t.n; i++ {
		w := weightOf(mult, i)
		if w == 0 {
			continue
		}
		row := t.cell[i*t.r : (i+1)*t.r]
		for j, c := range row {
			if c >= 0 {
				counts[j*t.q+int(c)] += w
				ng[j] += w
			}
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
