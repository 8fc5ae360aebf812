package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/kernel"
)

// Setting is the declared range of one numeric setting of FitSpec: the one
// place that FitSpec.Validate (and so the CLI and the API), the API's
// request checks and the property test over every model's settings read.
// Every value from Min to Max fits or fails with an error that names the
// setting; a value outside is refused before a fit starts.
type Setting struct {
	// Field is the setting's JSON name (the API's field), Flag its
	// command-line flag.
	Field, Flag string
	// Min and Max bound the values; MaxOpen excludes Max itself.
	Min, Max float64
	MaxOpen  bool
	// What names the kind of value in messages ("" : "a number" or "an
	// integer"); Note is said after the range.
	What, Note string
	// Int is set for integer settings.
	Int bool
	// Engines is "gibbs" for the settings of the gibbs engine, "det" for
	// those of the deterministic engines (ep, laplace), "" for any.
	Engines string
	// Zero says what 0 (the field left out) means: "the default",
	// "learnt", ...; empty when 0 is a value in the range.
	Zero string
	// Models are the models that read the setting (nil: every model).
	Models []string
	// get returns the setting's value in a spec.
	get func(FitSpec) float64
}

// Limits on the lists and strings of a FitSpec: a spec is stored with
// every fit, and an error message may quote a value.
const (
	// MaxThresholds bounds the number of fixed thresholds (K-1 for K
	// levels: at most 1000 levels).
	MaxThresholds = 999
	// MaxThreshold bounds their size: thresholds live on the latent scale,
	// where the prior sd is 1.
	MaxThreshold = 1e3
	// MaxCategorical bounds the categorical columns named.
	MaxCategorical = 200
	// MaxSpecString bounds every string setting except the kernel's, which
	// may be a longer sum of terms (MaxKernelString).
	MaxSpecString = 1000
	// MaxRank bounds the rank of a low-rank prior (FitSpec.Rank): its
	// factor holds N MaxRank numbers.
	MaxRank         = 8192
	MaxKernelString = 4000
)

