package server

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"concord/analysis"
	"concord/annotations"
)

// quickClassFit is a classification fit small enough to finish in well
// under a second on the test data (testdata/README.md).
var quickClassFit = map[string]any{"engine": "gibbs", "chains": 2, "samples": 100, "burnin": 50, "seed": 3}

// binaryProject creates a binary project with the RTE subset: 40 items
// with their texts (text and hypothesis) and gold labels, 400 labels of 17
// raters.
func (e *testEnv) binaryProject(name string) (int64, string) {
	e.t.Helper()
	return e.testdataProject(name, "binary:0,1,pos=1", map[string]string{"file": "rte_40.csv", "items": "rte_40_items.csv"},
		map[string]string{"text_columns": "text,hypothesis"})
}

// testdataProject creates a project of scheme and imports the testdata
// files named by their form field ("file": the labels, "items": their
// items) with the import's form fields.
func (e *testEnv) testdataProject(name, scheme string, files, fields map[string]string) (int64, string) {
	e.t.Helper()
	id, key := e.project(name, scheme)
	form := map[string][2]string{}
	for field, file := range files {
		form[field] = [2]string{file, readTestdata(e.t, file)}
	}
	resp, b := e.upload(fmt.Sprintf("/api/v1/projects/%d/imports", id), key, form, fields)
	if resp.StatusCode != http.StatusCreated {
		e.t.Fatalf("import: status %d: %s", resp.StatusCode, b)
	}
	return id, key
}

// nominalProject creates a nominal project with the anaesthesia labels:
// 45 items, 5 raters, 4 classes.
func (e *testEnv) nominalProject(name string) (int64, string) {
	e.t.Helper()
	return e.testdataProject(name, "nominal:1,2,3,4", map[string]string{"file": "anaesthesia_occ1.csv"}, nil)
}

