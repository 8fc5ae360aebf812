package mcmc

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"concord/multirater"
	"concord/multirater/diag"
)

// param is a scalar parameter of a fit being summarised: its name, whether
// it is sampled (free) or fixed, its draws in chain c, its summary, and
// whether it is a derived variance (summarised, not diagnosed).
type Param struct {
	// Name is the parameter's name in the diagnostics, e.g. "alpha[r1]".
	Name string
	// Free parameters enter the convergence verdict; fixed ones (strong
	// identifiability) and derived ones do not.
	Free bool
	// Get returns chain c's kept draws.
	Get func(c int) []float64
	// Sum is the summary, filled by the caller.
	Sum diag.Summary
	// IsVar marks a derived variance (1/alpha), summarised but not
	// diagnosed.
	IsVar bool
}

// diagnoseParams sets the convergence figures of dg (MaxRhat, MinESSBulk,
// MinESSTail, the worst parameters, Parameters) from the summaries of the
// free, non-derived params; it returns how many were left out because they
// did not vary.
func DiagnoseParams(dg *multirater.Diagnostics, params []*Param) (constant int) {
	dg.MaxRhat = 0
	dg.MinESSBulk = math.Inf(1)
	dg.MinESSTail = math.Inf(1)
	for _, p := range params {
		if !p.Free || p.IsVar {
			continue
		}
		s := p.Sum
		if s.SD == 0 {
			constant++
			continue
		}
		rh, eb, et := FiniteDiag(s.Rhat, 1e6), FiniteDiag(s.ESSBulk, 0), FiniteDiag(s.ESSTail, 0)
		dg.Parameters = append(dg.Parameters, multirater.ParamDiag{Name: p.Name, Mean: s.Mean, SD: s.SD, Rhat: rh, ESSBulk: eb, ESSTail: et})
		if rh > dg.MaxRhat {
			dg.MaxRhat = rh
			dg.WorstRhat = p.Name
		}
		if eb < dg.MinESSBulk {
			dg.MinESSBulk = eb
			dg.WorstESS = p.Name
		}
		dg.MinESSTail = math.Min(dg.MinESSTail, et)
	}
	if math.IsInf(dg.MinESSBulk, 1) {
		dg.MinESSBulk, dg.MinESSTail = 0, 0
	}
	return constant
}

// constantNote notes the parameters diagnoseParams left out.
func ConstantNote(dg *multirater.Diagnostics, constant int) {
	if constant > 0 {
		dg.Notes = append(dg.Notes, fmt.Sprintf("%d parameter(s) did not vary (items with zero prior variance); they are left out of the diagnostics", constant))
	}
}

// finiteDiag replaces a NaN or infinite diagnostic (a chain that never
// moved) by bad, so that the verdict fails and the JSON stays valid.
func FiniteDiag(x, bad float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return bad
	}
	return x
}

func ToEstimate(s diag.Summary) multirater.Estimate {
	return multirater.Estimate{Mean: s.Mean, SD: s.SD, Q025: s.Q025, Q50: s.Q50, Q975: s.Q975}
}

func Verdict(d *multirater.Diagnostics, maxRhat, minESS float64, chains, samples int) string {
	if d.Converged {
		return fmt.Sprintf("converged: max R-hat %.4f < %g and min bulk ESS %.0f >= %g over %d free parameters", d.MaxRhat, maxRhat, d.MinESSBulk, minESS, len(d.Parameters))
	}
	var why []string
	if !(d.MaxRhat < maxRhat) {
		why = append(why, fmt.Sprintf("max R-hat %.4f (%s) is not below %g", d.MaxRhat, d.WorstRhat, maxRhat))
	}
	if !(d.MinESSBulk >= minESS) {
		why = append(why, fmt.Sprintf("min bulk ESS %.0f (%s) is below %g", d.MinESSBulk, d.WorstESS, minESS))
	}
	more := samples * 4
	if d.MinESSBulk > 0 && d.MinESSBulk < minESS {
		more = int(math.Ceil(float64(samples)*minESS/d.MinESSBulk*1.5/100)) * 100
	}
	return fmt.Sprintf("NOT converged: %s; run more samples (e.g. samples %d) with a longer burn-in, or more chains than %d", joinAnd(why), max(more, samples*2), chains)
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, v := range s[1:] {
		out += " and " + v
	}
	return out
}

// pickDraws returns up to want (chain, draw) pairs evenly spaced over the
// kept draws of all chains, chain-major.
func PickDraws(nc, ns, want int) [][2]int {
	total := nc * ns
	if want <= 0 || want > total {
		want = total
	}
	out := make([][2]int, want)
	for s := range out {
		g := int(int64(s) * int64(total) / int64(want))
		out[s] = [2]int{g / ns, g % ns}
	}
	return out
}

// quantileIndex returns the index of the p-quantile in a sorted sample of
// size n (the nearest-rank definition, R type 1).
func QuantileIndex(n int, p float64) int {
	i := int(math.Ceil(p*float64(n))) - 1
	return min(max(i, 0), n-1)
}

func roundSig(x float64, digits int) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	e := math.Floor(math.Log10(math.Abs(x)))
	p := math.Pow(10, float64(digits-1)-e)
	if math.IsInf(p, 0) || p == 0 {
		return x
	}
	return math.Round(x*p) / p
}

// round6 rounds to 6 significant digits, round7 to 7, for compact JSON.
func Round6(x float64) float64 { return roundSig(x, 6) }

func Round7(x float64) float64 { return roundSig(x, 7) }

// parallelFor calls f(i) for i in [0, n) on GOMAXPROCS goroutines. Results
// must be written to positions owned by i so that they do not depend on
// scheduling.
func ParallelFor(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= int64(n) {
					return
				}
				f(int(i))
			}
		}()
	}
	wg.Wait()
}

// maxTracePoints bounds each chain's trace in FitResult.Traces.
const MaxTracePoints = 1000

// maxACFLag is the largest lag of the reported autocorrelations.
const MaxACFLag = 50

// maxKeptNumbers bounds the latent scores kept in FitResult.Draws.
const MaxKeptNumbers = 1_000_000
