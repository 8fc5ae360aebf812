package annotations

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Kind is the kind of a label scheme.
type Kind string

// The scheme kinds.
const (
	// Ordinal: K >= 2 ordered levels (grades, Likert points).
	Ordinal Kind = "ordinal"
	// Nominal: K >= 2 unordered classes.
	Nominal Kind = "nominal"
	// Binary: exactly two classes, one of them declared positive.
	Binary Kind = "binary"
	// Bounded: a real value in [Lo, Hi] (sliders, percentages).
	Bounded Kind = "bounded"
)

// Level is one level of an ordinal scheme or one class of a nominal or binary
// scheme. Code is what label files contain; Name is an optional human name
// ("1" and "poor").
type Level struct {
	Code string `json:"code"`
	Name string `json:"name,omitempty"`
}

// Scheme says what a project's labels are. The textual form (ParseScheme and
// String) is
//
//	ordinal:1..5                      integer levels 1, 2, 3, 4, 5
//	ordinal:poor,fair,good,excellent  levels in the order given
//	ordinal:1=poor,2=fair,3=good      codes with names
//	nominal:yes,no,maybe              classes
//	binary:0,1,pos=1                  two classes, positive declared
//	binary:pos=1                      positive declared, the other class taken from the data (see Complete)
//	bounded:0..100                    real values in [0, 100]
type Scheme struct {
	Kind Kind `json:"kind"`
	// Levels are the ordinal levels in increasing order, or the classes of a
	// nominal or binary scheme.
	Levels []Level `json:"levels,omitempty"`
	// Positive is the code of the positive class of a binary scheme.
	Positive string `json:"positive,omitempty"`
	// Lo and Hi bound the values of a bounded scheme.
	Lo float64 `json:"lo,omitempty"`
	Hi float64 `json:"hi,omitempty"`
}

// K returns the number of levels or classes (0 for bounded schemes).
func (s Scheme) K() int { return len(s.Levels) }

// Categorical reports whether labels are one of a finite set of codes.
func (s Scheme) Categorical() bool { return s.Kind != Bounded }

// Open reports whether s is a binary scheme whose negative class is still to
// be taken from the data ("binary:pos=1").
func (s Scheme) Open() bool { return s.Kind == Binary && len(s.Levels) < 2 }

// Codes returns the level codes in order.
func (s Scheme) Codes() []string {
	c := make([]string, len(s.Levels))
	for i, l := range s.Levels {
		c[i] = l.Code
	}
	return c
}

