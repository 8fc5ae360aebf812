package server

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// pimaProject creates a binary project with Pima.tr: 200 items with 7
// numeric covariates, one label each (testdata/README.md).
func (e *testEnv) pimaProject(name string) (int64, string) {
	e.t.Helper()
	return e.testdataProject(name, "binary:No,Yes,pos=Yes", map[string]string{"file": "pima_tr_labels.csv", "items": "pima_tr_items.csv"}, nil)
}

// TestAUCFitAPI fits the auc model through the API (the background job,
// as every fit) and reads it back in every form: the stored spec with its
// defaults, the fit document's scores, coefficients, ROC and gamma, the
// report's ranking section and sheets, the ROC and coefficient plots, the
// dashboard's ranking, and predictions for new items.
func TestAUCFitAPI(t *testing.T) {
	e := newEnv(t)
	id, key := e.pimaProject("pima")
	fid := e.doneSpec(id, key, map[string]any{"model": "auc", "standardize": true, "gamma": 10, "seed": 4})
	base := fmt.Sprintf("/api/v1/fits/%d", fid)

	f := e.call("GET", base, key, nil, 200)
	spec := f["spec"].(map[string]any)
	for k, want := range map[string]any{"model": "auc", "engine": "ep", "scores": "linear", "gamma": 10.0, "prior": "gaussian", "prior_scale": 1.0, "standardize": true, "seed": 4.0} {
		if spec[k] != want {
			t.Errorf("stored spec %s = %v, want %v (spec %v)", k, spec[k], want, spec)
		}
	}
	for _, k := range []string{"chains", "identifiability", "sampler", "kernel"} {
		if v, ok := spec[k]; ok {
			t.Errorf("stored spec has %s = %v, which the auc model does not use", k, v)
		}
	}
	res := e.call("GET", base+"/result", key, nil, 200)
	items := res["items"].([]any)
	if len(items) != 200 {
		t.Fatalf("result: %d items", len(items))
	}
	sc, _ := items[0].(map[string]any)["score"].(map[string]any)
	if sc == nil || sc["mean"] == nil || !(sc["sd"].(float64) > 0) {
		t.Errorf("result: item score %v", items[0])
	}
	if cs, _ := res["coefficients"].([]any); len(cs) != 7 {
		t.Errorf("result: %d coefficients, want 7", len(cs))
	}
	if a, _ := res["train_auc"].(float64); !(a > 0.8 && a < 0.9) {
		t.Errorf("result: train_auc %v", res["train_auc"])
	}
	if roc, _ := res["roc"].([]any); len(roc) < 10 {
		t.Errorf("result: roc of %d points", len(roc))
	}
	if a := res["auc"].(map[string]any); a["gamma"] != 10.0 || a["gamma_by_cv"] != false || a["positive"] != "Yes" {
		t.Errorf("result: auc %v", a)
	}
	if d := res["diagnostics"].(map[string]any); d["log_evidence"] == nil {
		t.Errorf("result: no log evidence: %v", d)
	}

	rep := e.call("GET", base+"/report.json", key, nil, 200)
	if rep["kind"] != "ranking" {
		t.Errorf("report.json kind %v", rep["kind"])
	}
	rk, _ := rep["ranking"].(map[string]any)
	if rk == nil || rk["train_auc"] != res["train_auc"] || len(rk["coefficients"].([]any)) != 7 {
		t.Errorf("report.json ranking %v", rk)
	}
	book := e.fitWorkbook(base, key)
	if got := strings.Join(book.GetSheetList(), ","); got != "Summary,Ranking,Coefficients,Items,Diagnostics,Glossary,Charts" {
		t.Errorf("report.xlsx: sheets %s", got)
	}
	if rows, err := book.GetRows("Ranking"); err != nil || len(rows) < 201 || strings.Join(rows[0][:4], ",") != "Rank,Item,Score mean,Score SD" || rows[1][0] != "1" {
		t.Errorf("report.xlsx: Ranking %d rows (%v), header %v", len(rows), err, rows[0])
	}
	e.wantPlots(base, key, "roc.svg", "coefficients.svg", "consensus.png")
	if resp, _ := e.request("GET", base+"/plots/precision.svg", key, nil); resp.StatusCode != 404 {
		t.Errorf("plots/precision.svg of an auc fit: %d, want 404 (no rater precisions)", resp.StatusCode)
	}

	pred := e.call("POST", base+"/predictions", key, map[string]any{"items": []map[string]any{
		{"id": "high", "covariates": map[string]float64{"npreg": 8, "glu": 190, "bp": 80, "skin": 35, "bmi": 40, "ped": 1.2, "age": 55}},
		{"id": "low", "covariates": map[string]float64{"npreg": 1, "glu": 80, "bp": 60, "skin": 20, "bmi": 22, "ped": 0.2, "age": 22}},
	}}, 200)
	pi := pred["items"].([]any)
	hi := pi[0].(map[string]any)["score"].(map[string]any)["mean"].(float64)
	lo := pi[1].(map[string]any)["score"].(map[string]any)["mean"].(float64)
	if !(hi > lo) {
		t.Errorf("predictions: high-risk score %v not above low-risk %v", hi, lo)
	}
	e.wantError("POST", base+"/predictions", key, map[string]any{"items": []map[string]any{{"id": "x", "covariates": map[string]float64{"glu": 100}}}},
		400, "invalid", `has no value for covariate "age"`)

	br := newBrowser(t, e)
	br.login(key)
	// The project's fit form offers the auc settings (its items have
	// covariates).
	_, ppage := br.get(fmt.Sprintf("/projects/%d", id))
	form := between(ppage, `id="fit-form"`, "</form>")
	if m := dataForRe("fit-group-auc").FindStringSubmatch(form); m == nil || m[1] != "auc:ep auc:smc" || !strings.Contains(form, `name="gamma"`) || !strings.Contains(form, `<option value="smc" data-models="auc"`) {
		t.Errorf("fit form: auc group %v, gamma field %v", m, strings.Contains(form, `name="gamma"`))
	}
	// A fit started from the form, as a browser without scripts posts it
	// (the Gibbs fields pre-filled, left out for the auc model).
	ffid := postFitForm(t, br, id, url.Values{"model": {"auc"}, "engine": {"ep"}, "scores": {"linear"}, "gamma": {"10"}, "prior": {"gaussian"},
		"prior_scale": {""}, "standardize": {"1"}, "epsilon": {"0.1"}, "restarts": {"3"}})
	if ff := e.waitFit(ffid, key, 60*time.Second); ff["state"] != "done" {
		t.Errorf("form fit ended %s: %v", ff["state"], ff["message"])
	} else if sp := ff["spec"].(map[string]any); sp["model"] != "auc" || sp["gamma"] != 10.0 || sp["standardize"] != true || sp["chains"] != nil || sp["epsilon"] != nil {
		t.Errorf("form fit spec %v", sp)
	}
	page := br.fitPage(fid, `id="auc-ranking"`, `id="auc-coefficients"`, `id="train-auc"`, `<figure class="plot-main" id="plot-roc">`, `<figure class="plot-main" id="plot-coefficients">`)
	for _, no := range []string{`id="raters-table"`, `id="flags"`} {
		if strings.Contains(page, no) {
			t.Errorf("dashboard fit page of an auc fit has %q", no)
		}
	}
	table := between(page, `id="auc-ranking"`, "</table>")
	if n := strings.Count(table, "<tr"); n != 201 {
		t.Errorf("dashboard: the ranking has %d rows, want 200 and the header", n)
	}
	if !strings.Contains(table, "<td>No</td>") || !strings.Contains(table, "<td>Yes</td>") {
		t.Errorf("dashboard: the ranking does not show the labels No and Yes")
	}
}

