package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"concord/analysis"
	"concord/internal/testutil"
	"concord/multirater"
)

func TestFitCommandFiles(t *testing.T) {
	args := []string{"fit", "--labels", "testdata/fit_toy_ratings.csv", "--items", "testdata/fit_toy_items.csv", "--scheme", "ordinal:1..5",
		"--kernel", "rbf:gamma=1", "--engine", "gibbs", "--chains", "2", "--samples", "300", "--burnin", "200", "--seed", "5", "--top", "3"}
	out, summary, _ := runOut(t, "fit.json", args...)
	summaryHas(t, summary, "Fitting the ordinal model (kernel rbf:gamma=1", "44 items, 4 raters, 160 labels", "Top 3 of the consensus ranking", "Rater precisions", "Wrote "+out)
	if !strings.Contains(summary, "Converged:") && !strings.Contains(summary, "WARNING: the chains have NOT converged") {
		t.Errorf("summary has no verdict:\n%s", summary)
	}
	var res multirater.FitResult
	testutil.ReadJSON(t, out, &res)
	if res.Schema != "concord.fit/v1" || res.Model.Kernel != "rbf:gamma=1" || res.Model.Seed != 5 || res.Model.Chains != 2 || res.Model.Scheme != "ordinal:1..5" {
		t.Errorf("model %+v", res.Model)
	}
	if len(res.Items) != 44 || len(res.Raters) != 4 {
		t.Fatalf("%d items, %d raters", len(res.Items), len(res.Raters))
	}
	unrated := 0
	for _, it := range res.Items {
		if it.NLabels == 0 {
			unrated++
			if it.Grade == "" || len(it.GradeProbs) != 5 || it.Score == nil {
				t.Errorf("unrated item %s not predicted: %+v", it.ID, it)
			}
		}
	}
	if unrated != 4 {
		t.Errorf("%d unrated items, want 4", unrated)
	}

	// JSON on standard output, summary on standard error; bit-for-bit
	// reproducible.
	e, stdout, errb := testEnv()
	if code := run(context.Background(), e, append(args, "--out", "-")); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var again multirater.FitResult
	if err := json.Unmarshal(stdout.Bytes(), &again); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errb.String(), "Rater precisions") {
		t.Errorf("summary not on standard error: %s", errb)
	}
	res.Diagnostics.Seconds, res.Diagnostics.SamplingSeconds, res.Diagnostics.SweepsPerSecond, res.Diagnostics.ESSPerCPUSecond = 0, 0, 0, 0
	again.Diagnostics.Seconds, again.Diagnostics.SamplingSeconds, again.Diagnostics.SweepsPerSecond, again.Diagnostics.ESSPerCPUSecond = 0, 0, 0, 0
	a, _ := json.Marshal(res)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Error("two runs with the same seed differ")
	}
}

func TestFitCommandProject(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "f.db")
	e, _, errb := testEnv()
	if code := run(context.Background(), e, []string{"import", "--db", dbPath, "--project", "essays", "--scheme", "ordinal:0..3", "--yes", "--where", "criterion=k1", "testdata/agreement_sirt_k1.csv"}); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errb)
	}
	out, summary, _ := runOut(t, "k1.json", "fit", "--db", dbPath, "--project", "essays", "--engine", "gibbs", "--identifiability", "both", "--chains", "2", "--samples", "300", "--burnin", "200")
	summaryHas(t, summary, "project essays: 40 items", "(reference, fixed)")
	var res multirater.FitResult
	testutil.ReadJSON(t, out, &res)
	if res.Model.Identifiability != "both" || res.Model.RefRater == "" || len(res.Items) != 40 {
		t.Errorf("model %+v, %d items", res.Model, len(res.Items))
	}
}

func TestFitCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"fit", "--out", "x.json"}, "either --project NAME or --labels FILE"},
		{[]string{"fit", "--labels", "testdata/fit_toy_ratings.csv", "--scheme", "ordinal:1..5"}, "--out is required"},
		{[]string{"fit", "--labels", "testdata/fit_toy_ratings.csv", "--scheme", "ordinal:1..5", "--model", "classification", "--out", "-"}, "needs a nominal or binary scheme"},
		{[]string{"fit", "--labels", "testdata/fit_toy_ratings.csv", "--scheme", "nominal:1,2,3,4,5", "--model", "ordinal", "--out", "-"}, "needs an ordinal scheme"},
		{[]string{"fit", "--labels", "testdata/fit_toy_ratings.csv", "--scheme", "ordinal:1..5", "--kernel", "rbf", "--out", "-"}, "needs numeric item covariates"},
		{[]string{"fit", "--labels", "testdata/fit_toy_ratings.csv", "--scheme", "ordinal:1..5", "--sampler", "hmc", "--out", "-"}, "unknown sampler"},
		{[]string{"fit", "--labels", "testdata/fit_toy_ratings.csv", "--scheme", "ordinal:1..5", "--chains", "0", "--out", "-"}, "--chains = 0: expected an integer from 1 to 64"},
	} {
		runFails(t, tc.args, tc.msg)
	}
}

