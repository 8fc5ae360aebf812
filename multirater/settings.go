package multirater

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// A family's settings (multirater/<family>/settings.go) are one struct, the
// family's whole input for every engine, whose fields are declared by
// struct tags and read by Fields:
//
//	json:"name,omitempty"  the setting's name (JSON field; flag --name with _ as -)
//	doc:"..."              one line of help
//	enum:"a,b,c"           the allowed values of a string setting ("" is the default)
//	range:"[lo,hi]"        the allowed numbers ("[lo,hi)" leaves hi out)
//	len:"lo,hi"            the allowed lengths of a list
//	default:"4"            the default, in words or as a number
//	zero:"..."             what 0 or leaving the setting out means, when 0 is not in range
//	engines:"ep,laplace"   the engines that read it (none: every engine of the family)
//	group:"..."            the heading it is listed under in help (the common settings')
//
// An embedded struct is a shared block (PrecisionPrior, MCMC, Evidence);
// an engines tag on it applies to its every field.

// Field is one declared setting.
type Field struct {
	// Name is the JSON name; Doc the help text; Default the default in
	// words ("" none); Zero what 0 or leaving it out means; What names the
	// kind of value in messages ("": a number, an integer); Note is said
	// after the range.
	Name, Doc, Default, Zero, What, Note string
	// Group is the heading the setting is listed under in help ("": its
	// family's).
	Group string
	// Shared: declared by a shared block (an embedded struct), whose
	// type's name is Block.
	Shared bool
	Block  string
	// NegativeNone: a negative integer means none and is checked as 0
	// (burnin).
	NegativeNone bool
	// Enum lists the allowed values of a string setting; Aliases maps other
	// spellings it accepts to them (enum:"normal|gauss,beta").
	Enum    []string
	Aliases map[string]string
	// Min and Max bound a number, or each number of a list (HasRange);
	// MaxOpen leaves Max out.
	Min, Max float64
	HasRange bool
	MaxOpen  bool
	// MinLen and MaxLen bound a list's length (HasLen).
	MinLen, MaxLen int
	HasLen         bool
	// Engines are the engines that read the setting (nil: every one).
	Engines []string
	// Aliases are other command-line spellings of the setting's flag
	// (alias:"flag").
	FlagAliases []string
	// Type is the Go type of the field; Index its path in the struct
	// (reflect.Value.FieldByIndex).
	Type  reflect.Type
	Index []int
}

// Int reports whether the setting is an integer.
func (f Field) Int() bool {
	k := f.Type.Kind()
	return k >= reflect.Int && k <= reflect.Uint64
}

// Number reports whether the setting is a number (an integer, a float or
// a pointer to a float, whose nil means left out).
func (f Field) Number() bool {
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return f.Int() || t.Kind() == reflect.Float64
}

// Applies reports whether an engine reads the setting.
func (f Field) Applies(engine string) bool {
	return f.Engines == nil || slices.Contains(f.Engines, strings.ToLower(engine))
}

// Interval is a numeric setting's declared range: from Min to Max, Max
// left out with MaxOpen, integers only with Int.
type Interval struct {
	Min, Max     float64
	MaxOpen, Int bool
}

// String says the range in words: "from 1 to 64", "from 0 up to (not
// including) 0.5".
func (r Interval) String() string {
	if r.MaxOpen {
		return fmt.Sprintf("from %s up to (not including) %s", r.Format(r.Min), r.Format(r.Max))
	}
	return fmt.Sprintf("from %s to %s", r.Format(r.Min), r.Format(r.Max))
}

// Format writes v as the range's numbers are written: an integer
// range's in full (200000000, not 2e+08).
func (r Interval) Format(v float64) string {
	if r.Int && v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Contains reports whether v is inside the range (an integer for an
// integer range).
func (r Interval) Contains(v float64) bool {
	if math.IsNaN(v) || v < r.Min || v > r.Max || (r.MaxOpen && v == r.Max) {
		return false
	}
	return !r.Int || v == math.Trunc(v)
}

// Interval is the setting's declared range.
func (f Field) Interval() Interval {
	return Interval{Min: f.Min, Max: f.Max, MaxOpen: f.MaxOpen, Int: f.Int()}
}

// Range says the declared range in words: "from 1 to 64", "from 0 up to
// (not including) 0.5".
func (f Field) Range() string { return f.Interval().String() }

// In reports whether v is inside the declared range (an integer for an
// integer setting).
func (f Field) In(v float64) bool { return f.Interval().Contains(v) }

// Want says what a numeric setting expects: the kind of value, the range,
// the words it also takes (Enum), what 0 means and the note.
func (f Field) Want() string {
	want := "a number"
	switch {
	case f.What != "":
		want = f.What
	case f.Int():
		want = "an integer"
	}
	want += " " + f.Range()
	if f.Enum != nil {
		want += " or " + orList(f.Enum)
	}
	if f.Zero != "" {
		want += "; 0 or left out: " + f.Zero
	}
	if f.Note != "" {
		want += "; " + f.Note
	}
	return want
}

// FieldError is a setting's value outside what its declaration allows.
type FieldError struct {
	// Field is the setting's name, Value the value given (in words) and
	// Want what was expected.
	Field, Value, Want string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s = %s: expected %s", e.Field, e.Value, e.Want)
}

// Fields returns the declared settings of a settings struct type t, in
// declaration order with embedded blocks in place. It panics if t is not
// a struct or a tag is malformed (a declaration bug).
func Fields(t reflect.Type) []Field {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("multirater: settings type %v is not a struct", t))
	}
	var out []Field
	walkFields(t, nil, nil, &out)
	return out
}

