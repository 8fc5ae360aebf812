package multirater

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

type testBlock struct {
	N int `json:"n,omitempty" range:"[1,10]" zero:"the default" default:"4" doc:"a count"`
}

type testSettings struct {
	testBlock `engines:"gibbs" defaults:"n=5"`
	Rate      float64   `json:"rate,omitempty" range:"[0,0.5)" zero:"learnt" doc:"a rate"`
	Eps       *float64  `json:"eps,omitempty" range:"[0,1]" doc:"a pointer: nil is left out"`
	Kind      string    `json:"kind,omitempty" enum:"a,b|bee" default:"a" doc:"a word"`
	List      []float64 `json:"list,omitempty" len:"1,3" range:"[-1,1]" doc:"a list"`
	Burn      int       `json:"burn,omitempty" range:"[0,9]" negative:"none" zero:"the default" doc:"negative: none"`
	Hidden    int       `json:"-"`
}

// TestFields: the tags are read in declaration order, the embedded block
// in place with its engines and the embedding's defaults.
func TestFields(t *testing.T) {
	fs := Fields(reflect.TypeFor[testSettings]())
	var names []string
	for _, f := range fs {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "n,rate,eps,kind,list,burn" {
		t.Fatalf("fields %s", got)
	}
	n := fs[0]
	if !n.Shared || n.Block != "testBlock" || n.Default != "5" || !n.Applies("gibbs") || n.Applies("ep") || !n.Int() {
		t.Errorf("n: %+v", n)
	}
	if r := fs[1]; !r.MaxOpen || r.Range() != "from 0 up to (not including) 0.5" || r.Applies("ep") != true {
		t.Errorf("rate: %+v", r)
	}
	if k := fs[3]; k.Aliases["bee"] != "b" || len(k.Enum) != 2 {
		t.Errorf("kind: %+v", k)
	}
}

// TestCheckSettings: values outside their declarations are refused with a
// *FieldError naming the setting and what was expected; zero values,
// declared words and aliases pass.
func TestCheckSettings(t *testing.T) {
	half, two := 0.5, 2.0
	for _, c := range []struct {
		s    testSettings
		want string // "" valid
	}{
		{testSettings{}, ""},
		{testSettings{testBlock: testBlock{N: 10}, Rate: 0.49, Eps: &half, Kind: "Bee", List: []float64{-1, 1}, Burn: -1}, ""},
		{testSettings{testBlock: testBlock{N: 11}}, "n = 11: expected an integer from 1 to 10; 0 or left out: the default"},
		{testSettings{Rate: 0.5}, "rate = 0.5: expected a number from 0 up to (not including) 0.5; 0 or left out: learnt"},
		{testSettings{Eps: &two}, "eps = 2: expected a number from 0 to 1"},
		{testSettings{Kind: "c"}, `kind = "c": expected a or b`},
		{testSettings{List: []float64{0, 0, 0, 0}}, "list = 4 values: expected 1 to 3 values"},
		{testSettings{List: []float64{2}}, "list = 2: expected numbers from -1 to 1"},
		{testSettings{Burn: 10}, "burn = 10: expected an integer from 0 to 9"},
	} {
		err := CheckSettings(c.s)
		var fe *FieldError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.s, err)
		case c.want != "" && (!errors.As(err, &fe) || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q", c.s, err, c.want)
		}
	}
}

// TestSetDefaults: zero fields get their declared defaults, set ones stay;
// WithDefaults returns the same without touching its argument.
func TestSetDefaults(t *testing.T) {
	s := testSettings{Rate: 0.1}
	w := WithDefaults(s)
	SetDefaults(&s)
	if s.N != 5 || s.Kind != "a" || s.Rate != 0.1 || s.Burn != 0 {
		t.Errorf("defaults %+v", s)
	}
	if !reflect.DeepEqual(w, s) {
		t.Errorf("WithDefaults %+v, SetDefaults %+v", w, s)
	}
}

// TestCheckSettingsRules: a broken rule is refused with its FieldError
// once every field is within its declaration (a field's error comes
// first), the first broken rule in order; rules that hold pass.
func TestCheckSettingsRules(t *testing.T) {
	rule := func(broken bool, field string) Rule {
		return Rule{Broken: broken, FieldError: FieldError{Field: field, Value: "v", Want: "w"}}
	}
	for _, c := range []struct {
		s     testSettings
		rules []Rule
		want  string // "" valid
	}{
		{testSettings{}, []Rule{rule(false, "a")}, ""},
		{testSettings{}, []Rule{rule(false, "a"), rule(true, "b"), rule(true, "c")}, "b = v: expected w"},
		{testSettings{Kind: "c"}, []Rule{rule(true, "a")}, `kind = "c": expected a or b`},
	} {
		err := CheckSettings(c.s, c.rules...)
		var fe *FieldError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.s, err)
		case c.want != "" && (!errors.As(err, &fe) || err.Error() != c.want):
			t.Errorf("%+v: %v, want %q", c.s, err, c.want)
		}
	}
}