// TestFitShortChains: one chain of 3 draws is too short for split R-hat:
// the summary and the result say R-hat is not available (issue 19 item 10:
// "max R-hat 1000000.0000" and "samples 4"), the result file is written
// with max_rhat null, and one draw in all is refused up front (it failed
// writing the result: "json: unsupported value: NaN").
func TestFitShortChains(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fit.json")
	e, stdout, errb := testEnv()
	args := []string{"fit", "--labels", "testdata/fit_toy_ratings.csv", "--scheme", "ordinal:1..5", "--engine", "gibbs", "--chains", "1", "--samples", "3", "--burnin", "10", "--out", out}
	if code := run(context.Background(), e, args); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, want := range []string{"R-hat is not available (each chain kept 3 draw(s); split R-hat needs at least 4 per chain)", "samples, e.g. 200", "several chains (chains, e.g. 4)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout.String(), "1000000") {
		t.Errorf("summary shows R-hat 1000000:\n%s", stdout)
	}
	var raw struct {
		Diagnostics struct {
			MaxRhat    *float64 `json:"max_rhat"`
			Parameters []struct {
				Rhat *float64 `json:"rhat"`
			} `json:"parameters"`
		} `json:"diagnostics"`
	}
	testutil.ReadJSON(t, out, &raw)
	if raw.Diagnostics.MaxRhat != nil || len(raw.Diagnostics.Parameters) == 0 || raw.Diagnostics.Parameters[0].Rhat != nil {
		t.Errorf("max_rhat %v, parameters %v: want null R-hats", raw.Diagnostics.MaxRhat, raw.Diagnostics.Parameters)
	}
	var res multirater.FitResult
	testutil.ReadJSON(t, out, &res)
	if !math.IsNaN(res.Diagnostics.MaxRhat) {
		t.Errorf("max R-hat read back as %v, want NaN (not available)", res.Diagnostics.MaxRhat)
	}

	e, _, errb = testEnv()
	args[slices.Index(args, "--samples")+1] = "1"
	if code := run(context.Background(), e, args); code == 0 || !strings.Contains(errb.String(), "chains = 1 and samples = 1: one draw has no posterior spread") {
		t.Errorf("one draw: exit %d, stderr %q", code, errb)
	}
}

// TestFitModelFollowsScheme: without --model, concord fit fits the model
// that suits the labels' scheme, as the API does (issue 19 item 10: the CLI
// fitted the ordinal model to binary labels): the confusion model for
// nominal labels without item texts (issue 29; --model classification
// still fits the classification model), the bounded model (EP) for bounded
// ones, also when the scheme is inferred from the file.
func TestFitModelFollowsScheme(t *testing.T) {
	dir := t.TempDir()
	bounded := filepath.Join(dir, "sliders.csv")
	var b strings.Builder
	b.WriteString("item_id,rater_id,label\n")
	for i := 0; i < 6; i++ {
		for r := 0; r < 3; r++ {
			fmt.Fprintf(&b, "i%d,r%d,%d\n", i, r, (17*i+29*r)%101)
		}
	}
	if err := os.WriteFile(bounded, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--labels", "testdata/fit_toy_ratings.csv", "--scheme", "nominal:1,2,3,4,5"}, "Fitting the confusion model"},
		{[]string{"--labels", "testdata/fit_toy_ratings.csv", "--scheme", "nominal:1,2,3,4,5", "--model", "classification", "--samples", "50", "--burnin", "20"}, "Fitting the classification model"},
		{[]string{"--labels", bounded, "--scheme", "bounded:0..100"}, "Fitting the bounded model (kernel identity) by expectation propagation"},
		{[]string{"--labels", bounded}, "Fitting the bounded model"},
	} {
		out := filepath.Join(dir, "fit.json")
		code, stdout, stderr := runCmd(t, append(append([]string{"fit"}, tc.args...), "--out", out)...)
		if code != 0 || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("%v: exit %d, want %q in\n%s%s", tc.args, code, tc.want, stdout, stderr)
		}
	}
}

