package analysis

import (
	"testing"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/classify"
	"concord/multirater/mcmc"
	"concord/multirater/ordinal"
)

func TestLookupModel(t *testing.T) {
	for _, tc := range []struct {
		name, want, err string
	}{
		{"ordinal", ModelOrdinal, ""},
		{"Classification", ModelClassification, ""},
		{"", "", `unknown model "" (expected ordinal, classification, bounded, robust, confusion or auc)`},
		{"probit", "", `unknown model "probit" (expected ordinal, classification, bounded, robust, confusion or auc)`},
		{" ordinal", "", `unknown model " ordinal" (expected ordinal, classification, bounded, robust, confusion or auc)`},
	} {
		m, err := LookupModel(tc.name)
		switch {
		case tc.err == "" && (err != nil || m.Name != tc.want):
			t.Errorf("LookupModel(%q) = %q, %v; want %q", tc.name, m.Name, err, tc.want)
		case tc.err != "" && (err == nil || annotations.ErrorCode(err) != annotations.EINVALID || annotations.ErrorMessage(err) != tc.err):
			t.Errorf("LookupModel(%q) error %v; want EINVALID %q", tc.name, err, tc.err)
		}
	}
	seen := map[string]bool{}
	for i, m := range Models() {
		if seen[m.Name] || m.Doc == "" || len(m.Schemes) == 0 || len(m.Engines) == 0 || m.Output == "" || m.defaults == nil || m.fit == nil || (m.predictor == nil) == (m.itemsPredictor == nil) {
			t.Errorf("model %d (%q) is incomplete or repeated: %+v", i, m.Name, m)
		}
		seen[m.Name] = true
	}
	if Models()[0].Name != (FitSpec{}).WithDefaults().Model {
		t.Errorf("the first model %q is not the default model", Models()[0].Name)
	}
	if got := ModelNames(); got != "ordinal, classification, bounded, robust, confusion or auc" {
		t.Errorf("ModelNames() = %q", got)
	}
	if got := ModelUsage(); got != "ordinal (ordinal scheme), classification (nominal or binary scheme), bounded (bounded scheme), robust (binary scheme), confusion (nominal, binary or ordinal scheme) or auc (binary scheme)" {
		t.Errorf("ModelUsage() = %q", got)
	}
}

