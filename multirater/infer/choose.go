package infer

import (
	"context"
	"fmt"
	"strings"
	"time"

	"concord/multirater"
)

// Choice is a model choice among candidates (the bounded model's
// likelihoods, dispersion sharings and kernels; the ordinal model's noise
// models and kernels): every candidate with its scores, its fit, and the
// best and second best by the score the choice compares.
type Choice[T any] struct {
	// Candidates are the candidates in the order they were fitted, the
	// best marked Chosen; a candidate that failed has Error. Fits holds
	// each one's fit (the zero T for a failed one).
	Candidates []multirater.ModelCandidate
	Fits       []T
	// Best and Second index the candidates with the largest and second
	// largest score (Second is -1 with one candidate fitted).
	Best, Second int
	// notes say which candidates failed and why.
	notes []string
	start time.Time
}

// Choose fits the candidates cands (their names and settings filled in) in
// order, each by fit with the candidate's progress callback
// (multirater.CandidateProgress of progress), which fills the candidate's
// scores on success and returns its fit and the score the choice compares;
// the largest score wins, the first one among equals. A candidate that
// fails drops out with a note and its error in the document; Choose
// returns the first candidate's error when every candidate fails, and the
// context's error when it is done.
func Choose[T any](ctx context.Context, cands []multirater.ModelCandidate, progress func(multirater.Progress),
	fit func(ctx context.Context, k int, c *multirater.ModelCandidate, progress func(multirater.Progress)) (T, float64, error)) (*Choice[T], error) {
	ch := &Choice[T]{Candidates: cands, Fits: make([]T, len(cands)), Best: -1, Second: -1, start: time.Now()}
	scores := make([]float64, len(cands))
	var firstErr error
	for k := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := &cands[k]
		t0 := time.Now()
		f, score, err := fit(ctx, k, c, multirater.CandidateProgress(progress, k, len(cands), ch.start, c.Name))
		c.Seconds = time.Since(t0).Seconds()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if firstErr == nil {
				firstErr = err
			}
			c.Error = err.Error()
			ch.notes = append(ch.notes, fmt.Sprintf("candidate %s failed and was left out: %v", c.Name, err))
			continue
		}
		ch.Fits[k], scores[k] = f, score
		switch {
		case ch.Best < 0 || score > scores[ch.Best]:
			ch.Best, ch.Second = k, ch.Best
		case ch.Second < 0 || score > scores[ch.Second]:
			ch.Second = k
		}
	}
	if ch.Best < 0 {
		return nil, firstErr
	}
	cands[ch.Best].Chosen = true
	return ch, nil
}

// Report writes the choice into the chosen fit's document res: the
// candidates (diagnostics.model_candidates), the choice in words,
// "chosen among A, B how: why" (diagnostics.choice, also the first of the
// notes added), the failed candidates' notes and the seconds since the
// choice started; then it reports the choice done to progress.
func (ch *Choice[T]) Report(res *multirater.FitResult, how, why string, progress func(multirater.Progress)) {
	names := make([]string, len(ch.Candidates))
	for i, c := range ch.Candidates {
		names[i] = c.Name
	}
	d := &res.Diagnostics
	d.ModelCandidates = ch.Candidates
	d.Choice = "chosen among " + strings.Join(names, ", ") + " " + how + ": " + why
	d.Notes = append(d.Notes, d.Choice)
	d.Notes = append(d.Notes, ch.notes...)
	d.Seconds = time.Since(ch.start).Seconds()
	if progress != nil {
		progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(ch.start), Phase: "done"})
	}
}
