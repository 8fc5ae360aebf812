package analysis

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestFieldsDeclared: every field of FitSpec that is stored is declared,
// by the common part or by a family; families that share a setting declare
// it alike (type, range, enum, length); every numeric setting has a range
// and every list a length.
func TestFieldsDeclared(t *testing.T) {
	all := AllFields()
	byName := map[string]SpecField{}
	for _, f := range all {
		if _, dup := byName[f.Name]; dup {
			t.Errorf("%s: listed twice by AllFields", f.Name)
		}
		byName[f.Name] = f
		// A seed is any 64-bit unsigned integer: its type is its range.
		if f.Number() && !f.HasRange && f.Type.Kind() != reflect.Uint64 {
			t.Errorf("%s: a number without a declared range", f.Name)
		}
		if f.Type.Kind() == reflect.Slice && !f.HasLen {
			t.Errorf("%s: a list without declared lengths", f.Name)
		}
	}
	for name := range specIndex() {
		if _, ok := byName[name]; !ok {
			t.Errorf("FitSpec field %s: declared by no family and not in the common part", name)
		}
	}
	for _, m := range Models() {
		for _, f := range familyFields(m, specIndex()) {
			u := byName[f.Name]
			if f.Type != u.Type || f.HasRange != u.HasRange || f.Min != u.Min || f.Max != u.Max || f.MaxOpen != u.MaxOpen ||
				!slices.Equal(f.Enum, u.Enum) || f.MinLen != u.MinLen || f.MaxLen != u.MaxLen {
				t.Errorf("%s: the %s model declares it otherwise than the %s model", f.Name, m.Name, u.Families[0])
			}
		}
	}
}

// TestFamilyDefaults: a family's Settings.WithDefaults gives, for every
// setting its engine reads, what FitSpec.WithDefaults (the families'
// Options defaults) gives, under weak and strong identifiability.
func TestFamilyDefaults(t *testing.T) {
	for _, m := range Models() {
		for _, eng := range m.Engines {
			for _, ident := range []string{"", "strong"} {
				in := FitSpec{Model: m.Name, Engine: eng}
				if ident != "" && slices.ContainsFunc(Fields(m.Name, eng), func(f SpecField) bool { return f.Name == "identifiability" }) {
					in.Identifiability = ident
				}
				want := in.WithDefaults()
				got := in.familySettings()
				got = reflect.ValueOf(got).MethodByName("WithDefaults").Call(nil)[0].Interface()
				gv := reflect.ValueOf(got)
				for _, f := range Fields(m.Name, eng) {
					if f.Common() {
						continue
					}
					w := f.Value(&want).Interface()
					g := gv.FieldByIndex(f.Field.Index).Interface()
					if !reflect.DeepEqual(w, g) {
						t.Errorf("%s/%s %s: %s default %v, FitSpec.WithDefaults %v", m.Name, eng, ident, f.Name, g, w)
					}
				}
			}
		}
	}
}

// TestNotASetting: a setting of another model, or of another engine of the
// model, is refused by Validate with one message that names the model's
// settings.
func TestNotASetting(t *testing.T) {
	eps := 0.1
	for _, c := range []struct {
		name string
		spec FitSpec
		want []string
	}{
		{"bounded setting for ordinal", FitSpec{Model: ModelOrdinal, Engine: "gibbs", Likelihood: "beta"}, []string{"likelihood is not a setting of the ordinal model fitted by gibbs", "sigma_b", "keep_draws"}},
		{"robust setting for confusion", FitSpec{Model: ModelConfusion, Epsilon: &eps}, []string{"epsilon is not a setting of the confusion model fitted by vb", "rater_model"}},
		{"gibbs setting for confusion vb", FitSpec{Model: ModelConfusion, Chains: 8}, []string{"chains is not a setting of the confusion model fitted by vb", "is read by its gibbs engine"}},
		{"ep setting for ordinal gibbs", FitSpec{Model: ModelOrdinal, Engine: "gibbs", Restarts: 2}, []string{"restarts is not a setting of the ordinal model fitted by gibbs", "read by its ep or laplace engine"}},
		{"gibbs setting for ordinal ep (the default)", FitSpec{Model: ModelOrdinal, Samples: 100}, []string{"samples is not a setting of the ordinal model fitted by ep", "is read by its gibbs engine"}},
		{"precisions for ordinal", FitSpec{Model: ModelOrdinal, Precisions: "fixed"}, []string{"precisions is not a setting of the ordinal model"}},
		{"identifiability for bounded", FitSpec{Model: ModelBounded, Identifiability: "strong"}, []string{"identifiability is not a setting of the bounded model fitted by ep", "likelihood"}},
		{"gamma for robust", FitSpec{Model: ModelRobust, Gamma: "2"}, []string{"gamma is not a setting of the robust model", "epsilon"}},
	} {
		err := c.spec.Validate()
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want it to say %q", c.name, err, w)
			}
		}
	}
	for _, m := range Models() {
		for _, eng := range m.Engines {
			if err := (FitSpec{Model: m.Name, Engine: eng}).WithDefaults().checkFamily(m.Name, eng); err != nil {
				t.Errorf("%s/%s: the defaults are refused: %v", m.Name, eng, err)
			}
		}
	}
}
