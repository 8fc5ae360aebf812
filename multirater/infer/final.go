package infer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
)

// FinalApprox is the approximation of a final run (FinalRun) on the prior
// that What describes, and the run's wall time (its prior built, then the
// run).
type FinalApprox struct {
	A    *Approx
	What string
	Took time.Duration
}

// FinalRun makes the approximation of prob (its evidence maximised, every
// owner's likelihood at the optimum) once more on the prior that final
// gives, with every rater parameter held at its learnt value: one EP run
// or one Newton's method, nothing for the evidence to maximise (infer.Fit
// with every parameter fixed), at the engine's final tolerances. The
// likelihoods keep their values (read with ParamsTo, set again). The
// ordinal and bounded families make it for the fit they keep, after the
// evidence maximisation on a low-rank prior of a small rank (their
// Data.Final).
func FinalRun(ctx context.Context, final func(context.Context) (mat.Symmetric, string, error), prob *Problem, progress func(multirater.Progress)) (*FinalApprox, error) {
	t0 := time.Now()
	if progress != nil {
		progress(multirater.Progress{Fraction: 1, Phase: "final run: building its prior"})
	}
	cov, what, err := final(ctx)
	if err != nil {
		return nil, err
	}
	q := *prob
	q.Cov, q.Restarts, q.Replica, q.Progress, q.WarmEP = cov, 1, nil, nil, nil
	var cur []float64
	for _, o := range prob.Liks {
		if o != nil {
			at := len(cur)
			cur = append(cur, make([]float64, o.NumParams())...)
			o.ParamsTo(cur[at:])
		}
	}
	q.Fixed = func(int, int) bool { return true }
	q.Start = func(_ int, _ *rand.Rand, dst []float64) { copy(dst, cur) }
	if progress != nil {
		progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(t0), Phase: "final run: " + what})
	}
	// Start 0 of a problem with nothing free draws nothing from the
	// generator: the fit's own stays as it was.
	a, err := Fit(ctx, &q, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, err
	}
	return &FinalApprox{A: a, What: what, Took: time.Since(t0)}, nil
}

// Note says what the final run was, for the fit's notes: its prior, its
// log evidence (the one the document reports) and the evidence
// maximisation's, search's, on the fit's first prior.
func (f *FinalApprox) Note(engine string, search *Approx) string {
	what := "EP"
	if engine == multirater.EngineLaplace {
		what = "Laplace's method"
	}
	return fmt.Sprintf("final run: %s once more on %s with the rater parameters held at the values the evidence maximisation learnt, %d iterations, %.1f s; its log evidence %.4f is the one reported (the evidence maximisation's on the fit's first prior: %.4f; the choice among candidates, the rater parameters' intervals and the Laplace fit's EP check are on that prior)",
		what, f.What, f.A.Iterations, f.Took.Seconds(), f.A.LogZ, search.LogZ)
}
