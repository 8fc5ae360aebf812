package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"concord/multirater"
)

// TestFitConfusion: concord fit --model confusion on 40 RTE items (10 AMT
// labels each) fits by variational Bayes by default (and by Gibbs with
// --engine gibbs) and writes every rater's confusion matrix with intervals,
// accuracy and spam score; settings it does not use are refused.
func TestFitConfusion(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args   []string
		engine string
	}{
		{nil, multirater.EngineVB},
		{[]string{"--engine", "gibbs", "--samples", "300", "--burnin", "100", "--chains", "2"}, multirater.EngineGibbs},
	} {
		out := filepath.Join(dir, tc.engine+".json")
		args := append([]string{"fit", "--labels", "testdata/fit_rte40_ratings.csv", "--scheme", "binary:0,1,pos=1", "--model", "confusion", "--out", out}, tc.args...)
		code, stdout, stderr := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", tc.engine, code, stdout, stderr)
		}
		if !strings.Contains(stdout+stderr, "Rater accuracies") {
			t.Errorf("%s: output lacks the rater accuracies:\n%s%s", tc.engine, stdout, stderr)
		}
		res := readFitDoc(t, out)
		if res.Model.Model != "confusion" || res.Model.Engine != tc.engine || res.Model.Kernel != "identity" || len(res.Items) != 40 || len(res.ClassProportions) != 2 {
			t.Fatalf("%s: model %q engine %q kernel %q, %d items, %d class proportions", tc.engine, res.Model.Model, res.Model.Engine, res.Model.Kernel, len(res.Items), len(res.ClassProportions))
		}
		for _, r := range res.Raters {
			if len(r.ConfusionProbs) != 2 || r.Accuracy == nil || r.SpamScore == nil {
				t.Fatalf("%s: rater %s: %+v", tc.engine, r.ID, r)
			}
			for _, row := range r.ConfusionProbs {
				if s := row[0].Mean + row[1].Mean; s < 0.999 || s > 1.001 {
					t.Errorf("%s: rater %s: row sums to %v", tc.engine, r.ID, s)
				}
			}
		}
		if tc.engine == multirater.EngineVB && res.Diagnostics.Engine.LogEvidence == nil {
			t.Error("vb: no ELBO")
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kernel", "text"}, "kernel text needs item texts"},
		{[]string{"--kernel", "ard"}, "give them for the confusion model"},
		{[]string{"--hierarchy", "deep"}, `unknown hierarchy "deep"`},
		{[]string{"--engine", "ep"}, `engine "ep": the confusion model is fitted by vb or gibbs`},
	} {
		args := append([]string{"fit", "--labels", "testdata/fit_rte40_ratings.csv", "--scheme", "binary:0,1,pos=1", "--model", "confusion", "--out", filepath.Join(dir, "x.json")}, tc.args...)
		code, stdout, stderr := runCmd(t, args...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q (want %q)\n%s", tc.args, code, stderr, tc.want, stdout)
		}
	}
}

// TestFitConfusionTextKernel: with --kernel text the confusion model's
// classes get the multinomial-probit GP prior on the items' texts; the
// result records the kernel and its prior, and concord predict predicts a
// new item from its text.
func TestFitConfusionTextKernel(t *testing.T) {
	res, out := fitDoc(t, "--labels", "testdata/fit_rte40_ratings.csv", "--items", "testdata/fit_rte40_items.csv",
		"--scheme", "binary:0,1,pos=1", "--model", "confusion", "--kernel", "text")
	pb := res.Model.Confusion.Probit
	if res.Model.Kernel != "text" || pb == nil || len(pb.Targets) != len(res.Items) || res.Diagnostics.LogEvidence == nil || !res.Diagnostics.Converged {
		t.Fatalf("kernel %q, probit %+v, verdict %s", res.Model.Kernel, pb, res.Diagnostics.Verdict)
	}
	items := filepath.Join(filepath.Dir(out), "new.csv")
	if err := os.WriteFile(items, []byte("item_id,text\nn1,The government announced that it plans to raise oil prices.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "predict", "--fit", out, "--items", items, "--out", "-")
	if code != 0 || !strings.Contains(stdout, `"class_probs"`) {
		t.Fatalf("predict: exit %d\n%s%s", code, stdout, stderr)
	}
}
