package analysis

import (
	"context"
	"errors"
	"strings"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/mcmc"
)

// A Gibbs fit's chains apart (the fan-out of a fit over worker processes):
// FitChains runs some of a fit's chains, CombineChains summarises the
// outputs of all of them into the result Fit gives, bit for bit (apart from
// timings): chain c is seeded from the fit's seed exactly as in one
// process, whoever runs it.

// ChainJobs returns the number of chains of the fit of spec (defaults
// filled in) that can run apart, one job each: its chain count for a Gibbs
// fit of a model whose chains can, 0 otherwise (the fit is one job).
func ChainJobs(spec FitSpec) int {
	full := spec.WithDefaults()
	if !strings.EqualFold(full.Engine, multirater.EngineGibbs) {
		return 0
	}
	switch strings.ToLower(full.Model) {
	case ModelOrdinal, ModelClassification, ModelConfusion:
	default:
		return 0
	}
	if full.Chains < 2 {
		return 0
	}
	return full.Chains
}

// FitChains runs chains [lo, hi) of the Gibbs fit of spec on ds and returns
// each chain's output (encoded) and how long they sampled (wall and the
// process's CPU time). Errors are Fit's (EINVALID for the spec and the
// data).
func FitChains(ctx context.Context, ds *annotations.Dataset, spec FitSpec, lo, hi int, progress func(multirater.Progress)) ([][]byte, annotations.SamplingTime, error) {
	p := &mcmc.Part{Lo: lo, Hi: hi}
	_, err := Fit(mcmc.WithPart(ctx, p), ds, spec, progress)
	if errors.Is(err, mcmc.ErrPartRan) {
		return p.Outputs, annotations.SamplingTime{Wall: p.Sampling, CPU: p.SamplingCPU}, nil
	}
	if err == nil {
		// A model whose fit does not run chains through mcmc.Fit.
		err = annotations.Errorf(annotations.EINVALID, "the %s fit's chains cannot run apart", spec.Model)
	}
	return nil, annotations.SamplingTime{}, err
}

// CombineChains summarises the outputs of every chain of the Gibbs fit of
// spec on ds (outputs[c] from chain c, by FitChains; sampling: the longest
// time a part sampled and the CPU time of all, for the sampling timings and
// the ESS per CPU second) into the result Fit gives for the same spec and
// data.
func CombineChains(ctx context.Context, ds *annotations.Dataset, spec FitSpec, outputs [][]byte, sampling annotations.SamplingTime, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	return Fit(mcmc.WithPart(ctx, &mcmc.Part{Inputs: outputs, InputSampling: sampling.Wall, InputSamplingCPU: sampling.CPU}), ds, spec, progress)
}