// TestFitRobust: concord fit --model robust on 40 RTE items (10 AMT labels
// each) writes every label's p_error, each rater's error rate with its EM
// history, the log evidence and, with --select, the evidence of both
// models (the robust one also with its error rates integrated out) and the
// choice; bad settings are refused with the field named.
func TestFitRobust(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "robust.json")
	code, stdout, stderr := runCmd(t, "fit", "--labels", "testdata/fit_rte40_ratings.csv", "--scheme", "binary:0,1,pos=1",
		"--model", "robust", "--kernel", "identity", "--select", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"Fitting the robust model (kernel identity) by expectation propagation", "Model selection by the evidence: plain", "Labelling-error rates", "labels most probably wrong"} {
		if !strings.Contains(stdout+stderr, want) {
			t.Errorf("output lacks %q:\n%s%s", want, stdout, stderr)
		}
	}
	res := readFitDoc(t, out)
	d := res.Diagnostics
	if res.Model.Model != "robust" || res.Model.Output != multirater.OutputClasses || len(res.Items) != 40 || len(res.LabelErrors) != 400 ||
		d.LogEvidence == nil || (d.Selected != "plain" && d.Selected != "robust") || len(d.Evidence) != 3 {
		t.Fatalf("result: model %q output %q, %d items, %d label errors, log evidence %v, selected %q, evidence %v",
			res.Model.Model, res.Model.Output, len(res.Items), len(res.LabelErrors), d.LogEvidence, d.Selected, d.Evidence)
	}
	for i, le := range res.LabelErrors {
		if !(le.PError >= 0 && le.PError <= 1) || (i > 0 && le.PError > res.LabelErrors[i-1].PError) {
			t.Fatalf("label error %d: %+v (want probabilities, most probable first)", i, le)
		}
	}
	for _, r := range res.Raters {
		if r.Epsilon == nil || !(r.Epsilon.Value >= 0 && r.Epsilon.Value < 0.5) {
			t.Fatalf("rater %s: epsilon %+v", r.ID, r.Epsilon)
		}
		if d.Selected == "robust" && len(r.Epsilon.History) < 2 {
			t.Errorf("rater %s: EM history %v", r.ID, r.Epsilon.History)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--epsilon", "often"}, `--epsilon "often": expected learn or a labelling-error rate`},
		{[]string{"--epsilon", "0.7"}, "--epsilon = 0.7: expected a labelling-error rate from 0 up to (not including) 0.5"},
		{[]string{"--epsilon", "0.1", "--select"}, "select compares the plain model with the robust one"},
		{[]string{"--em", "fast"}, `em "fast": expected tilted or paper`},
		{[]string{"--engine", "gibbs"}, `engine "gibbs": the robust model is fitted by ep`},
	} {
		args := append([]string{"fit", "--labels", "testdata/fit_rte40_ratings.csv", "--scheme", "binary:0,1,pos=1", "--model", "robust", "--out", out}, tc.args...)
		if code, stdout, stderr := runCmd(t, args...); code == 0 || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("%v: exit %d, want %q in\n%s%s", tc.args, code, tc.want, stdout, stderr)
		}
	}
}

// TestFitRobustPositiveFirst: with the positive class listed first in the
// scheme, the robust fit's levels and per-level counts follow the scheme's
// order, and the report builds.
func TestFitRobustPositiveFirst(t *testing.T) {
	res, out := fitDoc(t, "--labels", "testdata/fit_rte40_ratings.csv", "--scheme", "binary:1,0,pos=1",
		"--model", "robust", "--kernel", "identity", "--epsilon", "0.1")
	dir := filepath.Dir(out)
	if !slices.Equal(res.Levels, []string{"1", "0"}) || res.Model.Robust == nil || res.Model.Robust.Positive != "1" {
		t.Fatalf("levels %v, model.robust %+v", res.Levels, res.Model.Robust)
	}
	ones := map[string]int{}
	for _, it := range res.Items {
		for r, l := range it.Labels {
			if l == "1" {
				ones[r]++
			}
		}
	}
	for _, r := range res.Raters {
		if r.LevelCounts[0] != ones[r.ID] || r.LevelCounts[0]+r.LevelCounts[1] != r.NLabels {
			t.Errorf("rater %s: label counts %v, %d labels 1 of %d", r.ID, r.LevelCounts, ones[r.ID], r.NLabels)
		}
	}
	for _, it := range res.Items {
		if p := it.ClassProbs["1"]; (p > 0.5) != (it.Score.Mean > 0) {
			t.Fatalf("item %s: P(1) = %v with latent score %v", it.ID, p, it.Score.Mean)
		}
	}
	book := filepath.Join(dir, "robust.xlsx")
	if code, stdout, stderr := runCmd(t, "report", "--fit", out, "--out", book, "--bootstrap", "0"); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, stdout, stderr)
	}
}

