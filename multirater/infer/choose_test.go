package infer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"concord/multirater"
)

// TestChoose: the largest score wins (the first among equals), a failed
// candidate drops out with its error and a note, every candidate failing
// returns the first error, and Report writes the choice into the document;
// ChooseInOrder fits in its order and chooses as Choose does (the first
// listed among equals, the first fitted one's error).
func TestChoose(t *testing.T) {
	errA, errB := errors.New("a failed"), errors.New("b failed")
	for _, c := range []struct {
		name          string
		scores        []float64
		errs          []error
		order         []int
		best, second  int
		wantErr       error
		wantNote      string
		wantCandError string
	}{
		{name: "largest wins", scores: []float64{1, 3, 2}, errs: make([]error, 3), best: 1, second: 2},
		{name: "first among equals", scores: []float64{2, 2, 1}, errs: make([]error, 3), best: 0, second: 1},
		{name: "one fitted", scores: []float64{0, 5}, errs: []error{errA, nil}, best: 1, second: -1,
			wantNote: "candidate c0 failed and was left out: a failed", wantCandError: "a failed"},
		{name: "all fail", scores: []float64{0, 0}, errs: []error{errA, errB}, wantErr: errA},
		{name: "reversed, largest wins", scores: []float64{1, 3, 2}, errs: make([]error, 3), order: []int{2, 1, 0}, best: 1, second: 2},
		{name: "reversed, first listed among equals", scores: []float64{2, 2, 1}, errs: make([]error, 3), order: []int{2, 1, 0}, best: 0, second: 1},
		{name: "pairs swapped, equal seconds", scores: []float64{1, 3, 1, 1}, errs: make([]error, 4), order: []int{1, 0, 3, 2}, best: 1, second: 0},
		{name: "reversed, all fail", scores: []float64{0, 0}, errs: []error{errA, errB}, order: []int{1, 0}, wantErr: errB},
	} {
		t.Run(c.name, func(t *testing.T) {
			cands := make([]multirater.ModelCandidate, len(c.scores))
			for i := range cands {
				cands[i].Name = "c" + string(rune('0'+i))
			}
			var fitted []int
			ch, err := ChooseInOrder(context.Background(), cands, c.order, nil, func(_ context.Context, k int, cand *multirater.ModelCandidate, _ func(multirater.Progress)) (int, float64, error) {
				fitted = append(fitted, k)
				if c.errs[k] != nil {
					return 0, 0, c.errs[k]
				}
				return 10 + k, c.scores[k], nil
			})
			if c.order != nil && fmt.Sprint(fitted) != fmt.Sprint(c.order) {
				t.Errorf("fitted in order %v, want %v", fitted, c.order)
			}
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || ch != nil {
					t.Fatalf("got %v, %v; want error %v", ch, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ch.Best != c.best || ch.Second != c.second || ch.Fits[c.best] != 10+c.best {
				t.Fatalf("best %d second %d fits %v, want %d %d", ch.Best, ch.Second, ch.Fits, c.best, c.second)
			}
			for i, cand := range ch.Candidates {
				if cand.Chosen != (i == c.best) {
					t.Errorf("candidate %d chosen %v", i, cand.Chosen)
				}
			}
			if c.wantCandError != "" && ch.Candidates[0].Error != c.wantCandError {
				t.Errorf("candidate error %q, want %q", ch.Candidates[0].Error, c.wantCandError)
			}
			var res multirater.FitResult
			res.Diagnostics.Notes = []string{"fit"}
			done := false
			ch.Report(&res, "by the score", "why", func(p multirater.Progress) { done = p.Phase == "done" && p.Fraction == 1 })
			want := "chosen among " + strings.Join(names(cands), ", ") + " by the score: why"
			if res.Diagnostics.Choice != want || len(res.Diagnostics.ModelCandidates) != len(cands) || !done {
				t.Errorf("choice %q (candidates %d, done %v), want %q", res.Diagnostics.Choice, len(res.Diagnostics.ModelCandidates), done, want)
			}
			wantNotes := []string{"fit", want}
			if c.wantNote != "" {
				wantNotes = append(wantNotes, c.wantNote)
			}
			if strings.Join(res.Diagnostics.Notes, "|") != strings.Join(wantNotes, "|") {
				t.Errorf("notes %q, want %q", res.Diagnostics.Notes, wantNotes)
			}
		})
	}
}

// TestChooseInOrderPanics: an order that is not a permutation of the
// candidates is a caller bug.
func TestChooseInOrderPanics(t *testing.T) {
	for _, order := range [][]int{{0}, {0, 0}, {0, 2}, {1, 0, 2}, {-1, 0}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.HasPrefix(fmt.Sprint(r), "infer: order") {
					t.Errorf("order %v: recovered %v, want an infer panic", order, r)
				}
			}()
			cands := make([]multirater.ModelCandidate, 2)
			ChooseInOrder(context.Background(), cands, order, nil, func(context.Context, int, *multirater.ModelCandidate, func(multirater.Progress)) (int, float64, error) {
				return 0, 0, nil
			})
		}()
	}
}

func names(cands []multirater.ModelCandidate) []string {
	var out []string
	for _, c := range cands {
		out = append(out, c.Name)
	}
	return out
}
