package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"concord/analysis"
	"concord/internal/testutil"
	"concord/multirater"
)

const (
	pimaTrItems  = "testdata/pima_tr_items.csv"
	pimaTrLabels = "testdata/pima_tr_labels.csv"
	pimaTeItems  = "testdata/pima_te_items.csv"
	pimaTeLabels = "testdata/pima_te_labels.csv"
)

// pimaTestLabels reads Pima.te's labels by item id (true: Yes).
func pimaTestLabels(t *testing.T) map[string]bool {
	t.Helper()
	recs := testutil.ReadCSV(t, pimaTeLabels)
	out := map[string]bool{}
	for _, r := range recs[1:] {
		out[r[0]] = r[2] == "Yes"
	}
	return out
}

// TestFitAUCPima is the acceptance run of the auc model end to end:
// concord fit --model auc --standardize on Pima.tr, then concord predict
// on Pima.te, whose test AUC Ridgway et al. report as 0.8617 +- 0.010
// (linear scores, EP, gamma by cross-validation).
func TestFitAUCPima(t *testing.T) {
	dir := t.TempDir()
	fit := filepath.Join(dir, "pima.json")
	e, stdout, errb := testEnv()
	args := []string{"fit", "--labels", pimaTrLabels, "--items", pimaTrItems, "--scheme", "binary:No,Yes,pos=Yes", "--model", "auc", "--standardize", "--top", "5", "--out", fit}
	if code := run(context.Background(), e, args); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, errb)
	}
	for _, want := range []string{"Fitting the auc model (linear scores, gamma cv, gaussian prior) by expectation propagation", "Cross-validated AUC by gamma:",
		"Training AUC of the posterior mean scores: 0.8", "Coefficients (linear scores):", "glu ", "Top 5 of the ranking (of 200 items"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("fit summary: no %q:\n%s", want, stdout)
		}
	}
	var res multirater.FitResult
	testutil.ReadJSON(t, fit, &res)
	if res.Model.Model != "auc" || res.AUC == nil || !res.AUC.GammaByCV || len(res.Coefficients) != 7 || res.Features == nil || len(res.Features.X) != 200 {
		t.Fatalf("fit document: model %+v", res.Model)
	}
	out, summary, _ := runOut(t, "pred.json", "predict", "--fit", fit, "--items", pimaTeItems)
	summaryHas(t, summary, "Predicted 332 item(s) with the auc model (linear scores)")
	var p analysis.Predictions
	testutil.ReadJSON(t, out, &p)
	labels := pimaTestLabels(t)
	s := make([]float64, len(p.Items))
	y := make([]bool, len(p.Items))
	for i, it := range p.Items {
		if it.Score == nil || !(it.Score.SD > 0) {
			t.Fatalf("prediction %+v", it)
		}
		s[i], y[i] = it.Score.Mean, labels[it.ID]
	}
	a := testutil.MannWhitney(s, y)
	if p.Gold == nil || math.Abs(p.Gold.AUC-a) > 1e-12 || !strings.Contains(summary, fmt.Sprintf("AUC of the scores against the items' gold labels: %.4f (332 items, 109 positive)", a)) {
		t.Errorf("predictions' gold check %+v, want AUC %v; summary:\n%s", p.Gold, a, summary)
	}
	t.Logf("Pima.te test AUC %.4f with gamma %g (Ridgway et al.: 0.8617 +- 0.010)", a, res.AUC.Gamma)
	if a < 0.84 || a > 0.88 {
		t.Errorf("Pima.te test AUC %.4f, want 0.8617 +- 0.02", a)
	}
}

