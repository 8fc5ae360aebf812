package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/bounded"
	"concord/multirater/classify"
	"concord/multirater/confusion"
	"concord/multirater/kernel"
	"concord/multirater/mcmc"
	"concord/multirater/ordinal"
	"concord/multirater/robust"
)

// The models Fit knows.
const (
	ModelOrdinal        = ordinal.Name
	ModelClassification = classify.Name
	ModelBounded        = bounded.Name
	ModelRobust         = robust.Name
	ModelConfusion      = confusion.Name
)

// Limits on a FitSpec, to keep a fit within reasonable time and memory.
const (
	MaxChains    = 64
	MaxSamples   = 1_000_000
	MaxBurnin    = 1_000_000
	MaxThin      = 10_000
	MaxKeepDraws = 10_000
	MaxRestarts  = 100
	// The Gamma(v, lambda) prior of the rater precisions takes v and lambda
	// from MinPrior to MaxPrior, the threshold prior's sd sigma_b from
	// MinSigmaB to MaxSigmaB.
	MinPrior  = 1e-6
	MaxPrior  = 1e6
	MinSigmaB = 1e-3
	MaxSigmaB = 1e3
)

// WithDefaults returns s with zero fields set to their defaults: those of
// the spec's model (Model.Defaults, the family's own), of the sampler and of
// the identifiability. A model outside the table gets only the sampler's
// defaults (Validate rejects it).
func (s FitSpec) WithDefaults() FitSpec {
	if s.Model == "" {
		s.Model = ModelOrdinal
	}
	if s.Kernel == "" && !strings.EqualFold(s.Model, ModelAUC) {
		s.Kernel = "identity"
	}
	if s.Identifiability == "" {
		s.Identifiability = multirater.Weak.String()
	}
	if s.Sampler == "" {
		s.Sampler = mcmc.DefaultSampler.String()
	}
	m, err := LookupModel(s.Model)
	if err != nil {
		if s.Engine == "" {
			s.Engine = multirater.EngineGibbs
		}
		return s.withMCMC(s.mcmc().WithDefaults())
	}
	if s.Engine == "" {
		s.Engine = m.DefaultEngine()
	}
	return m.Defaults(s)
}

// WithDefaultsExceptKernel is WithDefaults for a spec whose omitted kernel
// the data choose when the fit runs (ForData): that kernel stays omitted,
// and so do the defaults that depend on it (the classification chains'
// lengths, classify.Options.ForKernel), which Fit fills in with the
// kernel. A spec that names its kernel gets WithDefaults.
func (s FitSpec) WithDefaultsExceptKernel() FitSpec {
	full := s.WithDefaults()
	if strings.TrimSpace(s.Kernel) != "" {
		return full
	}
	full.Kernel = s.Kernel
	k := s
	k.Kernel = "linear"
	withKernel := k.WithDefaults()
	if withKernel.Samples != full.Samples {
		full.Samples = s.Samples
	}
	if withKernel.Burnin != full.Burnin {
		full.Burnin = s.Burnin
	}
	return full
}

// Validate checks the spec's own rules (not the dataset): known model,
// kernel, identifiability and sampler names, and numbers in range. It
// returns an EINVALID error naming the field and what was expected.
func (s FitSpec) Validate() error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	if err := s.checkSizes(); err != nil {
		return err
	}
	model := s.Model
	if model == "" {
		model = ModelOrdinal
	}
	m, err := LookupModel(model)
	if err != nil {
		return err
	}
	if err := s.validateKernel(); err != nil {
		return err
	}
	if _, err := multirater.ParseIdentifiability(s.Identifiability); err != nil {
		return bad("%s", err)
	}
	if _, err := mcmc.ParseSampler(s.Sampler); err != nil {
		return bad("%s", err)
	}
	if _, err := classify.ParsePrecisions(s.Precisions); err != nil {
		return bad("%s", err)
	}
	if err := m.validateEngine(s); err != nil {
		return err
	}
	if err := s.checkRanges(); err != nil {
		return err
	}
	if err := m.Validate(s); err != nil {
		return err
	}
	s.Model = m.Name
	if err := s.validateFamily(); err != nil {
		return err
	}
	if s.Chains == 1 && s.Samples == 1 {
		// One draw has no posterior sd (the result could not be written).
		return bad("chains = 1 and samples = 1: one draw has no posterior spread; keep at least 2 draws (samples 2 or more, or chains 2 or more)")
	}
	return nil
}

