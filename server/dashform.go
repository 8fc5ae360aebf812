package server

import (
	"context"
	"strings"

	"github.com/gin-gonic/gin"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
	"concord/textfeat"
)

// The start-fit form of the project page, built from analysis's model
// table: the models that fit the project's scheme (the scheme's default
// first), each model's engines, and the settings that a model and engine
// use. Every setting group is rendered with the model:engine pairs that use
// it (data-for); the page's script shows the groups of the chosen pair, and
// without the script the server drops the fields that the chosen pair does
// not use, so that a field of another model never makes the fit's
// validation fail.

// formSetting is a setting of the start-fit form that not every model or
// engine uses. Which ones do is asked of the model table: a pair uses the
// setting when a spec with the probe's value passes the model's validation
// (FitSpec.Validate) and its check of given fields (Model.CheckGiven).
type formSetting struct {
	name string
	// gibbs marks a setting of the gibbs engine alone (the deterministic
	// engines would accept the sampler's fields and ignore them).
	gibbs bool
	probe func(*analysis.FitSpec)
}

var formSettings = []formSetting{
	{"identifiability", true, func(s *analysis.FitSpec) { s.Identifiability = multirater.Strong.String() }},
	{"ref_rater", true, func(s *analysis.FitSpec) { s.Identifiability, s.RefRater = multirater.Strong.String(), "r" }},
	{"sampler", true, func(s *analysis.FitSpec) { s.Sampler = "paper" }},
	{"chains", true, func(s *analysis.FitSpec) { s.Chains = 2 }},
	{"samples", true, func(s *analysis.FitSpec) { s.Samples = 100 }},
	{"burnin", true, func(s *analysis.FitSpec) { s.Burnin = 10 }},
	{"thin", true, func(s *analysis.FitSpec) { s.Thin = 2 }},
	{"max_rhat", true, func(s *analysis.FitSpec) { s.MaxRhat = 1.05 }},
	{"min_ess", true, func(s *analysis.FitSpec) { s.MinESS = 100 }},
	{"precisions", false, func(s *analysis.FitSpec) { s.Precisions = analysis.PrecisionsFixed }},
	{"v", false, func(s *analysis.FitSpec) { s.V = 2 }},
	{"lambda", false, func(s *analysis.FitSpec) { s.Lambda = 2 }},
	{"sigma_b", false, func(s *analysis.FitSpec) { s.SigmaB = 2 }},
	{"restarts", false, func(s *analysis.FitSpec) { s.Restarts = 2 }},
	{"sigma", false, func(s *analysis.FitSpec) { s.Sigma = 1 }},
	{"thresholds", false, func(s *analysis.FitSpec) { s.Thresholds = []float64{-1, 1} }},
	{"likelihood", false, func(s *analysis.FitSpec) { s.Likelihood = "truncnorm" }},
	{"dispersions", false, func(s *analysis.FitSpec) { s.Dispersions = "shared" }},
	{"dispersion", false, func(s *analysis.FitSpec) { s.Dispersion = 1 }},
	{"bias", false, func(s *analysis.FitSpec) { s.Bias = true }},
	{"bounds", false, func(s *analysis.FitSpec) { s.Bounds = "censor" }},
	{"epsilon", false, func(s *analysis.FitSpec) { e := 0.1; s.Epsilon = &e }},
	{"select", false, func(s *analysis.FitSpec) { s.Select = true }},
	{"em", false, func(s *analysis.FitSpec) { s.EM = "paper" }},
	{"scores", false, func(s *analysis.FitSpec) { s.Scores = analysis.ScoresGP }},
	{"gamma", false, func(s *analysis.FitSpec) { s.Gamma = "10" }},
	{"prior", false, func(s *analysis.FitSpec) { s.Prior = "spike-slab" }},
	{"prior_scale", false, func(s *analysis.FitSpec) { s.PriorScale = 2 }},
}

