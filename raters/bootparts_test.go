package raters

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// partsRatings are seeded random ratings of n items by 5 raters (each
// rates an item with probability 0.8), k categories (0: continuous, 1..5).
func partsRatings(n, k int, seed uint64) *Ratings {
	rnd := rand.New(rand.NewPCG(seed, 1))
	r := NewRatings(n, 5, k)
	kk := k
	if k == 0 {
		kk = 5
	}
	for i := 0; i < n; i++ {
		truth := rnd.IntN(kk)
		for j := 0; j < 5; j++ {
			if rnd.Float64() > 0.8 {
				continue
			}
			v := truth
			if rnd.Float64() < 0.3 {
				v = rnd.IntN(kk)
			}
			if k == 0 {
				r.Add(i, j, float64(v+1)+rnd.Float64())
			} else {
				r.Add(i, j, float64(v))
			}
		}
	}
	return r
}

// TestReplicatesSplit: the bootstrap computed as ranges of replicates
// (AnalyzeReplicates, in any order, joined by MergeReplicates, through
// their binary encoding) gives the report of the bootstrap run in one
// analysis, bit for bit (its JSON, NaNs included), however it is split.
func TestReplicatesSplit(t *testing.T) {
	const B = 60
	for _, tc := range []struct {
		name   string
		level  Level
		k      int
		splits [][2]int
	}{
		{"nominal", Nominal, 3, [][2]int{{0, 60}}},
		{"nominal", Nominal, 3, [][2]int{{41, 60}, {0, 7}, {7, 41}}},
		{"ordinal", Ordinal, 5, [][2]int{{0, 30}, {30, 60}}},
		{"interval", Interval, 0, [][2]int{{0, 1}, {1, 59}, {59, 60}}},
	} {
		r := partsRatings(40, tc.k, 7)
		o := Options{Level: tc.level, Bootstrap: B, Seed: 11}
		one, err := AnalyzeContext(context.Background(), r, o)
		if err != nil {
			t.Fatal(err)
		}
		var parts []*Replicates
		for _, s := range tc.splits {
			p, err := AnalyzeReplicates(context.Background(), r, o, s[0], s[1])
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Values) == 0 {
				t.Fatalf("%s %v: no bootstrapped estimates", tc.name, s)
			}
			b, err := p.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var back Replicates
			if err := back.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, &back)
		}
		all, err := MergeReplicates(parts)
		if err != nil {
			t.Fatal(err)
		}
		o.Replicates = all
		split, err := AnalyzeContext(context.Background(), r, o)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(one)
		b, _ := json.Marshal(split)
		if string(a) != string(b) {
			t.Errorf("%s split %v: the report differs from the one-process bootstrap's", tc.name, tc.splits)
		}
		if !strings.Contains(string(a), `"bootstrap"`) {
			t.Errorf("%s: no bootstrap interval in the report", tc.name)
		}
		// A replicate's values do not depend on the range it was computed in.
		if tc.name == "nominal" && len(tc.splits) > 1 {
			whole, err := AnalyzeReplicates(context.Background(), r, o0(o), 0, B)
			if err != nil {
				t.Fatal(err)
			}
			for d := range whole.Values {
				for x := range whole.Values[d] {
					if math.Float64bits(whole.Values[d][x]) != math.Float64bits(all.Values[d][x]) {
						t.Fatalf("estimate %d replicate %d: %v in one range, %v split", d, x, whole.Values[d][x], all.Values[d][x])
					}
				}
			}
		}
	}
}

// o0 is o without its replicates.
func o0(o Options) Options {
	o.Replicates = nil
	return o
}

// TestReplicatesRefused: replicates that are not this analysis' whole
// bootstrap, ranges that do not follow each other and damaged encodings
// are errors.
func TestReplicatesRefused(t *testing.T) {
	r := partsRatings(30, 3, 2)
	o := Options{Level: Nominal, Bootstrap: 20, Seed: 1}
	p1, err := AnalyzeReplicates(context.Background(), r, o, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := AnalyzeReplicates(context.Background(), r, o, 12, 20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := MergeReplicates([]*Replicates{p1, p2}); err == nil || !strings.Contains(err.Error(), "do not follow") {
		t.Errorf("a gap: %v", err)
	}
	o.Replicates = p1
	if _, err := AnalyzeContext(context.Background(), r, o); err == nil || !strings.Contains(err.Error(), "this analysis has 20 replicates") {
		t.Errorf("half the replicates: %v", err)
	}
	b, _ := p1.MarshalBinary()
	var back Replicates
	for _, bad := range [][]byte{b[:10], b[:len(b)-8], append(b[:len(b):len(b)], 0)} {
		if err := back.UnmarshalBinary(bad); err == nil {
			t.Errorf("%d bytes of %d decoded", len(bad), len(b))
		}
	}
}
