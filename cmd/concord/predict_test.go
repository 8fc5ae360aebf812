package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"concord/analysis"
	"concord/internal/testutil"
	"concord/multirater"
)

// The essay sample of package analysis's tests (157 ASAP set 7 essays, two
// raters, with the resolved score as a numeric column; see
// analysis/testdata/README.md).
const (
	essayItems   = "../../analysis/testdata/asap7_items.csv"
	essayRatings = "../../analysis/testdata/asap7_ratings.csv"
)

// splitEssays writes the first 120 essays' ratings and the last 37 essays
// (37, as new items, with their resolved score) to files in dir.
func splitEssays(t *testing.T, dir string) (ratings, newItems string) {
	t.Helper()
	write := func(path string, recs [][]string) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(f)
		w.WriteAll(recs)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	items := testutil.ReadCSV(t, essayItems)
	held := map[string]bool{}
	newRecs := [][]string{items[0]}
	for _, r := range items[121:] {
		held[r[0]] = true
		newRecs = append(newRecs, r)
	}
	rat := testutil.ReadCSV(t, essayRatings)
	trainRecs := [][]string{rat[0]}
	for _, r := range rat[1:] {
		if !held[r[0]] {
			trainRecs = append(trainRecs, r)
		}
	}
	ratings, newItems = filepath.Join(dir, "ratings.csv"), filepath.Join(dir, "new.csv")
	write(ratings, trainRecs)
	write(newItems, newRecs)
	return ratings, newItems
}

// TestFitPredictText fits the essays with the default kernel (text, since
// the items have texts; resolved_score not read) and predicts new essays
// from the saved result.
func TestFitPredictText(t *testing.T) {
	dir := t.TempDir()
	ratings, newItems := splitEssays(t, dir)
	fit := filepath.Join(dir, "fit.json")
	e, stdout, errb := testEnv()
	args := []string{"fit", "--labels", ratings, "--items", essayItems, "--scheme", "ordinal:0..12",
		"--engine", "gibbs", "--chains", "2", "--samples", "100", "--burnin", "60", "--keep-draws", "50", "--seed", "3", "--top", "0", "--out", fit}
	if code := run(context.Background(), e, args); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, errb)
	}
	if !strings.Contains(stdout.String(), "(kernel text,") || !strings.Contains(stdout.String(), "text featuriser:") {
		t.Errorf("fit summary:\n%s", stdout)
	}
	var res multirater.FitResult
	testutil.ReadJSON(t, fit, &res)
	if res.Model.Kernel != "text" || res.Features == nil || len(res.Features.Covariates) != 0 || len(res.Features.Terms) != 157 {
		t.Fatalf("fit result: kernel %s, features %v", res.Model.Kernel, res.Features != nil)
	}

	out, summary, _ := runOut(t, "pred.json", "predict", "--fit", fit, "--items", newItems)
	summaryHas(t, summary, "Predicted 37 item(s) with the ordinal model (kernel text)", "resolved_score are not used")
	var p analysis.Predictions
	testutil.ReadJSON(t, out, &p)
	if p.Schema != analysis.PredictionsSchema || len(p.Items) != 37 || len(p.Levels) != 13 {
		t.Fatalf("predictions: %s, %d items", p.Schema, len(p.Items))
	}
	for _, it := range p.Items {
		if it.Score == nil || it.Grade == "" || len(it.RaterGradeProbs) != 2 || it.NLabels != 0 {
			t.Errorf("prediction %+v", it)
		}
	}
	// To standard output by default; the same predictions.
	e, stdout, errb = testEnv()
	if code := run(context.Background(), e, []string{"predict", "--fit", fit, "--items", newItems}); code != 0 {
		t.Fatalf("predict: exit %d: %s", code, errb)
	}
	var again analysis.Predictions
	if err := json.Unmarshal(stdout.Bytes(), &again); err != nil || !reflect.DeepEqual(again, p) {
		t.Errorf("predictions on stdout differ (%v)", err)
	}

	// Mistakes.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"predict", "--fit", fit}, "--items FILE are required"},
		{[]string{"predict", "--fit", essayItems, "--items", newItems}, "not a fit result"},
		{[]string{"predict", "--fit", fit, "--items", filepath.Join(dir, "none.csv")}, "no such file"},
		{[]string{"fit", "--labels", ratings, "--items", essayItems, "--scheme", "ordinal:0..12", "--kernel", "text+linear", "--out", "-"}, "name the covariate columns"},
		{[]string{"fit", "--labels", ratings, "--items", essayItems, "--scheme", "ordinal:0..12", "--kernel", "identity", "--stem", "--out", "-"}, "no text term"},
	} {
		runFails(t, tc.args, tc.msg)
	}
}