// TestFitAUCFlags: the auc flags reach the stored settings; wrong ones are
// refused with precise messages.
func TestFitAUCFlags(t *testing.T) {
	dir := t.TempDir()
	fit := filepath.Join(dir, "pima.json")
	e, _, errb := testEnv()
	start := time.Now()
	args := []string{"fit", "--labels", pimaTrLabels, "--items", pimaTrItems, "--scheme", "binary:No,Yes,pos=Yes", "--model", "auc",
		"--gamma", "30", "--prior", "spike-slab", "--prior-scale", "2", "--covariates", "glu,bmi,ped,age", "--seed", "7", "--out", fit}
	if code := run(context.Background(), e, args); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, errb)
	}
	t.Logf("spike-and-slab fit in %s", time.Since(start))
	var res multirater.FitResult
	testutil.ReadJSON(t, fit, &res)
	a := res.AUC
	if a.Gamma != 30 || a.GammaByCV || a.Prior != "spike-slab" || a.PriorScale != 2 || strings.Join(a.Covariates, ",") != "glu,bmi,ped,age" || res.Model.Seed != 7 || a.Center != nil {
		t.Errorf("auc settings %+v, seed %d", a, res.Model.Seed)
	}
	for _, c := range res.Coefficients {
		if !(c.Inclusion > 0 && c.Inclusion <= 1) {
			t.Errorf("coefficient %+v: inclusion not a probability", c)
		}
	}
	runFailsAll(t, []string{"fit", "--labels", pimaTrLabels, "--items", pimaTrItems, "--scheme", "binary:No,Yes,pos=Yes", "--out", filepath.Join(dir, "x.json")}, []failCase{
		{[]string{"--model", "auc", "--gamma", "warm"}, `--gamma = "warm": expected a number from 0.001 to 10000 or cv`},
		{[]string{"--model", "auc", "--scores", "tree"}, `scores "tree": expected linear`},
		{[]string{"--model", "auc", "--engine", "laplace"}, `the auc model is fitted by ep or smc`},
		{[]string{"--model", "auc", "--kernel", "rbf:gamma=1"}, "is for gp scores"},
		{[]string{"--model", "auc", "--covariates", "glu,insulin"}, `covariate "insulin" is not a numeric item column`},
		{[]string{"--model", "robust", "--prior", "gaussian"}, "prior is not a setting of the robust model fitted by ep"},
	})
	// Labels without an items file: the covariates are missing.
	e, _, errb = testEnv()
	if code := run(context.Background(), e, []string{"fit", "--labels", pimaTrLabels, "--scheme", "binary:No,Yes,pos=Yes", "--model", "auc", "--out", filepath.Join(dir, "x.json")}); code == 0 ||
		!strings.Contains(errb.String(), "the auc model scores items by their numeric covariates") || !strings.Contains(errb.String(), "--items") {
		t.Errorf("no items file: exit %d: %s", code, errb)
	}
}

// TestEvalAUC: concord eval --model auc prints the table of test AUCs and
// writes the JSON document.
func TestEvalAUC(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "eval.json")
	e, stdout, errb := testEnv()
	args := []string{"eval", "--labels", pimaTrLabels, "--items", pimaTrItems, "--scheme", "binary:No,Yes,pos=Yes", "--model", "auc",
		"--gamma", "30", "--standardize", "--folds", "4", "--seed", "3", "--out", out}
	if code := run(context.Background(), e, args); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errb)
	}
	var res analysis.AUCEvalResult
	testutil.ReadJSON(t, out, &res)
	if res.Schema != analysis.AUCEvalSchema || res.Folds != 4 || res.Items != 200 || len(res.Models) != 3 {
		t.Fatalf("eval document %+v", res)
	}
	for _, m := range res.Models {
		if len(m.FoldAUC) != 4 || !(m.AUC > 0.7) {
			t.Errorf("model %+v", m)
		}
		line := ""
		for _, l := range strings.Split(stdout.String(), "\n") {
			if strings.HasPrefix(l, m.Name+" ") {
				line = l
			}
		}
		if line == "" || !strings.Contains(line, fmt.Sprintf("%9.4f %8.4f", m.AUC, m.SE)) {
			t.Errorf("table: no row for %s with its AUC %.4f:\n%s", m.Name, m.AUC, stdout)
		}
	}
	if !strings.Contains(stdout.String(), "4 folds of 200 items (68 positive)") {
		t.Errorf("eval summary:\n%s", stdout)
	}
}
