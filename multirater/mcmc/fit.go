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
//
// A Part in ctx (WithPart) makes it run part of that work, for chains that
// run in different processes: chains [Lo, Hi) only, their outputs encoded
// in the Part and ErrPartRan returned (no summary); or, with Inputs, no
// chain at all, the summary of the outputs of every chain. The chains must
// be Portable.
func Fit[C Chain](ctx context.Context, s Settings, progress func(multirater.Progress), start time.Time, samplingWork float64,
	newChain func(c int) C, summarise func(chains []C) *multirater.FitResult) (*multirater.FitResult, error) {
	part := PartOf(ctx)
	if part != nil && part.Inputs == nil {
		return nil, runPart(ctx, s, part, progress, start, samplingWork, newChain)
	}
	chains := make([]C, s.Chains)
	cs := make([]Chain, s.Chains)
	for c := range chains {
		chains[c] = newChain(c)
		cs[c] = chains[c]
	}
	var st RunStats
	if part != nil {
		// Summarise the outputs of chains that ran apart.
		if len(part.Inputs) != s.Chains {
			return nil, fmt.Errorf("multirater: %d chain outputs for %d chains", len(part.Inputs), s.Chains)
		}
		for c, ch := range cs {
			if err := decodeOutput(ch, c, part.Inputs[c]); err != nil {
				return nil, err
			}
		}
		st.Sampling, st.SamplingCPU = part.InputSampling, part.InputSamplingCPU
	} else {
		var err error
		if st, err = Run(ctx, s, cs, progress, start, samplingWork); err != nil {
			return nil, err
		}
	}
	if progress != nil {
		progress(multirater.Progress{Fraction: samplingWork, Elapsed: time.Since(start), Phase: "summarising"})
	}
	if err := ctx.Err(); err != nil {
		// Cancelled as the sampling ended: no summary.
		return nil, err
	}
	res := summarise(chains)
	res.Diagnostics.SamplingSeconds = st.Sampling.Seconds()
	if st.SamplingCPU > 0 && res.Diagnostics.MinESSBulk > 0 {
		res.Diagnostics.ESSPerCPUSecond = res.Diagnostics.MinESSBulk / st.SamplingCPU.Seconds()
	}
	total := float64(s.Burnin + s.Samples*s.Thin)
	if st.Sampling > 0 {
		res.Diagnostics.SweepsPerSecond = total / st.Sampling.Seconds()
	}
	res.Diagnostics.Seconds = time.Since(start).Seconds()
	SetEngineDiagnostics(&res.Diagnostics, int(total))
	if progress != nil {
		progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(start), Phase: "done", MaxRhat: res.Diagnostics.MaxRhat})
	}
	return res, nil
}

// runPart runs chains [p.Lo, p.Hi) of a fit and encodes their outputs in
// p (see Part).
func runPart[C Chain](ctx context.Context, s Settings, p *Part, progress func(multirater.Progress), start time.Time, samplingWork float64,
	newChain func(c int) C) error {
	if p.Lo < 0 || p.Hi <= p.Lo || p.Hi > s.Chains {
		return fmt.Errorf("multirater: chains [%d, %d) of a fit of %d chains", p.Lo, p.Hi, s.Chains)
	}
	cs := make([]Chain, p.Hi-p.Lo)
	for i := range cs {
		cs[i] = newChain(p.Lo + i)
		if _, ok := cs[i].(Portable); !ok {
			return fmt.Errorf("multirater: chain %d (%T) cannot run apart from the others", p.Lo+i, cs[i])
		}
	}
	st, err := Run(ctx, s, cs, progress, start, samplingWork)
	if err != nil {
		return err
	}
	p.Sampling, p.SamplingCPU = st.Sampling, st.SamplingCPU
	p.Outputs = make([][]byte, len(cs))
	for i, ch := range cs {
		if p.Outputs[i], err = encodeOutput(ch, p.Lo+i); err != nil {
			return err
		}
	}
	if progress != nil {
		progress(multirater.Progress{Fraction: 1, Elapsed: time.Since(start), Phase: "done"})
	}
	return ErrPartRan
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
