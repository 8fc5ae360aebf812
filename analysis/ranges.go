package analysis

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"unicode/utf8"

	"concord/annotations"
	"concord/multirater"
	"concord/multirater/kernel"
)

// Setting is the declared range of one numeric setting of FitSpec (from
// its declaration, see Fields), as FitSpec.Validate (and so the CLI and the
// API), the API's request checks and the property test over every model's
// settings read it. Every value from Min to Max fits or fails with an
// error that names the setting; a value outside is refused before a fit
// starts.
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
	// Zero says what 0 (the field left out) means: "the default",
	// "learnt", ...; empty when 0 is a value in the range.
	Zero string
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

// Settings returns the declared ranges of FitSpec's numeric settings (of
// every model; Applies says which model and engine read one), in the
// order of AllFields. The ranges were chosen so that the engines stay in
// floating point at both ends (the property test in ranges_test.go fits
// every model at each end); the work sizes' upper ends (chains, samples,
// burn-in) bound a request, and the Gibbs work budget (CheckWork) bounds
// their product.
func Settings() []Setting {
	var out []Setting
	for _, f := range AllFields() {
		if !f.HasRange || f.Type.Kind() == reflect.Slice {
			continue
		}
		out = append(out, Setting{Field: f.Name, Flag: "--" + f.Flag(), Min: f.Min, Max: f.Max, MaxOpen: f.MaxOpen,
			What: f.What, Note: f.Note, Int: f.Int(), Zero: f.Zero, get: func(s FitSpec) float64 { v, _ := f.NumberIn(s); return v }})
	}
	return out
}

// Applies reports whether a fit of model by engine reads the setting.
func (r Setting) Applies(model, engine string) bool {
	return slices.ContainsFunc(Fields(model, engine), func(f SpecField) bool { return f.Name == r.Field })
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

// interval is the setting's declared range.
func (r Setting) interval() multirater.Interval {
	return multirater.Interval{Min: r.Min, Max: r.Max, MaxOpen: r.MaxOpen, Int: r.Int}
}

// Range says the setting's range in words: "from 0.001 to 10000".
func (r Setting) Range() string { return r.interval().String() }

// In reports whether v is inside the declared range.
func (r Setting) In(v float64) bool { return r.interval().Contains(v) }

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
	return r.CheckGiven(v, fmt.Sprintf("field %q", r.Field))
}

// CheckGiven is Check for a value given explicitly (a request's field, a
// flag), where 0 is a value like any other: the error names the setting
// as name ("field \"chains\"", "--chains").
func (r Setting) CheckGiven(v float64, name string) error {
	if r.In(v) {
		return nil
	}
	return r.refuse(name+" = "+r.interval().Format(v), v, "; leave it out for ")
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
	for _, f := range AllFields() {
		v := f.Value(&s)
		if v.Kind() != reflect.String || v.Len() <= MaxSpecString || v.Addr().Interface() == &s.Kernel {
			continue
		}
		return bad("%s: a value of %d bytes; at most %d", f.Name, v.Len(), MaxSpecString)
	}
	if n := len(s.Text.Weighting); n > MaxSpecString {
		return bad("text.weighting: a value of %d bytes; at most %d", n, MaxSpecString)
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
