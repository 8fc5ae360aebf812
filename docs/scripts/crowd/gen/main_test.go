package main

import (
	"os"
	"path/filepath"
	"testing"

	"concord/internal/testutil"
)

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	rows := testutil.ReadCSV(t, path)
	return rows[1:]
}

func bedNamed(t *testing.T, name string) bed {
	for _, b := range beds() {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("no bed %q", name)
	return bed{}
}

// TestDeterministic: a bed is the same for the same seed, and not for
// another.
func TestDeterministic(t *testing.T) {
	b := bedNamed(t, "k2_5class")
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	for x, d := range dirs {
		if _, err := write(d, b, uint64(1+x/2)); err != nil {
			t.Fatal(err)
		}
	}
	read := func(d string) string {
		s, err := os.ReadFile(filepath.Join(d, "ratings.csv"))
		if err != nil {
			t.Fatal(err)
		}
		return string(s)
	}
	if read(dirs[0]) != read(dirs[1]) {
		t.Errorf("seed 1 twice: different ratings")
	}
	if read(dirs[0]) == read(dirs[2]) {
		t.Errorf("seeds 1 and 2: the same ratings")
	}
}

// TestLayout checks every bed's files against its description: labels
// per item within [KLo, KHi] distinct raters, repeats only where the bed
// has them, every label a class, gold on the stated share of items.
func TestLayout(t *testing.T) {
	for _, b := range beds() {
		if testing.Short() && b.Items > 5000 {
			continue
		}
		dir := t.TempDir()
		st, err := write(dir, b, 1)
		if err != nil {
			t.Fatal(err)
		}
		ratings := readCSV(t, filepath.Join(dir, "ratings.csv"))
		items := readCSV(t, filepath.Join(dir, "items.csv"))
		if len(ratings) != st.labels || len(items) != b.Items {
			t.Errorf("%s: %d ratings, %d items; want %d, %d", b.Name, len(ratings), len(items), st.labels, b.Items)
		}
		class := map[string]bool{}
		for _, c := range b.Classes {
			class[c] = true
		}
		raters := map[string]map[string]int{}
		repeats := 0
		for _, r := range ratings {
			if !class[r[2]] {
				t.Fatalf("%s: label %q is not a class", b.Name, r[2])
			}
			if raters[r[0]] == nil {
				raters[r[0]] = map[string]int{}
			}
			raters[r[0]][r[1]]++
			if raters[r[0]][r[1]] > 1 {
				repeats++
			}
		}
		for id, rs := range raters {
			if len(rs) < b.KLo || len(rs) > b.KHi {
				t.Errorf("%s: item %s has %d raters, want %d-%d", b.Name, id, len(rs), b.KLo, b.KHi)
				break
			}
		}
		if (repeats > 0) != (b.Repeat > 0) {
			t.Errorf("%s: %d repeated labels with Repeat %v", b.Name, repeats, b.Repeat)
		}
		nGold := 0
		for _, it := range items {
			if it[1] != "" {
				nGold++
				if !class[it[1]] {
					t.Fatalf("%s: gold %q is not a class", b.Name, it[1])
				}
			}
		}
		want := b.Gold
		if want == 0 {
			want = 1
		}
		if g := float64(nGold) / float64(b.Items); g < want-0.03 || g > want+0.03 {
			t.Errorf("%s: gold on %.3f of the items, want %.2f", b.Name, g, want)
		}
	}
}

// TestRaterRows: every rater's confusion rows are distributions, a
// spammer's are uniform and a grader's errors are mostly off by one.
func TestRaterRows(t *testing.T) {
	for _, name := range []string{"spammers_entity", "adversarial_4class", "graded_sentiment5"} {
		b := bedNamed(t, name)
		k := len(b.Classes)
		for _, r := range makeRaters(newRNG(1, b.Name), b) {
			for c, row := range r.conf {
				s := 0.0
				for _, p := range row {
					s += p
				}
				if s < 1-1e-9 || s > 1+1e-9 {
					t.Fatalf("%s %s row %d sums to %v", name, r.id, c, s)
				}
				switch r.kind {
				case spam:
					for _, p := range row {
						if p != 1/float64(k) {
							t.Fatalf("%s spammer %s row %d: %v", name, r.id, c, row)
						}
					}
				case grader:
					near, far := 0.0, 0.0
					for x, p := range row {
						switch d := x - c; {
						case d == 1 || d == -1:
							near += p
						case d > 1 || d < -1:
							far += p
						}
					}
					if far > near {
						t.Fatalf("%s grader %s row %d: off by more than one (%.3f) beats off by one (%.3f)", name, r.id, c, far, near)
					}
				}
			}
		}
	}
}
