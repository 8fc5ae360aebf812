package analysis

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"concord/multirater/kernel"
	"concord/textfeat"
)

// CommonSettings are the settings of FitSpec that are not a family's: the
// model and its engine, the seed, and the items' covariance (kernel,
// covariates, text featuriser), declared once with the same struct tags
// as the families' Settings (see multirater.Fields; not:"auc" names the
// models that do not read one). FitSpec holds them flat, beside every
// family's settings.
//
// FitSpec itself is generated (spec_gen.go) from CommonSettings and the
// families' Settings types of the model table: a setting added to a
// family's settings.go is a field of FitSpec, a key of its stored JSON, a
// flag of fit, eval and next, a field of the API's fit request and of the
// dashboard's form once the generated files are written again:
//
//	go test ./analysis -run TestSpecGenerated -update-spec
//	go test -short -run OpenAPI ./server/ -update-openapi
type CommonSettings struct {
	// Model is "ordinal" (default), "classification", "bounded",
	// "robust", "confusion" or "auc".
	Model string `json:"model,omitempty" group:"the model, its engine and the seed" doc:"the model: ordinal, classification, bounded, robust, confusion or auc (default: the one that suits the labels' scheme and items: ordinal; confusion for nominal and binary labels without item texts, classification with them; bounded)"`
	// Kernel is the covariance function of the items: "identity" (no
	// covariates), "linear", "rbf:gamma=G" on numeric covariates, "text"
	// (linear kernel on the unit-norm bag-of-words vectors of the item
	// texts), "text:COLUMN" (the same on an items-file column kept with the
	// items, with its own vocabulary), "text-rbf:gamma=G", or a sum such as
	// "text+rbf:gamma=1" or "text:title+text:body" (see
	// ItemCovariance). "" means "text" when some item has a text and
	// "identity" otherwise, except for the classification model, which
	// uses the texts by default only when some item has no labels
	// (DefaultKernelFor, applied by ForData; WithDefaults, which does not
	// see the data, gives "identity").
	Kernel string `json:"kernel,omitempty" group:"the items' covariance" doc:"the items' covariance: text (linear on bag-of-words), text:COLUMN, text-rbf:gamma=G, identity, linear, rbf:gamma=G on numeric covariates, rbf or ard (widths learnt), const:V, white:V, or a sum like text+rbf:gamma=1 (default: text when the items have texts, else identity)"`
	// Covariates selects the numeric item columns that the kernel's
	// linear and rbf terms read: "" (default: every numeric column, except
	// that a kernel with a text term needs them named), "all", "none" or a
	// comma-separated list of column names.
	Covariates string `json:"covariates,omitempty" group:"the items' covariance" doc:"the numeric item columns that the kernel's linear and rbf terms read: all (default), none or a comma-separated list of column names"`
	// Categorical names items-file columns read as categorical covariates
	// by the covariate kernel terms: one-hot indicators "COLUMN=VALUE",
	// whose squared distance is 2 (1 - delta), Kim & Ghahramani's
	// discrete-input distance (see categorical.go).
	Categorical []string `json:"categorical,omitempty" group:"the items' covariance" len:"0,200" not:"auc" doc:"items-file columns read as categorical covariates (one-hot COLUMN=VALUE indicators) by the covariate kernel terms"`
	// Standardize z-scores the covariates with the fitted items' means and
	// sds (saved in the result and applied to new items by predict), so
	// that one kernel width suits inputs on different scales.
	Standardize bool `json:"standardize,omitempty" group:"the items' covariance" doc:"z-score the numeric covariates with the fitted items' means and sds (saved in the result; predict applies them to new items)"`
	// Rank is the rank of the weight-space prior of a kernel of linear
	// text terms (C = X X' as G G' with G N×r, never an N×N matrix;
	// gp.NewLowRankFeatures): 0 (default) is the default rank rule
	// (defaultRank: every dimension up to 256 items, then from
	// gp.DefaultRank(N), 128 to 512, raised towards leaving out at most
	// RankTraceShare of the kernel's trace while the fit's expected cost
	// stays within rankBudget) truncated with a diagonal correction, a
	// positive number is that rank, and -1 is the exact dense kernel
	// matrix. The EP and Laplace fits of a fixed covariate kernel (rbf,
	// ard, linear) on at least PivotedFromItems items take the same rule's
	// rank of pivoted columns with FITC's diagonal correction.
	Rank int `json:"rank,omitempty" group:"the items' covariance" range:"[-1,8192]" zero:"the default" doc:"text and fixed covariate kernels: the rank of the low-rank prior C = G G' (0, the default: every dimension up to 256 items, then gp.DefaultRank(N), about 128 to 512, raised towards leaving out at most 5% of the kernel's trace while the fit's expected cost stays within 10 ms per item and 40 CPU s, truncated with a diagonal correction; the fit's notes say the rank and the trace left out; -1: the exact dense N x N matrix)"`
	// Text holds the text featuriser's settings for text kernels; the zero
	// value is the paper's featuriser (every term, count weighting, SMART
	// stop words removed, no stemming, no bigrams; see textfeat.Options).
	Text textfeat.Options `json:"text,omitzero" group:"the text featuriser of text kernels" not:"auc" doc:"the text featuriser of text kernels: min_df, max_features, weighting (count, binary or tfidf), stem, bigrams, keep_stop_words"`
	// Seed seeds every random draw of the fit.
	Seed uint64 `json:"seed" group:"the model, its engine and the seed" default:"1" doc:"random seed: the same data, settings and seed give the same fit"`
	// Engine is the inference engine: "gibbs" (MCMC), "ep" (expectation
	// propagation), "laplace" (Laplace's method), "vb" or "smc", as the
	// model has them ("": the model's first, Model.Engines).
	Engine string `json:"engine,omitempty" group:"the model, its engine and the seed" doc:"the inference engine: gibbs, ep, laplace, vb or smc, as the model has them (default: the model's first)"`
}

