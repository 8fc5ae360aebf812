package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"concord/internal/testutil"
)

func testEnv() (*env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), getenv: func(string) string { return "" }}, &out, &errb
}

// testdata/agreement_sirt_k1.csv: the first 40 essays of the sirt writing
// ratings, criterion k1 (see raters/testdata/README.md), with missing ratings.
func TestAgreementCommandFiles(t *testing.T) {
	e, out, errb := testEnv()
	code := run(context.Background(), e, []string{"agreement", "--labels", "testdata/agreement_sirt_k1.csv", "--scheme", "ordinal:0..3", "--where", "criterion=k1", "--bootstrap", "50", "--json"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"krippendorff_alpha", "fleiss_kappa", "randolph_kappa", "cohen_kappa", "scott_pi", "gwet_ac1", "gwet_ac2", "brennan_prediger", "percent_agreement", "icc", "aggregators"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("--json output lacks %q", k)
		}
	}
	if doc["scheme"] != "ordinal:0..3" {
		t.Errorf("scheme %v", doc["scheme"])
	}

	e, out, errb = testEnv()
	if code := run(context.Background(), e, []string{"agreement", "--labels", "testdata/agreement_sirt_k1.csv", "--scheme", "ordinal:0..3", "--bootstrap", "0"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{"Krippendorff's alpha (ordinal)", "Fleiss' kappa", "ICC(2,1)", "Cohen's kappa", "dawid_skene", "majority", "Rater",
		"vs wawa", "vs glad", "vs mace", "wawa weight", "glad ability", "mace competence"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// The aggregators in the reports' order.
	s := out.String()
	last := -1
	for _, n := range []string{"\nmajority ", "\ndawid_skene ", "\none_coin ", "\nwawa ", "\nglad ", "\nmace ", "\nmean ", "\nmedian "} {
		at := strings.Index(s, n)
		if at < 0 || at < last {
			t.Errorf("aggregator %q missing or out of order", strings.TrimSpace(n))
		}
		last = at
	}
}

func TestAgreementCommandProject(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "a.db")
	e, _, errb := testEnv()
	if code := run(context.Background(), e, []string{"import", "--db", dbPath, "--project", "essays", "--scheme", "ordinal:0..3", "--yes", "testdata/agreement_sirt_k1.csv"}); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errb)
	}
	e, out, errb := testEnv()
	if code := run(context.Background(), e, []string{"agreement", "--db", dbPath, "--project", "essays", "--bootstrap", "0", "--json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var doc struct {
		Items  int `json:"items"`
		Labels int `json:"labels"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Items != 40 || doc.Labels == 0 {
		t.Errorf("items %d labels %d", doc.Items, doc.Labels)
	}
}

func TestAgreementCommandErrors(t *testing.T) {
	for _, args := range [][]string{
		{"agreement"},
		{"agreement", "--labels", "testdata/agreement_sirt_k1.csv", "--project", "x"},
		{"agreement", "--labels", "testdata/agreement_sirt_k1.csv", "--scheme", "ordinal:1..2"},
		{"agreement", "--labels", "testdata/nonexistent.csv", "--scheme", "ordinal:0..3"},
		{"agreement", "--labels", "testdata/agreement_sirt_k1.csv", "--conf-level", "2"},
	} {
		e, _, errb := testEnv()
		if code := run(context.Background(), e, args); code != 1 {
			t.Errorf("%v: exit %d, want 1 (%s)", args, code, errb)
		}
		if errb.Len() == 0 {
			t.Errorf("%v: no error message", args)
		}
	}
}

// TestAgreementCommandParts: --only computes one part, --pairs and
// --min-shared choose the rater pairs, --ties the tie rule; bad values name
// the flag.
func TestAgreementCommandParts(t *testing.T) {
	base := []string{"agreement", "--labels", "testdata/agreement_sirt_k1.csv", "--scheme", "ordinal:0..3", "--where", "criterion=k1", "--bootstrap", "0", "--json"}
	doc := func(args ...string) map[string]json.RawMessage {
		t.Helper()
		e, out, errb := testEnv()
		if code := run(context.Background(), e, append(append([]string{}, base...), args...)); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb)
		}
		var d map[string]json.RawMessage
		if err := json.Unmarshal(out.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		only      string
		has, lack []string
	}{
		{"coefficients", []string{"fleiss_kappa", "cohen_kappa", "pair_selection", "strongest_pairs"}, []string{"item_agreement", "rater_agreement"}},
		{"items", []string{"item_agreement"}, []string{"fleiss_kappa", "cohen_kappa", "rater_agreement"}},
		{"raters", []string{"rater_agreement", "rater_profiles"}, []string{"fleiss_kappa", "item_agreement"}},
	} {
		d := doc("--only", tc.only)
		for _, k := range tc.has {
			if _, ok := d[k]; !ok {
				t.Errorf("--only %s: no %q", tc.only, k)
			}
		}
		for _, k := range tc.lack {
			if _, ok := d[k]; ok {
				t.Errorf("--only %s: has %q", tc.only, k)
			}
		}
	}
	var aggs map[string]json.RawMessage
	if err := json.Unmarshal(doc("--only", "aggregators", "--ties", "first")["aggregators"], &aggs); err != nil || aggs["majority"] == nil || aggs["wawa"] == nil {
		t.Errorf("--only aggregators: %v, %d aggregators", err, len(aggs))
	}
	var pairs []json.RawMessage
	if err := json.Unmarshal(doc("--only", "coefficients", "--min-shared", "1000")["cohen_kappa"], &pairs); err == nil && len(pairs) != 0 {
		t.Errorf("--min-shared 1000: %d pairs", len(pairs))
	}
	if err := json.Unmarshal(doc("--only", "coefficients", "--pairs", "2")["cohen_kappa"], &pairs); err != nil || len(pairs) != 2 {
		t.Errorf("--pairs 2: %d pairs (%v)", len(pairs), err)
	}
	for _, bad := range [][]string{{"--only", "kappas"}, {"--pairs", "some"}, {"--ties", "random"}, {"--min-shared", "-1"}} {
		e, _, errb := testEnv()
		if code := run(context.Background(), e, append(append([]string{}, base...), bad...)); code == 0 || !strings.Contains(errb.String(), bad[0]) {
			t.Errorf("%v: exit %d, stderr %q (want an error naming %s)", bad, code, errb, bad[0])
		}
	}
}

// TestAgreementCommandTables runs --table and --counts on irrCAC's example
// files and compares with irrCAC 1.0's own table and distribution
// functions (raters/testdata/reference_irrcac_tables.csv, made by
// make_reference_irrcac_tables.R), under a weighting the label path had no
// flag for (radical), with the normal intervals and a second test.
func TestAgreementCommandTables(t *testing.T) {
	ref := map[string][2]float64{} // input/coefficient/weights -> value, se
	for _, r := range testutil.ReadCSV(t, "../../raters/testdata/reference_irrcac_tables.csv")[1:] {
		v, _ := strconv.ParseFloat(r[3], 64)
		se, _ := strconv.ParseFloat(r[4], 64)
		ref[r[0]+"/"+r[1]+"/"+r[2]] = [2]float64{v, se}
	}
	type est struct {
		Value, SE, CILow, CIHigh, Z, P, ZNull, PNull float64
		Method                                       string
	}
	parse := func(m map[string]any) est {
		g := func(k string) float64 {
			if v, ok := m[k].(float64); ok {
				return v
			}
			return math.NaN()
		}
		s, _ := m["ci_method"].(string)
		return est{g("value"), g("se"), g("ci_low"), g("ci_high"), g("z"), g("p_value"), g("z_null"), g("p_value_null"), s}
	}
	cases := []struct {
		flag, file, coef string
		pick             func(doc map[string]any) map[string]any
	}{
		{"--table", "irrcac_cont3x3abstractors.csv", "cohen_kappa", func(d map[string]any) map[string]any {
			return d["weighted"].(map[string]any)["radical"].(map[string]any)["cohen_kappa"].(map[string]any)
		}},
		{"--counts", "irrcac_distrib.6raters.csv", "fleiss_kappa", func(d map[string]any) map[string]any {
			return d["weighted"].(map[string]any)["radical"].(map[string]any)["fleiss_kappa"].(map[string]any)
		}},
	}
	for _, c := range cases {
		e, out, errb := testEnv()
		if code := run(context.Background(), e, []string{"agreement", c.flag, "../../raters/testdata/" + c.file, "--weights", "radical", "--ci", "normal", "--null", "0.5", "--json"}); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.file, code, errb)
		}
		var doc map[string]any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		got := parse(c.pick(doc))
		want := ref[c.file+"/"+c.coef+"/radical"]
		if math.Abs(got.Value-want[0]) > 1e-12 || math.Abs(got.SE-want[1]) > 1e-12 {
			t.Errorf("%s: %+v, irrCAC %v", c.file, got, want)
		}
		if got.Method != "normal" || math.Abs(got.CIHigh-got.Value-1.959963984540054*got.SE) > 1e-9 {
			t.Errorf("%s: interval %+v is not the normal one", c.file, got)
		}
		if math.Abs(got.ZNull-(got.Value-0.5)/got.SE) > 1e-9 || !(got.PNull > 0 && got.PNull < 1) || !(got.P >= 0 && got.P < 0.05) {
			t.Errorf("%s: tests %+v", c.file, got)
		}
		if doc["ci"] != "normal" || doc["null_value"] != 0.5 || doc["input"] != strings.TrimPrefix(c.flag, "--") {
			t.Errorf("%s: ci %v, null_value %v, input %v", c.file, doc["ci"], doc["null_value"], doc["input"])
		}
		// The tables print too.
		e, out, errb = testEnv()
		if code := run(context.Background(), e, []string{"agreement", c.flag, "../../raters/testdata/" + c.file, "--weights", "radical,bipolar"}); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.file, code, errb)
		}
		for _, want := range []string{"input", "radical", "bipolar", "Gwet's AC1", "z\t", "p"} {
			if !strings.Contains(out.String(), strings.TrimSuffix(want, "\t")) {
				t.Errorf("%s: output lacks %q:\n%s", c.file, want, out)
			}
		}
	}

	// Errors name the file, row and column; flags of the label path are
	// refused.
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte(",a,b\na,1,2\nb,x,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runFailsAll(t, []string{"agreement"}, []failCase{
		{[]string{"--table", bad}, "bad.csv: row 3, column 2: \"x\" is not a count (expected a non-negative number)"},
		{[]string{"--table", bad, "--bootstrap", "10"}, "--bootstrap goes with labels"},
		{[]string{"--table", bad, "--counts", bad}, "give one of --project NAME, --labels FILE, --table FILE or --counts FILE"},
		{[]string{"--table", bad, "--ci", "z"}, "--ci \"z\": expected t or normal"},
		{[]string{"--table", bad, "--weights", "cubic"}, "--weights \"cubic\": expected all or"},
		{[]string{"--table", bad, "--null", "half"}, "--null \"half\": expected a number"},
	})
}

// TestAgreementCommandWeightsAndTests: --weights chooses the weighted
// sets of the label path, --ci normal gives normal intervals with
// --bootstrap 0, and z and p are in the JSON.
func TestAgreementCommandWeightsAndTests(t *testing.T) {
	e, out, errb := testEnv()
	if code := run(context.Background(), e, []string{"agreement", "--labels", "testdata/agreement_sirt_k1.csv", "--scheme", "ordinal:0..3", "--bootstrap", "0",
		"--weights", "radical,circular,bipolar", "--ci", "normal", "--null", "0.3", "--only", "coefficients", "--json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var doc struct {
		CI          string                                `json:"ci"`
		Weighted    map[string]map[string]json.RawMessage `json:"weighted"`
		FleissKappa map[string]any                        `json:"fleiss_kappa"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Weighted) != 3 || doc.Weighted["radical"] == nil || doc.Weighted["circular"] == nil || doc.Weighted["bipolar"] == nil {
		t.Errorf("weighted sets %v", doc.Weighted)
	}
	fk := doc.FleissKappa
	if doc.CI != "normal" || fk["ci_method"] != "normal" || fk["z"] == nil || fk["p_value"] == nil || fk["z_null"] == nil || fk["p_value_null"] == nil {
		t.Errorf("ci %q, fleiss_kappa %v", doc.CI, fk)
	}
	// An explicit --ci without --bootstrap gives its analytic intervals;
	// with --bootstrap N the bootstrap's.
	for _, c := range []struct {
		args   []string
		boot   float64
		method string
	}{{[]string{"--ci", "normal"}, 0, "normal"}, {[]string{"--ci", "t"}, 0, "t"}, {[]string{"--ci", "normal", "--bootstrap", "20"}, 20, "bootstrap"}} {
		e, out, errb := testEnv()
		if code := run(context.Background(), e, append([]string{"agreement", "--labels", "testdata/agreement_sirt_k1.csv", "--scheme", "ordinal:0..3", "--only", "coefficients", "--json"}, c.args...)); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errb)
		}
		var d struct {
			Bootstrap   float64        `json:"bootstrap"`
			FleissKappa map[string]any `json:"fleiss_kappa"`
		}
		if err := json.Unmarshal(out.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if d.Bootstrap != c.boot || d.FleissKappa["ci_method"] != c.method {
			t.Errorf("%v: bootstrap %v, ci_method %v; want %v, %s", c.args, d.Bootstrap, d.FleissKappa["ci_method"], c.boot, c.method)
		}
	}
}