// ParseScheme parses the textual form of a scheme (see Scheme). The result is
// validated, except that a binary scheme may be open (positive class only).
func ParseScheme(spec string) (Scheme, error) {
	spec = strings.TrimSpace(spec)
	kind, body, ok := strings.Cut(spec, ":")
	if !ok {
		return Scheme{}, Errorf(EINVALID, "scheme %q: expected KIND:LEVELS, e.g. ordinal:1..5, nominal:yes,no,maybe, binary:0,1,pos=1 or bounded:0..100", spec)
	}
	s := Scheme{Kind: Kind(strings.ToLower(strings.TrimSpace(kind)))}
	body = strings.TrimSpace(body)
	switch s.Kind {
	case Bounded:
		lo, hi, ok := parseRange(body)
		if !ok {
			if a, b, ok := dashRange(body); ok {
				return Scheme{}, Errorf(EINVALID, "scheme %q: a range is written with two dots: did you mean bounded:%s..%s?", spec, a, b)
			}
			return Scheme{}, Errorf(EINVALID, "scheme %q: expected bounded:LO..HI with numbers LO < HI, e.g. bounded:0..100", spec)
		}
		s.Lo, s.Hi = lo, hi
	case Ordinal, Nominal, Binary:
		if body == "" {
			if s.Kind == Binary {
				return Scheme{}, Errorf(EINVALID, "scheme %q: expected binary:NEG,POS,pos=POS or binary:pos=POS", spec)
			}
			return Scheme{}, Errorf(EINVALID, "scheme %q: no levels given", spec)
		}
		for _, tok := range strings.Split(body, ",") {
			tok = strings.TrimSpace(tok)
			if k, v, isKV := strings.Cut(tok, "="); isKV {
				k, v = strings.TrimSpace(k), strings.TrimSpace(v)
				if s.Kind == Binary && strings.EqualFold(k, "pos") {
					s.Positive = v
					continue
				}
				if s.Kind == Binary {
					return Scheme{}, Errorf(EINVALID, "scheme %q: unknown option %q (binary schemes take pos=CLASS)", spec, k)
				}
				s.Levels = append(s.Levels, Level{Code: k, Name: v})
				continue
			}
			if a, b, isRange := strings.Cut(tok, ".."); isRange && s.Kind == Ordinal {
				lo, err1 := strconv.Atoi(strings.TrimSpace(a))
				hi, err2 := strconv.Atoi(strings.TrimSpace(b))
				if err1 != nil || err2 != nil || hi <= lo {
					return Scheme{}, Errorf(EINVALID, "scheme %q: range %q must be LO..HI with integers LO < HI", spec, tok)
				}
				if hi-lo > maxRangeSteps {
					return Scheme{}, Errorf(EINVALID, "scheme %q: range %q has %d levels; an ordinal range has at most %d (for a finer scale use bounded:%d..%d)", spec, tok, hi-lo+1, maxRangeSteps+1, lo, hi)
				}
				for v := lo; v <= hi; v++ {
					s.Levels = append(s.Levels, Level{Code: strconv.Itoa(v)})
				}
				continue
			}
			if a, b, ok := dashRange(tok); ok && s.Kind == Ordinal {
				return Scheme{}, Errorf(EINVALID, "scheme %q: a range of levels is written with two dots: did you mean %s?", spec,
					strings.Replace(spec, tok, a+".."+b, 1))
			}
			s.Levels = append(s.Levels, Level{Code: tok})
		}
	default:
		return Scheme{}, Errorf(EINVALID, "scheme %q: unknown kind %q (expected ordinal, nominal, binary or bounded)", spec, kind)
	}
	if s.Open() {
		if s.Positive == "" {
			return Scheme{}, Errorf(EINVALID, "scheme %q: binary schemes declare the positive class, e.g. binary:0,1,pos=1", spec)
		}
		if len(s.Levels) == 1 && s.Levels[0].Code != s.Positive {
			// "binary:no,pos=yes": both classes are known.
			s.Levels = append(s.Levels, Level{Code: s.Positive})
		}
		if s.Open() {
			return s, nil
		}
	}
	if err := s.Validate(); err != nil {
		return Scheme{}, Errorf(EINVALID, "scheme %q: %s", spec, err)
	}
	return s, nil
}

// dashRange reads "0-3" (or "1 - 5", "-2-2", "1–5" with an en dash), the
// usual way to write a range that the scheme syntax writes "0..3", and
// returns its ends when LO < HI.
func dashRange(tok string) (lo, hi string, ok bool) {
	tok = strings.TrimSpace(strings.ReplaceAll(tok, "–", "-"))
	for i := 1; i < len(tok); i++ {
		if tok[i] != '-' {
			continue
		}
		a, b := strings.TrimSpace(tok[:i]), strings.TrimSpace(tok[i+1:])
		x, err1 := parseNumber(a)
		y, err2 := parseNumber(b)
		if err1 == nil && err2 == nil && x < y {
			return a, b, true
		}
	}
	return "", "", false
}