// Settings returns the declared ranges of FitSpec's numeric settings.
// The ranges were chosen so that the engines stay in floating point at
// both ends (the property test in ranges_test.go fits every model at each
// end); the work sizes' upper ends (chains, samples, burn-in) bound a
// request, and the Gibbs work budget (CheckWork) bounds their product.
func Settings() []Setting {
	gibbs := []string{ModelOrdinal, ModelClassification, ModelConfusion}
	det := []string{ModelOrdinal, ModelBounded, ModelRobust}
	return []Setting{
		{Field: "chains", Flag: "--chains", Min: 1, Max: MaxChains, Int: true, Zero: "the default", Engines: "gibbs", Models: gibbs, get: func(s FitSpec) float64 { return float64(s.Chains) }},
		{Field: "samples", Flag: "--samples", Min: 1, Max: MaxSamples, Int: true, Zero: "the default", Engines: "gibbs", Models: gibbs, get: func(s FitSpec) float64 { return float64(s.Samples) }},
		// FitSpec's burnin: 0 is the default and negative none, which is
		// the API's and CLI's 0 (see FitSpec.MarshalJSON): checked as 0.
		{Field: "burnin", Flag: "--burnin", Min: 0, Max: MaxBurnin, Int: true, Zero: "the default", Engines: "gibbs", Models: gibbs, get: func(s FitSpec) float64 { return float64(max(s.Burnin, 0)) }},
		{Field: "thin", Flag: "--thin", Min: 1, Max: MaxThin, Int: true, Zero: "the default", Engines: "gibbs", Models: gibbs, get: func(s FitSpec) float64 { return float64(s.Thin) }},
		{Field: "keep_draws", Flag: "--keep-draws", Min: 1, Max: MaxKeepDraws, Int: true, Zero: "the default", get: func(s FitSpec) float64 { return float64(s.KeepDraws) }},
		{Field: "restarts", Flag: "--restarts", Min: 1, Max: MaxRestarts, Int: true, Zero: "the default", Engines: "det", Models: det, get: func(s FitSpec) float64 { return float64(s.Restarts) }},
		// The rank of a text kernel's weight-space prior: -1 is the exact
		// dense matrix, 0 the default (gp.DefaultRank).
		{Field: "rank", Flag: "--rank", Min: -1, Max: MaxRank, Int: true, Zero: "the default (every dimension up to 256 items, then 128 to 512)", get: func(s FitSpec) float64 { return float64(s.Rank) }},
		{Field: "communities", Flag: "--communities", Min: 1, Max: MaxCommunities, Int: true, Zero: "chosen by the evidence lower bound", Models: []string{ModelConfusion}, get: func(s FitSpec) float64 { return float64(s.Communities) }},
		{Field: "max_iter", Flag: "--max-iter", Min: 1, Max: MaxVBIter, Int: true, Zero: "the default, 1000", Engines: "vb", Models: []string{ModelConfusion}, get: func(s FitSpec) float64 { return float64(s.MaxIter) }},
		// The Gamma(v, lambda) prior of the rater precisions and the
		// threshold prior's sd: wide enough for vague priors (v = lambda =
		// 0.001 is the common one), narrow enough that the precisions and
		// thresholds stay in floating point.
		{Field: "v", Flag: "--v", Min: MinPrior, Max: MaxPrior, Zero: "the default", Models: []string{ModelOrdinal, ModelClassification}, get: func(s FitSpec) float64 { return s.V }},
		{Field: "lambda", Flag: "--lambda", Min: MinPrior, Max: MaxPrior, Zero: "the default", Models: []string{ModelOrdinal, ModelClassification}, get: func(s FitSpec) float64 { return s.Lambda }},
		{Field: "sigma_b", Flag: "--sigma-b", Min: MinSigmaB, Max: MaxSigmaB, Zero: "the default", Models: []string{ModelOrdinal}, get: func(s FitSpec) float64 { return s.SigmaB }},
		{Field: "flag_threshold", Flag: "--flag", Min: 1e-12, Max: 1, MaxOpen: true, Zero: "the default", get: func(s FitSpec) float64 { return s.FlagThreshold }},
		{Field: "max_rhat", Flag: "--max-rhat", Min: 1.0000001, Max: 100, Zero: "the default", Engines: "gibbs", Models: gibbs, get: func(s FitSpec) float64 { return s.MaxRhat }},
		{Field: "min_ess", Flag: "--min-ess", Min: 1, Max: 1e9, Zero: "the default", Engines: "gibbs", Models: gibbs, get: func(s FitSpec) float64 { return s.MinESS }},
		// The latent noise sd, where the prior sd of the latent is 1.
		{Field: "sigma", Flag: "--sigma", Min: 1e-3, Max: 1e3, Zero: "learnt", Engines: "det", Models: []string{ModelOrdinal, ModelRobust}, get: func(s FitSpec) float64 { return s.Sigma }},
		// The bounded likelihoods' nu: a beta's a + b, a truncated or
		// warped Gaussian's precision; past 1e4 a rating's likelihood is a
		// spike narrower than the data's resolution.
		{Field: "dispersion", Flag: "--dispersion", Min: 1e-3, Max: 1e4, Zero: "learnt", Models: []string{ModelBounded}, get: func(s FitSpec) float64 { return s.Dispersion }},
		{Field: "concentration", Flag: "--concentration", Min: 1e-3, Max: 1e4, Zero: "the default, 4", Models: []string{ModelConfusion}, get: func(s FitSpec) float64 { return s.Concentration }},
		{Field: "prior_scale", Flag: "--prior-scale", Min: 1e-4, Max: 1e4, Zero: "the default, 1", Models: []string{ModelAUC}, get: func(s FitSpec) float64 { return s.PriorScale }},
		// A fixed labelling-error rate (left out: learnt by EM; 0 is a
		// value, the plain classifier).
		{Field: "epsilon", Flag: "--epsilon", What: "a labelling-error rate", Note: "0 is the plain classifier; leave it out to learn each rater's by EM", Min: 0, Max: 0.5, MaxOpen: true, Models: []string{ModelRobust}, get: func(s FitSpec) float64 {
			if s.Epsilon == nil {
				return 0
			}
			return *s.Epsilon
		}},
		// gamma's "cv" is 0 here; the cross-validation grid lies inside.
		{Field: "gamma", Flag: "--gamma", Min: 1e-3, Max: 1e4, Zero: "cv", Models: []string{ModelAUC}, get: func(s FitSpec) float64 { v, _, _ := s.Gamma.Value(); return v }},
	}
}