// Fit fits the model of spec to the dataset and returns the result document
// with item, rater and level ids from the dataset. Items in ds.Items that
// nobody labelled are part of the fit and are predicted (NLabels 0).
// progress, when set, receives the sampler's progress reports. The context
// cancels the fit (its error is returned). Problems with the spec or the
// dataset are EINVALID errors.
func Fit(ctx context.Context, ds *annotations.Dataset, spec FitSpec, progress func(multirater.Progress)) (*multirater.FitResult, error) {
	spec = spec.withKernel() // parsed once, for every step below
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	spec = spec.ForData(ds).WithDefaults().withKernel()
	if ds == nil || len(ds.Labels) == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "no labels to fit")
	}
	m, err := LookupModel(spec.Model)
	if err != nil {
		return nil, err
	}
	if err := m.CheckScheme(ds.Scheme); err != nil {
		return nil, err
	}
	res, err := m.fit(ctx, ds, nil, spec, progress)
	if cerr := ctx.Err(); cerr != nil {
		// Cancelled: even a fit that finished meanwhile is dropped, so
		// that a cancelled fit never leaves a result behind, and the
		// error is the context's whatever the family made of it.
		if err == nil || !errors.Is(err, cerr) {
			err = fmt.Errorf("the %s fit was cancelled: %w", spec.Model, cerr)
		}
		return nil, err
	}
	if err != nil {
		if annotations.ErrorCode(err) == annotations.EINTERNAL && !errors.Is(err, mcmc.ErrPartRan) {
			// An engine's numerical failure (no finite evidence, EP that
			// does not settle, a factorisation that fails) depends on
			// the data and the settings: the user gets it with the
			// settings in effect, not as an internal error.
			return nil, annotations.Errorf(annotations.EINVALID, "the %s fit by %s failed at these settings (%s): %v", spec.Model, spec.Engine, settingsInEffect(spec), err)
		}
		return nil, err
	}
	if err := checkFinite(res, spec); err != nil {
		return nil, err
	}
	return res, nil
}

// checkFinite is the last guard against a numerical failure that no
// engine caught: a result holding a NaN or an infinity (which JSON cannot
// hold, so that it could not be written or stored) is refused with the
// settings that were given, instead of failing when it is written.
//
// The document is encoded piece by piece and thrown away
// (multirater.WriteIndented), never held whole.
func checkFinite(res *multirater.FitResult, spec FitSpec) error {
	err := multirater.WriteIndented(io.Discard, res)
	if err == nil {
		return nil
	}
	return annotations.Errorf(annotations.EINVALID, "the %s fit by %s gave a value that is not a finite number (%v), a numerical failure at these settings (%s): move the settings given away from the ends of their ranges", spec.Model, spec.Engine, err, settingsInEffect(spec))
}

// settingsInEffect lists the numeric settings of spec (defaults filled in)
// that are not 0: "chains 4, samples 2000, ...".
func settingsInEffect(spec FitSpec) string {
	var given []string
	for _, r := range Settings() {
		if v := r.get(spec); v != 0 && r.Applies(spec.Model, spec.Engine) {
			given = append(given, fmt.Sprintf("%s %v", r.Field, v))
		}
	}
	if k := strings.TrimSpace(spec.Kernel); k != "" && !strings.EqualFold(k, "identity") {
		given = append(given, "kernel "+clip(k, 200))
	}
	if len(given) == 0 {
		return "the defaults"
	}
	return strings.Join(given, ", ")
}

// OrdinalData maps an ordinal dataset to the sampler's input: items in
// ds.ItemIDs order (items-file order, then labelled items not in the items
// file), raters in order of first label, levels in scheme order. It does not
// set the covariance.
func OrdinalData(ds *annotations.Dataset) (*ordinal.Data, error) {
	data := &ordinal.Data{
		ItemIDs:  ds.ItemIDs(),
		RaterIDs: ds.RaterIDs(),
		Levels:   ds.Scheme.Codes(),
	}
	if len(data.Levels) < 2 {
		return nil, annotations.Errorf(annotations.EINVALID, "the ordinal model needs at least 2 levels, the scheme %s has %d", ds.Scheme, len(data.Levels))
	}
	var err error
	data.Ratings, data.Repeats, err = indexRatings(ds, data.ItemIDs, data.RaterIDs, "level")
	if err != nil {
		return nil, err
	}
	return data, nil
}

