package mcmc

import (
	"math"
	"math/rand/v2"
)

// LogDensity is a univariate log density for SliceSample.
type LogDensity interface {
	LogF(x float64) float64
}

// SliceSample takes one slice-sampling step (Neal 2003, stepping out and
// shrinkage, sec. 4) from x0 for the density exp(f.logf) on (lo, hi) with
// initial width w, and returns the new point and the number of density
// evaluations. The step leaves the density invariant whatever w is, as long
// as w does not depend on x0.
func SliceSample[F LogDensity](rng *rand.Rand, f F, x0, w, lo, hi float64) (float64, int) {
	return sliceSample(rng, f, logFAbove[F]{f}, x0, w, lo, hi)
}

// AboveDensity is a LogDensity that can tell whether LogF(x) > logy
// without all of LogF: a sum whose terms after the first are never
// positive can stop once a partial sum is at or below logy (floating-point
// addition of a non-positive term never raises a sum). Above must return
// exactly LogF(x) > logy, so that SliceSampleAbove's draws are
// SliceSample's, bit for bit.
type AboveDensity interface {
	LogDensity
	Above(x, logy float64) bool
}

// SliceSampleAbove is SliceSample for an AboveDensity: every evaluation
// but the first (the slice's level) asks Above.
func SliceSampleAbove[F AboveDensity](rng *rand.Rand, f F, x0, w, lo, hi float64) (float64, int) {
	return sliceSample(rng, f, f, x0, w, lo, hi)
}

// logFAbove answers Above from the whole LogF.
type logFAbove[F LogDensity] struct{ f F }

func (a logFAbove[F]) Above(x, logy float64) bool { return a.f.LogF(x) > logy }

// sliceSample is SliceSample with the slice's membership tests asked of a.
func sliceSample[F LogDensity, A interface{ Above(x, logy float64) bool }](rng *rand.Rand, f F, a A, x0, w, lo, hi float64) (float64, int) {
	const maxSteps = 32
	evals := 1
	logy := f.LogF(x0) - rng.ExpFloat64()
	left := x0 - w*rng.Float64()
	right := left + w
	j := int(maxSteps * rng.Float64())
	kk := maxSteps - 1 - j
	for ; j > 0 && left > lo; j-- {
		evals++
		if !a.Above(left, logy) {
			break
		}
		left -= w
	}
	for ; kk > 0 && right < hi; kk-- {
		evals++
		if !a.Above(right, logy) {
			break
		}
		right += w
	}
	left = math.Max(left, lo)
	right = math.Min(right, hi)
	for i := 0; i < 200; i++ {
		x := left + (right-left)*rng.Float64()
		evals++
		if a.Above(x, logy) && x > lo && x < hi {
			return x, evals
		}
		if x < x0 {
			left = x
		} else {
			right = x
		}
	}
	// The interval has shrunk to x0 (only with a degenerate density).
	return x0, evals
}

// ScaleDensity is the log density of t = log a in stepScale.
type ScaleDensity struct {
	P0, S, La float64
}

func (d ScaleDensity) LogF(t float64) float64 {
	return d.P0*t - 0.5*d.S*math.Exp(2*t) - d.La*math.Exp(-2*t)
}