// Applies reports whether a fit of model by engine reads the setting.
func (r Setting) Applies(model, engine string) bool {
	if r.Models != nil && !slices.Contains(r.Models, model) {
		return false
	}
	gibbs := strings.EqualFold(engine, multirater.EngineGibbs)
	switch r.Engines {
	case "gibbs":
		return gibbs
	case "det":
		return strings.EqualFold(engine, multirater.EngineEP) || strings.EqualFold(engine, multirater.EngineLaplace)
	case "vb":
		return strings.EqualFold(engine, multirater.EngineVB)
	}
	// The classification model's precision prior is the gibbs engine's.
	if (r.Field == "v" || r.Field == "lambda") && model == ModelClassification {
		return gibbs
	}
	return true
}

// LookupSetting returns the declared range of the setting with JSON name
// field; it panics for a name that is not in Settings (a caller's bug).
func LookupSetting(field string) Setting {
	for _, r := range Settings() {
		if r.Field == field {
			return r
		}
	}
	panic(fmt.Sprintf("analysis: no setting %q", field))
}

// Range says the setting's range in words: "from 0.001 to 10000".
func (r Setting) Range() string {
	num := func(v float64) string {
		if r.Int {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if r.MaxOpen {
		return fmt.Sprintf("from %s up to (not including) %s", num(r.Min), num(r.Max))
	}
	return fmt.Sprintf("from %s to %s", num(r.Min), num(r.Max))
}

// In reports whether v is inside the declared range.
func (r Setting) In(v float64) bool {
	if math.IsNaN(v) || v < r.Min || v > r.Max || (r.MaxOpen && v == r.Max) {
		return false
	}
	return !r.Int || v == math.Trunc(v)
}

// Check returns nil when v is in range, or 0 (the field left out) for a
// setting whose 0 means something; else an EINVALID error naming the
// setting and its flag, its range and what leaving it out means.
func (r Setting) Check(v float64) error {
	if r.In(v) || (v == 0 && r.Zero != "") {
		return nil
	}
	return r.refuse(fmt.Sprintf("%s = %v (%s)", r.Field, v, r.Flag), v, "; 0 or left out: ")
}

// CheckField is Check for a field given explicitly in an API request,
// where 0 is a value like any other (left out is the default): the error
// names the field.
func (r Setting) CheckField(v float64) error {
	if r.In(v) {
		return nil
	}
	return r.refuse(fmt.Sprintf("field %q = %v", r.Field, v), v, "; leave it out for ")
}

func (r Setting) refuse(name string, v float64, zero string) error {
	what := "a number"
	switch {
	case r.What != "":
		what = r.What
	case r.Int:
		what = "an integer"
	}
	if r.Zero == "" {
		zero = ""
	} else {
		zero += r.Zero
	}
	if r.Note != "" {
		zero += "; " + r.Note
	}
	return annotations.Errorf(annotations.EINVALID, "%s: expected %s %s%s", name, what, r.Range(), zero)
}

// checkRanges checks every numeric setting of s against its declared
// range (0: the default) and the fixed thresholds against theirs
// (Validate has checked the sizes of the lists and strings first).
func (s FitSpec) checkRanges() error {
	for _, r := range Settings() {
		if err := r.Check(r.get(s)); err != nil {
			return err
		}
	}
	for _, b := range s.Thresholds {
		if math.IsNaN(b) || math.Abs(b) > MaxThreshold {
			return annotations.Errorf(annotations.EINVALID, "thresholds (--thresholds): %v is not a number from %g to %g (thresholds are on the latent scale, whose prior sd is 1)", b, -MaxThreshold, MaxThreshold)
		}
	}
	return nil
}

// checkSizes bounds the spec's lists and strings, and refuses without
// quoting them (an error message must not echo megabytes).
func (s FitSpec) checkSizes() error {
	bad := func(format string, args ...any) error {
		return annotations.Errorf(annotations.EINVALID, format, args...)
	}
	if n := len(s.Thresholds); n > MaxThresholds {
		return bad("thresholds: %d values; a scheme has at most %d levels, so at most %d thresholds", n, MaxThresholds+1, MaxThresholds)
	}
	if n := len(s.Categorical); n > MaxCategorical {
		return bad("categorical: %d columns named; at most %d", n, MaxCategorical)
	}
	for i, c := range s.Categorical {
		if len(c) > MaxSpecString {
			return bad("categorical: column %d is a name of %d bytes; at most %d", i+1, len(c), MaxSpecString)
		}
	}
	if n := len(s.Kernel); n > MaxKernelString {
		return bad("kernel: a specification of %d bytes; at most %d", n, MaxKernelString)
	}
	for _, f := range []struct{ name, v string }{
		{"model", s.Model}, {"covariates", s.Covariates}, {"identifiability", s.Identifiability}, {"ref_rater", s.RefRater},
		{"sampler", s.Sampler}, {"engine", s.Engine}, {"precisions", s.Precisions}, {"likelihood", s.Likelihood},
		{"bounds", s.Bounds}, {"em", s.EM}, {"hierarchy", s.Hierarchy}, {"scores", s.Scores}, {"gamma", string(s.Gamma)},
		{"prior", s.Prior}, {"text.weighting", string(s.Text.Weighting)},
	} {
		if len(f.v) > MaxSpecString {
			return bad("%s: a value of %d bytes; at most %d", f.name, len(f.v), MaxSpecString)
		}
	}
	return nil
}

// clip shortens s for an error message: at most about n bytes, the rest
// counted.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes more)", s[:cut], len(s)-cut)
}

// Clip shortens s for an error message (at most about 200 bytes, the rest
// counted), so that a refusal never echoes a huge value back.
func Clip(s string) string { return clip(s, 200) }

// KernelSettings are the declared ranges of the numbers in a kernel
// specification (FitSpec.Kernel): RBF widths and the variances of the
// constant and white-noise terms. Terms whose hyperparameters the evidence
// learns (rbf, ard without values) are not checked: the engines bound
// what they learn.
func KernelSettings() []Setting {
	return []Setting{
		{Field: "kernel rbf gamma", Flag: "--kernel rbf:gamma=G", Min: 1e-6, Max: 1e6},
		{Field: "kernel text-rbf gamma", Flag: "--kernel text-rbf:gamma=G", Min: 1e-6, Max: 1e6},
		{Field: "kernel ard gamma", Flag: "--kernel ard:gamma=G1,G2,...", Min: 1e-6, Max: 1e6},
		{Field: "kernel const variance", Flag: "--kernel const:V", Min: 1e-4, Max: 1e4},
		// A white-noise kernel alone below 0.1 drives the learnt rater noise
		// of the ep engine to nothing ("posterior marginal N(0, 0)").
		{Field: "kernel white variance", Flag: "--kernel white:V", Min: 0.1, Max: 1e4},
	}
}

// checkKernelRanges checks the numbers of a parsed kernel specification
// against KernelSettings.
func checkKernelRanges(ks kernel.Spec) error {
	ranges := map[string]Setting{}
	for _, r := range KernelSettings() {
		ranges[r.Field] = r
	}
	check := func(field string, v float64) error { return ranges[field].Check(v) }
	for _, t := range ks {
		if t.Learn {
			continue
		}
		var err error
		switch c := t.Cov.(type) {
		case kernel.RBF:
			err = check("kernel rbf gamma", c.Gamma)
		case kernel.ARD:
			for _, g := range c.Gammas {
				if err = check("kernel ard gamma", g); err != nil {
					break
				}
			}
		case kernel.Const:
			err = check("kernel const variance", c.V)
		case kernel.White:
			err = check("kernel white variance", c.V)
		}
		if t.Kind == kernel.TextRBFTerm {
			err = check("kernel text-rbf gamma", t.Gamma)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
