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
	// Candidates are the candidates in their listed order (Choose's fit
	// order; ChooseInOrder's may differ), the best marked Chosen; a candidate that failed has Error. Fits holds
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
	return ChooseInOrder(ctx, cands, nil, progress, fit)
}

// ChooseInOrder is Choose fitting the candidates in the order order (a
// permutation of their indices; nil is 0, 1, ...), so that a candidate
// can start from one listed after it. The candidates keep their listed
// order in the choice and the document, and the choice is Choose's: the
// largest score wins, the first listed one among equals, whatever the
// order of the fits; the error returned when every candidate fails is the
// first fitted one's. It panics when order is not a permutation.
func ChooseInOrder[T any](ctx context.Context, cands []multirater.ModelCandidate, order []int, progress func(multirater.Progress),
	fit func(ctx context.Context, k int, c *multirater.ModelCandidate, progress func(multirater.Progress)) (T, float64, error)) (*Choice[T], error) {
	if order == nil {
		order = make([]int, len(cands))
		for k := range order {
			order[k] = k
		}
	}
	seen := make([]bool, len(cands))
	for _, k := range order {
		if k < 0 || k >= len(cands) || seen[k] {
			panic(fmt.Sprintf("infer: order %v is not a permutation of %d candidates", order, len(cands)))
		}
		seen[k] = true
	}
	if len(order) != len(cands) {
		panic(fmt.Sprintf("infer: order %v is not a permutation of %d candidates", order, len(cands)))
	}
	ch := &Choice[T]{Candidates: cands, Fits: make([]T, len(cands)), Best: -1, Second: -1, start: time.Now()}
	scores := make([]float64, len(cands))
	// better says whether candidate a beats candidate b: a larger score,
	// or an equal one listed first.
	better := func(a, b int) bool { return scores[a] > scores[b] || scores[a] == scores[b] && a < b }
	var firstErr error
	for i, k := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := &cands[k]
		t0 := time.Now()
		f, score, err := fit(ctx, k, c, multirater.CandidateProgress(progress, i, len(cands), ch.start, c.Name))
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
		case ch.Best < 0 || better(k, ch.Best):
			ch.Best, ch.Second = k, ch.Best
		case ch.Second < 0 || better(k, ch.Second):
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
