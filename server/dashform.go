package server

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
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

// formField is a setting of the start-fit form, derived from its
// declaration (analysis.AllFields): its JSON name is the form field's, its
// doc the help text, a list of words a select, a flag a checkbox, a
// number an input with the declared range.
type formField struct {
	Name, Label, Doc string
	// For: the model:engine pairs that read the setting.
	For string
	// Input is "select", "check", "number" or "text"; Options the words of
	// a select; Min, Max and Step the number's bounds ("" none).
	Input           string
	Options         []string
	Min, Max, Step  string
	Placeholder     string
	Value, Selected string
}

// formGroup is a fieldset of the form: the settings of a shared block or
// of a family.
type formGroup struct {
	Name, Legend, For string
	Fields            []formField
}

// blockGroups name the form's groups of the shared blocks' settings; a
// block not named here is under "More settings".
var blockGroups = map[string]string{"GibbsSettings": "gibbs", "MCMCSettings": "gibbs", "EvidenceSettings": "evidence"}

// groupLegends are the legends of the groups (a family's own group: "The
// NAME model").
var groupLegends = map[string]string{"gibbs": "Gibbs sampler (engine gibbs)", "evidence": "Evidence maximisation (engines ep and laplace)"}

// formGroupOf is the group of a setting on the form: its shared block's,
// "evidence" for the settings of the ep and laplace engines, its family's
// for the others, "" (More settings) for the shared blocks that every
// engine reads.
func formGroupOf(f analysis.SpecField) string {
	if f.Block != "" {
		return blockGroups[f.Block]
	}
	if slices.Equal(f.Engines, []string{multirater.EngineEP, multirater.EngineLaplace}) {
		return "evidence"
	}
	return f.Families[0]
}

// reads reports whether a fit of model m by engine reads the setting
// name.
func reads(m analysis.Model, engine, name string) bool {
	return slices.ContainsFunc(analysis.Fields(m.Name, engine), func(f analysis.SpecField) bool { return f.Name == name })
}

// learnsKernels reports whether a model and engine learn kernel
// length-scales by the evidence (ard without gamma).
func learnsKernels(m analysis.Model, engine string) bool {
	return analysis.FitSpec{Model: m.Name, Engine: engine, Kernel: "ard"}.Validate() == nil
}

// settingHints are the placeholders of the form's settings for model: the
// defaults (analysis's FitSpec.WithDefaults), and where strong
// identifiability changes one, its default there ("1 (0.1 under
// strong)"); the model's declared default where it is in words (a
// default that depends on more than the identifiability: "2000 (1500
// with a kernel)"); what leaving a setting out means when it has no
// default.
func settingHints(model string) map[string]string {
	weak := analysis.FitSpec{Model: model}.WithDefaults()
	strong := analysis.FitSpec{Model: model, Identifiability: "strong"}.WithDefaults()
	words := map[string]string{}
	for _, f := range analysis.Fields(model, "") {
		if _, err := strconv.ParseFloat(f.Default, 64); err != nil && f.Number() && f.Default != "" {
			words[f.Name] = f.Default
		}
	}
	out := map[string]string{}
	for _, f := range analysis.AllFields() {
		if f.Common() {
			continue
		}
		w, ws := f.NumberIn(weak)
		st, _ := f.NumberIn(strong)
		g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
		switch {
		case words[f.Name] != "":
			out[f.Name] = words[f.Name]
		case ws && w != 0 && w != st:
			out[f.Name] = g(w) + " (" + g(st) + " under strong)"
		case ws && w != 0:
			out[f.Name] = g(w)
		case f.Zero != "":
			out[f.Name] = f.Zero
		case f.Default != "":
			out[f.Name] = f.Default
		}
	}
	return out
}

// formSettings returns the groups of the form (the settings of models
// that some pair reads), with the values of form and the hints.
func formSettings(models []analysis.Model, form, hints map[string]string) (groups []formGroup, more []formField) {
	at := map[string]int{}
	for _, f := range analysis.AllFields() {
		if f.Common() {
			continue
		}
		p := pairs(models, func(m analysis.Model, e string) bool { return reads(m, e, f.Name) })
		if p == "" {
			continue
		}
		ff := newFormField(f, p, form[f.Name], hints[f.Name])
		g := formGroupOf(f)
		if g == "" {
			more = append(more, ff)
			continue
		}
		i, ok := at[g]
		if !ok {
			legend := groupLegends[g]
			if legend == "" {
				legend = "The " + g + " model"
			}
			i, at[g] = len(groups), len(groups)
			groups = append(groups, formGroup{Name: g, Legend: legend})
		}
		groups[i].Fields = append(groups[i].Fields, ff)
	}
	for i := range groups {
		fs := groups[i].Fields
		groups[i].For = pairs(models, func(m analysis.Model, e string) bool {
			return slices.ContainsFunc(fs, func(f formField) bool { return reads(m, e, f.Name) })
		})
	}
	return groups, more
}

