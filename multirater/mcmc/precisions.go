package mcmc

import (
	"concord/multirater"
	"concord/multirater/diag"
	"concord/multirater/numeric"
	"math"
)

// Precisions are the kept draws of the raters' precisions alpha_l, which
// every MCMC family summarises the same way.
type Precisions struct {
	RaterIDs []string
	// Fixed reports a precision fixed by identifiability (not diagnosed).
	Fixed func(l int) bool
	// Draws returns chain c's kept draws of rater l's precision.
	Draws func(c, l int) []float64
	// Chains and Samples are the number of chains and of draws per chain.
	Chains, Samples int
}

// Params returns the diagnosed parameters "alpha[ID]" (free unless Fixed)
// and the derived "variance[ID]" = 1/alpha of every rater.
func (p Precisions) Params() (alpha, variance []*Param) {
	alpha = make([]*Param, len(p.RaterIDs))
	variance = make([]*Param, len(p.RaterIDs))
	for l, id := range p.RaterIDs {
		alpha[l] = &Param{Name: "alpha[" + id + "]", Free: !p.Fixed(l),
			Get: func(c int) []float64 { return p.Draws(c, l) }}
		variance[l] = &Param{Name: "variance[" + id + "]", IsVar: true,
			Get: func(c int) []float64 {
				a := p.Draws(c, l)
				v := make([]float64, len(a))
				for i, x := range a {
					v[i] = 1 / x
				}
				return v
			}}
	}
	return alpha, variance
}

// Autocorrelation returns the autocorrelation function (lags 0 to
// min(MaxACFLag, Samples-1)) of each free precision, averaged over chains,
// by rater id.
func (p Precisions) Autocorrelation() map[string][]float64 {
	out := make(map[string][]float64, len(p.RaterIDs))
	lag := min(MaxACFLag, p.Samples-1)
	if lag < 1 {
		return out
	}
	buf := make([]float64, lag+1)
	for l, id := range p.RaterIDs {
		if p.Fixed(l) {
			continue
		}
		acf := make([]float64, lag+1)
		for c := 0; c < p.Chains; c++ {
			buf = diag.Autocorrelation(buf[:0], p.Draws(c, l), lag)
			for i := range acf {
				if i < len(buf) {
					acf[i] += buf[i] / float64(p.Chains)
				}
			}
		}
		for i, v := range acf {
			acf[i] = numeric.Round6(v)
		}
		out[id] = acf
	}
	return out
}

// Traces returns the per-chain traces of the precisions, thinned to at
// most MaxTracePoints points.
func (p Precisions) Traces() *multirater.Traces {
	ns := p.Samples
	every := (ns + MaxTracePoints - 1) / MaxTracePoints
	t := &multirater.Traces{Every: every, Alpha: make(map[string][][]float64, len(p.RaterIDs))}
	for l, id := range p.RaterIDs {
		per := make([][]float64, p.Chains)
		for c := range per {
			d := p.Draws(c, l)
			for i := 0; i < ns; i += every {
				per[c] = append(per[c], numeric.Round7(d[i]))
			}
		}
		t.Alpha[id] = per
	}
	return t
}

// SummariseParams fills every parameter's Sum from its nc chains, in
// parallel: R-hat and ESS for free parameters, the summary alone for
// derived and fixed ones.
func SummariseParams(params []*Param, nc int) {
	numeric.ParallelFor(len(params), func(i int) {
		p := params[i]
		cs := make([][]float64, nc)
		for c := range cs {
			cs[c] = p.Get(c)
		}
		if p.IsVar || !p.Free {
			// Derived or fixed quantities: no convergence diagnostics.
			p.Sum = diag.QuickSummary(cs)
			return
		}
		p.Sum = diag.Summarize(cs)
	})
}

// Converge sets the convergence part of dg from the summarised params: the
// draws kept (nc chains of ns), R-hat and ESS extremes, the note on
// constant parameters, Converged and the Verdict against maxRhat and
// minESS.
func Converge(dg *multirater.Diagnostics, params []*Param, maxRhat, minESS float64, nc, ns int) {
	dg.Draws = nc * ns
	ConstantNote(dg, DiagnoseParams(dg, params))
	dg.Converged = dg.MaxRhat < maxRhat && dg.MinESSBulk >= minESS
	dg.Verdict = Verdict(dg, maxRhat, minESS, nc, ns)
}