func parseRange(body string) (lo, hi float64, ok bool) {
	a, b, found := strings.Cut(body, "..")
	if !found {
		return 0, 0, false
	}
	lo, err1 := parseNumber(strings.TrimSpace(a))
	hi, err2 := parseNumber(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || !(lo < hi) {
		return 0, 0, false
	}
	return lo, hi, true
}

// MustParseScheme is ParseScheme for literals in code and tests; it panics on
// error.
func MustParseScheme(spec string) Scheme {
	s, err := ParseScheme(spec)
	if err != nil {
		panic("annotations: " + err.Error())
	}
	return s
}

// String returns the canonical textual form, which ParseScheme reads back to
// an equal scheme.
func (s Scheme) String() string {
	switch s.Kind {
	case Bounded:
		return "bounded:" + formatNum(s.Lo) + ".." + formatNum(s.Hi)
	case Ordinal:
		if lo, ok := s.integerRun(); ok {
			return fmt.Sprintf("ordinal:%d..%d", lo, lo+len(s.Levels)-1)
		}
		return "ordinal:" + s.levelList()
	case Nominal:
		return "nominal:" + s.levelList()
	case Binary:
		if len(s.Levels) == 0 {
			return "binary:pos=" + s.Positive
		}
		return "binary:" + s.levelList() + ",pos=" + s.Positive
	}
	return string(s.Kind) + ":"
}

// integerRun reports whether the levels are consecutive integers without names.
func (s Scheme) integerRun() (lo int, ok bool) {
	if len(s.Levels) < 2 {
		return 0, false
	}
	for i, l := range s.Levels {
		if l.Name != "" {
			return 0, false
		}
		v, err := strconv.Atoi(l.Code)
		if err != nil || strconv.Itoa(v) != l.Code {
			return 0, false
		}
		if i == 0 {
			lo = v
		} else if v != lo+i {
			return 0, false
		}
	}
	return lo, true
}

func (s Scheme) levelList() string {
	parts := make([]string, len(s.Levels))
	for i, l := range s.Levels {
		if l.Name != "" {
			parts[i] = l.Code + "=" + l.Name
		} else {
			parts[i] = l.Code
		}
	}
	return strings.Join(parts, ",")
}

// Validate checks the scheme's own rules: a known kind; K >= 2 distinct,
// non-empty level codes that the textual form can carry; exactly two classes
// and a declared positive one for binary; finite Lo < Hi for bounded.
func (s Scheme) Validate() error {
	switch s.Kind {
	case Bounded:
		if math.IsNaN(s.Lo) || math.IsNaN(s.Hi) || math.IsInf(s.Lo, 0) || math.IsInf(s.Hi, 0) || !(s.Lo < s.Hi) {
			return Errorf(EINVALID, "bounded scheme needs finite lo < hi, got [%v, %v]", s.Lo, s.Hi)
		}
		if len(s.Levels) > 0 {
			return Errorf(EINVALID, "bounded scheme has no levels")
		}
		return nil
	case Ordinal, Nominal, Binary:
	default:
		return Errorf(EINVALID, "unknown scheme kind %q (expected ordinal, nominal, binary or bounded)", s.Kind)
	}
	if len(s.Levels) < 2 {
		return Errorf(EINVALID, "%s scheme needs at least 2 levels, got %d", s.Kind, len(s.Levels))
	}
	seen := make(map[string]bool, len(s.Levels))
	for _, l := range s.Levels {
		if l.Code == "" {
			return Errorf(EINVALID, "%s scheme has an empty level code", s.Kind)
		}
		if strings.ContainsAny(l.Code, ",=") || strings.TrimSpace(l.Code) != l.Code || strings.Contains(l.Code, "..") {
			return Errorf(EINVALID, "level code %q may not contain ',', '=', '..' or surrounding spaces", l.Code)
		}
		if strings.ContainsAny(l.Name, ",") {
			return Errorf(EINVALID, "level name %q may not contain ','", l.Name)
		}
		if seen[l.Code] {
			return Errorf(EINVALID, "%s scheme lists level %q twice", s.Kind, l.Code)
		}
		seen[l.Code] = true
	}
	if s.Kind == Binary {
		if len(s.Levels) != 2 {
			return Errorf(EINVALID, "binary scheme needs exactly 2 classes, got %d", len(s.Levels))
		}
		if !seen[s.Positive] {
			return Errorf(EINVALID, "binary scheme: positive class %q is not one of %s", s.Positive, strings.Join(s.Codes(), ", "))
		}
	} else if s.Positive != "" {
		return Errorf(EINVALID, "only binary schemes declare a positive class")
	}
	return nil
}

// Index returns the position of the level with exactly this code.
func (s Scheme) Index(code string) (int, bool) {
	for i, l := range s.Levels {
		if l.Code == code {
			return i, true
		}
	}
	return -1, false
}

// Normalize maps a raw value from a file to the canonical label value: the
// level code for categorical schemes, the shortest decimal form for bounded
// ones. It accepts, in this order, the exact code, the code after trimming
// spaces, an integer written as a real ("3.0" for "3"), and a level name or
// code matched case-insensitively. The error says what was expected.
func (s Scheme) Normalize(raw string) (string, error) {
	if s.Kind == Bounded {
		v, err := s.Value(raw)
		if err != nil {
			return "", err
		}
		return formatNum(v), nil
	}
	if _, ok := s.Index(raw); ok {
		return raw, nil
	}
	t := strings.TrimSpace(raw)
	if t == "" {
		return "", Errorf(EINVALID, "empty label (expected one of %s)", s.expected())
	}
	if _, ok := s.Index(t); ok {
		return t, nil
	}
	if f, err := parseNumber(t); err == nil && f == math.Trunc(f) && math.Abs(f) < 1e15 {
		if c := strconv.FormatInt(int64(f), 10); c != t {
			if _, ok := s.Index(c); ok {
				return c, nil
			}
		}
	}
	match := -1
	for i, l := range s.Levels {
		if strings.EqualFold(l.Code, t) || (l.Name != "" && strings.EqualFold(l.Name, t)) {
			if match >= 0 && match != i {
				match = -2
				break
			}
			match = i
		}
	}
	if match >= 0 {
		return s.Levels[match].Code, nil
	}
	return "", Errorf(EINVALID, "unknown level %q for scheme %s (expected one of %s)", raw, s, s.expected())
}

func (s Scheme) expected() string {
	if len(s.Levels) > 12 {
		return strings.Join(s.Codes()[:5], ", ") + ", ..., " + s.Levels[len(s.Levels)-1].Code
	}
	return strings.Join(s.Codes(), ", ")
}

// Value parses a bounded label: a finite number in [Lo, Hi].
func (s Scheme) Value(raw string) (float64, error) {
	if s.Kind != Bounded {
		panic("annotations: Value called on a " + string(s.Kind) + " scheme")
	}
	t := strings.TrimSpace(raw)
	v, err := parseNumber(t)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		if t == "" {
			return 0, Errorf(EINVALID, "empty label (expected a number in [%s, %s])", formatNum(s.Lo), formatNum(s.Hi))
		}
		return 0, Errorf(EINVALID, "non-numeric value %q for scheme %s (expected a number in [%s, %s])", raw, s, formatNum(s.Lo), formatNum(s.Hi))
	}
	if v < s.Lo || v > s.Hi {
		return 0, Errorf(EINVALID, "value %s outside [%s, %s] of scheme %s", t, formatNum(s.Lo), formatNum(s.Hi), s)
	}
	return v, nil
}

