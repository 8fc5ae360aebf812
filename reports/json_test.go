package reports

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"concord/internal/testutil"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite the golden files and docs/report-schema.json")

const schemaID = "https://concord.invalid/schemas/concord.report/v1.json"

// compileSchema compiles the embedded JSON Schema (draft 2020-12).
func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(schemaID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// docEdit is an edit of a report document (as JSON values) that makes it
// invalid.
type docEdit struct {
	name string
	edit func(m map[string]any)
}

// mustNotValidate checks that the schema rejects the document doc after
// each edit.
func mustNotValidate(t testing.TB, s *jsonschema.Schema, doc []byte, edits []docEdit) {
	t.Helper()
	for _, tc := range edits {
		var m map[string]any
		if err := json.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		tc.edit(m)
		b, _ := json.Marshal(m)
		if err := validate(t, s, b); err == nil {
			t.Errorf("%s: validates", tc.name)
		}
	}
}

func validate(t testing.TB, s *jsonschema.Schema, b []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

// TestReportsValidate validates the JSON of every report the tests build
// against the published schema.
func TestReportsValidate(t *testing.T) {
	s := compileSchema(t)
	for _, c := range allCases(t) {
		js := reportJSON(t, c.rep)
		if err := validate(t, s, js); err != nil {
			t.Errorf("%s: the report does not validate:\n%v", c.name, err)
		}
	}
}

// reportJSON returns the JSON document WriteJSON writes for rep.
func reportJSON(t *testing.T, rep *Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSchemaRejects checks that the schema is not vacuous: broken reports
// fail.
func TestSchemaRejects(t *testing.T) {
	s := compileSchema(t)
	js := reportJSON(t, binaryCase(t).rep)
	mustNotValidate(t, s, js, []docEdit{
		{"no items", func(m map[string]any) { delete(m, "items") }},
		{"wrong schema", func(m map[string]any) { m["schema"] = "concord.report/v2" }},
		{"unknown field", func(m map[string]any) { m["extra"] = 1 }},
		{"classification without classes", func(m map[string]any) { delete(m, "classes") }},
		{"classification with thresholds", func(m map[string]any) { m["thresholds"] = []any{} }},
		{"probability above 1", func(m map[string]any) { m["items"].([]any)[0].(map[string]any)["prob"] = 1.5 }},
		{"negative count", func(m map[string]any) { m["summary"].(map[string]any)["labels"] = -1 }},
		{"position 0", func(m map[string]any) { m["items"].([]any)[0].(map[string]any)["position"] = 0 }},
		{"estimate without mean", func(m map[string]any) {
			delete(m["raters"].([]any)[0].(map[string]any)["precision"].(map[string]any), "mean")
		}},
		{"unknown kappa weights", func(m map[string]any) {
			m["agreement"].(map[string]any)["kappa"].(map[string]any)["weights"] = "cubic"
		}},
	})
}

// TestDocsSchema checks that docs/report-schema.json is the embedded
// schema (go test -update copies it).
func TestDocsSchema(t *testing.T) {
	path := filepath.Join("..", "docs", "report-schema.json")
	if _, same := testutil.Golden(t, path, SchemaJSON(), *update); !same {
		t.Errorf("%s differs from reports/report-schema.json: run go test ./reports -run DocsSchema -update", path)
	}
	var v any
	if err := json.Unmarshal(SchemaJSON(), &v); err != nil {
		t.Errorf("the schema is not JSON: %v", err)
	}
}

// TestGolden compares the JSON reports of the fixed inputs (the committed
// real fit result and the synthetic classification fixtures) with
// testdata/golden; -update rewrites them.
func TestGolden(t *testing.T) {
	for _, c := range []reportCase{ordinalCase(t), binaryCase(t), nominalCase(t), degenerateClassCase(t), boundedCase(t), robustCase(t), aucCase(t)} {
		js := reportJSON(t, c.rep)
		path := filepath.Join("testdata", "golden", c.name+".json")
		if want, same := testutil.Golden(t, path, js, *update); !same {
			t.Errorf("%s: the report differs from %s (go test ./reports -run Golden -update after a deliberate change)\n%s", c.name, path, firstDiff(string(js), string(want)))
		}
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + g[i] + "\nwant: " + w[i]
		}
	}
	return "lengths differ: " + strconv.Itoa(len(g)) + " vs " + strconv.Itoa(len(w)) + " lines"
}

// TestReportRoundTrip reads a written report back and writes it again.
func TestReportRoundTrip(t *testing.T) {
	for _, c := range allCases(t) {
		var a, b bytes.Buffer
		if err := WriteJSON(&a, c.rep); err != nil {
			t.Fatal(err)
		}
		rep, err := ReadReport(bytes.NewReader(a.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := WriteJSON(&b, rep); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: round trip changes the report:\n%s", c.name, firstDiff(b.String(), a.String()))
		}
		// A report read back draws the plots that need no draws or traces.
		for _, p := range Plots(rep) {
			if err := WritePlot(new(bytes.Buffer), rep, p.Name, SVG); err != nil {
				t.Errorf("%s: read back: %s: %v", c.name, p.Name, err)
			}
		}
	}
	if _, err := ReadReport(strings.NewReader(`{"schema":"concord.fit/v1"}`)); err == nil {
		t.Error("ReadReport accepts a fit result")
	}
}

// TestConfusionReport checks the confusion model's per-rater results in
// the report of a real fit: the confusion matrix with intervals, the
// accuracy, the most confused classes and the spam score, as in the fit.
func TestConfusionReport(t *testing.T) {
	c := confusionCase(t)
	spammers := 0
	for l, r := range c.rep.Raters {
		fr := c.fit.Raters[l]
		if len(r.ConfusionProbs) != 2 || len(r.ConfusionProbs[0]) != 2 {
			t.Fatalf("%s: confusion matrix %v", r.ID, r.ConfusionProbs)
		}
		for k := range 2 {
			for j := range 2 {
				got, want := r.ConfusionProbs[k][j], fr.ConfusionProbs[k][j]
				if float64(got.Mean) != want.Mean || float64(got.Q025) != want.Q025 || float64(got.Q975) != want.Q975 {
					t.Errorf("%s [%d][%d]: %+v, the fit has %+v", r.ID, k, j, got, want)
				}
			}
		}
		if r.Accuracy == nil || float64(r.Accuracy.Mean) != fr.Accuracy.Mean || r.MostConfused == nil || r.MostConfused.True != fr.MostConfused.True ||
			r.SpamScore == nil || float64(*r.SpamScore) != *fr.SpamScore || r.Spammer != fr.Spammer {
			t.Errorf("%s: accuracy %v, most confused %v, spam score %v, spammer %v", r.ID, r.Accuracy, r.MostConfused, r.SpamScore, r.Spammer)
		}
		if r.Spammer {
			spammers++
		}
	}
	if spammers == 0 {
		t.Error("no spammer in the RTE piece (amt008 is one)")
	}
	js := reportJSON(t, c.rep)
	for _, key := range []string{`"confusion_probs"`, `"accuracy"`, `"most_confused"`, `"spam_score"`, `"spammer"`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("the JSON has no %s", key)
		}
	}
	if err := validate(t, compileSchema(t), js); err != nil {
		t.Errorf("the report does not validate: %v", err)
	}
}
