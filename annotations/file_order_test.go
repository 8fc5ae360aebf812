package annotations

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFileOrder checks Loaded.FileOrder: the labels come back sorted by
// item and rater, and FileOrder gives each one's row among the labels
// kept (a repeated pair dropped under --duplicates first does not count);
// nil when the file is already in that order.
func TestFileOrder(t *testing.T) {
	s := MustParseScheme("nominal:no,yes")
	cases := []struct {
		name, csv string
		mode      Duplicates
		// want lists the labels as item/rater/value in Labels' order,
		// order the FileOrder (nil: none).
		want  []string
		order []int32
	}{
		{"sorted", "item_id,rater_id,label\nt1,w1,no\nt1,w2,yes\nt2,w1,yes\n", DuplicatesError,
			[]string{"t1/w1/no", "t1/w2/yes", "t2/w1/yes"}, nil},
		{"by rater", "item_id,rater_id,label\nt1,w2,no\nt2,w2,yes\nt1,w1,yes\nt2,w1,no\n", DuplicatesError,
			[]string{"t1/w1/yes", "t1/w2/no", "t2/w1/no", "t2/w2/yes"}, []int32{2, 0, 3, 1}},
		{"a repeat dropped", "item_id,rater_id,label\nt2,w1,no\nt1,w1,yes\nt2,w1,yes\nt1,w2,no\n", DuplicatesFirst,
			[]string{"t1/w1/yes", "t1/w2/no", "t2/w1/no"}, []int32{1, 2, 0}},
		{"repeats kept", "item_id,rater_id,label\nt2,w1,no\nt1,w1,yes\nt2,w1,yes\n", DuplicatesKeep,
			[]string{"t1/w1/yes", "t2/w1/no", "t2/w1/yes"}, []int32{1, 0, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "labels.csv")
			if err := os.WriteFile(path, []byte(tc.csv), 0o644); err != nil {
				t.Fatal(err)
			}
			l, err := LoadFiles(path, LoadOptions{Scheme: &s, ReadOptions: ReadOptions{Duplicates: tc.mode}})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, lb := range l.Dataset.Labels {
				got = append(got, lb.Item+"/"+lb.Rater+"/"+lb.Value)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("labels %v, want %v", got, tc.want)
			}
			if !slices.Equal(l.FileOrder, tc.order) || (tc.order == nil) != (l.FileOrder == nil) {
				t.Errorf("FileOrder %v, want %v", l.FileOrder, tc.order)
			}
		})
	}
}
