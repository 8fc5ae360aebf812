package server

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"concord/analysis"
	"concord/multirater"
	"concord/textfeat"
)

// obj is a JSON object whose keys keep their order (the OpenAPI document
// is written for people).
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.k)
		b.Write(k)
		b.WriteByte(':')
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(p.v); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// fitRequestSchema is the OpenAPI schema of a fit request, generated from
// the declared settings (analysis.AllFields): one property per setting,
// with its type, range, list lengths, words, default and doc, and the
// models and engines that read it. server/openapi.json holds it
// (TestOpenAPIFitRequest regenerates it with -update-openapi and fails
// when the two differ).
func fitRequestSchema() obj {
	props := obj{}
	for _, f := range analysis.AllFields() {
		props = append(props, kv{f.Name, settingSchema(f)})
	}
	return obj{
		{"type", "object"},
		{"additionalProperties", false},
		{"description", "Every setting of `concord fit` (every field of the stored fit spec, as each model family declares its settings); omitted fields take its defaults, except `model`, which defaults to the model that suits the project's scheme. A field given as `null` is rejected (400, naming the field): leave a field out to get its default. Settings the chosen model and engine do not read are rejected (400), not ignored."},
		{"properties", props},
	}
}

// settingSchema is the OpenAPI schema of one setting.
func settingSchema(f analysis.SpecField) obj {
	s := typeSchema(f.Type, f)
	if f.Name == modelKey() {
		var names []string
		for _, m := range analysis.Models() {
			names = append(names, m.Name)
		}
		s = append(s, kv{"enum", names})
	}
	if f.Name == engineKey() {
		var engines []string
		for _, m := range analysis.Models() {
			for _, e := range m.Engines {
				if !slices.Contains(engines, e) {
					engines = append(engines, e)
				}
			}
		}
		s = append(s, kv{"enum", engines})
	}
	perFamily := familyDefaults(f)
	if d := defaultValue(f); d != nil && perFamily == "" {
		s = append(s, kv{"default", d})
	}
	doc := f.Doc
	if !f.Common() {
		doc = strings.Join(f.Families, ", ") + " model: " + doc
		if f.Engines != nil {
			doc += " (engines " + strings.Join(f.Engines, ", ") + ")"
		}
	}
	if f.Zero != "" {
		doc += "; omitted: " + f.Zero
	}
	if perFamily != "" {
		doc += " (" + perFamily + ")"
	}
	return append(s, kv{"description", doc})
}

// familyDefaults says the defaults of a setting that several families
// declare with different defaults ("ordinal 2000, classification 2000
// (1500 with a kernel), confusion 1000"), whose schema then has no one
// default; "" when they agree.
func familyDefaults(f analysis.SpecField) string {
	var each []string
	differ := false
	for _, m := range f.Families {
		for _, g := range analysis.Fields(m, "") {
			if g.Name == f.Name {
				each = append(each, m+" "+g.Default)
				differ = differ || g.Default != f.Default
			}
		}
	}
	if !differ {
		return ""
	}
	return strings.Join(each, ", ")
}

// typeSchema is the type part of a setting's schema.
func typeSchema(t reflect.Type, f analysis.SpecField) obj {
	rng := func(s obj) obj {
		if !f.HasRange {
			return append(s, kv{"minimum", 0})
		}
		s = append(s, kv{"minimum", f.Min}, kv{"maximum", f.Max})
		if f.MaxOpen {
			s = append(s, kv{"exclusiveMaximum", true})
		}
		return s
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeSchema(t.Elem(), f)
	case reflect.Bool:
		return obj{{"type", "boolean"}}
	case reflect.Int:
		return rng(obj{{"type", "integer"}})
	case reflect.Uint64:
		return obj{{"type", "integer"}, {"minimum", 0}}
	case reflect.Float64:
		return rng(obj{{"type", "number"}})
	case reflect.String:
		if f.HasRange { // a number or one of the words (gamma: cv)
			return obj{{"oneOf", []obj{rng(obj{{"type", "number"}}), {{"type", "string"}, {"enum", f.Enum}}}}}
		}
		s := obj{{"type", "string"}}
		if t == reflect.TypeFor[textfeat.Weighting]() {
			s = append(s, kv{"enum", []textfeat.Weighting{textfeat.Count, textfeat.Binary, textfeat.TFIDF}})
		}
		if f.Enum != nil {
			s = append(s, kv{"enum", f.Enum})
		}
		n := analysis.MaxSpecString
		if f.Name == kernelKey() {
			n = analysis.MaxKernelString
		}
		return append(s, kv{"maxLength", n})
	case reflect.Slice:
		item := obj{{"type", "string"}, {"maxLength", analysis.MaxSpecString}}
		if t.Elem().Kind() == reflect.Float64 {
			item = obj{{"type", "number"}}
			if f.HasRange {
				item = rng(item)
			}
		}
		s := obj{{"type", "array"}, {"items", item}}
		if f.HasLen {
			s = append(s, kv{"minItems", f.MinLen}, kv{"maxItems", f.MaxLen})
		}
		return s
	case reflect.Struct:
		props := obj{}
		for i := range t.NumField() {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			props = append(props, kv{name, typeSchema(sf.Type, analysis.SpecField{Field: multirater.Field{Name: name}})})
		}
		return obj{{"type", "object"}, {"additionalProperties", false}, {"properties", props}}
	}
	panic("server: no OpenAPI schema for setting " + f.Name + " of type " + t.String())
}

// defaultValue is a setting's declared default as a JSON value: a number
// for a number, the word for a word; nil when the default is in words.
func defaultValue(f analysis.SpecField) any {
	if f.Default == "" {
		return nil
	}
	if f.Number() {
		x, err := strconv.ParseFloat(f.Default, 64)
		if err != nil {
			return nil
		}
		return x
	}
	return f.Default
}

// OpenAPIDocument returns the served OpenAPI document (a copy).
func OpenAPIDocument() []byte { return bytes.Clone(openAPIDocument) }