// TestAgreementCommandCrowdKitOptions runs crowd-kit's toy fixture with
// the options a crowd-kit user sets (--ties first, --ds-restarts 0,
// --ds-gold with the items file's gold, --ds-iter 10, --ds-init with
// --ds-init-strategy addition) and compares the new aggregators' and
// Dawid-Skene's classes with crowd-kit 1.4.1's own
// (raters/testdata/reference_crowdkit_options.csv, made by
// make_reference_crowdkit_options.py).
func TestAgreementCommandCrowdKitOptions(t *testing.T) {
	ref := map[string]string{} // case/item -> class
	for _, r := range testutil.ReadCSV(t, "../../raters/testdata/reference_crowdkit_options.csv")[1:] {
		if r[1] == "item" && r[3] == "label" {
			ref[r[0]+"/"+r[2]] = r[4]
		}
	}
	td := "../../raters/testdata/"
	base := []string{"agreement", "--labels", td + "crowdkit_toy.csv", "--items", td + "crowdkit_toy_gold.csv", "--scheme", "nominal:no,yes",
		"--bootstrap", "0", "--ties", "first", "--only", "aggregators", "--json"}
	run1 := func(extra ...string) map[string]map[string]any {
		t.Helper()
		e, out, errb := testEnv()
		if code := run(context.Background(), e, append(append([]string{}, base...), extra...)); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errb)
		}
		var doc struct {
			Aggregators map[string]map[string]any `json:"aggregators"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Aggregators
	}
	check := func(aggs map[string]map[string]any, agg, refCase string) {
		t.Helper()
		items, _ := aggs[agg]["items"].([]any)
		if len(items) != 5 {
			t.Fatalf("%s: %d items", agg, len(items))
		}
		for _, it := range items {
			m := it.(map[string]any)
			if want := ref[refCase+"/"+m["id"].(string)]; m["label"] != want {
				t.Errorf("%s item %v: %v, crowd-kit (%s) %s", agg, m["id"], m["label"], refCase, want)
			}
		}
	}
	aggs := run1("--ds-gold", "--ds-iter", "10")
	check(aggs, "zero_based_skill", "zbs_toy")
	check(aggs, "gold_majority", "gold_toy")
	check(aggs, "dawid_skene", "ds_gold_toy")
	aggs = run1("--ds-iter", "10", "--ds-init", td+"crowdkit_init_addition_t2.csv", "--ds-init-strategy", "addition")
	check(aggs, "dawid_skene", "ds_addition_t2")

	bad := filepath.Join(t.TempDir(), "init.csv")
	if err := os.WriteFile(bad, []byte("rater,true,label,value\nw1,no,maybe,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runFailsAll(t, base, []failCase{
		{[]string{"--ds-init", bad}, "init.csv: row 2, column 3: \"maybe\" is not a category of the scheme"},
		{[]string{"--ds-init-strategy", "merge"}, "--ds-init-strategy \"merge\": expected assign or addition"},
		{[]string{"--ds-iter", "-1"}, "--ds-iter and --ds-tol must be at least 0"},
	})
}
