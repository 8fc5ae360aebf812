package analysis

import (
	"concord/multirater/classify"
	"concord/multirater/mcmc"
	"context"
	"errors"
	"strings"

	"concord/annotations"
	"concord/multirater"
)

// Precision settings of the classification model (FitSpec.Precisions).
const (
	PrecisionsInferred  = "inferred"
	PrecisionsFixed     = "fixed"
	PrecisionsFixedFull = "fixed-full"
)

// fitClassification fits the multi-rater classification model (Rogers et
// al. sec. 2.3) to a nominal or binary dataset.
func fitClassification(ctx context.Context, ds *annotations.Dataset, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	data, err := ClassData(ds)
	if err != nil {
		return nil, err
	}
	cov, err := ItemCovariance(ds, data.ItemIDs, spec)
	if err != nil {
		return nil, err
	}
	return fitClassificationCov(ctx, ds, data, cov, spec, progress)
}

// fitClassificationCov fits data (from ClassData(ds)) with the items' prior
// covariance cov (from ItemCovariance, or shared between the fits of a
// cross-validation fold).
func fitClassificationCov(ctx context.Context, ds *annotations.Dataset, data *classify.Data, cov *Covariance, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	data.Kernel = cov.Kernel
	if cov.Cov != nil {
		data.Cov = cov.Cov
	}
	ident, _ := multirater.ParseIdentifiability(spec.Identifiability)
	smp, _ := mcmc.ParseSampler(spec.Sampler)
	prec, _ := classify.ParsePrecisions(spec.Precisions)
	if spec.RefRater != "" && ident != multirater.Weak && prec == classify.InferredPrecisions {
		found := false
		for _, r := range data.RaterIDs {
			if r == spec.RefRater {
				found = true
				break
			}
		}
		if !found {
			return nil, annotations.Errorf(annotations.EINVALID, "reference rater %q has no labels in this dataset", spec.RefRater)
		}
	}
	opts := classify.Options{
		Settings:        mcmc.Settings{Chains: spec.Chains, Samples: spec.Samples, Burnin: spec.Burnin, Thin: spec.Thin, Seed: spec.Seed},
		Sampler:         smp,
		Precisions:      prec,
		Identifiability: ident,
		RefRater:        spec.RefRater,
		V:               spec.V,
		Lambda:          spec.Lambda,
		FlagThreshold:   spec.FlagThreshold,
		MaxRhat:         spec.MaxRhat,
		MinESS:          spec.MinESS,
		KeepDraws:       spec.KeepDraws,
		Progress:        progress,
	}
	res, err := classify.Fit(ctx, data, opts)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, annotations.Errorf(annotations.EINVALID, "%s", strings.TrimPrefix(err.Error(), "multirater: "))
	}
	res.Model.Scheme = ds.Scheme.String()
	res.Model.Kernel = cov.Kernel
	res.Features = cov.Features
	res.Diagnostics.Notes = append(res.Diagnostics.Notes, cov.Notes...)
	return res, nil
}

// ClassData maps a nominal or binary dataset to the classification
// sampler's input: items in ds.ItemIDs order (items-file order, then
// labelled items not in the items file; items nobody labelled are kept and
// predicted), raters in order of first label, classes in scheme order. It
// does not set the covariance.
func ClassData(ds *annotations.Dataset) (*classify.Data, error) {
	switch ds.Scheme.Kind {
	case annotations.Nominal, annotations.Binary:
	default:
		return nil, annotations.Errorf(annotations.EINVALID, "the classification model needs a nominal or binary scheme; this dataset's scheme is %s (use --model ordinal for ordinal labels)", ds.Scheme)
	}
	data := &classify.Data{
		ItemIDs:  ds.ItemIDs(),
		RaterIDs: ds.RaterIDs(),
		Classes:  ds.Scheme.Codes(),
	}
	if len(data.Classes) < 2 {
		return nil, annotations.Errorf(annotations.EINVALID, "the classification model needs at least 2 classes, the scheme %s has %d (name both classes, e.g. binary:0,1,pos=1)", ds.Scheme, len(data.Classes))
	}
	var err error
	data.Labels, err = indexRatings(ds, data.ItemIDs, data.RaterIDs, "class")
	if err != nil {
		return nil, err
	}
	return data, nil
}