// Complete closes an open binary scheme ("binary:pos=1") with the one other
// class found in values; other schemes are returned unchanged. It fails when
// the values hold more than one non-positive class or none.
func (s Scheme) Complete(values []string) (Scheme, error) {
	if !s.Open() {
		return s, nil
	}
	other := map[string]bool{}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v != "" && v != s.Positive {
			other[v] = true
		}
	}
	if len(other) != 1 {
		keys := sortedKeys(other)
		return s, Errorf(EINVALID, "scheme %s: expected exactly one class besides %q in the data, found %d (%s); declare both, e.g. binary:no,yes,pos=yes", s, s.Positive, len(keys), strings.Join(keys, ", "))
	}
	neg := sortedKeys(other)[0]
	c := Scheme{Kind: Binary, Positive: s.Positive, Levels: []Level{{Code: neg}, {Code: s.Positive}}}
	return c, c.Validate()
}

// Equal reports whether two schemes are the same.
func (s Scheme) Equal(t Scheme) bool {
	if s.Kind != t.Kind || s.Positive != t.Positive || s.Lo != t.Lo || s.Hi != t.Hi || len(s.Levels) != len(t.Levels) {
		return false
	}
	for i := range s.Levels {
		if s.Levels[i] != t.Levels[i] {
			return false
		}
	}
	return true
}