// FitOf names the fit that a document was made from (the predictions
// document) by its model and kernel, the settings' names and values.
type FitOf struct {
	Model  string `json:"model"`
	Kernel string `json:"kernel"`
}

// fitSpecState are the fields of FitSpec that are not settings (never
// stored), embedded in it.
type fitSpecState struct {
	// KernelDefault is set by ForData when it chose a bounded or ordinal
	// fit's Kernel (the user gave none): the bounded model's choice (and
	// the ordinal model's by EP or Laplace) then also considers the
	// identity kernel beside it (when every item has a rating). It is not stored: a spec without a kernel gets it again
	// from ForData wherever it is fitted.
	KernelDefault bool `json:"-"`
	// Raters and Levels are the data's raters and its scheme's levels,
	// set by ForData for ExpectedCost (the rater parameters that an
	// evidence maximisation learns); 0 when unknown.
	Raters, Levels int `json:"-"`
	// parser, when set, reads the kernel instead of kernel.ParseSpec (a
	// test counts the parses of one fit with it).
	parser kernelParser
	// parsed is the kernel's parse (withKernel), which every copy of the
	// spec shares, for the text it was parsed from.
	parsed *parsedKernel
}

// kernelParser reads a kernel specification (kernel.ParseSpec).
type kernelParser func(string) (kernel.Spec, error)

// parsedKernel is a kernel specification's text and its parse.
type parsedKernel struct {
	text string
	spec kernel.Spec
	err  error
}

// withKernel returns s holding its kernel's parse, so that the fit's
// steps (validation, defaults, the covariance, the learnt terms, the work
// estimate) read it without parsing it again: once per fit, and once more
// when a step changes the kernel's text (ForData's default kernel when
// none was given, a learnt kernel). A blank kernel is not parsed.
func (s FitSpec) withKernel() FitSpec {
	if strings.TrimSpace(s.Kernel) == "" || s.parsed != nil && s.parsed.text == s.Kernel {
		return s
	}
	ks, err := s.parseKernel(s.Kernel)
	s.parsed = &parsedKernel{text: s.Kernel, spec: ks, err: err}
	return s
}

// kernelSpec returns the parse of s's kernel: the one withKernel holds,
// or a new one.
func (s FitSpec) kernelSpec() (kernel.Spec, error) {
	if p := s.parsed; p != nil && p.text == s.Kernel {
		return p.spec, p.err
	}
	if strings.TrimSpace(s.Kernel) == "" {
		return kernel.ParseSpec(s.Kernel) // nothing to parse: its error
	}
	return s.parseKernel(s.Kernel)
}

func (s FitSpec) parseKernel(text string) (kernel.Spec, error) {
	if s.parser != nil {
		return s.parser(text)
	}
	return kernel.ParseSpec(text)
}

// MarshalJSON writes the spec flat, one key per setting in FitSpec's
// order, except that a setting whose negative value means none (burnin)
// is written last: none (negative) as 0, the API's spelling, and the
// default (0) not at all; UnmarshalJSON reads them back the same way (and
// a negative value as none), so that a stored spec says 0 where 0 was
// asked for.
func (s FitSpec) MarshalJSON() ([]byte, error) {
	type plain FitSpec
	p := plain(s)
	var tail []byte
	for _, f := range negativeNoneFields() {
		v := f.Value((*FitSpec)(&p))
		if n := v.Int(); n != 0 {
			tail = append(tail, ',')
			tail = strconv.AppendQuote(tail, f.Name)
			tail = append(tail, ':')
			tail = strconv.AppendInt(tail, max(n, 0), 10)
		}
		v.SetInt(0)
	}
	b, err := json.Marshal(p)
	if err != nil || len(tail) == 0 {
		return b, err
	}
	b = bytes.TrimSuffix(b, []byte("}"))
	if len(b) == 1 { // "{": no other key
		tail = tail[1:]
	}
	return append(append(b, tail...), '}'), nil
}

// UnmarshalJSON reads a spec written by MarshalJSON: a setting whose
// negative value means none (burnin) at 0 or below is none, left out the
// default.
func (s *FitSpec) UnmarshalJSON(b []byte) error {
	type plain FitSpec
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	for _, f := range negativeNoneFields() {
		if raw, given := keys[f.Name]; given && string(raw) != "null" {
			if v := f.Value(s); v.Int() <= 0 {
				v.SetInt(-1)
			}
		}
	}
	return nil
}

// negativeNoneFields are the settings whose negative value means none.
func negativeNoneFields() []SpecField {
	var out []SpecField
	for _, f := range AllFields() {
		if f.NegativeNone {
			out = append(out, f)
		}
	}
	return out
}