func with(spec map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range spec {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// TestFitRequestCoversFitSpec: every setting of analysis.FitSpec can be
// given to POST /projects/{id}/fits, under the same JSON name, and the
// OpenAPI document lists it.
func TestFitRequestCoversFitSpec(t *testing.T) {
	names := func(typ reflect.Type) map[string]bool {
		out := map[string]bool{}
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				out[name] = true
			}
		}
		return out
	}
	spec, req := names(reflect.TypeFor[analysis.FitSpec]()), names(requestType(analysis.AllFields()))
	var doc struct {
		Components struct {
			Schemas struct {
				FitRequest struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"FitRequest"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	documented := doc.Components.Schemas.FitRequest.Properties
	for name := range spec {
		if !req[name] {
			t.Errorf("FitSpec field %q cannot be given in a fit request", name)
		}
		if _, ok := documented[name]; !ok {
			t.Errorf("FitSpec field %q is not in the OpenAPI FitRequest schema", name)
		}
	}
	for name := range req {
		if !spec[name] {
			t.Errorf("fit request field %q is not a FitSpec field", name)
		}
	}
	for name := range documented {
		if !req[name] {
			t.Errorf("OpenAPI FitRequest property %q is not a request field", name)
		}
	}
}

// TestFitRequestModelDefaults: the model defaults from the scheme, and
// settings the model does not use are refused precisely.
func TestFitRequestModelDefaults(t *testing.T) {
	nominal, _ := annotations.ParseScheme("nominal:a,b,c")
	binary, _ := annotations.ParseScheme("binary:0,1,pos=1")
	ordinal, _ := annotations.ParseScheme("ordinal:1..3")
	ok := []struct {
		name   string
		req    *fitRequest
		scheme annotations.Scheme
		want   analysis.FitSpec
	}{
		{"nominal default", reqOf(t, ``), nominal, analysis.FitSpec{Model: "classification", Precisions: "inferred"}},
		{"binary default", reqOf(t, ``), binary, analysis.FitSpec{Model: "classification", Precisions: "inferred"}},
		{"ordinal default", reqOf(t, ``), ordinal, analysis.FitSpec{Model: "ordinal", SigmaB: 1}},
		{"fixed precisions", reqOf(t, `{"precisions": " Fixed "}`), binary, analysis.FitSpec{Model: "classification", Precisions: "fixed"}},
		{"explicit model", reqOf(t, `{"model": "Classification", "precisions": "fixed-full"}`), nominal, analysis.FitSpec{Model: "classification", Precisions: "fixed-full"}},
		{"strong with a reference", reqOf(t, `{"identifiability": "strong", "ref_rater": "r1"}`), nominal, analysis.FitSpec{Model: "classification", Precisions: "inferred", Identifiability: "strong", RefRater: "r1", Lambda: 0.1}},
		{"priors of inferred precisions", reqOf(t, `{"v": 2, "lambda": 3}`), nominal, analysis.FitSpec{Model: "classification", Precisions: "inferred", V: 2, Lambda: 3}},
	}
	for _, tc := range ok {
		got, err := tc.req.spec(tc.scheme)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		want := analysis.FitSpec{Model: tc.want.Model, Precisions: tc.want.Precisions, Identifiability: tc.want.Identifiability, RefRater: tc.want.RefRater,
			V: tc.want.V, Lambda: tc.want.Lambda, SigmaB: tc.want.SigmaB, Seed: defaultSeed}
		want = want.WithDefaults()
		want.Kernel = ""
		if tc.want.Model == "classification" {
			want.SigmaB = 0
			// The chains' lengths depend on the kernel, which the data
			// choose when the fit runs: they are left to the fit.
			want.Samples, want.Burnin = 0, 0
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: spec\n%+v, want\n%+v", tc.name, got, want)
		}
	}
	bad := []struct {
		name     string
		req      *fitRequest
		scheme   annotations.Scheme
		fragment string
	}{
		{"unknown precisions", reqOf(t, `{"precisions": "magic"}`), binary, `unknown precisions "magic" (expected inferred, fixed or fixed-full)`},
		{"precisions of an ordinal fit", reqOf(t, `{"engine": "gibbs", "precisions": "fixed"}`), ordinal, `precisions is not a setting of the ordinal model fitted by gibbs (leave it out): its settings are identifiability, ref_rater, sampler, chains, samples, burnin, thin, max_rhat, min_ess, v, lambda, sigma_b, flag_threshold and keep_draws`},
		{"sigma_b of a classification fit", reqOf(t, `{"sigma_b": 2}`), nominal, `sigma_b is not a setting of the classification model fitted by gibbs (leave it out): its settings are identifiability`},
		{"v with fixed precisions", reqOf(t, `{"precisions": "fixed", "v": 2}`), nominal, `with precisions "fixed" every precision is fixed at 1`},
		{"lambda with fixed precisions", reqOf(t, `{"precisions": "fixed-full", "lambda": 2}`), nominal, `"v" and "lambda"`},
		{"strong with fixed precisions", reqOf(t, `{"precisions": "fixed", "identifiability": "strong"}`), nominal, `identifiability "strong" fixes one rater's precision`},
		{"reference rater under weak", reqOf(t, `{"engine": "gibbs", "ref_rater": "r1"}`), ordinal, `"ref_rater" names the reference rater of identifiability strong or both`},
		{"unknown model", reqOf(t, `{"model": "svm"}`), nominal, `unknown model "svm"`},
	}
	for _, tc := range bad {
		_, err := tc.req.spec(tc.scheme)
		if annotations.ErrorCode(err) != annotations.EINVALID || !strings.Contains(annotations.ErrorMessage(err), tc.fragment) {
			t.Errorf("%s: error %v, want EINVALID with %q", tc.name, err, tc.fragment)
		}
	}
}

// TestClassificationFitsAPI runs a classification fit of a binary project
// through the API: model from the scheme, status and summary, results,
// reports, plots and predictions of new texts.
// TestClassificationDefaultKernel: a classification fit that names no
// kernel, of a project whose items all have labels and texts, runs with the
// identity kernel (the labels alone: the text kernel's default fit did not
// converge on the demo's RTE project); the dashboard's form says so. With
// text featuriser settings it uses the texts.
func TestClassificationDefaultKernel(t *testing.T) {
	e, id, key := binaryEnv(t, "rte")
	f := e.call("GET", fmt.Sprintf("/api/v1/fits/%d", e.doneSpec(id, key, quickClassFit)), key, nil, 200)
	if k := f["summary"].(map[string]any)["kernel"]; k != "identity" {
		t.Errorf("default kernel %v, want identity", k)
	}
	f = e.call("GET", fmt.Sprintf("/api/v1/fits/%d", e.doneSpec(id, key, with(quickClassFit, "text", map[string]any{"min_df": 1}))), key, nil, 200)
	if k := f["summary"].(map[string]any)["kernel"]; k != "text" {
		t.Errorf("kernel with text settings %v, want text", k)
	}
}

func TestClassificationFitsAPI(t *testing.T) {
	e, id, key := binaryEnv(t, "rte")
	fitsPath := fmt.Sprintf("/api/v1/projects/%d/fits", id)

	// Errors first: nothing is queued.
	badSpecs := []struct{ body, fragment string }{
		{`{"model": "ordinal"}`, "the ordinal model needs an ordinal scheme; the scheme is binary:0,1,pos=1"},
		{`{"precisions": "magic"}`, `unknown precisions "magic"`},
		{`{"precisions": 1}`, `field "precisions": expected a string`},
		{`{"sigma_b": 2}`, `sigma_b is not a setting of the classification model fitted by gibbs`},
		{`{"precisions": "fixed", "v": 2}`, `with precisions "fixed" every precision is fixed at 1`},
		{`{"precisions": "fixed", "identifiability": "both"}`, `identifiability "both" fixes one rater's precision`},
		{`{"ref_rater": "amt001"}`, `"ref_rater" names the reference rater of identifiability strong or both`},
		{`{"identifiability": "strong", "ref_rater": "nobody"}`, `field "ref_rater": rater "nobody" has no labels in project "rte"`},
		{`{"kernel": "rbf:gamma=1", "covariates": "a,,b"}`, "covariates"},
		{`{"text": {"weighting": "magic"}}`, "magic"},
		{`{"keep_draws": 0}`, `"keep_draws" = 0`},
		{`{"min_ess": -1}`, `"min_ess" = -1: expected a number from 1 to 1e+09`},
	}
	for _, bs := range badSpecs {
		e.wantError("POST", fitsPath, key, bs.body, 400, "invalid", bs.fragment)
	}
	if n := len(e.call("GET", fitsPath, key, nil, 200)["fits"].([]any)); n != 0 {
		t.Fatalf("rejected requests queued %d fits", n)
	}

	// No model named: the binary scheme gets the classification model; no
	// kernel named but text settings given: the items' texts get the text
	// kernel.
	out := e.call("POST", fitsPath, key, with(quickClassFit, "text", map[string]any{"min_df": 1}), 202)
	spec := out["spec"].(map[string]any)
	if out["model"] != "classification" || spec["model"] != "classification" || spec["precisions"] != "inferred" || spec["sigma_b"] != nil || spec["kernel"] != nil {
		t.Errorf("stored spec: model %v, spec %v", out["model"], spec)
	}
	fid := int64(out["id"].(float64))
	f := e.waitFit(fid, key, 60*time.Second)
	if f["state"] != "done" {
		t.Fatalf("fit: %v", f)
	}
	sum := f["summary"].(map[string]any)
	if sum["model"] != "classification" || sum["kernel"] != "text" || sum["precisions"] != "inferred" || sum["items"].(float64) != 40 ||
		sum["raters"].(float64) != 17 || sum["labels"].(float64) != 400 || sum["predicted_items"].(float64) != 0 {
		t.Errorf("summary: %v", sum)
	}
	if sum["grades"] != nil || sum["top"] != nil {
		t.Errorf("ordinal summary fields in a classification summary: %v", sum)
	}
	classes := sum["classes"].([]any)
	items, labels := 0.0, 0.0
	for i, c := range classes {
		m := c.(map[string]any)
		if m["level"] != []string{"0", "1"}[i] {
			t.Errorf("class %d: %v", i, m)
		}
		items += m["items"].(float64)
		labels += m["labels"].(float64)
	}
	if len(classes) != 2 || items != 40 || labels != 400 {
		t.Errorf("classes: %v", classes)
	}
	if h := sum["mean_entropy"].(float64); !(h > 0 && h < 1) {
		t.Errorf("mean entropy %v bits, want within (0, 1) for two classes", h)
	}

	// The result document.
	res := e.call("GET", fmt.Sprintf("/api/v1/fits/%d/result", fid), key, nil, 200)
	it0 := res["items"].([]any)[0].(map[string]any)
	cp := it0["class_probs"].(map[string]any)
	if it0["class"] == "" || len(cp) != 2 || math.Abs(cp["0"].(float64)+cp["1"].(float64)-1) > 1e-6 || it0["entropy"] == nil {
		t.Errorf("result item: %v", it0)
	}
	r0 := res["raters"].([]any)[0].(map[string]any)
	if r0["consensus_agreement"] == nil || len(r0["confusion"].([]any)) != 2 {
		t.Errorf("result rater: %v", r0)
	}

	// Reports: JSON (with the classes and ROC against gold), workbook
	// (Classes sheet), CSV tables, plots (ROC, no thresholds).
	rep := e.call("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), key, nil, 200)
	if rep["schema"] != "concord.report/v1" || rep["classes"] == nil || rep["thresholds"] != nil {
		t.Errorf("report.json: classes %v, thresholds %v", rep["classes"] != nil, rep["thresholds"])
	}
	if roc, _ := rep["roc"].([]any); len(roc) == 0 {
		t.Errorf("report.json has no ROC curves (binary scheme with gold labels)")
	}
	resp, b := e.request("GET", fmt.Sprintf("/api/v1/fits/%d/report.xlsx", fid), key, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ctXLSX {
		t.Fatalf("report.xlsx: %d", resp.StatusCode)
	}
	checkClassWorkbook(t, b, 40)
	resp, b = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/tables/items.csv", fid), key, nil)
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); resp.StatusCode != 200 || len(lines) != 41 {
		t.Errorf("items.csv: %d, %d lines", resp.StatusCode, len(lines))
	}
	for _, plot := range []string{"roc.svg", "roc.png", "consensus.svg", "precision.png"} {
		if resp, _ := e.request("GET", fmt.Sprintf("/api/v1/fits/%d/plots/%s", fid, plot), key, nil); resp.StatusCode != 200 {
			t.Errorf("plot %s: %d", plot, resp.StatusCode)
		}
	}
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/plots/thresholds.svg", fid), key, nil, 404, "not_found", "")

	// Predictions: class distributions of new texts through the text
	// kernel, overall and per rater.
	path := fmt.Sprintf("/api/v1/fits/%d/predictions", fid)
	pred := e.call("POST", path, key, map[string]any{"items": []map[string]any{
		{"id": "n1", "text": "Saudi Arabia is the world's biggest oil producer. Saudi Arabia produces oil."},
		{"id": "n2", "text": "zzz qqq"}}}, 200)
	if pred["schema"] != "concord.predictions/v1" || pred["model"] != "classification" || pred["kernel"] != "text" || fmt.Sprint(pred["levels"]) != "[0 1]" {
		t.Errorf("predictions document: %v", pred)
	}
	pits := pred["items"].([]any)
	if len(pits) != 2 {
		t.Fatalf("predictions: %v", pred)
	}
	for _, p := range pits {
		m := p.(map[string]any)
		probs := m["class_probs"].(map[string]any)
		s := 0.0
		for _, v := range probs {
			s += v.(float64)
		}
		if len(probs) != 2 || math.Abs(s-1) > 1e-6 || (m["class"] != "0" && m["class"] != "1") || m["grade_probs"] != nil || m["n_labels"].(float64) != 0 {
			t.Errorf("prediction %v (sum %v)", m, s)
		}
		if rp := m["rater_class_probs"].(map[string]any); len(rp) != 17 || len(rp["amt001"].([]any)) != 2 {
			t.Errorf("per-rater class distributions: %v", rp)
		}
	}
	if !strings.Contains(fmt.Sprint(pred["notes"]), "no term of the fit's vocabulary") {
		t.Errorf("notes: %v", pred["notes"])
	}
	e.wantError("POST", path, key, `{"items": [{"id": "a", "text": 5}]}`, 400, "invalid", `field "items.text": expected a string`)
}

// TestClassificationNominalFixed fits a nominal project with fixed
// precisions, queued in Go. Without a model, a nominal project whose items
// have no texts gets the confusion model (analysis.DefaultModelFor).
func TestClassificationNominalFixed(t *testing.T) {
	e := newEnv(t)
	id, key := e.nominalProject("anaesthesia")
	if _, err := e.srv.StartFit(t.Context(), id, analysis.FitSpec{Precisions: "fixed", Seed: 5}); err == nil ||
		!strings.Contains(annotations.ErrorMessage(err), "precisions") {
		t.Errorf("StartFit without a model, with precisions, on a nominal project without texts: error %v, want the confusion model's precisions error", err)
	}
	f, err := e.srv.StartFit(t.Context(), id, analysis.FitSpec{Model: "classification", Precisions: "fixed", Chains: 2, Samples: 100, Burnin: 50, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if f.Model != "classification" {
		t.Errorf("StartFit with model classification on a nominal project: model %q", f.Model)
	}
	got := e.waitFit(f.ID, key, 60*time.Second)
	if got["state"] != "done" {
		t.Fatalf("fit: %v", got)
	}
	sum := got["summary"].(map[string]any)
	if sum["precisions"] != "fixed" || len(sum["classes"].([]any)) != 4 || sum["kernel"] != "identity" || sum["labels"].(float64) != 225 {
		t.Errorf("summary: %v", sum)
	}
	// Every report renders; a binary-only plot is not found.
	resp, b := e.request("GET", fmt.Sprintf("/api/v1/fits/%d/report.xlsx", f.ID), key, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("report.xlsx: %d %s", resp.StatusCode, clipText(string(b), 300))
	}
	checkClassWorkbook(t, b, 45)
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/plots/roc.svg", f.ID), key, nil, 404, "not_found", "")
	pred := e.call("POST", fmt.Sprintf("/api/v1/fits/%d/predictions", f.ID), key, map[string]any{"items": []map[string]any{{"id": "new"}}}, 200)
	if probs := pred["items"].([]any)[0].(map[string]any)["class_probs"].(map[string]any); len(probs) != 4 {
		t.Errorf("prediction of an item with the identity kernel: %v", probs)
	}
	// The ordinal model and its settings do not apply.
	if _, err := e.srv.StartFit(t.Context(), id, analysis.FitSpec{Model: "ordinal"}); annotations.ErrorCode(err) != annotations.EINVALID {
		t.Errorf("ordinal fit of a nominal project: %v", err)
	}
	// A bounded project is fitted by the bounded model (ep by default); its
	// reports: TestBoundedReports.
	bid, bk := e.boundedProject("sliders", 4)
	e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", bid), bk, `{"v": 2}`, 400, "invalid", `v is not a setting of the bounded model fitted by ep (leave it out): its settings are flag_threshold, keep_draws, restarts, final_rank, likelihood, dispersions, dispersion, bias and bounds`)
	bf := e.call("POST", fmt.Sprintf("/api/v1/projects/%d/fits", bid), bk, map[string]any{"likelihood": "beta"}, 202)
	done := e.waitFit(int64(bf["id"].(float64)), bk, 60*time.Second)
	if done["state"] != "done" {
		t.Fatalf("bounded fit: %v", done)
	}
	e.call("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", int64(bf["id"].(float64))), bk, nil, 200)
	// The dashboard's fit page shows it (ranking and rater chart).
	br := newBrowser(t, e)
	br.login(bk)
	if resp, page := br.get(fmt.Sprintf("/fits/%d", int64(bf["id"].(float64)))); resp.StatusCode != 200 || !strings.Contains(page, "i1") || !strings.Contains(page, "dispersion ν") {
		t.Errorf("dashboard page of a bounded fit: %d", resp.StatusCode)
	}
}

// checkClassWorkbook opens a classification workbook and checks its sheets
// and item rows.
func checkClassWorkbook(t *testing.T, b []byte, items int) {
	t.Helper()
	f, err := excelize.OpenReader(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("workbook: %v", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	for _, want := range []string{"Summary", "Items", "Raters", "Classes", "Agreement", "Diagnostics", "Flags"} {
		if !slices.Contains(sheets, want) {
			t.Errorf("workbook lacks sheet %s (has %v)", want, sheets)
		}
	}
	if slices.Contains(sheets, "Thresholds") {
		t.Errorf("classification workbook has a Thresholds sheet")
	}
	rows, err := f.GetRows("Items")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < items+1 {
		t.Errorf("Items sheet has %d rows, want a header and %d items", len(rows), items)
	}
}

// between returns the part of page from the first from to the next to.
func between(page, from, to string) string {
	i := strings.Index(page, from)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], to)
	if j < 0 {
		return page[i:]
	}
	return page[i : i+j]
}

// TestDashboardClassification: the project page of a binary project offers
// the classification model, its precisions and the text kernels; the fit
// form starts classification fits; a done fit's page shows the consensus
// classes, class distribution, rater reliability with agreement, confusion
// tables, surprising labels, the ROC plot and the downloads.
func TestDashboardClassification(t *testing.T) {
	e, id, key := binaryEnv(t, "rte")
	fid := e.doneSpec(id, key, quickClassFit)
	b := newBrowser(t, e)
	b.login(key)

	resp, page := b.get(fmt.Sprintf("/projects/%d", id))
	if resp.StatusCode != 200 {
		t.Fatalf("project page: %d", resp.StatusCode)
	}
	form := between(page, `id="fit-form"`, "</form>")
	for _, want := range []string{`<option value="classification" selected `, `<option value="robust"  title=`, `name="precisions"`, `<option value="fixed" >`, `<option value="text" >`,
		`default: identity (every item is labelled; choose text to use the texts too)`, `name="text_stem"`, `name="kernel_custom"`, `name="flag_threshold"`, `name="keep_draws"`, `name="covariates"`} {
		if !strings.Contains(form, want) {
			t.Errorf("fit form lacks %q", want)
		}
	}
	for _, unwanted := range []string{`value="ordinal"`, `name="sigma_b"`, `value="linear"`} {
		if strings.Contains(form, unwanted) {
			t.Errorf("fit form of a binary project without covariates has %q", unwanted)
		}
	}
	if strings.Contains(page, "comes later") {
		t.Error(`project page still says the classification model "comes later"`)
	}

	// The fit page of the done fit.
	resp, page = b.get(fmt.Sprintf("/fits/%d", fid))
	if resp.StatusCode != 200 {
		t.Fatalf("fit page: %d", resp.StatusCode)
	}
	for _, want := range []string{"classification model", "Consensus classes", `id="consensus-search"`, "Class distribution", "Rater reliability",
		`id="precision-chart"`, "% agree", "Agreement with the consensus", "Confusion against the consensus", "Surprising labels",
		"plots/roc.svg", "plots/consensus.svg", "report.xlsx", "report.json?download=1", "tables/items.csv", "tables/raters.csv", "Mean entropy"} {
		if !strings.Contains(page, want) {
			t.Errorf("fit page lacks %q", want)
		}
	}
	for _, unwanted := range []string{"Consensus ranking", `id="thresholds"`, "Severity", "plots/thresholds"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("classification fit page shows %q", unwanted)
		}
	}
	table := between(page, `id="consensus-table"`, "</table>")
	if n := strings.Count(table, "<tr") - 1; n != 40 {
		t.Errorf("consensus table has %d item rows, want 40", n)
	}
	for _, want := range []string{`<span class="cls">0</span>`, `<span class="cls">1</span>`, "amt001: "} {
		if !strings.Contains(table, want) {
			t.Errorf("consensus table lacks %q", want)
		}
	}
	if n := strings.Count(between(page, `id="confusion"`, "</section>"), `<figure class="confusion">`); n != 17 {
		t.Errorf("%d confusion tables, want one per rater (17)", n)
	}
	if n := strings.Count(between(page, `id="classes-table"`, "</table>"), "<tr>") - 1; n != 2 {
		t.Errorf("class distribution has %d rows, want 2", n)
	}

	// Start a fit from the form: rejected settings keep the form, good
	// ones queue a classification fit with them.
	csrf := b.csrf(page)
	fitURL := fmt.Sprintf("/projects/%d/fits", id)
	resp, page = b.post(fitURL, map[string][]string{"engine": {"gibbs"}, "csrf": {csrf}, "model": {"classification"}, "precisions": {"fixed"}, "v": {"2"}, "samples": {"123"}})
	if resp.StatusCode != 400 || !strings.Contains(page, "The fit was not started") || !strings.Contains(page, `with precisions &#34;fixed&#34; every precision is fixed at 1`) ||
		!strings.Contains(page, `value="123"`) || !strings.Contains(page, `<option value="fixed" selected>`) {
		t.Errorf("rejected fit form: %d %s", resp.StatusCode, clipText(between(page, `class="error"`, "</div>"), 400))
	}
	resp, page = b.post(fitURL, map[string][]string{"csrf": {csrf}, "flag_threshold": {"often"}})
	if resp.StatusCode != 400 || !strings.Contains(page, `flag_threshold &#34;often&#34;: expected a number`) {
		t.Errorf("non-numeric flag threshold: %d", resp.StatusCode)
	}
	resp, _ = b.post(fitURL, map[string][]string{"csrf": {csrf}, "model": {"classification"}, "precisions": {"fixed"}, "kernel": {"text"},
		"chains": {"2"}, "samples": {"100"}, "burnin": {"50"}, "seed": {"9"}, "text_stem": {"1"}, "text_min_df": {"2"}, "flag_threshold": {"0.1"}})
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/fits/") {
		t.Fatalf("start fit: %d", resp.StatusCode)
	}
	var fid2 int64
	fmt.Sscanf(resp.Header.Get("Location"), "/fits/%d", &fid2)
	f := e.waitFit(fid2, key, 60*time.Second)
	spec := f["spec"].(map[string]any)
	text, _ := spec["text"].(map[string]any)
	if f["state"] != "done" || spec["precisions"] != "fixed" || spec["kernel"] != "text" || spec["flag_threshold"].(float64) != 0.1 || text["stem"] != true || text["min_df"].(float64) != 2 {
		t.Errorf("fit from the form: %v", f)
	}
	// Fixed precisions: no precision chart, the agreement still.
	_, page = b.get(fmt.Sprintf("/fits/%d", fid2))
	if strings.Contains(page, `id="precision-chart"`) || !strings.Contains(page, "The precisions are fixed at 1") || !strings.Contains(page, `id="consensus-table"`) {
		t.Errorf("fit page of fixed precisions: chart %v", strings.Contains(page, `id="precision-chart"`))
	}

	// An ordinal project's form offers the ordinal model with its
	// threshold prior and no precisions; a bounded one the bounded model.
	oid, _ := e.loadedProject("essays")
	if resp, _ = b.get(fmt.Sprintf("/projects/%d", oid)); resp.StatusCode != 404 {
		t.Errorf("ordinal project page for another project's key: %d, want 404", resp.StatusCode)
	}
	admin := newBrowser(t, e)
	admin.login(testAdmin)
	_, page = admin.get(fmt.Sprintf("/projects/%d", oid))
	form = between(page, `id="fit-form"`, "</form>")
	if !strings.Contains(form, `<option value="ordinal" selected `) || !strings.Contains(form, `name="sigma_b"`) || strings.Contains(form, `name="precisions"`) || strings.Contains(form, `name="text_stem"`) {
		t.Errorf("ordinal fit form: %s", clipText(form, 600))
	}
	bid, _ := e.project("sliders", "bounded:0..100")
	_, page = admin.get(fmt.Sprintf("/projects/%d", bid))
	if form = between(page, `id="fit-form"`, "</form>"); !strings.Contains(form, `<option value="bounded" selected `) || strings.Contains(page, `id="no-model"`) {
		t.Errorf("bounded project page offers no bounded fit: %s", clipText(form, 600))
	}
}

// reqOf decodes a fit request's JSON body as the API does.
func reqOf(t *testing.T, body string) *fitRequest {
	t.Helper()
	r, err := decodeFitRequest([]byte(body))
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return r
}
