package annotations

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// adultRepeats is a piece of AdultContent2 (testdata/README.md): 100 labels
// of 13 sites by 56 workers, 7 (site, worker) pairs labelled twice; worker
// w002 gave site 143 an X and then a G.
const adultRepeats = "testdata/adultcontent2_repeats.csv"

func loadRepeats(t *testing.T, mode Duplicates) (*Dataset, error) {
	t.Helper()
	s := MustParseScheme("ordinal:G,P,R,X")
	l, err := LoadFiles(adultRepeats, LoadOptions{Scheme: &s, ReadOptions: ReadOptions{Duplicates: mode}})
	if err != nil {
		return nil, err
	}
	return l.Dataset, nil
}

func pairLabels(ds *Dataset, item, rater string) []string {
	var out []string
	for _, l := range ds.Labels {
		if l.Item == item && l.Rater == rater {
			out = append(out, l.Value)
		}
	}
	return out
}

// TestDuplicatesModes reads a crowd file with repeated labels under each
// setting: error names every repeat and the flag, first keeps the first in
// file order and counts the rest, keep keeps all of them in file order.
func TestDuplicatesModes(t *testing.T) {
	for _, mode := range []Duplicates{"", DuplicatesError} {
		_, err := loadRepeats(t, mode)
		var pl *ProblemList
		if !asProblems(err, &pl) || pl.Len() != 7 {
			t.Fatalf("mode %q: %v, want 7 problems", mode, err)
		}
		msg := ErrorMessage(err)
		for _, want := range []string{`adultcontent2_repeats.csv:`, `duplicate label for item "143" by rater "w002": another label was given at line`, "--duplicates keep|first"} {
			if !strings.Contains(msg, want) {
				t.Errorf("mode %q: message lacks %q:\n%s", mode, want, msg)
			}
		}
	}

	first, err := loadRepeats(t, DuplicatesFirst)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Labels) != 93 || first.Dropped != 7 || first.Repeats() != 0 {
		t.Errorf("first: %d labels, %d dropped, %d repeats; want 93, 7, 0", len(first.Labels), first.Dropped, first.Repeats())
	}
	if got := pairLabels(first, "143", "w002"); !reflect.DeepEqual(got, []string{"X"}) {
		t.Errorf("first: site 143 by w002 = %v, want [X]", got)
	}

	keep, err := loadRepeats(t, DuplicatesKeep)
	if err != nil {
		t.Fatal(err)
	}
	if len(keep.Labels) != 100 || keep.Dropped != 0 || keep.Repeats() != 7 {
		t.Errorf("keep: %d labels, %d dropped, %d repeats; want 100, 0, 7", len(keep.Labels), keep.Dropped, keep.Repeats())
	}
	if got := pairLabels(keep, "143", "w002"); !reflect.DeepEqual(got, []string{"X", "G"}) {
		t.Errorf("keep: site 143 by w002 = %v, want [X G] (file order)", got)
	}
	if got := pairLabels(keep, "1", "w002"); !reflect.DeepEqual(got, []string{"G", "G"}) {
		t.Errorf("keep: site 1 by w002 = %v, want [G G]", got)
	}

	// The long formats round-trip the kept repeats; the wide layout, one
	// cell per item and rater, refuses them and says why.
	for _, w := range writers {
		ro := w.read
		ro.Duplicates = DuplicatesKeep
		w.read = ro
		got, err := roundTrip(t, keep, w)
		if strings.Contains(w.name, "wide") {
			if err == nil || !strings.Contains(err.Error(), "export in long form") {
				t.Errorf("%s: %v, want a refusal naming the long form", w.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if !reflect.DeepEqual(got, keep) {
			t.Errorf("%s: round trip changed the labels", w.name)
		}
	}

	if _, err := ParseDuplicates("all"); err == nil || !strings.Contains(err.Error(), "keep, first or error") {
		t.Errorf("ParseDuplicates(all) = %v", err)
	}
	for in, want := range map[string]Duplicates{"": DuplicatesError, "KEEP": DuplicatesKeep, " first ": DuplicatesFirst, "error": DuplicatesError} {
		if got, err := ParseDuplicates(in); err != nil || got != want {
			t.Errorf("ParseDuplicates(%q) = %q, %v", in, got, err)
		}
	}
}

func asProblems(err error, pl **ProblemList) bool { return errors.As(err, pl) }

// TestDuplicatesFirstCSVOrder: under first, "first" is file order whatever
// the sort order of the ids.
func TestDuplicatesFirstCSVOrder(t *testing.T) {
	in := "item_id,rater_id,label\nb,r1,2\na,r1,1\nb,r1,3\na,r2,2\nb,r1,1\n"
	p, err := ReadLabels(bytes.NewReader([]byte(in)), ReadOptions{Name: "x.csv"})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := BuildDataset(MustParseScheme("ordinal:1..3"), p, nil, ReadOptions{Duplicates: DuplicatesFirst})
	if err != nil {
		t.Fatal(err)
	}
	want := []Label{{Item: "a", Rater: "r1", Value: "1"}, {Item: "a", Rater: "r2", Value: "2"}, {Item: "b", Rater: "r1", Value: "2"}}
	if !reflect.DeepEqual(ds.Labels, want) || ds.Dropped != 2 {
		t.Errorf("labels %v (dropped %d), want %v (dropped 2)", ds.Labels, ds.Dropped, want)
	}
}
