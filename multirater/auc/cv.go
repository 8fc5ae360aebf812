package auc

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/numeric"
)

// Folds returns a stratified assignment of the items to k folds: the
// positives and the negatives are each shuffled (rng) and dealt to the
// folds in turn, so every fold has floor or ceil of n+/k positives and of
// n-/k negatives.
func Folds(positive []bool, k int, rng *rand.Rand) []int {
	if k < 2 {
		panic(fmt.Sprintf("auc: Folds: k = %d", k))
	}
	fold := make([]int, len(positive))
	pos, neg := splitClasses(positive)
	for _, cls := range [][]int{pos, neg} {
		rng.Shuffle(len(cls), func(a, b int) { cls[a], cls[b] = cls[b], cls[a] })
		for t, i := range cls {
			fold[i] = t % k
		}
	}
	return fold
}

// cvTol is EP's convergence tolerance (ep.PairOptions.Tol) in the folds
// of gamma's cross-validation when Options.EP.Tol is 0, looser than the
// final fit's 1e-6: a fold's fit gives only the order of its held-out
// scores. On the shared scale ladder's 1,000 items (5 folds x 7 gammas)
// six of the seven CV AUCs are those at 1e-6 to the last bit and the
// seventh is 4.4e-5 higher (one held-out pair in one fold), the chosen
// gamma is the same, and the fit takes 14.6 instead of 18.0 CPU s (1e-4:
// every CV AUC the same to the last bit). On Pima.tr (200 items) the CV
// AUC at gamma 1000 moves by 5.5e-4 (one pair of one fold's held-out
// items changes order), the others not, and the chosen gamma (100) is the
// same. The final fit keeps 1e-6.
const cvTol = 1e-3

// crossValidate returns every candidate gamma's k-fold CV AUC (the mean
// over folds of the held-out AUC of the posterior mean scores fitted on
// the other folds; with several candidate kernels, each fold's fit uses
// the one of largest evidence at that gamma) and the candidate with the largest (the smallest gamma
// among equals). A candidate whose fit fails in some fold is left out, with
// a note appended to notes; only when every candidate fails is it an error.
// The covariates are standardised once, before the folds.
func crossValidate(ctx context.Context, x *mat.Dense, y []bool, o *Options, rng *rand.Rand, notes *[]string) ([]CVRow, float64, error) {
	pos, neg := splitClasses(y)
	if len(pos) < o.Folds || len(neg) < o.Folds {
		return nil, 0, multirater.DataErrorf("auc: %d positive and %d negative items are too few for %d cross-validation folds", len(pos), len(neg), o.Folds)
	}
	fold := Folds(y, o.Folds, rng)
	// The folds run concurrently (up to GOMAXPROCS), each with its own
	// generator seeded in fold order from rng, so that the result does
	// not depend on the machine.
	seeds := make([]uint64, o.Folds)
	for f := range seeds {
		seeds[f] = rng.Uint64()
	}
	aucs := make([][]float64, len(o.GammaGrid))
	for g := range aucs {
		aucs[g] = make([]float64, o.Folds)
	}
	// The folds' fits converge EP to cvTol unless Options.EP.Tol is set
	// (TestCrossValidateTol).
	fo := *o
	if fo.EP.Tol == 0 {
		fo.EP.Tol = cvTol
	}
	errs := make([]error, o.Folds)
	// failed[g][f] is the failure of candidate g in fold f: a candidate
	// that fails in some fold (EP that does not converge at a large gamma,
	// say) is dropped with a note, the others go on.
	failed := make([][]error, len(o.GammaGrid))
	for g := range failed {
		failed[g] = make([]error, o.Folds)
	}
	numeric.ParallelFor(o.Folds, func(f int) {
		frng := func() *rand.Rand { return rand.New(rand.NewPCG(seeds[f], uint64(f))) }
		var tr, te []int
		for i, fi := range fold {
			if fi == f {
				te = append(te, i)
			} else {
				tr = append(tr, i)
			}
		}
		xtr, ytr := rows(x, tr), pick(y, tr)
		xte, yte := rows(x, te), pick(y, te)
		ms, err := newModels(ctx, xtr, o)
		if err != nil {
			errs[f] = err
			return
		}
		for _, m := range ms {
			// The fold's own sample of its training items' pairs.
			m.stream = uint64(f + 1)
		}
		for g, gamma := range o.GammaGrid {
			if err := ctx.Err(); err != nil {
				errs[f] = err
				return
			}
			bm, p, _, _, err := fitSelected(ctx, ms, ytr, gamma, &fo, frng)
			if err != nil {
				if cerr := ctx.Err(); cerr != nil {
					errs[f] = cerr
					return
				}
				failed[g][f] = fmt.Errorf("fold %d: %w", f+1, err)
				continue
			}
			r := &Result{model: bm, wMean: p.mean, wCov: p.cov}
			aucs[g][f] = AUC(r.PredictMeansTo(nil, xte), yte)
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, 0, err
		}
	}
	var cv []CVRow
	var first error
	best := -1
	for g, gamma := range o.GammaGrid {
		var ferr error
		nf := 0
		for _, err := range failed[g] {
			if err != nil {
				nf++
				if ferr == nil {
					ferr = err
				}
			}
		}
		if ferr != nil {
			if first == nil {
				first = ferr
			}
			*notes = append(*notes, fmt.Sprintf("gamma %g dropped from the cross-validation: its fit failed in %d of %d folds (%v)", gamma, nf, o.Folds, ferr))
			continue
		}
		mu, se := meanSE(aucs[g])
		cv = append(cv, CVRow{Gamma: gamma, AUC: mu, SE: se})
		if b := len(cv) - 1; best < 0 || mu > cv[best].AUC || (mu == cv[best].AUC && gamma < cv[best].Gamma) {
			best = b
		}
	}
	if best < 0 {
		return nil, 0, fmt.Errorf("auc: the fits of every gamma of the cross-validation failed; the first, %w", first)
	}
	return cv, cv[best].Gamma, nil
}

// meanSE returns the mean of v and its standard error sd/sqrt(n); the
// error is 0 (unknown) for fewer than two values, so that results stay
// valid JSON.
func meanSE(v []float64) (mean, se float64) {
	n := float64(len(v))
	for _, x := range v {
		mean += x
	}
	mean /= n
	if len(v) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / (n - 1) / n)
}

// rows returns the rows idx of x.
func rows(x *mat.Dense, idx []int) *mat.Dense {
	_, d := x.Dims()
	out := mat.NewDense(len(idx), d, nil)
	for t, i := range idx {
		out.SetRow(t, x.RawRowView(i))
	}
	return out
}

func pick(y []bool, idx []int) []bool {
	out := make([]bool, len(idx))
	for t, i := range idx {
		out[t] = y[i]
	}
	return out
}
