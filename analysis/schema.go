package analysis

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"concord/annotations"
	"concord/multirater"
)

// SpecField is one setting of a FitSpec: its declaration (the family's
// Settings tags, or those of FitSpec's common part: model, engine, seed,
// kernel, covariates, categorical, standardize, text) and where it lives in
// FitSpec, whose stored JSON is flat (one field per setting name). Fields
// and AllFields walk the declarations; the command-line flags of fit, eval
// and next, the API's fit request, the dashboard's start-fit form and the
// OpenAPI FitRequest schema are derived from them.
type SpecField struct {
	multirater.Field
	// Families are the models whose settings declare it (nil: the common
	// part, which every model reads except those its not tag names).
	Families []string
	// spec is the index of the field in FitSpec.
	spec []int
	// not lists the models that do not read a common setting.
	not []string
}

// Common reports whether the setting is of FitSpec's common part.
func (f SpecField) Common() bool { return f.Families == nil }

// Flag is the setting's command-line flag name: the JSON name with "_" as
// "-" (flag_threshold is --flag-threshold).
func (f SpecField) Flag() string { return strings.ReplaceAll(f.Name, "_", "-") }

// Value returns the setting's field in the spec s points to (settable).
func (f SpecField) Value(s *FitSpec) reflect.Value {
	return reflect.ValueOf(s).Elem().FieldByIndex(f.spec)
}

// NumberIn returns a numeric setting's value in s (a negative burn-in,
// none, as 0) and whether it is set; a setting without a range is not a
// number (0, false).
func (f SpecField) NumberIn(s FitSpec) (float64, bool) {
	if !f.HasRange || f.Type.Kind() == reflect.Slice {
		return 0, false
	}
	fl := f.Field
	fl.Index = f.spec
	return fl.Float(reflect.ValueOf(s))
}

// isZeroOrDefault reports whether the setting holds its zero value, or
// its declared default when own (a setting of the model for another of
// its engines) or of a shared block, in s: what a spec completed with the
// defaults of the model or another (the sampler, the identifiability) or
// the command line's defaults (the precision prior, the flag threshold,
// the kept draws) hold for a setting its own engine lacks.
func (f SpecField) isZeroOrDefault(s FitSpec, own bool) bool {
	v := f.Value(&s)
	if v.IsZero() || f.Default == "" || !(own || f.Shared) {
		return v.IsZero()
	}
	switch v.Kind() {
	case reflect.String:
		return strings.EqualFold(v.String(), f.Default)
	case reflect.Int, reflect.Int64, reflect.Float64:
		d, err := strconv.ParseFloat(f.Default, 64)
		x, _ := f.NumberIn(s)
		return err == nil && x == d
	}
	return false
}

// specIndex maps FitSpec's JSON names to its fields.
func specIndex() map[string]reflect.StructField {
	t := reflect.TypeFor[FitSpec]()
	out := make(map[string]reflect.StructField, t.NumField())
	for i := range t.NumField() {
		sf := t.Field(i)
		if name, _, _ := strings.Cut(sf.Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = sf
		}
	}
	return out
}

// familyFields returns the declared settings of model m (every engine's),
// with their places in FitSpec. A declared setting that FitSpec lacks, or
// holds with another type, is a declaration bug: it panics.
func familyFields(m Model, index map[string]reflect.StructField) []SpecField {
	if m.settings == nil {
		return nil
	}
	decl := multirater.Fields(m.settings)
	out := make([]SpecField, len(decl))
	for i, f := range decl {
		sf, ok := index[f.Name]
		if !ok || sf.Type != f.Type {
			panic(fmt.Sprintf("analysis: setting %s of the %s model (%v) has no FitSpec field of its name and type", f.Name, m.Name, f.Type))
		}
		out[i] = SpecField{Field: f, Families: []string{m.Name}, spec: sf.Index}
	}
	return out
}

