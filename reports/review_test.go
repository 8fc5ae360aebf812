package reports

import (
	"strconv"
	"strings"
	"testing"
)

// TestReviewQueue checks the review queue of every kind of report: it
// holds every flag and the least probable other labels, least probable
// first, for the ordinal, classification and robust models even where
// nothing is flagged; reports of values list their flags only. The
// Review sheet has one row per label with the item's consensus and
// observed agreement.
func TestReviewQueue(t *testing.T) {
	for _, tc := range []struct {
		c      reportCase
		lowest bool // the report has a Lowest list
	}{
		{ordinalCase(t), true},
		{nominalCase(t), true},
		{robustCase(t), true},
		{binaryCase(t), false}, // a synthetic fit without rater_class_probs
		{boundedCase(t), false},
	} {
		t.Run(tc.c.name, func(t *testing.T) {
			rep := tc.c.rep
			if got := len(rep.Lowest) > 0; got != tc.lowest {
				t.Fatalf("%d lowest labels, want some: %v", len(rep.Lowest), tc.lowest)
			}
			rows := Review(rep)
			seen := map[[2]string]bool{}
			for i, r := range rows {
				if i > 0 && r.Prob < rows[i-1].Prob {
					t.Errorf("row %d: probability %v after %v", i, r.Prob, rows[i-1].Prob)
				}
				seen[[2]string{r.Item, r.Rater}] = true
				it := &rep.Items[r.Position-1]
				if it.ID != r.Item || r.NRaters != it.NRaters || r.Consensus != it.Consensus {
					t.Errorf("row %d (%s, %s): item %s, %d raters, consensus %q; the item has %d raters, consensus %q", i, r.Item, r.Rater, it.ID, r.NRaters, r.Consensus, it.NRaters, it.Consensus)
				}
			}
			for _, f := range append(append([]Flag(nil), rep.Flags...), rep.Lowest...) {
				if !seen[[2]string{f.Item, f.Rater}] {
					t.Errorf("label (%s, %s) is not in the review queue", f.Item, f.Rater)
				}
			}
			if len(rows) > len(rep.Flags)+len(rep.Lowest) || len(rows) < max(len(rep.Flags), len(rep.Lowest)) {
				t.Errorf("%d rows for %d flags and %d lowest labels", len(rows), len(rep.Flags), len(rep.Lowest))
			}

			f := openBook(t, rep, XLSXOptions{NoCharts: true}).f
			got, err := f.GetRows(SheetReview)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) < len(rows)+1 {
				t.Fatalf("Review sheet: %d rows for %d labels", len(got), len(rows))
			}
			hdr := strings.Join(got[0], "|")
			want := "Item consensus"
			if rep.Kind == KindValues {
				want = "Item value"
			}
			for _, h := range []string{"#", "Item", "Rater", want, "Raters", "Item position"} {
				if !strings.Contains("|"+hdr+"|", "|"+h+"|") {
					t.Errorf("Review header %q lacks %q", hdr, h)
				}
			}
			for i, r := range rows {
				if got[i+1][0] != strconv.Itoa(i+1) || got[i+1][1] != r.Item {
					t.Errorf("Review row %d: %v, want item %s", i+1, got[i+1][:2], r.Item)
				}
			}
			note := got[len(got)-1][0]
			if !strings.Contains(note, "probab") {
				t.Errorf("Review note %q", note)
			}
		})
	}
}

// TestItemMajority checks the items' observed agreement: the majority
// label, ties broken by level order, and the share of labels equal to it.
func TestItemMajority(t *testing.T) {
	b := &builder{fit: &Fit{Levels: []string{"0", "1", "2"}}}
	for _, tc := range []struct {
		labels map[string]string
		want   string
		tie    bool
		share  float64
	}{
		{map[string]string{"a": "1", "b": "1", "c": "2"}, "1", false, 2.0 / 3},
		{map[string]string{"a": "2", "b": "0"}, "0", true, 0.5},
		{map[string]string{"a": "2", "b": "2", "c": "2", "d": "2"}, "2", false, 1},
		{map[string]string{"a": "2", "b": "1", "c": "0"}, "0", true, 1.0 / 3},
	} {
		m, tie, share := b.majority(tc.labels)
		if m != tc.want || tie != tc.tie || float64(share) != tc.share {
			t.Errorf("%v: majority %q tie %v share %v, want %q %v %v", tc.labels, m, tie, share, tc.want, tc.tie, tc.share)
		}
	}
	if m, tie, share := b.majority(nil); m != "" || tie || share.Valid() {
		t.Errorf("no labels: %q %v %v", m, tie, share)
	}
	for _, c := range []reportCase{ordinalCase(t), boundedCase(t)} {
		for _, it := range c.rep.Items {
			if it.NRaters != len(it.Labels) {
				t.Errorf("%s: item %s: %d raters, %d labels", c.name, it.ID, it.NRaters, len(it.Labels))
			}
			if c.rep.Kind == KindValues && (it.Majority != "" || it.MajorityShare.Valid()) {
				t.Errorf("%s: item %s of values has a majority %q (%v)", c.name, it.ID, it.Majority, it.MajorityShare)
			}
			if c.rep.Kind != KindValues && len(it.Labels) > 0 && !(it.MajorityShare > 0 && it.MajorityShare <= 1) {
				t.Errorf("%s: item %s: observed agreement %v", c.name, it.ID, it.MajorityShare)
			}
		}
	}
}
