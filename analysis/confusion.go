package analysis

import (
	"context"
	"strings"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/confusion"
	"concord/multirater/kernel"
)

// ConfusionData maps a nominal or binary dataset to the confusion family's
// input: items in ds.ItemIDs order, raters in order of first label,
// classes in scheme order (ordered for an ordinal scheme), the labels' probabilities (soft evidence) when
// any label has one. With gold set, the items' gold labels (from the
// items file) fix their classes; without it gold labels are not read (they
// are for evaluation only).
func ConfusionData(ds *annotations.Dataset, gold bool) (*confusion.Data, error) {
	m, _ := LookupModel(ModelConfusion)
	if err := m.CheckScheme(ds.Scheme); err != nil {
		return nil, err
	}
	data := &confusion.Data{ItemIDs: ds.ItemIDs(), RaterIDs: ds.RaterIDs(), Classes: ds.Scheme.Codes(), Ordered: ds.Scheme.Kind == annotations.Ordinal}
	var err error
	data.Labels, data.Repeats, err = indexRatings(ds, data.ItemIDs, data.RaterIDs, "class")
	if err != nil {
		return nil, err
	}
	if ds.HasProbs() {
		// indexRatings keeps the labels' order: Probs[i] is ds.Labels[i]'s.
		data.Probs = make([]float64, len(ds.Labels))
		for i, l := range ds.Labels {
			data.Probs[i] = l.Prob
		}
	}
	if !gold {
		return data, nil
	}
	byID := indexOf(data.ItemIDs)
	data.Gold = make([]int, len(data.ItemIDs))
	for i := range data.Gold {
		data.Gold[i] = -1
	}
	n := 0
	for _, it := range ds.Items {
		if strings.TrimSpace(it.Gold) == "" {
			continue
		}
		g, err := ds.Scheme.Normalize(it.Gold)
		if err != nil {
			return nil, annotations.Errorf(annotations.EINVALID, "gold label %q of item %q: %v", it.Gold, it.ID, err)
		}
		c, ok := ds.Scheme.Index(g)
		if !ok {
			return nil, annotations.Errorf(annotations.EINVALID, "gold label %q of item %q is not a class of %s", it.Gold, it.ID, ds.Scheme)
		}
		if i, ok := byID[it.ID]; ok {
			data.Gold[i] = c
			n++
		}
	}
	if n == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "gold: no item has a gold label (give an items file with a gold column, or leave gold out)")
	}
	return data, nil
}

// MaxCommunities is the largest number of communities of the confusion
// model's hierarchy.
const MaxCommunities = confusion.MaxCommunities

// MaxVBIter is the largest iteration limit (max_iter) of the confusion
// model's variational fit.
const MaxVBIter = 1000000

// confusionOptions maps a spec to the confusion family's options (zero
// fields stay zero: the family's defaults).
func confusionOptions(spec FitSpec, progress func(multirater.Progress)) confusion.Options {
	h, _ := confusion.ParseHierarchy(spec.Hierarchy)
	rm, _ := confusion.ParseRaterModel(spec.RaterModel)
	return confusion.Options{Engine: strings.ToLower(spec.Engine), RaterModel: rm, Hierarchy: h, Communities: spec.Communities, Concentration: spec.Concentration,
		MaxIter: spec.MaxIter, SpamThreshold: spec.SpamThreshold, Settings: spec.mcmc(), FlagThreshold: spec.FlagThreshold, MaxRhat: spec.MaxRhat, MinESS: spec.MinESS, Progress: progress}
}

// confusionDefaults fills the confusion model's defaults.
func confusionDefaults(s FitSpec) FitSpec {
	o := confusionOptions(s, nil).WithDefaults()
	s.FlagThreshold = o.FlagThreshold
	s.Hierarchy = o.Hierarchy.String()
	s.RaterModel = o.RaterModel.String()
	s.Concentration = o.Concentration
	s.MaxIter = o.MaxIter
	if o.Engine == multirater.EngineGibbs {
		s = s.withMCMC(o.Settings)
		s.MaxRhat, s.MinESS = o.MaxRhat, o.MinESS
	}
	s.SigmaB, s.V, s.Lambda = 0, 0, 0
	return s
}

// validateConfusion checks the confusion model's settings.
func validateConfusion(s FitSpec) error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	if ks, err := s.kernelSpec(); err == nil {
		for _, t := range ks {
			if _, ard := t.Cov.(kernel.ARD); ard && t.Learn {
				return bad("kernel %q: ard learns one length-scale per covariate by the ordinal model's EP evidence; give them for the confusion model (ard:gamma=G1,G2,...)", s.Kernel)
			}
		}
	}
	if _, err := confusion.ParseHierarchy(s.Hierarchy); err != nil {
		return bad("%s", err)
	}
	h, _ := confusion.ParseHierarchy(s.Hierarchy)
	rm, err := confusion.ParseRaterModel(s.RaterModel)
	if err != nil {
		return bad("rater_model: %s", err)
	}
	if rm.LabelsOnly() {
		if strings.EqualFold(s.Engine, multirater.EngineGibbs) {
			return bad("rater_model %s is fitted by the vb engine only (leave engine out, or give rater_model confusion or communities)", rm)
		}
		if k := strings.TrimSpace(s.Kernel); k != "" && k != "identity" {
			return bad("rater_model %s is a model of the identity kernel; kernel %q needs rater_model confusion, communities or auto", rm, s.Kernel)
		}
	}
	if rm == confusion.RaterCommunities && h != confusion.Communities {
		return bad("rater_model communities needs hierarchy communities, not %s", h)
	}
	if s.Communities > 0 && h != confusion.Communities {
		return bad("communities = %d is a setting of hierarchy communities, not %s", s.Communities, h)
	}
	return nil
}

// fitConfusion fits the confusion model: with the identity kernel the
// items' prior class is the class proportions; with any other kernel (text,
// covariates, sums) the multinomial-probit Gaussian process on the items'
// features (confusion.Data.Cov, built as for the classification model).
func fitConfusion(ctx context.Context, ds *annotations.Dataset, cov *Covariance, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	if progress != nil {
		// Indexing a million labels takes seconds: say so.
		progress(multirater.Progress{Phase: "indexing the labels"})
	}
	data, err := ConfusionData(ds, spec.Gold)
	if err != nil {
		return nil, err
	}
	if cov == nil {
		if cov, err = ItemCovariance(ctx, ds, data.ItemIDs, spec); err != nil {
			return nil, err
		}
	}
	data.Kernel = cov.Kernel
	if cov.Cov != nil { // a concrete pointer: a nil one must stay a nil interface
		data.Cov = cov.Cov
	}
	res, err := confusion.Fit(ctx, data, confusionOptions(spec, progress))
	return fitted(res, err, ds, cov)
}