// formGroups are the form's groups of settings (fieldsets): each is shown
// for the pairs that use any of its settings.
var formGroups = map[string][]string{
	"gibbs":    {"identifiability", "sampler", "chains", "samples", "burnin", "thin"},
	"evidence": {"restarts", "sigma", "thresholds"},
	"bounded":  {"likelihood", "dispersions", "dispersion", "bias", "bounds"},
	"robust":   {"epsilon", "select", "em"},
	"auc":      {"scores", "gamma", "prior", "prior_scale"},
}

// learnsKernels probes whether a model and engine learn kernel
// length-scales by the evidence (ard without gamma).
var learnsKernels = func(s *analysis.FitSpec) { s.Kernel = "ard" }

// settingApplies reports whether the fit of model m by engine uses the
// setting f.
func settingApplies(m analysis.Model, engine string, f formSetting) bool {
	if f.gibbs && engine != multirater.EngineGibbs {
		return false
	}
	return probeSpec(m, engine, f.name, f.probe)
}

// probeSpec reports whether a spec of model m and engine with probe's
// setting (the form field name) passes the model table's checks.
func probeSpec(m analysis.Model, engine, name string, probe func(*analysis.FitSpec)) bool {
	s := analysis.FitSpec{Model: m.Name, Engine: engine}
	probe(&s)
	if s.Validate() != nil {
		return false
	}
	return m.CheckGiven(s, func(field string) bool { return field == name }) == nil
}

// fittingModels returns the models of the table that fit labels of scheme
// s, the default for the scheme and a project with textItems items with a
// text (analysis.DefaultModelFor) first.
func fittingModels(s annotations.Scheme, textItems int) []analysis.Model {
	def := analysis.DefaultModelFor(s, textItems)
	var out []analysis.Model
	for _, m := range analysis.Models() {
		if m.CheckScheme(s) != nil {
			continue
		}
		if m.Name == def {
			out = append([]analysis.Model{m}, out...)
		} else {
			out = append(out, m)
		}
	}
	return out
}

// pairs returns the model:engine pairs of models for which ok holds, as
// the form's data-for attribute ("ordinal:ep ordinal:laplace").
func pairs(models []analysis.Model, ok func(m analysis.Model, engine string) bool) string {
	var out []string
	for _, m := range models {
		for _, e := range m.Engines {
			if ok(m, e) {
				out = append(out, m.Name+":"+e)
			}
		}
	}
	return strings.Join(out, " ")
}

// fitFormView is the start-fit form of a project page.
type fitFormView struct {
	Models  []modelChoice
	Engines []engineChoice
	Kernels []kernelChoice
	// Doc describes the chosen model (the table's one-line Doc).
	Doc string
	// For maps a setting, or "group:NAME" for a group of them, to the
	// model:engine pairs that use it; a setting that no pair uses is
	// missing (the form leaves it out).
	For map[string]string
	// HasText: the items have texts (the text featuriser's settings).
	HasText bool
	// Categorical: the items have columns that the covariate kernels can
	// read (numeric covariates or categories).
	Categorical bool
}

type modelChoice struct {
	Name, Label, Doc string
	Selected         bool
}

type engineChoice struct {
	Name, Label string
	// Models are the models fitted by the engine (space-separated).
	Models   string
	Selected bool
}

type kernelChoice struct {
	Value, Label string
	// For: the pairs the kernel suits ("" for every one).
	For      string
	Selected bool
}

// engineLabels describe the engines in the form; an engine not named
// here shows by its name.
var engineLabels = map[string]string{
	multirater.EngineGibbs:   "gibbs (MCMC)",
	multirater.EngineEP:      "ep (expectation propagation, seconds)",
	multirater.EngineLaplace: "laplace (Laplace's method, seconds)",
	multirater.EngineSMC:     "smc (tempering sequential Monte Carlo, minutes)",
}