// CheckKernelData checks, before a fit is queued, that the project's items
// have what the spec's kernel reads (st from the store): a text term needs
// items with texts, a covariate term items with numeric covariates. The
// default kernel (empty spec) always fits: it follows the data.
func CheckKernelData(spec string, st *annotations.Stats) error {
	if strings.TrimSpace(spec) == "" || st == nil {
		return nil
	}
	ks, err := kernel.ParseSpec(spec)
	if err != nil {
		return annotations.Errorf(annotations.EINVALID, "%s", err)
	}
	for _, t := range ks {
		switch {
		case t.Kind == kernel.TextTerm && t.Column == "" || t.Kind == kernel.TextRBFTerm:
			if st.ItemsWithText == 0 {
				return annotations.Errorf(annotations.EINVALID, "kernel %q: term %s reads the items' texts, and none of the project's %d items has one (import an items file with a text column, or use kernel identity)", spec, t, st.Items)
			}
		case t.Kind == kernel.CovTerm && t.Cov.Covariates():
			if st.ItemsWithCovariates == 0 {
				return annotations.Errorf(annotations.EINVALID, "kernel %q: term %s reads numeric item covariates, and none of the project's %d items has any (import an items file with numeric columns, or use kernel identity)", spec, t, st.Items)
			}
		}
	}
	return nil
}

