package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
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