// InferScheme guesses a scheme from label values, for the user to confirm:
// integers spanning at most 20 values are ordinal (0/1 only is binary with
// positive 1); other numbers are bounded ([0, 1], [0, 100] or the data's
// range); two non-numeric values of which one reads as positive (yes, true,
// pos, positive, y) are binary; other non-numeric values are nominal, sorted.
// The second result explains the choice.
func InferScheme(values []string) (Scheme, string, error) {
	distinct := map[string]bool{}
	allInt, allNum := true, true
	minV, maxV := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		distinct[v] = true
		f, err := parseNumber(v)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			allNum, allInt = false, false
			continue
		}
		if f != math.Trunc(f) {
			allInt = false
		}
		minV, maxV = math.Min(minV, f), math.Max(maxV, f)
	}
	if len(distinct) == 0 {
		return Scheme{}, "", Errorf(EINVALID, "no labels to infer a scheme from")
	}
	if len(distinct) == 1 {
		return Scheme{}, "", Errorf(EINVALID, "every label is %q: cannot infer a scheme from one value; pass --scheme", sortedKeys(distinct)[0])
	}
	switch {
	case allInt && minV == 0 && maxV == 1:
		return Scheme{Kind: Binary, Levels: []Level{{Code: "0"}, {Code: "1"}}, Positive: "1"}, "labels are 0 and 1", nil
	case allInt && maxV-minV <= 20:
		s := Scheme{Kind: Ordinal}
		for v := int(minV); v <= int(maxV); v++ {
			s.Levels = append(s.Levels, Level{Code: strconv.Itoa(v)})
		}
		return s, fmt.Sprintf("labels are integers from %d to %d", int(minV), int(maxV)), nil
	case allNum:
		s := Scheme{Kind: Bounded, Lo: minV, Hi: maxV}
		switch {
		case minV >= 0 && maxV <= 1:
			s.Lo, s.Hi = 0, 1
		case minV >= 0 && maxV <= 100:
			s.Lo, s.Hi = 0, 100
		}
		return s, fmt.Sprintf("labels are numbers from %s to %s", formatNum(minV), formatNum(maxV)), nil
	}
	keys := sortedKeys(distinct)
	if len(keys) == 2 {
		for _, k := range keys {
			switch strings.ToLower(k) {
			case "yes", "true", "pos", "positive", "y", "t":
				other := keys[0]
				if other == k {
					other = keys[1]
				}
				return Scheme{Kind: Binary, Levels: []Level{{Code: other}, {Code: k}}, Positive: k}, fmt.Sprintf("two classes, %q reads as positive", k), nil
			}
		}
	}
	return Scheme{Kind: Nominal, Levels: levelsOf(keys)}, fmt.Sprintf("%d distinct non-numeric labels", len(keys)), nil
}

func levelsOf(codes []string) []Level {
	l := make([]Level, len(codes))
	for i, c := range codes {
		l[i] = Level{Code: c}
	}
	return l
}

// sortedKeys returns the keys of m in sorted order.
func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

func formatNum(v float64) string {
	if v == 0 {
		v = 0 // -0 is stored as 0
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// maxRangeSteps bounds an ordinal range LO..HI: HI - LO <= 1000.
const maxRangeSteps = 1000

// decimalRe is a decimal number as people write it in label and items
// files: digits with an optional point and exponent, no digit separators,
// no hexadecimal, no inf or nan.
var decimalRe = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// parseNumber parses a decimal number; strconv.ParseFloat alone would also
// take "1_0" (as 10), hexadecimal floats, "inf" and "nan".
func parseNumber(s string) (float64, error) {
	if !decimalRe.MatchString(s) {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(s, 64)
}