// modelLabel is a model's choice in the form: its name and the start of
// its Doc ("ordinal (multi-rater ordinal Gaussian process)").
func modelLabel(m analysis.Model) string {
	short := m.Doc
	if i := strings.IndexAny(short, "(:"); i > 0 {
		short = strings.TrimSpace(short[:i])
	}
	if short == "" {
		return m.Name
	}
	return m.Name + " (" + short + ")"
}

// modelDoc is the hint under the form that describes model m.
func modelDoc(m analysis.Model) string { return "The " + m.Name + " model: " + m.Doc + "." }

// itemInputs say what the project's items (the first itemSample of them)
// have, to offer the kernels and settings that use it.
type itemInputs struct {
	text, covariates, attrs bool
}

// itemSample is how many items the project page looks at to see whether
// the items have texts and covariates (imports give every item of a file
// the same columns).
const itemSample = 200

// itemInputs says whether the project's items (the first itemSample of
// them) have texts, numeric covariates and other columns.
func (d *dashboard) itemInputs(ctx context.Context, projectID int64) (itemInputs, error) {
	items, _, err := d.s.store.ListItems(ctx, projectID, annotations.ItemFilter{Page: annotations.Page{Limit: itemSample}})
	if err != nil {
		return itemInputs{}, err
	}
	var in itemInputs
	for _, it := range items {
		in.text = in.text || strings.TrimSpace(it.Text) != ""
		in.covariates = in.covariates || len(it.Covariates) > 0
		in.attrs = in.attrs || len(it.Attrs) > 0
	}
	return in, nil
}

// newFitFormView builds the form for models (fittingModels) with the
// values form (the chosen model and engine, the kernel); withText items
// have a text, unlabelled have no labels.
func newFitFormView(models []analysis.Model, form map[string]string, withText, unlabelled int, in itemInputs) fitFormView {
	v := fitFormView{For: map[string]string{}, HasText: in.text, Categorical: in.covariates || in.attrs}
	chosen, engine := chosenPair(models, form["model"], form["engine"])
	for _, m := range models {
		v.Models = append(v.Models, modelChoice{Name: m.Name, Label: modelLabel(m), Doc: m.Doc, Selected: m.Name == chosen.Name})
	}
	v.Doc = modelDoc(chosen)
	// Every engine once, in the order of the models; the chosen model's
	// engine selected.
	seen := map[string]int{}
	for _, m := range models {
		for _, e := range m.Engines {
			i, ok := seen[e]
			if !ok {
				label := engineLabels[e]
				if label == "" {
					label = e
				}
				i = len(v.Engines)
				seen[e] = i
				v.Engines = append(v.Engines, engineChoice{Name: e, Label: label})
			}
			v.Engines[i].Models = strings.TrimSpace(v.Engines[i].Models + " " + m.Name)
			v.Engines[i].Selected = v.Engines[i].Selected || m.Name == chosen.Name && e == engine
		}
	}
	for _, f := range formSettings {
		if p := pairs(models, func(m analysis.Model, e string) bool { return settingApplies(m, e, f) }); p != "" {
			v.For[f.name] = p
		}
	}
	for g, names := range formGroups {
		p := pairs(models, func(m analysis.Model, e string) bool {
			for _, f := range formSettings {
				if containsString(names, f.name) && settingApplies(m, e, f) {
					return true
				}
			}
			return false
		})
		if p != "" {
			v.For["group:"+g] = p
		}
	}
	v.Kernels = kernelChoices(models, withText, unlabelled, in)
	pair := chosen.Name + ":" + engine
	for i := range v.Kernels {
		k := &v.Kernels[i]
		if k.Value == form["kernel"] && (k.For == "" || containsString(strings.Fields(k.For), pair)) {
			k.Selected = true
			break
		}
	}
	return v
}