func walkFields(t reflect.Type, index []int, engines []string, out *[]Field) {
	for i := range t.NumField() {
		sf := t.Field(i)
		idx := append(slices.Clone(index), i)
		eng := engines
		if e := sf.Tag.Get("engines"); e != "" {
			eng = strings.Split(e, ",")
		}
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			n := len(*out)
			walkFields(sf.Type, idx, eng, out)
			for j := n; j < len(*out); j++ {
				(*out)[j].Shared = true
				if (*out)[j].Block == "" {
					(*out)[j].Block = sf.Type.Name()
				}
			}
			// defaults:"samples=1000,burnin=500" on an embedded block
			// sets the embedding family's own defaults.
			if d := sf.Tag.Get("defaults"); d != "" {
				for _, kv := range strings.Split(d, ",") {
					k, v, _ := strings.Cut(kv, "=")
					found := false
					for j := n; j < len(*out); j++ {
						if (*out)[j].Name == k {
							(*out)[j].Default, found = v, true
						}
					}
					if !found {
						panic(fmt.Sprintf("multirater: defaults tag of %v names %q, not a setting of the block", t, k))
					}
				}
			}
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" || !sf.IsExported() {
			continue
		}
		f := Field{Name: name, Doc: sf.Tag.Get("doc"), Default: sf.Tag.Get("default"), Zero: sf.Tag.Get("zero"),
			What: sf.Tag.Get("what"), Group: sf.Tag.Get("group"), Note: sf.Tag.Get("note"), NegativeNone: sf.Tag.Get("negative") == "none",
			FlagAliases: splitTag(sf.Tag.Get("alias")),
			Engines:     eng, Type: sf.Type, Index: idx}
		if e := sf.Tag.Get("enum"); e != "" {
			for _, w := range strings.Split(e, ",") {
				words := strings.Split(w, "|")
				f.Enum = append(f.Enum, words[0])
				for _, a := range words[1:] {
					if f.Aliases == nil {
						f.Aliases = map[string]string{}
					}
					f.Aliases[a] = words[0]
				}
			}
		}
		if r := sf.Tag.Get("range"); r != "" {
			f.parseRange(r)
		}
		if l := sf.Tag.Get("len"); l != "" {
			lo, hi, ok := strings.Cut(l, ",")
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if !ok || err1 != nil || err2 != nil {
				panic(fmt.Sprintf("multirater: setting %s: malformed len tag %q", name, l))
			}
			f.MinLen, f.MaxLen, f.HasLen = a, b, true
		}
		if f.Doc == "" {
			panic(fmt.Sprintf("multirater: setting %s of %v has no doc", name, t))
		}
		*out = append(*out, f)
	}
}

func (f *Field) parseRange(r string) {
	bad := func() { panic(fmt.Sprintf("multirater: setting %s: malformed range tag %q", f.Name, r)) }
	if len(r) < 5 || r[0] != '[' || (r[len(r)-1] != ']' && r[len(r)-1] != ')') {
		bad()
	}
	lo, hi, ok := strings.Cut(r[1:len(r)-1], ",")
	a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if !ok || err1 != nil || err2 != nil || !(a <= b) {
		bad()
	}
	f.Min, f.Max, f.HasRange, f.MaxOpen = a, b, true, r[len(r)-1] == ')'
}

