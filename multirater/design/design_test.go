package design

import (
	"errors"
	"slices"
	"testing"

	"concord/internal/testutil"
	"concord/multirater"
)

func TestCheck(t *testing.T) {
	words := Words{Noun: "ratings", Verb: "rated"}
	r := func(i, l, k int) multirater.Rating { return multirater.Rating{Item: i, Rater: l, Level: k} }
	cases := []struct {
		name    string
		ratings []multirater.Rating
		raters  []string
		want    string // error text; "" for none
		counts  []int
		repeats bool
	}{
		{"ok", []multirater.Rating{r(0, 0, 0), r(1, 0, 1), r(0, 1, 1)}, []string{"a", "b"}, "", []int{2, 1}, false},
		{"none", nil, []string{"a"}, "multirater: no ratings to fit", nil, false},
		{"duplicate", []multirater.Rating{r(1, 1, 0), r(1, 1, 1), r(0, 0, 0), r(0, 0, 1)}, []string{"a", "b"}, `multirater: rater "a" rated item "x" more than once`, nil, false},
		{"repeats allowed", []multirater.Rating{r(1, 1, 0), r(1, 1, 1), r(0, 0, 0), r(0, 0, 1)}, []string{"a", "b"}, "", []int{2, 2}, true},
		{"rater without ratings", []multirater.Rating{r(0, 0, 0)}, []string{"a", "b"}, `multirater: rater "b" has no ratings`, nil, false},
	}
	for _, tc := range cases {
		d := Design{What: "Data", ItemIDs: []string{"x", "y"}, RaterIDs: tc.raters, K: 2, Ratings: tc.ratings, Words: words, Repeats: tc.repeats}
		counts, err := d.Check()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			for l, c := range tc.counts {
				if counts[l] != c {
					t.Errorf("%s: rater %d has %d ratings, want %d", tc.name, l, counts[l], c)
				}
			}
			continue
		}
		var de *multirater.DataError
		if !errors.As(err, &de) || err.Error() != tc.want || "multirater: "+de.Msg != tc.want {
			t.Errorf("%s: error %v, want DataError %q", tc.name, err, tc.want)
		}
	}
}

func TestCheckPanics(t *testing.T) {
	cases := map[string]Design{
		"no raters":    {What: "Data", ItemIDs: []string{"x"}, K: 2},
		"one level":    {What: "Data", ItemIDs: []string{"x"}, RaterIDs: []string{"a"}, K: 1},
		"out of range": {What: "Data", ItemIDs: []string{"x"}, RaterIDs: []string{"a"}, K: 2, Ratings: []multirater.Rating{{Item: 1}}, Words: Words{Noun: "ratings"}},
	}
	for name, d := range cases {
		testutil.Panics(t, name, "multirater: ", func() { d.Check() })
	}
}

func TestRefRater(t *testing.T) {
	ids := []string{"a", "b", "c"}
	counts := []int{3, 5, 5}
	cases := []struct {
		id   string
		want int
		err  bool
	}{{"", 1, false}, {"c", 2, false}, {"a", 0, false}, {"z", -1, true}}
	for _, tc := range cases {
		got, err := RefRater(ids, tc.id, counts)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("RefRater(%q) = %d, %v; want %d (error %v)", tc.id, got, err, tc.want, tc.err)
		}
		var de *multirater.DataError
		if tc.err && !errors.As(err, &de) {
			t.Errorf("RefRater(%q): error %T is not a DataError", tc.id, err)
		}
	}
}

func TestRepeated(t *testing.T) {
	r := func(i, l int) multirater.Rating { return multirater.Rating{Item: i, Rater: l} }
	if Repeated([]multirater.Rating{r(0, 0), r(0, 1), r(1, 0)}) || !Repeated([]multirater.Rating{r(0, 0), r(1, 0), r(0, 0)}) {
		t.Error("Repeated is wrong")
	}
}

// TestByItem: observations grouped by item in increasing order, an
// unrated item with an empty range.
func TestByItem(t *testing.T) {
	obsItem := []int32{2, 0, 2, 1, 0}
	start, obs := ByItem(4, []int{2, 1, 2, 0}, obsItem)
	wantStart := []int{0, 2, 3, 5, 5}
	wantObs := []int32{1, 4, 3, 0, 2}
	if !slices.Equal(start, wantStart) || !slices.Equal(obs, wantObs) {
		t.Errorf("ByItem: start %v obs %v, want %v %v", start, obs, wantStart, wantObs)
	}
}