// RobustData maps a dataset with a binary scheme to the robust family's
// data: the positive class +1, the other -1.
func RobustData(ds *annotations.Dataset) (*robust.Data, error) {
	if ds.Scheme.Kind != annotations.Binary {
		return nil, annotations.Errorf(annotations.EINVALID, "the robust model needs a binary scheme (binary:NEG,POS,pos=POS), the scheme is %s", ds.Scheme)
	}
	codes := ds.Scheme.Codes()
	neg := codes[0]
	if neg == ds.Scheme.Positive {
		neg = codes[1]
	}
	data := &robust.Data{ItemIDs: ds.ItemIDs(), RaterIDs: ds.RaterIDs(), Classes: [2]string{neg, ds.Scheme.Positive}, Levels: codes}
	var err error
	data.Labels, data.Repeats, err = indexLabels(ds, data.ItemIDs, data.RaterIDs, func(l annotations.Label, item, rater int) (robust.Label, error) {
		y := -1.0
		if l.Value == ds.Scheme.Positive {
			y = 1
		}
		return robust.Label{Item: item, Rater: rater, Y: y}, nil
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}

// BoundedData maps a dataset with a bounded scheme to the bounded family's
// data: every label a value in [Lo, Hi].
func BoundedData(ds *annotations.Dataset) (*bounded.Data, error) {
	if ds.Scheme.Kind != annotations.Bounded {
		return nil, annotations.Errorf(annotations.EINVALID, "the bounded model needs a bounded scheme, the scheme is %s", ds.Scheme)
	}
	data := &bounded.Data{ItemIDs: ds.ItemIDs(), RaterIDs: ds.RaterIDs(), Lo: ds.Scheme.Lo, Hi: ds.Scheme.Hi}
	var err error
	data.Ratings, data.Repeats, err = indexLabels(ds, data.ItemIDs, data.RaterIDs, func(l annotations.Label, item, rater int) (bounded.Rating, error) {
		v, err := ds.Scheme.Value(l.Value)
		if err != nil {
			return bounded.Rating{}, annotations.Errorf(annotations.EINVALID, "label of rater %q for item %q: %v", l.Rater, l.Item, err)
		}
		return bounded.Rating{Item: item, Rater: rater, Value: v}, nil
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}

// indexRatings maps the labels of ds to the samplers' ratings: item and
// rater indices into itemIDs and raterIDs, the label's index in the scheme.
// what names a scheme value in errors ("level", "class"). A label that is
// not in the scheme is an error; repeats reports repeated labels (see
// indexLabels).
func indexRatings(ds *annotations.Dataset, itemIDs, raterIDs []string, what string) (rs []multirater.Rating, repeats bool, err error) {
	return indexLabels(ds, itemIDs, raterIDs, func(l annotations.Label, item, rater int) (multirater.Rating, error) {
		lev, ok := ds.Scheme.Index(l.Value)
		if !ok {
			return multirater.Rating{}, annotations.Errorf(annotations.EINVALID, "label %q of rater %q for item %q is not a %s of %s", l.Value, l.Rater, l.Item, what, ds.Scheme)
		}
		return multirater.Rating{Item: item, Rater: rater, Level: lev}, nil
	})
}

// indexLabels maps each label of ds, with its item and rater indices into
// itemIDs and raterIDs, to a family's rating by conv. A second label of a
// rater for an item is one more observation (repeats reports that there
// are some): a dataset holds repeated labels only when they were read or
// imported with --duplicates keep (annotations.DuplicatesKeep), and every
// family counts each as one more likelihood term.
func indexLabels[R any](ds *annotations.Dataset, itemIDs, raterIDs []string, conv func(l annotations.Label, item, rater int) (R, error)) (out []R, repeats bool, err error) {
	itemIdx, raterIdx := indexOf(itemIDs), indexOf(raterIDs)
	seen := make(map[[2]int]bool, len(ds.Labels))
	out = make([]R, 0, len(ds.Labels))
	for _, l := range ds.Labels {
		key := [2]int{itemIdx[l.Item], raterIdx[l.Rater]}
		r, err := conv(l, key[0], key[1])
		if err != nil {
			return nil, false, err
		}
		repeats = repeats || seen[key]
		seen[key] = true
		out = append(out, r)
	}
	return out, repeats, nil
}

// KernelInputs returns the kernel inputs of the items ids: their numeric
// covariates, one column per covariate name (sorted), for kernels that need
// them. Every item must have every covariate.
func KernelInputs(ds *annotations.Dataset, ids []string, k kernel.Kernel) (kernel.Inputs, error) {
	in := kernel.Inputs{N: len(ids)}
	if !k.Covariates() {
		return in, nil
	}
	byID := make(map[string]*annotations.Item, len(ds.Items))
	names := map[string]bool{}
	for i := range ds.Items {
		it := &ds.Items[i]
		byID[it.ID] = it
		for c := range it.Covariates {
			names[c] = true
		}
	}
	if len(names) == 0 {
		return in, annotations.Errorf(annotations.EINVALID, "kernel %s needs numeric item covariates, and the items have none (give an items file with numeric columns, or use kernel identity)", k)
	}
	cols := make([]string, 0, len(names))
	for c := range names {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	x, missing, _ := covariateMatrix(byID, ids, cols, notInItemsFile)
	if len(missing) > 0 {
		return in, annotations.Errorf(annotations.EINVALID, "kernel %s needs the covariates %s for every item: %s", k, strings.Join(cols, ", "), strings.Join(missing, "; "))
	}
	in.X = x
	return in, nil
}

// indexOf maps each of names to its index (the last, for a name given
// twice).
func indexOf(names []string) map[string]int {
	ix := make(map[string]int, len(names))
	for i, name := range names {
		ix[name] = i
	}
	return ix
}

// notInItemsFile is covariateMatrix's message on an item that is not in
// the items file.
const notInItemsFile = "item %q is not in the items file"

// covariateMatrix returns the covariates cols of the items ids (byID: the
// items by id), one row per item; missing says, for up to five of the
// nMissing items that lack a covariate, which (notInFile: the format of
// the message on an id that byID lacks).
func covariateMatrix(byID map[string]*annotations.Item, ids, cols []string, notInFile string) (x *mat.Dense, missing []string, nMissing int) {
	x = mat.NewDense(len(ids), len(cols), nil)
	for i, id := range ids {
		it := byID[id]
		for j, c := range cols {
			v, ok := 0.0, false
			if it != nil {
				v, ok = it.Covariates[c]
			}
			if !ok {
				nMissing++
				if len(missing) < 5 {
					if it == nil {
						missing = append(missing, fmt.Sprintf(notInFile, id))
					} else {
						missing = append(missing, missingCovariate(it, c))
					}
				}
				break
			}
			x.Set(i, j, v)
		}
	}
	return x, missing, nMissing
}

// missingCovariate says that item it has no number for covariate c: no
// value, or a value that is not a number (kept as a text attribute).
func missingCovariate(it *annotations.Item, c string) string {
	if v, ok := it.Attrs[c]; ok {
		return fmt.Sprintf("item %q has %q for covariate %q, which is not a number", it.ID, v, c)
	}
	return fmt.Sprintf("item %q has no value for covariate %q", it.ID, c)
}