// MoveStats counts the work of the moves every MCMC family shares.
type MoveStats struct {
	Sweeps, CGIters, Slices, SliceEvals int
}

// Add adds o's counts to m.
func (m *MoveStats) Add(o MoveStats) {
	m.Sweeps += o.Sweeps
	m.CGIters += o.CGIters
	m.Slices += o.Slices
	m.SliceEvals += o.SliceEvals
}

// TotalMoves adds up the move statistics of chains, moves giving one
// chain's with the sums of its two family-specific moves (the scale move's
// and a second one's), and returns the totals.
func TotalMoves[C any](chains []C, moves func(C) (MoveStats, float64, float64)) (ms MoveStats, a, b float64) {
	for _, ch := range chains {
		m, ca, cb := moves(ch)
		ms.Add(m)
		a += ca
		b += cb
	}
	return ms, a, b
}

// Map returns the statistics per sweep: "cg_iterations_per_sweep" and
// "slice_evaluations_per_step" where there was such work (an empty map
// before any sweep).
func (m MoveStats) Map() map[string]float64 {
	out := map[string]float64{}
	if m.Sweeps == 0 {
		return out
	}
	if m.CGIters > 0 {
		out["cg_iterations_per_sweep"] = numeric.Round6(float64(m.CGIters) / float64(m.Sweeps))
	}
	if m.Slices > 0 {
		out["slice_evaluations_per_step"] = numeric.Round6(float64(m.SliceEvals) / float64(m.Slices))
	}
	return out
}

// MinPrecision and MaxPrecision bound every rater precision of the
// samplers: the posterior is truncated to [1e-12, 1e12]. Under a vague
// Gamma(v, lambda) prior (v = 0.001) a rater whose labels barely inform
// the latent scale has a posterior close to the prior's alpha^(v-1) near
// 0, which puts half its mass below 1e-300: untruncated, a chain's
// precision underflows to 0 and its noise sd to infinity. No data set
// tells precisions apart beyond this range.
const (
	MinPrecision = 1e-12
	MaxPrecision = 1e12
)

// ClampPrecision returns alpha within [MinPrecision, MaxPrecision].
func ClampPrecision(alpha float64) float64 {
	return math.Min(MaxPrecision, math.Max(MinPrecision, alpha))
}

// LogPrecisionBounds are the bounds of log alpha for slice samplers of a
// precision's logarithm.
func LogPrecisionBounds() (lo, hi float64) { return math.Log(MinPrecision), math.Log(MaxPrecision) }

// ScaleBounds returns the range of t for which every precision alpha of
// alphas, moved to alpha e^(pow t) (pow != 0), stays within
// [MinPrecision, MaxPrecision]; it contains 0 when they all are within.
func ScaleBounds(pow float64, alphas ...float64) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	for _, a := range alphas {
		// MinPrecision <= a e^(pow t) <= MaxPrecision.
		t1, t2 := math.Log(MinPrecision/a)/pow, math.Log(MaxPrecision/a)/pow
		if t1 > t2 {
			t1, t2 = t2, t1
		}
		lo, hi = math.Max(lo, t1), math.Min(hi, t2)
	}
	return math.Min(lo, 0), math.Max(hi, 0)
}

// MinStartPrecision is the smallest starting precision of a chain: a
// precision drawn from a vague Gamma(v, lambda) prior (v = 0.001) is often
// below 1e-300 or exactly 0, a noise sd no truncated normal can use; the
// first sweep's draw from the full conditional (shape v + n_l/2 >= 1/2)
// moves it to where the data put it.
const MinStartPrecision = 1e-6

// StartPrecision returns a prior draw of a precision raised to
// MinStartPrecision.
func StartPrecision(draw float64) float64 { return math.Max(draw, MinStartPrecision) }