// readFitDoc reads a fit document that a command wrote.
func readFitDoc(t *testing.T, path string) multirater.FitResult {
	t.Helper()
	return readJSONDoc[multirater.FitResult](t, path)
}

// readJSONDoc reads a JSON document that a command wrote.
func readJSONDoc[T any](t *testing.T, path string) T {
	t.Helper()
	var res T
	testutil.ReadJSON(t, path, &res)
	return res
}

// fitDoc runs concord fit with args and --out in a temporary folder and
// returns the fit document and its path.
func fitDoc(t *testing.T, args ...string) (multirater.FitResult, string) {
	t.Helper()
	out, _, _ := runOut(t, "fit.json", append([]string{"fit"}, args...)...)
	return readFitDoc(t, out), out
}

// TestEvalRobustSettings: concord eval takes the robust model's settings
// as concord fit does: --epsilon 0 evaluates the plain classifier, whose
// held-out log predictive on Pima.tr's labels differs from the robust one's
// at --epsilon 0.2 (both with --sigma 1, so that nothing is learnt), and a
// malformed value is refused naming the flag.
func TestEvalRobustSettings(t *testing.T) {
	eval := func(extra ...string) analysis.EvalResult {
		t.Helper()
		out, _, _ := runOut(t, "eval.json", append([]string{"eval", "--labels", pimaTrLabels, "--items", pimaTrItems, "--scheme", "binary:No,Yes,pos=Yes",
			"--model", "robust", "--kernel", "rbf:gamma=0.1", "--standardize", "--folds", "3", "--rater-baselines", "none"}, extra...)...)
		return readJSONDoc[analysis.EvalResult](t, out)
	}
	logPred := func(r analysis.EvalResult) float64 {
		m := r.Models[0].Metrics.MeanLogPred
		if r.Models[0].Name != "multirater" || m == nil {
			t.Fatalf("models %+v", r.Models)
		}
		return *m
	}
	robust, plain := logPred(eval("--epsilon", "0.2", "--sigma", "1")), logPred(eval("--epsilon", "0", "--sigma", "1"))
	if robust == plain {
		t.Errorf("--epsilon 0 and 0.2 gave the same mean log predictive %v", plain)
	}
	code, _, stderr := runCmd(t, "eval", "--labels", pimaTrLabels, "--scheme", "binary:No,Yes,pos=Yes", "--model", "robust", "--epsilon", "often", "--out", "-")
	if code == 0 || !strings.Contains(stderr, `--epsilon "often"`) {
		t.Errorf("--epsilon often: exit %d, %s", code, stderr)
	}
}

// TestFitWrongSchemeSaysSoFirst: a scheme the model cannot fit is refused
// before the fit is described as starting.
func TestFitWrongSchemeSaysSoFirst(t *testing.T) {
	code, stdout, stderr := runCmd(t, "fit", "--labels", "testdata/fit_rte40_ratings.csv", "--scheme", "ordinal:0..1",
		"--model", "robust", "--out", filepath.Join(t.TempDir(), "x.json"))
	if code == 0 || strings.Contains(stdout+stderr, "Fitting the") || !strings.Contains(stderr, "the robust model needs a binary scheme") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestFitOrdinalDefaultChoosesNoise: an ordinal fit that names no engine
// is fitted by EP (issue 29 item 4) and chooses the raters' noise model by
// the penalised evidence: the summary lists the candidates and the flags
// that force one, the document every candidate, the chosen one marked.
func TestFitOrdinalDefaultChoosesNoise(t *testing.T) {
	out, stdout, _ := runOut(t, "k1.json", "fit", "--labels", "testdata/agreement_sirt_k1.csv", "--where", "criterion=k1", "--scheme", "ordinal:0..3", "--seed", "3")
	summaryHas(t, stdout, "by expectation propagation", "shared-thresholds", "Force one with --noise and --kernel.")
	var res multirater.FitResult
	testutil.ReadJSON(t, out, &res)
	chosen := ""
	for _, c := range res.Diagnostics.ModelCandidates {
		if c.Chosen {
			chosen += c.Noise
		}
	}
	if res.Model.Engine != multirater.EngineEP || len(res.Diagnostics.ModelCandidates) != 3 || chosen == "" || chosen != res.Model.Noise {
		t.Errorf("engine %q, noise %q, %d candidates, chosen %q", res.Model.Engine, res.Model.Noise, len(res.Diagnostics.ModelCandidates), chosen)
	}
}