// TestEvalCommand runs a tiny cross-validation and checks the document.
func TestEvalCommand(t *testing.T) {
	out, summary, stderr := runOut(t, "eval.json", "eval", "--labels", essayRatings, "--items", essayItems, "--scheme", "ordinal:0..12",
		"--folds", "2", "--engine", "gibbs", "--samples", "40", "--burnin", "30", "--keep-draws", "20", "--rater-baselines", "1")
	summaryHas(t, summary, "Evaluating the ordinal model (kernel text)", "2-fold cross-validation", "6 fits over 2 folds of 157 labelled items", "qwk rater1", "multirater", "rater:rater1", "Wrote "+out)
	if !strings.Contains(stderr, "concord eval: 1 of 2 folds done") || strings.Count(stderr, "2 of 2 folds done") != 1 {
		t.Errorf("fold lines on stderr:\n%s", stderr)
	}
	var doc map[string]json.RawMessage
	testutil.ReadJSON(t, out, &doc)
	var keys []string
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"folds", "models"}) || string(doc["folds"]) != "2" {
		t.Fatalf("document keys %v, folds %s", keys, doc["folds"])
	}
	var models []analysis.EvalModel
	if err := json.Unmarshal(doc["models"], &models); err != nil {
		t.Fatal(err)
	}
	if len(models) != 3 || models[0].Name != "multirater" || models[1].Name != "majority" || models[2].Name != "rater:rater1" {
		t.Errorf("models %+v", models)
	}
	if code, _, stderr := runCmd(t, "eval", "--labels", essayRatings, "--items", essayItems, "--scheme", "ordinal:0..12", "--folds", "1", "--out", "-"); code == 0 || !strings.Contains(stderr, "--folds 1: expected at least 2") {
		t.Errorf("--folds 1: exit %d, %s", code, stderr)
	}
}

// TestFitPredictTextColumns fits RTE pairs with a kernel term per column
// (the premise as the item text, the hypothesis as its own text) and
// predicts items of the same file from the saved result.
func TestFitPredictTextColumns(t *testing.T) {
	dir := t.TempDir()
	fit := filepath.Join(dir, "fit.json")
	const items, ratings = "../../analysis/testdata/rte_items.csv", "../../analysis/testdata/rte_ratings.csv"
	e, stdout, errb := testEnv()
	args := []string{"fit", "--labels", ratings, "--items", items, "--scheme", "binary:0,1,pos=1", "--model", "classification",
		"--kernel", "text+text:hypothesis", "--min-df", "2", "--chains", "2", "--samples", "60", "--burnin", "40", "--keep-draws", "30", "--seed", "3", "--top", "0", "--out", fit}
	if code := run(context.Background(), e, args); code != 0 {
		t.Fatalf("fit: exit %d: %s", code, errb)
	}
	if !strings.Contains(stdout.String(), `text featuriser of column "hypothesis":`) {
		t.Errorf("fit summary:\n%s", stdout)
	}
	var res multirater.FitResult
	testutil.ReadJSON(t, fit, &res)
	if res.Model.Kernel != "text+text:hypothesis" || res.Features == nil || len(res.Features.TextColumns) != 1 ||
		len(res.Features.TextColumns[0].Terms) != len(res.Items) || len(res.Features.Terms) != len(res.Items) {
		t.Fatalf("fit result: kernel %s, features %+v", res.Model.Kernel, res.Features != nil)
	}
	e, stdout, errb = testEnv()
	if code := run(context.Background(), e, []string{"predict", "--fit", fit, "--items", items}); code != 0 {
		t.Fatalf("predict: exit %d: %s", code, errb)
	}
	var p analysis.Predictions
	if err := json.Unmarshal(stdout.Bytes(), &p); err != nil || len(p.Items) != len(res.Items) || p.Kernel != "text+text:hypothesis" {
		t.Fatalf("predictions: %v, %d items, kernel %s", err, len(p.Items), p.Kernel)
	}
	// The fitted items, predicted afresh, mostly get their fitted class.
	fitted := map[string]string{}
	for _, it := range res.Items {
		fitted[it.ID] = it.Class
	}
	same := 0
	for _, it := range p.Items {
		if it.Class == fitted[it.ID] {
			same++
		}
	}
	if same < len(p.Items)*3/4 {
		t.Errorf("only %d of %d fitted items predicted as their consensus class", same, len(p.Items))
	}
	// Cross-validated, with the paired comparison of the nominal metrics.
	evalOut := filepath.Join(dir, "eval.json")
	e, stdout, errb = testEnv()
	if code := run(context.Background(), e, []string{"eval", "--labels", ratings, "--items", items, "--scheme", "binary:0,1,pos=1", "--model", "classification",
		"--kernel", "text+text:hypothesis", "--folds", "2", "--samples", "40", "--burnin", "30", "--keep-draws", "20", "--rater-baselines", "none", "--out", evalOut}); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errb)
	}
	if !strings.Contains(stdout.String(), "exact McNemar test") || !strings.Contains(stdout.String(), "majority               accuracy_vs_majority") {
		t.Errorf("eval summary:\n%s", stdout)
	}
	var doc analysis.EvalResult
	testutil.ReadJSON(t, evalOut, &doc)
	if len(doc.Paired) != 2 || doc.Paired[0].Baseline != "majority" || doc.Paired[0].Items == 0 {
		t.Errorf("paired comparisons %+v", doc.Paired)
	}

	// A column the items do not have.
	e, _, errb = testEnv()
	args[len(args)-1] = "-"
	for i, a := range args {
		if a == "text+text:hypothesis" {
			args[i] = "text:premise"
		}
	}
	if code := run(context.Background(), e, args); code == 0 || !strings.Contains(errb.String(), `column "premise"`) {
		t.Errorf("unknown column: exit %d, stderr %q", code, errb)
	}
}