// TestAUCFitRequest: the auc model's settings in a fit request, and what is
// refused, with precise messages.
func TestAUCFitRequest(t *testing.T) {
	e := newEnv(t)
	id, key := e.pimaProject("pima")
	path := fmt.Sprintf("/api/v1/projects/%d/fits", id)
	for _, tc := range []struct {
		name string // what is wrong
		body map[string]any
		frag string
	}{
		{"gamma text", map[string]any{"model": "auc", "gamma": "hot"}, `field "gamma" = "hot": expected a number from 0.001 to 10000`},
		{"gamma negative", map[string]any{"model": "auc", "gamma": -1}, `field "gamma" = -1`},
		{"scores", map[string]any{"model": "auc", "scores": "quadratic"}, `scores "quadratic": expected linear`},
		{"prior", map[string]any{"model": "auc", "prior": "laplace"}, `prior "laplace": expected gaussian or spike-slab`},
		{"prior scale", map[string]any{"model": "auc", "prior_scale": 0}, `field "prior_scale" = 0: expected a number from 0.0001 to 10000; leave it out for the default, 1`},
		{"engine", map[string]any{"model": "auc", "engine": "gibbs"}, `the auc model is fitted by ep or smc`},
		{"gibbs setting", map[string]any{"model": "auc", "chains": 2}, `chains is not a setting of the auc model fitted by ep (leave it out): its settings are scores, gamma`},
		{"kernel for linear", map[string]any{"model": "auc", "kernel": "rbf:gamma=1"}, `is for gp scores`},
		{"text kernel", map[string]any{"model": "auc", "scores": "gp", "kernel": "text"}, `gp scores read numeric covariates only`},
		{"spike-slab gp", map[string]any{"model": "auc", "scores": "gp", "prior": "spike-slab"}, `prior of linear scores' coefficients`},
		{"auc setting elsewhere", map[string]any{"model": "robust", "gamma": 10}, `gamma is not a setting of the robust model fitted by ep (leave it out): its settings are flag_threshold, keep_draws, sigma, restarts, epsilon, select and em`},
	} {
		e.wantError("POST", path, key, tc.body, 400, "invalid", tc.frag)
	}
	// A project whose items have no covariates is refused before queueing.
	bin, bkey := e.binaryProject("rte")
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", bin), bkey, map[string]any{"model": "auc"}, 400, "invalid", "the auc model scores items by their numeric covariates")
	// gamma by cross-validation and gp scores run.
	fid := e.doneSpec(id, key, map[string]any{"model": "auc", "scores": "gp", "kernel": "rbf:gamma=0.05", "standardize": true, "gamma": "cv"})
	res := e.call("GET", fmt.Sprintf("/api/v1/fits/%d/result", fid), key, nil, 200)
	a := res["auc"].(map[string]any)
	if a["gamma_by_cv"] != true || len(a["cv"].([]any)) != 7 || a["scores"] != "gp" || res["coefficients"] != nil {
		t.Errorf("gp fit with gamma by CV: auc %v, coefficients %v", a, res["coefficients"])
	}
}