// newFormField is the form's field of setting f, read by the pairs p, with
// the value v posted and the placeholder hint.
func newFormField(f analysis.SpecField, p, v, hint string) formField {
	ff := formField{Name: f.Name, Label: strings.ReplaceAll(f.Name, "_", " "), Doc: f.Doc, For: p, Value: v, Placeholder: hint, Input: "text"}
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch {
	case f.Type.Kind() == reflect.Bool:
		ff.Input = "check"
	case f.Enum != nil && !f.HasRange:
		ff.Input, ff.Options, ff.Selected = "select", f.Enum, v
		if v == "" {
			ff.Selected = f.Default
		}
	case f.HasRange && f.Type.Kind() != reflect.String:
		ff.Input, ff.Min, ff.Step = "number", num(f.Min), "any"
		if !f.MaxOpen {
			ff.Max = num(f.Max)
		}
		if f.Int() {
			ff.Step = "1"
		}
	case f.Type.Kind() == reflect.Slice:
		ff.Placeholder = "comma-separated; " + hint
	}
	return ff
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
	// Groups are the fieldsets of the settings that some model:engine
	// pair reads, More the settings every engine of a model reads (under
	// "More settings"); a setting that no pair uses is missing.
	Groups []formGroup
	More   []formField
	// MoreGiven: a setting of More has a value (the section opens).
	MoreGiven bool
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
	v := fitFormView{HasText: in.text, Categorical: in.covariates || in.attrs}
	chosen, engine := chosenPair(models, form[modelKey()], form[engineKey()])
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
	v.Groups, v.More = formSettings(models, form, settingHints(chosen.Name))
	for _, f := range v.More {
		v.MoreGiven = v.MoreGiven || f.Value != ""
	}
	v.Kernels = kernelChoices(models, withText, unlabelled, in)
	pair := chosen.Name + ":" + engine
	for i := range v.Kernels {
		k := &v.Kernels[i]
		if k.Value == form[kernelKey()] && (k.For == "" || slices.Contains(strings.Fields(k.For), pair)) {
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
	if !slices.Contains(m.Engines, e) {
		e = m.DefaultEngine()
	}
	return m, e
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
		learn := pairs(models, learnsKernels)
		if learn != "" {
			out = append(out, kernelChoice{Value: "rbf", Label: "rbf (length-scale learnt by the evidence)", For: learn},
				kernelChoice{Value: "ard", Label: "ard (a length-scale per covariate, learnt by the evidence)", For: learn})
		}
	}
	return out
}

// fitFormFields are the fields of the start-fit form, kept on the page
// when the form is rejected: every declared setting (the common part's
// text is in text_* fields), and the custom kernel.
func fitFormFields() []string {
	out := []string{"kernel_custom"}
	for _, f := range analysis.AllFields() {
		if f.Type == reflect.TypeFor[textfeat.Options]() {
			for _, t := range textKeys() {
				out = append(out, f.Name+"_"+t)
			}
			continue
		}
		out = append(out, f.Name)
	}
	return out
}

// fitForm reads the start-fit form of a project with scheme into a fit
// request; empty fields take the defaults. The fields that the chosen
// model and engine do not use are left out of the request (the form
// without its script shows every model's settings), and so is an engine
// that the model does not have (it gets its default). A custom kernel,
// when given, replaces the chosen one; the text featuriser's fields make
// up "text". form holds the fields as posted, to show them again.
func fitForm(c *gin.Context, scheme annotations.Scheme) (*fitRequest, map[string]string, error) {
	form := map[string]string{}
	for _, k := range fitFormFields() {
		form[k] = strings.TrimSpace(c.PostForm(k))
	}
	if form["kernel_custom"] != "" {
		form[kernelKey()] = form["kernel_custom"]
	}
	model := strings.ToLower(form[modelKey()])
	if model == "" {
		model = analysis.DefaultModel(scheme)
	}
	engine := strings.ToLower(form[engineKey()])
	if m, err := analysis.LookupModel(model); err == nil && !slices.Contains(m.Engines, engine) {
		engine = "" // not the model's: its default
	}
	req := &fitRequest{values: map[string]reflect.Value{}}
	for _, f := range analysis.Fields(model, engine) {
		if f.Type == reflect.TypeFor[textfeat.Options]() {
			text, set, err := formText(form, f.Name)
			if err != nil {
				return nil, form, err
			}
			if set {
				req.set(f, reflect.ValueOf(text))
			}
			continue
		}
		v := form[f.Name]
		if f.Name == engineKey() {
			v = engine
		}
		if v == "" {
			continue
		}
		if f.Type.Kind() == reflect.Bool {
			v = "true" // a checkbox: any value
		}
		x, err := f.Parse(v, f.Name)
		if err != nil {
			return nil, form, err
		}
		req.set(f, x)
	}
	return req, form, nil
}

// textKeys are the JSON names of the text featuriser's settings.
func textKeys() []string {
	b, _ := json.Marshal(textfeat.Options{})
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// formText reads the text featuriser's fields (NAME_min_df, ...) of the
// form; set is false when none is given.
func formText(form map[string]string, name string) (opts textfeat.Options, set bool, err error) {
	b, _ := json.Marshal(opts)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for k := range m {
		v := form[name+"_"+k]
		if v == "" {
			continue
		}
		switch m[k].(type) {
		case bool:
			m[k] = true
		case float64:
			n, err := parseIntField(name+"_"+k, v)
			if err != nil {
				return opts, false, err
			}
			m[k] = n
		default:
			m[k] = v
		}
		set = true
	}
	b, _ = json.Marshal(m)
	return opts, set, json.Unmarshal(b, &opts)
}
