package mcmc

import (
	"context"
	"fmt"
	"math"
	"time"

	"concord/multirater"
)

// Common holds the options every MCMC model family shares (each family's
// Options carries the same fields and hands them over for defaults and
// checks, so that the rules are written once).
type Common struct {
	// Settings are the chains: their number, draws, burn-in, thinning and
	// seed.
	Settings
	// Sampler is DefaultSampler (faster-mixing moves added to the paper's
	// Gibbs sweep) or PaperSampler.
	Sampler Sampler
	// Identifiability says how the latent scale is pinned down (Rogers et
	// al. sec. 2.1.1, 2.3.2).
	Identifiability multirater.Identifiability
	// V and Lambda are the shape and rate of the Gamma prior on each
	// rater's precision alpha_l; zero means the paper's 1 (Lambda: 0.1 when
	// the family asks for a vague prior, see WithDefaults).
	V, Lambda float64
	// FlagThreshold is the posterior predictive probability below which an
	// observed label is flagged as surprising; 0 means 0.05.
	FlagThreshold float64
	// MaxRhat and MinESS are the limits of the convergence verdict: a fit
	// has converged when every free parameter has split R-hat below MaxRhat
	// and bulk ESS at least MinESS; 0 means 1.01 and 400.
	MaxRhat, MinESS float64
	// KeepDraws bounds the joint draws kept in the result for plots and
	// prediction; 0 means 500 (families keep fewer for very large fits).
	KeepDraws int
}

// WithDefaults fills the zero fields of c: the Settings defaults, V = 1,
// Lambda = 1 (0.1 when vague is set: strong identifiability with inferred
// precisions, Rogers et al. sec. 2.1.1), FlagThreshold, MaxRhat, MinESS and
// KeepDraws from the multirater defaults.
func (c Common) WithDefaults(vague bool) Common {
	c.Settings = c.Settings.WithDefaults()
	if c.V == 0 {
		c.V = 1
	}
	if c.Lambda == 0 {
		c.Lambda = 1
		if vague {
			c.Lambda = 0.1
		}
	}
	if c.FlagThreshold == 0 {
		c.FlagThreshold = multirater.DefaultFlagThreshold
	}
	if c.MaxRhat == 0 {
		c.MaxRhat = multirater.DefaultMaxRhat
	}
	if c.MinESS == 0 {
		c.MinESS = multirater.DefaultMinESS
	}
	if c.KeepDraws == 0 {
		c.KeepDraws = multirater.DefaultKeepDraws
	}
	return c
}

// Check panics on options no family can run (after WithDefaults).
func (c Common) Check() {
	c.Settings.Check()
	CheckPositive("V", c.V)
	CheckPositive("Lambda", c.Lambda)
	CheckPositive("MaxRhat", c.MaxRhat)
	if !(c.FlagThreshold > 0 && c.FlagThreshold < 1) {
		panic(fmt.Sprintf("multirater: FlagThreshold = %v must be in (0, 1)", c.FlagThreshold))
	}
	if c.MinESS < 0 || c.KeepDraws < 0 {
		panic("multirater: negative MinESS or KeepDraws")
	}
	switch c.Sampler {
	case DefaultSampler, PaperSampler:
	default:
		panic(fmt.Sprintf("multirater: unknown sampler %d", int(c.Sampler)))
	}
	switch c.Identifiability {
	case multirater.Weak, multirater.Strong, multirater.Both:
	default:
		panic(fmt.Sprintf("multirater: unknown identifiability %d", int(c.Identifiability)))
	}
}

// CheckPositive panics unless v is positive and finite.
func CheckPositive(name string, v float64) {
	if !(v > 0) || math.IsInf(v, 1) {
		panic(fmt.Sprintf("multirater: %s = %v must be positive and finite", name, v))
	}
}

// Fit runs the chains of a model family and completes its result: it makes
// the chains with newChain (chain c of settings s), runs them in parallel
// (Run; samplingWork is the fraction of the fit's work they account for),
// reports the "summarising" and "done" phases, calls summarise on the
// finished chains and fills the timings and the engine-neutral diagnostics
// of the result. start is when the fit started (before the model's set-up).
func Fit[C Chain](ctx context.Context, s Settings, progress func(multirater.Progress), start time.Time, samplingWork float64,
	newChain func(c int) C, summarise func(chains []C) *multirater.FitResult) (*multirater.FitResult, error) {
	chains := make([]C, s.Chains)
	cs := make([]Chain, s.Chains)
	for c := range chains {
		chains[c] = newChain(c)
		cs[c] = chains[c]
	}
	st, err := Run(ctx, s, cs, progress, start, samplingWork)
	if err != nil {
		return nil, err
	}
	if progress != nil {
		progress(multirater.Progress{Fraction: samplingWork, Elapsed: time.Since(start), Phase: "summarising"})
	}
	res := summarise(chains)
	res.Diagnostics.SamplingSeconds = st.Sampling.Seconds()
	total := float64(s.Burnin + s.Samples*s.Thin)
	res.Diagnostics.SweepsPerSecond = total / st.Sampling.Seconds()
	res.Diagnostics.Seconds = time.Since(start).Seconds()
	SetEngineDiagnostics(&res.Diagnostics, int(total))
	if progress != nil {
		progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(start), Phase: "done", MaxRhat: res.Diagnostics.MaxRhat})
	}
	return res, nil
}

// Result starts the result document of a family's MCMC fit with nc chains:
// the schema, the settings every family shares (engine, kernel, "identity"
// when empty, identifiability and the reference rater ref, -1 for none,
// sampler, chains, priors on the precisions, limits), the backend and the
// levels. The family adds its own settings and results.
func (c Common) Result(model string, out multirater.Output, kernel, backend string, levels, raterIDs []string, ref, nc int) *multirater.FitResult {
	if kernel == "" {
		kernel = "identity"
	}
	res := &multirater.FitResult{
		Schema: multirater.FitSchema,
		Model: multirater.ModelSettings{
			Model:           model,
			Engine:          multirater.EngineGibbs,
			Output:          out,
			Kernel:          kernel,
			Identifiability: c.Identifiability.String(),
			Sampler:         c.Sampler.String(),
			Chains:          nc,
			Samples:         c.Samples,
			Burnin:          c.Burnin,
			Thin:            c.Thin,
			Seed:            c.Seed,
			V:               c.V,
			Lambda:          c.Lambda,
			FlagThreshold:   c.FlagThreshold,
			MaxRhat:         c.MaxRhat,
			MinESS:          c.MinESS,
			KeepDraws:       c.KeepDraws,
			Backend:         backend,
		},
		Levels: append([]string(nil), levels...),
	}
	if ref >= 0 {
		res.Model.RefRater = raterIDs[ref]
	}
	return res
}