// commonFields returns the declared settings of FitSpec's common part
// (CommonSettings) that no family declares.
func commonFields(declared map[string]bool) []SpecField {
	t := reflect.TypeFor[FitSpec]()
	ct := reflect.TypeFor[CommonSettings]()
	var out []SpecField
	for _, f := range multirater.Fields(ct) {
		if declared[f.Name] {
			continue
		}
		sf, _ := t.FieldByName(ct.Field(f.Index[0]).Name)
		out = append(out, SpecField{Field: f, spec: sf.Index, not: splitList(ct.Field(f.Index[0]).Tag.Get("not"))})
	}
	return out
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// Fields returns the settings that a fit of model by engine reads (engine
// "": any of the model's engines): the common part, then the family's
// settings in declaration order. An unknown model has the common part
// only.
func Fields(model, engine string) []SpecField {
	model = strings.ToLower(strings.TrimSpace(model))
	index := specIndex()
	var fam []SpecField
	declared := map[string]bool{}
	for _, m := range Models() {
		for _, f := range familyFields(m, index) {
			declared[f.Name] = true
			if m.Name == model && (engine == "" || f.Applies(engine)) {
				fam = append(fam, f)
			}
		}
	}
	var out []SpecField
	for _, f := range commonFields(declared) {
		if !slices.Contains(f.not, model) {
			out = append(out, f)
		}
	}
	return append(out, fam...)
}

// AllFields returns every setting of every model once: the common part,
// then each family's settings in the model table's order, a setting that
// several families declare in its first place, with Families naming them
// all.
func AllFields() []SpecField {
	index := specIndex()
	var fam []SpecField
	at := map[string]int{}
	for _, m := range Models() {
		for _, f := range familyFields(m, index) {
			if i, ok := at[f.Name]; ok {
				fam[i].Families = append(fam[i].Families, m.Name)
				continue
			}
			at[f.Name] = len(fam)
			fam = append(fam, f)
		}
	}
	return append(commonFields(mapKeys(at)), fam...)
}

func mapKeys(m map[string]int) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// CheckGiven rejects a setting named by given (the keys of an API request,
// the flags given on a command line, the fields of the dashboard's form)
// that a fit of model by engine does not read, with one message naming
// the model's settings.
func CheckGiven(model, engine string, given func(name string) bool) error {
	reads := map[string]bool{}
	for _, f := range Fields(model, engine) {
		reads[f.Name] = true
	}
	for _, f := range AllFields() {
		if given(f.Name) && !reads[f.Name] {
			return notASetting(f.Name, model, engine)
		}
	}
	return nil
}

// checkFamily rejects a setting of s that a fit of model by engine does
// not read and that holds neither its zero value nor its declared default
// (a spec completed by WithDefaults holds the defaults of the priors and
// the sampler).
func (s FitSpec) checkFamily(model, engine string) error {
	reads, own := map[string]bool{}, map[string]bool{}
	for _, f := range Fields(model, engine) {
		reads[f.Name] = true
	}
	for _, f := range Fields(model, "") {
		own[f.Name] = true
	}
	for _, f := range AllFields() {
		if !reads[f.Name] && !f.isZeroOrDefault(s, own[f.Name]) {
			return notASetting(f.Name, model, engine)
		}
	}
	return nil
}

// notASetting is the one refusal of a setting that a fit of model by
// engine does not read: it names the model's settings, and the engines of
// the model that read it, if any.
func notASetting(name, model, engine string) error {
	var own []string
	for _, f := range Fields(model, engine) {
		if !f.Common() {
			own = append(own, f.Name)
		}
	}
	settings := "it has no settings of its own"
	if len(own) > 0 {
		settings = "its settings are " + joinLast(own, " and ")
	}
	by := ""
	if engine != "" {
		by = " fitted by " + engine
	}
	msg := fmt.Sprintf("%s is not a setting of the %s model%s (leave it out): %s", name, model, by, settings)
	var others []string
	for _, f := range AllFields() {
		if f.Name == name && !f.Common() {
			others = slices.DeleteFunc(slices.Clone(f.Families), func(m string) bool { return m == model })
		}
	}
	if len(others) > 0 {
		msg += fmt.Sprintf("; it is a setting of the %s model", orList(others))
	}
	if m, err := LookupModel(model); err == nil {
		var engines []string
		for _, e := range m.Engines {
			if e == engine {
				continue
			}
			for _, f := range Fields(model, e) {
				if f.Name == name {
					engines = append(engines, e)
				}
			}
		}
		if len(engines) > 0 {
			msg += fmt.Sprintf("; %s is read by its %s engine", name, orList(engines))
		}
	}
	return annotations.Errorf(annotations.EINVALID, "%s", msg)
}

// familySettings returns the settings of s's model as its family's
// Settings struct (a pointer to it; nil for a model without one).
func (s FitSpec) familySettings() any {
	m, err := LookupModel(s.Model)
	if err != nil || m.settings == nil {
		return nil
	}
	p := reflect.New(m.settings)
	for _, f := range familyFields(m, specIndex()) {
		p.Elem().FieldByIndex(f.Field.Index).Set(f.Value(&s))
	}
	return p.Interface()
}

// validateFamily checks the settings of s's model by its family's
// Settings.Validate: the declarations, and the family's rules between its
// settings (a rule added to a family's settings.go holds for every spec).
func (s FitSpec) validateFamily() error {
	v, ok := s.familySettings().(interface{ Validate() error })
	if !ok {
		return nil
	}
	if err := v.Validate(); err != nil {
		return annotations.Errorf(annotations.EINVALID, "%s", err)
	}
	return nil
}

// Parse reads a value of the setting from text (a flag's, a form
// field's): a word, a number, true or false, a comma-separated list.
// The error names the setting as name.
func (f SpecField) Parse(text, name string) (reflect.Value, error) {
	bad := func(want string) (reflect.Value, error) {
		return reflect.Value{}, annotations.Errorf(annotations.EINVALID, "%s %q: expected %s", name, Clip(text), want)
	}
	t := f.Type
	switch t.Kind() {
	case reflect.String:
		return reflect.ValueOf(text).Convert(t), nil
	case reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return bad("true or false")
		}
		return reflect.ValueOf(b), nil
	case reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return bad("a whole number")
		}
		return reflect.ValueOf(n), nil
	case reflect.Uint64:
		n, err := strconv.ParseUint(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return bad("a whole number from 0 up")
		}
		return reflect.ValueOf(n), nil
	case reflect.Float64, reflect.Pointer:
		if t.Kind() == reflect.Pointer && slices.Contains(f.Enum, strings.ToLower(strings.TrimSpace(text))) {
			return reflect.Zero(t), nil // a word for leaving it out (epsilon's learn)
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			want := "a number"
			if f.What != "" {
				want = f.What
			}
			if f.Enum != nil {
				want = strings.Join(f.Enum, ", ") + " or " + want
			}
			return bad(want)
		}
		if t.Kind() == reflect.Pointer {
			return reflect.ValueOf(&x), nil
		}
		return reflect.ValueOf(x), nil
	case reflect.Slice:
		out := reflect.MakeSlice(t, 0, 4)
		if t.Elem().Kind() == reflect.String {
			// Names (columns) may hold spaces: commas alone separate them.
			for _, w := range strings.Split(text, ",") {
				if w = strings.TrimSpace(w); w != "" {
					out = reflect.Append(out, reflect.ValueOf(w))
				}
			}
			return out, nil
		}
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
			x, err := strconv.ParseFloat(w, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return bad("numbers separated by commas, e.g. -1,0,1")
			}
			out = reflect.Append(out, reflect.ValueOf(x))
		}
		return out, nil
	}
	panic(fmt.Sprintf("analysis: setting %s of type %v has no text form", f.Name, t))
}