// chosenPair returns the model named model if it is one of models (else
// the first, the default) and its engine named engine if it has it (else
// its first, the default).
func chosenPair(models []analysis.Model, model, engine string) (analysis.Model, string) {
	m := models[0]
	for _, o := range models {
		if strings.EqualFold(o.Name, strings.TrimSpace(model)) {
			m = o
		}
	}
	e := strings.ToLower(strings.TrimSpace(engine))
	if !containsString(m.Engines, e) {
		e = m.Engines[0]
	}
	return m, e
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// kernelChoices are the kernels the start-fit form offers: the default
// (analysis.DefaultKernelFor, for withText items with a text and
// unlabelled items without labels; one choice per distinct default of the
// models), identity, and those that use the items' texts and covariates;
// the kernels with length-scales learnt by the evidence only for the
// pairs that learn them.
func kernelChoices(models []analysis.Model, withText, unlabelled int, in itemInputs) []kernelChoice {
	type def struct{ kernel, why string }
	var defs []def
	byDef := map[def][]analysis.Model{}
	for _, m := range models {
		k, why := analysis.DefaultKernelFor(m.Name, withText, unlabelled)
		d := def{k, why}
		if _, ok := byDef[d]; !ok {
			defs = append(defs, d)
		}
		byDef[d] = append(byDef[d], m)
	}
	var out []kernelChoice
	for _, d := range defs {
		c := kernelChoice{Value: "", Label: "default: " + d.kernel + " (" + d.why + ")"}
		if len(defs) > 1 {
			var names []string
			for _, m := range byDef[d] {
				names = append(names, m.Name)
			}
			c.Label += " [" + strings.Join(names, " ") + "]"
			c.For = pairs(byDef[d], func(analysis.Model, string) bool { return true })
		}
		out = append(out, c)
	}
	out = append(out, kernelChoice{Value: "identity", Label: "identity (labels only, items unrelated)"})
	if in.text {
		out = append(out, kernelChoice{Value: "text", Label: "text (linear kernel on bags of words)"}, kernelChoice{Value: "text-rbf:gamma=1", Label: "text-rbf:gamma=1 (RBF on bags of words)"})
	}
	if in.covariates {
		out = append(out, kernelChoice{Value: "linear", Label: "linear (on the numeric covariates)"}, kernelChoice{Value: "rbf:gamma=1", Label: "rbf:gamma=1 (on the numeric covariates)"})
		learn := pairs(models, func(m analysis.Model, e string) bool { return probeSpec(m, e, "kernel", learnsKernels) })
		if learn != "" {
			out = append(out, kernelChoice{Value: "rbf", Label: "rbf (length-scale learnt by the evidence)", For: learn},
				kernelChoice{Value: "ard", Label: "ard (a length-scale per covariate, learnt by the evidence)", For: learn})
		}
	}
	return out
}

// fitFormFields are the fields of the start-fit form, kept on the page
// when the form is rejected.
var fitFormFields = []string{"model", "engine", "precisions", "kernel", "kernel_custom", "covariates", "categorical", "standardize",
	"identifiability", "ref_rater", "sampler", "chains", "samples", "burnin", "thin", "seed", "v", "lambda", "sigma_b",
	"flag_threshold", "max_rhat", "min_ess", "keep_draws", "restarts", "sigma", "thresholds",
	"likelihood", "dispersions", "dispersion", "bias", "bounds", "epsilon", "select", "em", "scores", "gamma", "prior", "prior_scale",
	"text_weighting", "text_min_df", "text_max_features", "text_stem", "text_bigrams", "text_keep_stop_words"}

// fitForm reads the start-fit form of a project with scheme into a fit
// request; empty fields take the defaults. The fields that the chosen
// model and engine do not use are left out of the request (the form
// without its script shows every model's settings), and so is an engine
// that the model does not have (it gets its default). A custom kernel,
// when given, replaces the chosen one; the text featuriser's fields make
// up "text". form holds the fields as posted, to show them again.
func fitForm(c *gin.Context, scheme annotations.Scheme) (*fitRequest, map[string]string, error) {
	form := map[string]string{}
	for _, k := range fitFormFields {
		form[k] = strings.TrimSpace(c.PostForm(k))
	}
	sent := make(map[string]string, len(form))
	for k, v := range form {
		sent[k] = v
	}
	model := strings.ToLower(sent["model"])
	if model == "" {
		model = analysis.DefaultModel(scheme)
	}
	if m, err := analysis.LookupModel(model); err == nil {
		engine := strings.ToLower(sent["engine"])
		if !containsString(m.Engines, engine) {
			engine, sent["engine"] = m.Engines[0], ""
		}
		for _, f := range formSettings {
			if !settingApplies(m, engine, f) {
				sent[f.name] = ""
			}
		}
	}
	req := &fitRequest{
		Model: sent["model"], Engine: sent["engine"], Precisions: sent["precisions"], Kernel: sent["kernel"], Covariates: sent["covariates"],
		Identifiability: sent["identifiability"], RefRater: sent["ref_rater"], Sampler: sent["sampler"],
		Likelihood: sent["likelihood"], Dispersions: sent["dispersions"], Bounds: sent["bounds"], EM: sent["em"],
		Standardize: sent["standardize"] != "", Bias: sent["bias"] != "", Select: sent["select"] != "",
		Scores: sent["scores"], Prior: sent["prior"],
	}
	if v := sent["gamma"]; v != "" {
		g := analysis.GammaSpec(v)
		req.Gamma = &g
	}
	if sent["kernel_custom"] != "" {
		req.Kernel = sent["kernel_custom"]
	}
	for _, col := range strings.Split(sent["categorical"], ",") {
		if col = strings.TrimSpace(col); col != "" {
			req.Categorical = append(req.Categorical, col)
		}
	}
	ints := []struct {
		name string
		dst  **int
	}{{"chains", &req.Chains}, {"samples", &req.Samples}, {"burnin", &req.Burnin}, {"thin", &req.Thin}, {"keep_draws", &req.KeepDraws}, {"restarts", &req.Restarts}}
	for _, f := range ints {
		if v := sent[f.name]; v != "" {
			n, err := parseIntField(f.name, v)
			if err != nil {
				return nil, form, err
			}
			*f.dst = &n
		}
	}
	if v := sent["seed"]; v != "" {
		n, err := parseUintField("seed", v)
		if err != nil {
			return nil, form, err
		}
		req.Seed = &n
	}
	floats := []struct {
		name string
		dst  **float64
	}{{"v", &req.V}, {"lambda", &req.Lambda}, {"sigma_b", &req.SigmaB}, {"flag_threshold", &req.FlagThreshold}, {"max_rhat", &req.MaxRhat}, {"min_ess", &req.MinESS},
		{"sigma", &req.Sigma}, {"dispersion", &req.Dispersion}, {"epsilon", &req.Epsilon}, {"prior_scale", &req.PriorScale}}
	for _, f := range floats {
		if v := sent[f.name]; v != "" {
			x, err := parseFloatField(f.name, v)
			if err != nil {
				return nil, form, err
			}
			*f.dst = &x
		}
	}
	if v := sent["thresholds"]; v != "" {
		for _, t := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
			x, err := parseFloatField("thresholds", t)
			if err != nil {
				return nil, form, err
			}
			req.Thresholds = append(req.Thresholds, x)
		}
	}
	var text textfeat.Options
	set := false
	if v := sent["text_weighting"]; v != "" {
		text.Weighting, set = textfeat.Weighting(v), true
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"text_min_df", &text.MinDF}, {"text_max_features", &text.MaxFeatures}} {
		if v := sent[f.name]; v != "" {
			n, err := parseIntField(f.name, v)
			if err != nil {
				return nil, form, err
			}
			*f.dst, set = n, true
		}
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"text_stem", &text.Stem}, {"text_bigrams", &text.Bigrams}, {"text_keep_stop_words", &text.KeepStopWords}} {
		if sent[f.name] != "" {
			*f.dst, set = true, true
		}
	}
	if set {
		req.Text = &text
	}
	return req, form, nil
}
