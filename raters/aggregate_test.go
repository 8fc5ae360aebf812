package raters

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"concord/internal/testutil"
)

func mkTable(k int, rows [][]float64) *Ratings {
	r := NewRatings(len(rows), len(rows[0]), k)
	for i, row := range rows {
		for j, v := range row {
			r.Add(i, j, v)
		}
	}
	return r
}

var nan = math.NaN()

func TestMajorityVoteTies(t *testing.T) {
	// Class 2 is the most frequent overall, class 0 the least.
	r := mkTable(3, [][]float64{
		{0, 2, nan},   // tie 0-2: 2 wins (more ratings overall)
		{0, 1, nan},   // tie 0-1: 1 wins (more ratings overall than 0)
		{2, 2, 1},     // clear
		{1, 2, 2},     // clear
		{nan, nan, 1}, // one rating
		{nan, nan, nan},
	})
	c := MajorityVote(r)
	want := []int{2, 1, 2, 2, 1, -1}
	for i, w := range want {
		if c.Items[i].Class != w {
			t.Errorf("item %d: class %d, want %d", i, c.Items[i].Class, w)
		}
	}
	if c.Ties != 2 || !c.Items[0].Tie || len(c.Items[0].Tied) != 2 || c.Items[2].Tie {
		t.Errorf("ties: %d, %+v", c.Ties, c.Items[0])
	}
	// Equal overall frequency: the lowest index wins.
	c = MajorityVote(mkTable(2, [][]float64{{0, 1}, {1, 0}}))
	if c.Items[0].Class != 0 || c.Items[1].Class != 0 {
		t.Errorf("lowest-index rule: %d %d", c.Items[0].Class, c.Items[1].Class)
	}
	if q := c.Raters[0]; q.N != 2 || q.Accuracy != 0.5 {
		t.Errorf("rater quality %+v", q)
	}
}

func TestMeanMedian(t *testing.T) {
	r := mkTable(0, [][]float64{{1, 2, 6}, {3, nan, 4}, {nan, nan, nan}})
	mean, med := MeanRating(r), MedianRating(r)
	if mean.Items[0].Score != 3 || med.Items[0].Score != 2 || med.Items[1].Score != 3.5 {
		t.Errorf("mean %v, median %v %v", mean.Items[0].Score, med.Items[0].Score, med.Items[1].Score)
	}
	if !math.IsNaN(mean.Items[2].Score) || mean.Items[0].Class != -1 {
		t.Errorf("unrated item: %+v", mean.Items[2])
	}
	// Rater 0: ratings 1, 3 against means 3, 3.5.
	if q := mean.Raters[0]; q.MAE != 1.25 || q.Bias != -1.25 {
		t.Errorf("rater 0: %+v", q)
	}
	// Categorical: the nearest category, the lower one half-way.
	c := mkTable(3, [][]float64{{0, 1}, {0, 2}})
	c.Values = []float64{1, 2, 4}
	m := MeanRating(c)
	if m.Items[0].Class != 0 || m.Items[1].Class != 1 { // 1.5 -> 1 (lower); 2.5 -> 2
		t.Errorf("classes %d %d", m.Items[0].Class, m.Items[1].Class)
	}
}

func TestDegenerateTables(t *testing.T) {
	for name, r := range map[string]*Ratings{
		"all equal":     mkTable(3, [][]float64{{1, 1}, {1, 1}, {1, 1}}),
		"no overlap":    mkTable(2, [][]float64{{0, nan}, {nan, 1}, {1, nan}}),
		"one item":      mkTable(2, [][]float64{{0, 1, 1}}),
		"single values": mkTable(3, [][]float64{{0, nan}, {nan, 2}}),
	} {
		for _, lv := range []Level{Nominal, Ordinal} {
			rep, err := Analyze(r, Options{Level: lv, Bootstrap: 20})
			if err != nil {
				continue // an error is fine; a panic or NaN in JSON is not
			}
			b, err := json.Marshal(rep)
			if err != nil {
				t.Errorf("%s %v: %v", name, lv, err)
				continue
			}
			if strings.Contains(string(b), "NaN") {
				t.Errorf("%s %v: NaN in JSON", name, lv)
			}
		}
	}
	// All equal: chance agreement is 1, kappa undefined, percent agreement 1.
	e, _ := FleissKappa(mkTable(3, [][]float64{{1, 1}, {1, 1}}), CoefOptions{})
	p, _ := PercentAgreement(mkTable(3, [][]float64{{1, 1}, {1, 1}}), CoefOptions{})
	if !math.IsNaN(e.Value) || p.Value != 1 {
		t.Errorf("all equal: kappa %v, pa %v", e.Value, p.Value)
	}
}

func TestConsensusJSONRoundTrip(t *testing.T) {
	c := MajorityVote(mkTable(2, [][]float64{{0, 1}, {1, 1}, {nan, nan}}))
	back := testutil.JSONRoundTrip(t, c)
	if back.Items[2].Class != -1 || !math.IsNaN(back.Items[2].Score) || back.Items[1].Class != 1 || back.Raters[1].Accuracy != c.Raters[1].Accuracy {
		t.Errorf("round trip: %+v", back)
	}
}

func TestRatingsPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"bad category": func() { NewRatings(1, 1, 2).Add(0, 0, 2) },
		"fraction":     func() { NewRatings(1, 1, 2).Add(0, 0, 0.5) },
		"out of range": func() { NewRatings(1, 1, 2).Add(1, 0, 0) },
		"infinite":     func() { NewRatings(1, 1, 0).Add(0, 0, math.Inf(1)) },
		"bad values": func() {
			r := NewRatings(1, 1, 2)
			r.Values = []float64{2, 1}
			r.Add(0, 0, 0)
			FleissKappa(r, CoefOptions{})
		},
		"bad tie order": func() { MajorityVoteWith(NewRatings(1, 1, 2), MVOptions{Ties: TieFirst, TieOrder: []int{0, 0}}) },
		"bad conflevel": func() { FleissKappa(NewRatings(1, 2, 2), CoefOptions{ConfLevel: 1.5}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestModesAndPlurality(t *testing.T) {
	if got := Modes([]int{2, 0, 2, 1}); !reflect.DeepEqual(got, []int{0, 2}) {
		t.Errorf("Modes = %v", got)
	}
	if got := Modes([]int{0, 0}); got != nil {
		t.Errorf("Modes without votes = %v", got)
	}
	labels := []string{"b", "x", "a", "b", "x", "x"}
	if got := Plurality(labels, []string{"a", "b"}); !reflect.DeepEqual(got, []string{"b"}) {
		t.Errorf("Plurality over levels = %v (labels that are no level do not count)", got)
	}
	if got := Plurality(labels, nil); !reflect.DeepEqual(got, []string{"x"}) {
		t.Errorf("Plurality of every label = %v", got)
	}
	if got := Plurality([]string{"b", "a"}, nil); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("tie = %v, want sorted", got)
	}
	if got := Plurality([]string{"c"}, []string{"a", "b"}); got != nil {
		t.Errorf("no counted label = %v", got)
	}
}

// TestTieRules: a tie between classes 1 and 2 on item 0; class 2 has more
// labels in the set (item 1), class 1 comes first in the category order
// and class 2 first in the tie order {2, 1, 0}. frequent gives the tie to
// class 2, first to the first tied class of the order, in majority vote
// and in Wawa (whose weights are all 1 here: every rater agrees with the
// vote on the items it labelled, except the tied one).
func TestTieRules(t *testing.T) {
	r := mkTable(3, [][]float64{{1, 2, nan}, {nan, 2, 2}})
	labels := LabelsOf(r)
	for _, tc := range []struct {
		name  string
		ties  TieRule
		order []int
		want  int
	}{
		{"frequent", TieFrequent, nil, 2},
		{"first", TieFirst, nil, 1},
		{"first, order 2 1 0", TieFirst, []int{2, 1, 0}, 2},
		{"first, order 0 1 2", TieFirst, []int{0, 1, 2}, 1},
	} {
		mv := MajorityVoteWith(r, MVOptions{Ties: tc.ties, TieOrder: tc.order})
		if it := mv.Items[0]; it.Class != tc.want || !it.Tie {
			t.Errorf("%s: majority vote of item 0 = %d (tie %v), want %d", tc.name, it.Class, it.Tie, tc.want)
		}
		wa, err := Wawa(labels, r.Items, r.Raters, r.K, WawaOptions{Ties: tc.ties, TieOrder: tc.order})
		if err != nil {
			t.Fatal(err)
		}
		if got := wa.Items[0].Class; got != tc.want {
			t.Errorf("%s: Wawa of item 0 = %d, want %d", tc.name, got, tc.want)
		}
	}
	if MajorityVote(r).Items[0].Class != 2 {
		t.Error("MajorityVote is not the frequent rule")
	}
	if _, err := ParseTieRule("random"); err == nil {
		t.Error("ParseTieRule(random): no error")
	}
}

// TestRepeatedLabels: a rater's repeated labels count in every aggregator
// (as crowd-kit counts them) and in the label totals, while the
// coefficients take the rater's first label of the item.
func TestRepeatedLabels(t *testing.T) {
	r := NewRatings(3, 2, 2)
	for i := 0; i < 3; i++ {
		r.Add(i, 0, float64(i%2))
		r.Add(i, 1, float64(i%2))
	}
	// Rater 0 labels item 0 three more times with class 1: its first
	// label (0) agrees with rater 1, the repeats do not.
	for k := 0; k < 3; k++ {
		r.Add(0, 0, 1)
	}
	if r.Len() != 9 || r.Repeats() != 3 {
		t.Fatalf("%d labels, %d repeats", r.Len(), r.Repeats())
	}
	pa, err := PercentAgreement(r, CoefOptions{})
	if err != nil || pa.Value != 1 {
		t.Errorf("percent agreement %v (%v), want 1 (first labels)", pa.Value, err)
	}
	mv := MajorityVote(r)
	if it := mv.Items[0]; it.Class != 1 || it.N != 5 || it.Probs[1] != 0.6 {
		t.Errorf("majority vote of item 0: %+v, want class 1 with 3 of 5 votes", it)
	}
	rep, err := Analyze(r, Options{Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Labels != 9 || rep.Profiles[0].Labels != 6 || rep.RaterAgreement[0].Labels != 3 {
		t.Errorf("labels %d, rater 0's profile %d and agreement row %d, want 9, 6, 3", rep.Labels, rep.Profiles[0].Labels, rep.RaterAgreement[0].Labels)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "3 repeated labels") {
		t.Errorf("notes %q", rep.Notes)
	}
}

// A category kappa reads back with its category and estimate (the
// embedded Estimate's UnmarshalJSON alone would drop the category).
func TestCategoryKappaJSONRoundTrip(t *testing.T) {
	in := []CategoryKappa{
		{Category: "pos", Estimate: Estimate{Value: 0.25, CILow: -0.5, CIHigh: 0.75, SE: 0.125, CIMethod: "bootstrap", SENull: 0.0625}},
		{Category: "neg", Estimate: Estimate{Value: nan, CILow: nan, CIHigh: nan}},
	}
	back := testutil.JSONRoundTrip(t, in)
	if back[0] != in[0] || back[1].Category != "neg" || !math.IsNaN(back[1].Value) {
		t.Errorf("round trip: %+v, want %+v", back, in)
	}
}