// The defaults of each model are its family's WithDefaults, for every
// identifiability and precision setting.
func TestModelDefaultsAreTheFamilys(t *testing.T) {
	for _, ident := range []string{"", "weak", "strong", "both"} {
		spec := FitSpec{Identifiability: ident, Burnin: 7}
		o := ordinal.Options{Common: mcmc.Common{Identifiability: mustIdent(t, ident), Settings: mcmc.Settings{Burnin: 7}}}.WithDefaults()
		got := FitSpec{Model: ModelOrdinal, Identifiability: ident, Burnin: 7}.WithDefaults()
		if got.Chains != o.Chains || got.Samples != o.Samples || got.Burnin != o.Burnin || got.Thin != o.Thin || got.V != o.V || got.Lambda != o.Lambda || got.SigmaB != o.SigmaB ||
			got.FlagThreshold != o.FlagThreshold || got.MaxRhat != o.MaxRhat || got.MinESS != o.MinESS || got.KeepDraws != o.KeepDraws || got.Precisions != "" {
			t.Errorf("ordinal, identifiability %q: defaults %+v, family's %+v", ident, got, o)
		}
		if d := spec.WithDefaults(); d.Lambda != o.Lambda || d.SigmaB != o.SigmaB {
			t.Errorf("identifiability %q: the default model's defaults %+v differ from the ordinal family's %+v", ident, d, o)
		}
		for _, prec := range []string{"", "inferred", "fixed", "fixed-full"} {
			p, _ := classify.ParsePrecisions(prec)
			c := classify.Options{Common: mcmc.Common{Identifiability: mustIdent(t, ident), Settings: mcmc.Settings{Burnin: 7}}, Precisions: p}.WithDefaults()
			got := FitSpec{Model: ModelClassification, Identifiability: ident, Precisions: prec, Burnin: 7}.WithDefaults()
			if got.Chains != c.Chains || got.Samples != c.Samples || got.Burnin != c.Burnin || got.Thin != c.Thin || got.V != c.V || got.Lambda != c.Lambda || got.SigmaB != 0 ||
				got.FlagThreshold != c.FlagThreshold || got.MaxRhat != c.MaxRhat || got.MinESS != c.MinESS || got.KeepDraws != c.KeepDraws || got.Precisions != c.Precisions.String() {
				t.Errorf("classification, identifiability %q, precisions %q: defaults %+v, family's %+v", ident, prec, got, c)
			}
		}
	}
	// Given values are kept, no burn-in stays none; the threshold prior of
	// a classification spec is cleared.
	s := FitSpec{Model: ModelClassification, Chains: 3, Burnin: -1, V: 2, Lambda: 5, SigmaB: 4, Precisions: "fixed"}.WithDefaults()
	if s.Chains != 3 || s.Burnin != -1 || s.V != 2 || s.Lambda != 5 || s.SigmaB != 0 || s.Precisions != "fixed" {
		t.Errorf("given values changed: %+v", s)
	}
	// With a kernel the classification chains' defaults are the family's
	// for a kernel (classify.Options.ForKernel); given lengths are kept.
	mc0 := mcmc.Settings{}.WithDefaults()
	for _, tc := range []struct {
		kernel                string
		samples, burnin       int
		wantSamples, wantBurn int
	}{
		{"", 0, 0, mc0.Samples, mc0.Burnin},
		{"identity", 0, 0, mc0.Samples, mc0.Burnin},
		{"text", 0, 0, classify.KernelSamples, classify.KernelBurnin},
		{"rbf:gamma=0.5", 0, 0, classify.KernelSamples, classify.KernelBurnin},
		{"text", 3000, -1, 3000, -1},
		{"text", 0, 700, classify.KernelSamples, 700},
	} {
		got := FitSpec{Model: ModelClassification, Kernel: tc.kernel, Samples: tc.samples, Burnin: tc.burnin}.WithDefaults()
		if got.Samples != tc.wantSamples || got.Burnin != tc.wantBurn {
			t.Errorf("classification, kernel %q, samples %d, burnin %d: defaults samples %d, burnin %d; want %d, %d", tc.kernel, tc.samples, tc.burnin, got.Samples, got.Burnin, tc.wantSamples, tc.wantBurn)
		}
	}
	// With the kernel left to the data, the lengths that depend on it stay
	// open (the fit fills them in); the rest are filled in.
	for _, tc := range []struct {
		spec                  FitSpec
		wantSamples, wantBurn int
	}{
		{FitSpec{Model: ModelClassification}, 0, 0},
		{FitSpec{Model: ModelClassification, Samples: 900}, 900, 0},
		{FitSpec{Model: ModelClassification, Kernel: "text"}, classify.KernelSamples, classify.KernelBurnin},
		{FitSpec{Model: ModelClassification, Kernel: "identity"}, mc0.Samples, mc0.Burnin},
		{FitSpec{Model: ModelOrdinal, Engine: "gibbs"}, mc0.Samples, mc0.Burnin},
	} {
		got := tc.spec.WithDefaultsExceptKernel()
		if got.Samples != tc.wantSamples || got.Burnin != tc.wantBurn || got.Kernel != tc.spec.Kernel || got.Chains != mc0.Chains {
			t.Errorf("%+v: WithDefaultsExceptKernel kernel %q, chains %d, samples %d, burnin %d; want kernel %q, chains %d, samples %d, burnin %d",
				tc.spec, got.Kernel, got.Chains, got.Samples, got.Burnin, tc.spec.Kernel, mc0.Chains, tc.wantSamples, tc.wantBurn)
		}
	}
	// The ordinal Gibbs sampler keeps the sampler's defaults with a kernel.
	if o := (FitSpec{Model: ModelOrdinal, Engine: "gibbs", Kernel: "text"}).WithDefaults(); o.Samples != mc0.Samples || o.Burnin != mc0.Burnin {
		t.Errorf("ordinal gibbs with a kernel: samples %d, burnin %d", o.Samples, o.Burnin)
	}
	// A model outside the table gets the sampler's defaults only.
	u := FitSpec{Model: "svm"}.WithDefaults()
	mc := mcmc.Settings{}.WithDefaults()
	if u.Chains != mc.Chains || u.Samples != mc.Samples || u.Burnin != mc.Burnin || u.V != 0 || u.Lambda != 0 {
		t.Errorf("unknown model's defaults %+v", u)
	}
}

