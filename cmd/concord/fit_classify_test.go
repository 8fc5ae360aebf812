package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"concord/internal/testutil"
	"concord/multirater"
)

// TestFitClassificationFiles fits the classification model from label
// files: a nominal scheme (Fleiss' diagnoses, identity kernel, precisions
// fixed: appendix B) and a binary one (40 RTE pairs with their texts, the
// default text kernel, one item in the items file without labels).
func TestFitClassificationFiles(t *testing.T) {
	out, summary, _ := runOut(t, "fleiss.json", "fit", "--labels", "testdata/fit_fleiss_diagnoses.csv", "--scheme", "nominal:1,2,3,4,5", "--model", "classification",
		"--kernel", "identity", "--precisions", "fixed", "--chains", "2", "--samples", "300", "--burnin", "200", "--seed", "4", "--top", "3")
	summaryHas(t, summary, "Fitting the classification model (kernel identity", "30 items, 6 raters, 180 labels",
		"Consensus classes of 30 items", "Least certain 3 items", "Rater precisions", "(fixed)", "Wrote "+out)
	var res multirater.FitResult
	testutil.ReadJSON(t, out, &res)
	if res.Model.Model != "classification" || res.Model.Precisions != "fixed" || res.Model.Scheme != "nominal:1,2,3,4,5" || len(res.Levels) != 5 {
		t.Errorf("model %+v, levels %v", res.Model, res.Levels)
	}
	for _, it := range res.Items {
		if it.Class == "" || len(it.ClassProbs) != 5 || it.Entropy == nil || len(it.ArgmaxProbs) != 5 {
			t.Errorf("item %s: %+v", it.ID, it)
		}
	}
	for _, r := range res.Raters {
		if r.Precision.Mean != 1 || r.ConsensusAgreement == nil || len(r.Confusion) != 5 {
			t.Errorf("rater %s: %+v", r.ID, r)
		}
	}

	out, summary, _ = runOut(t, "rte.json", "fit", "--labels", "testdata/fit_rte40_ratings.csv", "--items", "testdata/fit_rte40_items.csv", "--scheme", "binary:0,1,pos=1",
		"--model", "classification", "--chains", "2", "--samples", "300", "--burnin", "200")
	summaryHas(t, summary, "41 items (1 without labels, predicted)")
	res = multirater.FitResult{}
	testutil.ReadJSON(t, out, &res)
	if res.Model.Kernel != "text" || res.Model.Precisions != "inferred" || len(res.Items) != 41 || res.Features == nil {
		t.Errorf("model %+v, %d items", res.Model, len(res.Items))
	}
	last := res.Items[40]
	if last.ID != "1324" || last.NLabels != 0 || len(last.ClassProbs) != 2 || last.Class == "" {
		t.Errorf("unlabelled item: %+v", last)
	}
}

// TestFitClassificationProject fits a binary project from the database.
func TestFitClassificationProject(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "c.db")
	e, _, errb := testEnv()
	if code := run(context.Background(), e, []string{"import", "--db", dbPath, "--project", "rte40", "--scheme", "binary:0,1,pos=1", "--yes", "testdata/fit_rte40_ratings.csv"}); code != 0 {
		t.Fatalf("import: exit %d: %s", code, errb)
	}
	out, summary, _ := runOut(t, "rte40.json", "fit", "--db", dbPath, "--project", "rte40", "--model", "classification", "--identifiability", "strong",
		"--chains", "2", "--samples", "300", "--burnin", "200")
	summaryHas(t, summary, "project rte40: 40 items", "(reference, fixed)")
	var res multirater.FitResult
	testutil.ReadJSON(t, out, &res)
	if res.Model.Identifiability != "strong" || res.Model.RefRater == "" || res.Model.Lambda != 0.1 || len(res.Items) != 40 {
		t.Errorf("model %+v, %d items", res.Model, len(res.Items))
	}
	e, _, errb = testEnv()
	if code := run(context.Background(), e, []string{"fit", "--db", dbPath, "--project", "rte40", "--model", "classification", "--precisions", "maybe", "--out", "-"}); code == 0 || !strings.Contains(errb.String(), "unknown precisions") {
		t.Errorf("bad --precisions: exit %d, %s", code, errb)
	}
	e, _, errb = testEnv()
	if code := run(context.Background(), e, []string{"fit", "--db", dbPath, "--project", "rte40", "--precisions", "fixed", "--out", "-"}); code == 0 || !strings.Contains(errb.String(), "precisions is not a setting of the ordinal model fitted by ep") {
		t.Errorf("--precisions with the ordinal model: exit %d, %s", code, errb)
	}
}