// Lookup returns the field named name of fields.
func Lookup(fields []Field, name string) (Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Value returns field f of the settings struct v (a struct value or a
// pointer to one).
func (f Field) Value(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	return v.FieldByIndex(f.Index)
}

// Float returns a numeric field's value as a float64 and whether it is
// set (not 0, or a non-nil pointer).
func (f Field) Float(v reflect.Value) (x float64, set bool) {
	fv := f.Value(v)
	switch fv.Kind() {
	case reflect.Pointer:
		if fv.IsNil() {
			return 0, false
		}
		return fv.Elem().Float(), true
	case reflect.Float64:
		return fv.Float(), fv.Float() != 0
	case reflect.Int, reflect.Int64, reflect.Int32:
		if f.NegativeNone && fv.Int() < 0 {
			return 0, true
		}
		return float64(fv.Int()), fv.Int() != 0
	case reflect.String:
		// A number or a word of Enum ("cv"): a word is not a number set.
		x, err := strconv.ParseFloat(strings.TrimSpace(fv.String()), 64)
		return x, err == nil
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return float64(fv.Uint()), fv.Uint() != 0
	}
	panic(fmt.Sprintf("multirater: setting %s is not a number", f.Name))
}

// Check checks the value of field f in the settings struct v against its
// declaration: a number in range (0 allowed when it means something,
// Zero), an enum value, a list length. It returns a *FieldError.
func (f Field) Check(v reflect.Value) error {
	fv := f.Value(v)
	if f.HasLen && fv.Kind() == reflect.Slice {
		if n := fv.Len(); n != 0 && (n < f.MinLen || n > f.MaxLen) {
			return &FieldError{Field: f.Name, Value: fmt.Sprintf("%d values", n), Want: fmt.Sprintf("%d to %d values", f.MinLen, f.MaxLen)}
		}
		for i := range fv.Len() {
			if x := fv.Index(i); f.HasRange && x.Kind() == reflect.Float64 && !f.In(x.Float()) {
				return &FieldError{Field: f.Name, Value: strconv.FormatFloat(x.Float(), 'g', -1, 64), Want: "numbers " + f.Range()}
			}
		}
		return nil
	}
	switch {
	case f.HasRange:
		x, set := f.Float(v)
		if fv.Kind() == reflect.String {
			w := strings.ToLower(strings.TrimSpace(fv.String()))
			if w == "" || slices.Contains(f.Enum, w) {
				return nil
			}
			if !set {
				return &FieldError{Field: f.Name, Value: strconv.Quote(fv.String()), Want: f.Want()}
			}
		}
		if (!set && (f.Zero != "" || fv.Kind() == reflect.Pointer)) || f.In(x) {
			return nil
		}
		return &FieldError{Field: f.Name, Value: f.Interval().Format(x), Want: f.Want()}
	case f.Enum != nil && fv.Kind() == reflect.String:
		s := strings.ToLower(strings.TrimSpace(fv.String()))
		if _, alias := f.Aliases[s]; s == "" || alias || slices.Contains(f.Enum, s) {
			return nil
		}
		return &FieldError{Field: f.Name, Value: strconv.Quote(fv.String()), Want: orList(f.Enum)}
	case f.HasLen && fv.Kind() == reflect.Slice:
		if n := fv.Len(); n != 0 && (n < f.MinLen || n > f.MaxLen) {
			return &FieldError{Field: f.Name, Value: fmt.Sprintf("%d values", n), Want: fmt.Sprintf("%d to %d values", f.MinLen, f.MaxLen)}
		}
	}
	return nil
}

// Rule is a constraint between settings that the declarations of single
// settings cannot say (one setting's value excludes another's): Broken
// tells whether the settings break it, and the FieldError says how.
type Rule struct {
	Broken bool
	FieldError
}

// CheckSettings checks every declared field of the settings struct v
// (Field.Check), then the rules between them in order, and returns the
// first *FieldError: the body of a family's Settings.Validate.
func CheckSettings(v any, rules ...Rule) error {
	rv := reflect.ValueOf(v)
	for _, f := range Fields(reflect.Indirect(rv).Type()) {
		if err := f.Check(rv); err != nil {
			return err
		}
	}
	for _, r := range rules {
		if r.Broken {
			e := r.FieldError
			return &e
		}
	}
	return nil
}

// WithDefaults returns the settings struct s with SetDefaults applied: the
// body of a family's Settings.WithDefaults where every default is a value.
func WithDefaults[S any](s S) S {
	SetDefaults(&s)
	return s
}

// orList joins words with commas and "or" before the last.
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// SetDefaults sets every zero field of the settings struct that p points
// to whose default tag is a value of its type (a number; a word of a
// string setting) to that value. Defaults in words ("3 with one rater, 1
// with several") are left to the family's WithDefaults.
func SetDefaults(p any) {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("multirater: SetDefaults of %T, not a pointer to a settings struct", p))
	}
	for _, f := range Fields(v.Elem().Type()) {
		fv := f.Value(v)
		if f.Default == "" || !fv.IsZero() {
			continue
		}
		switch fv.Kind() {
		case reflect.String:
			fv.SetString(f.Default)
		case reflect.Int, reflect.Int64:
			if n, err := strconv.ParseInt(f.Default, 10, 64); err == nil {
				fv.SetInt(n)
			}
		case reflect.Float64:
			if x, err := strconv.ParseFloat(f.Default, 64); err == nil {
				fv.SetFloat(x)
			}
		}
	}
}

func splitTag(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