func mustIdent(t *testing.T, s string) multirater.Identifiability {
	t.Helper()
	i, err := multirater.ParseIdentifiability(s)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func TestModelSchemes(t *testing.T) {
	parse := func(s string) annotations.Scheme {
		sc, err := annotations.ParseScheme(s)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	ord, nom, bin := parse("ordinal:1..5"), parse("nominal:cat,dog,fox"), parse("binary:0,1,pos=1")
	one := annotations.Scheme{Kind: annotations.Nominal, Levels: []annotations.Level{{Code: "a"}}}
	for _, tc := range []struct {
		model  string
		scheme annotations.Scheme
		err    string
	}{
		{"ordinal", ord, ""},
		{"", ord, ""},
		{"classification", nom, ""},
		{"classification", bin, ""},
		{"ordinal", bin, "the ordinal model needs an ordinal scheme; the scheme is binary:0,1,pos=1 (use model classification for nominal and binary labels; model bounded for bounded labels; model robust for binary labels; model confusion for nominal, binary and ordinal labels; model auc for binary labels)"},
		{"classification", ord, "the classification model needs a nominal or binary scheme; the scheme is ordinal:1..5 (use model ordinal for ordinal labels; model bounded for bounded labels; model robust for binary labels; model confusion for nominal, binary and ordinal labels; model auc for binary labels)"},
		{"classification", one, "the classification model needs at least 2 classes; the scheme " + one.String() + " has 1 (name both classes, e.g. binary:0,1,pos=1)"},
		{"svm", ord, `unknown model "svm" (expected ordinal, classification, bounded, robust, confusion or auc)`},
	} {
		err := CheckScheme(tc.model, tc.scheme)
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s on %s: %v", tc.model, tc.scheme, err)
			}
			continue
		}
		if err == nil || annotations.ErrorCode(err) != annotations.EINVALID || annotations.ErrorMessage(err) != tc.err {
			t.Errorf("%s on %s: error %v, want EINVALID %q", tc.model, tc.scheme, err, tc.err)
		}
	}
	for _, tc := range []struct {
		scheme annotations.Scheme
		want   string
	}{
		{ord, ModelOrdinal}, {nom, ModelClassification}, {bin, ModelClassification},
		{annotations.Scheme{Kind: annotations.Bounded}, ModelBounded},
	} {
		if got := DefaultModel(tc.scheme); got != tc.want {
			t.Errorf("DefaultModel(%s) = %q, want %q", tc.scheme.Kind, got, tc.want)
		}
	}
	// With the data: nominal and binary labels without texts get the
	// confusion model (issue 29), with texts the classification model.
	for _, tc := range []struct {
		scheme annotations.Scheme
		texts  int
		want   string
	}{
		{ord, 0, ModelOrdinal}, {ord, 5, ModelOrdinal},
		{nom, 0, ModelConfusion}, {bin, 0, ModelConfusion},
		{nom, 1, ModelClassification}, {bin, 800, ModelClassification},
		{annotations.Scheme{Kind: annotations.Bounded}, 0, ModelBounded},
	} {
		if got := DefaultModelFor(tc.scheme, tc.texts); got != tc.want {
			t.Errorf("DefaultModelFor(%s, %d) = %q, want %q", tc.scheme.Kind, tc.texts, got, tc.want)
		}
	}
	ds := &annotations.Dataset{Items: []annotations.Item{{ID: "a", Text: "some text"}, {ID: "b", Text: "  "}, {ID: "c"}}}
	if n := ItemsWithText(ds); n != 1 {
		t.Errorf("ItemsWithText = %d, want 1 (a blank text is none)", n)
	}
}

func TestModelValidateAndCheckGiven(t *testing.T) {
	none := func(string) bool { return false }
	only := func(fields ...string) func(string) bool {
		return func(f string) bool {
			for _, g := range fields {
				if g == f {
					return true
				}
			}
			return false
		}
	}
	for _, tc := range []struct {
		name  string
		spec  FitSpec
		given func(string) bool
		err   string
	}{
		{"ordinal", FitSpec{Model: "ordinal", SigmaB: 2}, only("sigma_b"), ""},
		{"ordinal precisions", FitSpec{Model: "ordinal", Engine: "gibbs", Precisions: "fixed"}, only("precisions"), `precisions is not a setting of the ordinal model fitted by gibbs (leave it out): its settings are identifiability, ref_rater, sampler, chains, samples, burnin, thin, max_rhat, min_ess, v, lambda, sigma_b, flag_threshold and keep_draws; it is a setting of the classification model`},
		// EP, the default engine, reads no sampler setting: the message
		// names the engine that does.
		{"ordinal chains by default", FitSpec{Model: "ordinal", Chains: 2}, only("chains"), `chains is not a setting of the ordinal model fitted by ep (leave it out): its settings are v, lambda, sigma_b, flag_threshold, keep_draws, sigma, thresholds, noise, restarts and final_rank; it is a setting of the classification or confusion model; chains is read by its gibbs engine`},
		{"classification", FitSpec{Model: "classification", Precisions: "inferred", Identifiability: "strong"}, only("v", "lambda"), ""},
		{"sigma_b", FitSpec{Model: "classification"}, only("sigma_b"), `sigma_b is not a setting of the classification model fitted by gibbs (leave it out): its settings are identifiability, ref_rater, sampler, chains, samples, burnin, thin, max_rhat, min_ess, v, lambda, flag_threshold, keep_draws and precisions; it is a setting of the ordinal model`},
		{"fixed with a prior", FitSpec{Model: "classification", Precisions: "fixed-full"}, only("lambda"), `fields "v" and "lambda" are the prior of inferred precisions; with precisions "fixed-full" every precision is fixed at 1 (leave them out, or use precisions inferred)`},
		{"fixed and strong", FitSpec{Model: "classification", Precisions: "fixed", Identifiability: "both"}, none, `identifiability "both" fixes one rater's precision; with precisions "fixed" every precision is already fixed at 1 (use identifiability weak)`},
	} {
		m, err := LookupModel(tc.spec.Model)
		if err != nil {
			t.Fatal(err)
		}
		err = m.Validate(tc.spec)
		if err == nil {
			err = m.CheckGiven(tc.spec, tc.given)
		}
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || annotations.ErrorMessage(err) != tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}
