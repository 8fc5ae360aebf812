package infer

import (
	"context"
	"errors"
	"strings"
	"testing"

	"concord/multirater"
)

// TestChoose: the largest score wins (the first among equals), a failed
// candidate drops out with its error and a note, every candidate failing
// returns the first error, and Report writes the choice into the document.
func TestChoose(t *testing.T) {
	errA, errB := errors.New("a failed"), errors.New("b failed")
	for _, c := range []struct {
		name          string
		scores        []float64
		errs          []error
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
	} {
		t.Run(c.name, func(t *testing.T) {
			cands := make([]multirater.ModelCandidate, len(c.scores))
			for i := range cands {
				cands[i].Name = "c" + string(rune('0'+i))
			}
			ch, err := Choose(context.Background(), cands, nil, func(_ context.Context, k int, cand *multirater.ModelCandidate, _ func(multirater.Progress)) (int, float64, error) {
				if c.errs[k] != nil {
					return 0, 0, c.errs[k]
				}
				return 10 + k, c.scores[k], nil
			})
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

func names(cands []multirater.ModelCandidate) []string {
	var out []string
	for _, c := range cands {
		out = append(out, c.Name)
	}
	return out
}
