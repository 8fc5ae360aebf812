package mcmc

import (
	"fmt"
	"math"

	"concord/multirater"
	"concord/multirater/diag"
)

// Param is a scalar parameter of a fit being summarised: its name, whether
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

// LatentParam is the free parameter name whose draws in chain c, kept in
// single precision, are draws(c).
func LatentParam(name string, draws func(c int) []float32) *Param {
	return &Param{Name: name, Free: true,
		Get: func(c int) []float64 {
			src := draws(c)
			v := make([]float64, len(src))
			for i, x := range src {
				v[i] = float64(x)
			}
			return v
		}}
}

// DiagnoseParams sets the convergence figures of dg (MaxRhat, MinESSBulk,
// MinESSTail, the worst parameters, Parameters) from the summaries of the
// free, non-derived params; it returns how many were left out because they
// did not vary. An R-hat that cannot be computed (chains of fewer than 4
// draws, or draws that are NaN) is not available: it stays NaN, and so
// does MaxRhat when any parameter's R-hat is not available. An infinite
// R-hat (every split half constant, the halves different) is 1e6.
func DiagnoseParams(dg *multirater.Diagnostics, params []*Param) (constant int) {
	dg.MaxRhat = 0
	dg.MinESSBulk = math.Inf(1)
	dg.MinESSTail = math.Inf(1)
	rhatNA := false
	for _, p := range params {
		if !p.Free || p.IsVar {
			continue
		}
		s := p.Sum
		if s.SD == 0 {
			constant++
			continue
		}
		rh, eb, et := s.Rhat, FiniteDiag(s.ESSBulk, 0), FiniteDiag(s.ESSTail, 0)
		if !math.IsNaN(rh) {
			rh = FiniteDiag(rh, 1e6)
		}
		dg.Parameters = append(dg.Parameters, multirater.ParamDiag{Name: p.Name, Mean: s.Mean, SD: s.SD, Rhat: rh, ESSBulk: eb, ESSTail: et})
		if math.IsNaN(rh) {
			rhatNA = true
		} else if rh > dg.MaxRhat {
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
	if rhatNA {
		dg.MaxRhat, dg.WorstRhat = math.NaN(), ""
	}
	return constant
}

// ConstantNote notes the parameters DiagnoseParams left out.
func ConstantNote(dg *multirater.Diagnostics, constant int) {
	if constant > 0 {
		dg.Notes = append(dg.Notes, fmt.Sprintf("%d parameter(s) did not vary (items with zero prior variance); they are left out of the diagnostics", constant))
	}
}

// FiniteDiag replaces a NaN or infinite diagnostic (a chain that never
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

// Verdict says in words whether the chains have converged (max R-hat below
// maxRhat and min bulk ESS at least minESS) and, when not, what to change,
// naming the settings by the names the CLI flags (--samples, --burnin,
// --chains) and the API fields (samples, burnin, chains) share.
func Verdict(d *multirater.Diagnostics, maxRhat, minESS float64, chains, samples int) string {
	if d.Converged {
		return fmt.Sprintf("converged: max R-hat %.4f < %g and min bulk ESS %.0f >= %g over %d free parameters", d.MaxRhat, maxRhat, d.MinESSBulk, minESS, len(d.Parameters))
	}
	var why []string
	switch {
	case math.IsNaN(d.MaxRhat):
		why = append(why, fmt.Sprintf("R-hat is not available (each chain kept %d draw(s); split R-hat needs at least %d per chain)", samples, minRhatDraws))
	case !(d.MaxRhat < maxRhat):
		why = append(why, fmt.Sprintf("max R-hat %.4f (%s) is not below %g", d.MaxRhat, d.WorstRhat, maxRhat))
	}
	if !(d.MinESSBulk >= minESS) {
		if d.WorstESS != "" {
			why = append(why, fmt.Sprintf("min bulk ESS %.0f (%s) is below %g", d.MinESSBulk, d.WorstESS, minESS))
		} else {
			why = append(why, fmt.Sprintf("min bulk ESS %.0f is below %g", d.MinESSBulk, minESS))
		}
	}
	more := samples * 4
	if d.MinESSBulk > 0 && d.MinESSBulk < minESS {
		more = int(math.Ceil(float64(samples)*minESS/d.MinESSBulk*1.5/100)) * 100
	}
	more = max(more, samples*2, minSuggestedSamples)
	advice := fmt.Sprintf("run more draws per chain (samples, e.g. %d) with a longer burn-in (burnin)", more)
	if chains == 1 {
		advice += ", and several chains (chains, e.g. 4): the R-hat of one chain only compares its two halves"
	} else {
		advice += fmt.Sprintf(", or more chains than %d (chains)", chains)
	}
	return fmt.Sprintf("NOT converged: %s; %s", joinAnd(why), advice)
}

// minRhatDraws is the fewest draws per chain split R-hat needs (diag).
const minRhatDraws = 4

// minSuggestedSamples is the fewest draws per chain a verdict suggests.
const minSuggestedSamples = 200

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

// PickDraws returns up to want (chain, draw) pairs evenly spaced over the
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

// QuantileIndex returns the index of the p-quantile in a sorted sample of
// size n (the nearest-rank definition, R type 1).
func QuantileIndex(n int, p float64) int {
	i := int(math.Ceil(p*float64(n))) - 1
	return min(max(i, 0), n-1)
}

// MaxTracePoints bounds each chain's trace in FitResult.Traces.
const MaxTracePoints = 1000

// MaxACFLag is the largest lag of the reported autocorrelations.
const MaxACFLag = 50

// MaxKeptNumbers bounds the latent scores kept in FitResult.Draws.
const MaxKeptNumbers = 1_000_000