// SetGiven sets the setting in s to v (a value of its type) given
// explicitly (a request's field, a flag, a form field): strings are
// trimmed, the model's, the engine's and every word setting's lowercased;
// a number is checked against its declared range, where 0 is a value like
// any other (a burn-in of 0 is none, FitSpec's negative). Errors name the
// setting as name ("field \"chains\"", "--chains").
func (f SpecField) SetGiven(s *FitSpec, v reflect.Value, name string) error {
	dst := f.Value(s)
	dst.Set(v)
	if dst.Kind() == reflect.String {
		w := strings.TrimSpace(dst.String())
		if f.Enum != nil || f.caseBlind() {
			w = strings.ToLower(w)
		}
		dst.SetString(w)
	}
	if !f.HasRange || dst.Kind() == reflect.Slice {
		return nil
	}
	if dst.Kind() == reflect.String {
		w := dst.String()
		if w == "" || slices.Contains(f.Enum, w) {
			return nil
		}
		if _, err := strconv.ParseFloat(w, 64); err != nil {
			return annotations.Errorf(annotations.EINVALID, "%s = %q: expected %s", name, Clip(w), f.Want())
		}
	}
	x, _ := f.NumberIn(*s)
	if f.NegativeNone && dst.Int() <= 0 {
		x = float64(dst.Int())
		dst.SetInt(-1)
	}
	return LookupSetting(f.Name).CheckGiven(x, name)
}

// SettingOf returns the setting whose field in a FitSpec at points to
// (e.g. func(s *FitSpec) any { return &s.Model }): a setting named by its
// Go field, so that its JSON name is spelled once, in its declaration. It
// panics if the field is not a declared setting (a caller bug).
func SettingOf(at func(*FitSpec) any) SpecField {
	var s FitSpec
	p := reflect.ValueOf(at(&s))
	for _, f := range AllFields() {
		if v := f.Value(&s).Addr(); v.Type() == p.Type() && v.Pointer() == p.Pointer() {
			return f
		}
	}
	panic(fmt.Sprintf("analysis: SettingOf: %v is not a declared setting of FitSpec", p.Type()))
}

// Parts are the declared fields of a setting whose value is a struct of
// settings (text: the text featuriser's min_df, weighting, ...), with
// their flag names (JSON a_b as a-b); nil for any other setting.
func (f SpecField) Parts() []multirater.Field {
	if f.Type.Kind() != reflect.Struct {
		return nil
	}
	return multirater.Fields(f.Type)
}

// PartFlag is the command-line flag of a part of the setting (Parts).
func PartFlag(p multirater.Field) string { return strings.ReplaceAll(p.Name, "_", "-") }

// caseBlind reports whether a word setting without an enum is read
// case-blind: the model's and the engine's names.
func (f SpecField) caseBlind() bool {
	return f.Name == SettingOf(func(s *FitSpec) any { return &s.Model }).Name ||
		f.Name == SettingOf(func(s *FitSpec) any { return &s.Engine }).Name
}
