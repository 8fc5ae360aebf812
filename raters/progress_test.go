package raters

import (
	"sync"
	"testing"
)

// TestBootstrapProgress: Options.Progress hears of every replicate, the
// last call with done = total, and the intervals do not depend on it.
func TestBootstrapProgress(t *testing.T) {
	r := NewRatings(30, 4, 3)
	for i := 0; i < 30; i++ {
		for j := 0; j < 4; j++ {
			r.Add(i, j, float64((i+j*(i%3))%3))
		}
	}
	var mu sync.Mutex
	calls, maxDone, total := 0, 0, 0
	o := Options{Level: Nominal, Bootstrap: 50, Seed: 3, Progress: func(done, n int) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		maxDone, total = max(maxDone, done), n
	}}
	with, err := Analyze(r, o)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 50 || maxDone != 50 || total != 50 {
		t.Errorf("progress: %d calls, max done %d of %d; want 50 of 50", calls, maxDone, total)
	}
	o.Progress = nil
	without, err := Analyze(r, o)
	if err != nil {
		t.Fatal(err)
	}
	if with.FleissKappa.CILow != without.FleissKappa.CILow || with.FleissKappa.CIHigh != without.FleissKappa.CIHigh {
		t.Errorf("intervals differ with progress: %v vs %v", with.FleissKappa, without.FleissKappa)
	}
}
