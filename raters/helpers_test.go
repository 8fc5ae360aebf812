package raters

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"testing"

	"concord/internal/testutil"
)

// readCSV reads a CSV file with a header into maps.
func readCSV(t testing.TB, path string) []map[string]string {
	t.Helper()
	return testutil.Keyed(testutil.ReadCSV(t, path))
}

// longTable turns long-form rows (item, rater, label columns) into Ratings.
// Items and raters are ordered by first appearance. Categories are the
// distinct labels, sorted numerically when they all are numbers (their
// values then are the numbers) and as strings otherwise (values 1..K), as
// irrCAC orders them. Repeated (item, rater) ratings are all added.
func longTable(rows []map[string]string, itemCol, raterCol, labelCol string) (*Ratings, []string, []string, []string) {
	var items, raters []string
	itemIx, raterIx := map[string]int{}, map[string]int{}
	labels := map[string]bool{}
	for _, r := range rows {
		if _, ok := itemIx[r[itemCol]]; !ok {
			itemIx[r[itemCol]] = len(items)
			items = append(items, r[itemCol])
		}
		if _, ok := raterIx[r[raterCol]]; !ok {
			raterIx[r[raterCol]] = len(raters)
			raters = append(raters, r[raterCol])
		}
		labels[r[labelCol]] = true
	}
	var cats []string
	numeric := true
	for l := range labels {
		cats = append(cats, l)
		if _, err := strconv.ParseFloat(l, 64); err != nil {
			numeric = false
		}
	}
	var values []float64
	if numeric {
		sort.Slice(cats, func(i, j int) bool {
			a, _ := strconv.ParseFloat(cats[i], 64)
			b, _ := strconv.ParseFloat(cats[j], 64)
			return a < b
		})
		for _, c := range cats {
			v, _ := strconv.ParseFloat(c, 64)
			values = append(values, v)
		}
	} else {
		sort.Strings(cats)
	}
	catIx := map[string]int{}
	for i, c := range cats {
		catIx[c] = i
	}
	rt := NewRatings(len(items), len(raters), len(cats))
	rt.Values = values
	for _, r := range rows {
		rt.Add(itemIx[r[itemCol]], raterIx[r[raterCol]], float64(catIx[r[labelCol]]))
	}
	return rt, items, raters, cats
}

func near(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}

func parseF(t testing.TB, s string) float64 {
	t.Helper()
	if s == "" || s == "NA" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return v
}

// continuousTable is longTable for real-valued ratings (K = 0).
func continuousTable(t testing.TB, rows []map[string]string) (*Ratings, []string) {
	cat, items, raters, cats := longTable(rows, "item_id", "rater_id", "label")
	rt := NewRatings(len(items), len(raters), 0)
	for x := 0; x < cat.Len(); x++ {
		i, j, v := cat.Label(x)
		rt.Add(i, j, parseF(t, cats[int(v)]))
	}
	return rt, raters
}

func fmtSscanf(s string, k, l *int) (int, error) { return fmt.Sscanf(s, "%d:%d", k, l) }
