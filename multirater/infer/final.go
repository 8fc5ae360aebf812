package infer

import (
	"context"
	"fmt"
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
// or one Newton's method, nothing for the evidence to maximise, at the
// engine's final tolerances (the final approximation of infer.Fit). The
// likelihoods keep their values. The ordinal and bounded families make it
// for the fit they keep, after the evidence maximisation on a low-rank
// prior of a small rank (their Data.Final); prob must have no kernel
// terms learnt (Problem.Kernel nil).
//
// EP starts from the sites of search, the evidence maximisation's
// approximation of the same sites at the same parameters (nil: cold), as
// ep.Options.InitTau and InitNu: a site is a Gaussian message of the
// likelihood approximation, not of the prior, so the search's converged
// sites are a valid start on any prior and near where EP settles on a
// nearby one (Minka 2001; a start that does not settle is rerun cold, as
// EP.Approximate does). Newton's method starts at 0 whatever search is:
// the search's mode carried to the new factor (w = G' grad log p, the
// mode's stationarity condition) took 4, 4, 5, 2 and 6 steps where the
// cold start took 4, 4, 4, 4 and 6 in TestFinalRunWarm's problem at
// search ranks 4-20 (branch bnd35g), no reliable saving.
func FinalRun(ctx context.Context, final func(context.Context) (mat.Symmetric, string, error), prob *Problem, search *Approx, progress func(multirater.Progress)) (*FinalApprox, error) {
	if prob.Kernel != nil {
		panic("infer: FinalRun of a problem with kernel terms learnt")
	}
	if len(prob.Owner) != len(prob.Sites) || prob.FactorTol == nil {
		panic("infer: FinalRun's problem needs Owner for every site and FactorTol")
	}
	t0 := time.Now()
	if progress != nil {
		progress(multirater.Progress{Fraction: 1, Phase: "final run: building its prior"})
	}
	cov, what, err := final(ctx)
	if err != nil {
		return nil, err
	}
	q := *prob
	q.Cov = cov
	if progress != nil {
		progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(t0), Phase: "final run: " + what})
	}
	var warm *Approx
	if search != nil && search.EP != nil {
		if len(search.EP.Tau) != len(q.Sites) {
			panic("infer: FinalRun: the search's approximation has the wrong number of sites")
		}
		warm = &Approx{EP: search.EP}
	}
	ob := newObjective(&q, q.NewEngine(), t0)
	theta := make([]float64, ob.size())
	for l, o := range q.Liks {
		if o != nil {
			o.ParamsTo(theta[ob.off[l]:ob.off[l+1]])
		}
	}
	// Parameters that prob.Fixed marks keep these values too (objective.set).
	copy(ob.base, theta)
	a, err := finalApprox(ctx, ob, newPrior(&q), theta, nil, 0, warm)
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
