package server

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"concord/analysis"
)

// boundedProject creates a bounded project (a 0..100 slider) with the
// labels of 3 raters on the first items (at most 5) of a fixed table.
func (e *testEnv) boundedProject(name string, items int) (int64, string) {
	e.t.Helper()
	id, key := e.project(name, "bounded:0..100")
	var labels []map[string]any
	for i, vs := range [][]string{{"42.5", "40", "55"}, {"90", "85", "100"}, {"10", "0", "20"}, {"60", "70", "30"}, {"75", "80", "65"}}[:items] {
		for r, v := range vs {
			labels = append(labels, map[string]any{"item_id": fmt.Sprintf("i%d", i), "rater_id": fmt.Sprintf("r%d", r), "label": v})
		}
	}
	e.call("POST", fmt.Sprintf("/api/v1/projects/%d/labels", id), key, map[string]any{"labels": labels}, http.StatusCreated)
	return id, key
}

var (
	optionRe  = regexp.MustCompile(`<option value="([^"]*)"(?: data-models="([^"]*)")?`)
	dataForRe = func(id string) *regexp.Regexp {
		return regexp.MustCompile(`id="` + regexp.QuoteMeta(id) + `" data-group="[a-z]+" data-for="([^"]*)"`)
	}
)

// formSelect returns the options of the select id of a page's fit form:
// their values, and the data-models of each (engines).
func formSelect(t *testing.T, page, id string) (values, models []string, selected string) {
	t.Helper()
	sel := between(page, `id="`+id+`"`, "</select>")
	if sel == "" {
		t.Fatalf("no select %s on the page", id)
	}
	for _, m := range optionRe.FindAllStringSubmatch(sel, -1) {
		values = append(values, m[1])
		models = append(models, m[2])
	}
	// The selected attribute follows the value (and data-models).
	for _, v := range values {
		if regexp.MustCompile(`<option value="` + regexp.QuoteMeta(v) + `"( data-models="[^"]*")? selected`).MatchString(sel) {
			selected = v
		}
	}
	return values, models, selected
}

// TestDashboardFitFormModels: the start-fit form of an ordinal, a binary,
// a nominal and a bounded project offers the models of the model table
// that fit the scheme (the scheme's default first and chosen, each with
// its Doc), each model's engines, and the groups of settings with the
// model:engine pairs that use them.
func TestDashboardFitFormModels(t *testing.T) {
	e, ord, _ := loadedEnv(t, "essays")
	bin, _ := e.binaryProject("rte")
	nom, _ := e.nominalProject("anaesthesia")
	bnd, _ := e.boundedProject("sliders", 5)
	b := newBrowser(t, e)
	b.login(testAdmin)

	type want struct {
		models  []string
		engines map[string]string // engine -> data-models
		groups  map[string]string // group -> data-for ("" : absent)
		fields  map[string]string // field -> data-for ("" : absent)
	}
	for _, tc := range []struct {
		name string
		id   int64
		want want
	}{
		// The confusion model fits ordinal schemes too (levels as classes).
		{"ordinal", ord, want{[]string{"ordinal", "confusion"}, map[string]string{"gibbs": "ordinal confusion", "ep": "ordinal", "laplace": "ordinal", "vb": "confusion"},
			map[string]string{"gibbs": "ordinal:gibbs confusion:gibbs", "evidence": "ordinal:ep ordinal:laplace", "bounded": "", "robust": ""},
			map[string]string{"sigma": "ordinal:ep ordinal:laplace", "thresholds": "ordinal:ep ordinal:laplace", "sigma_b": "ordinal:ep ordinal:laplace ordinal:gibbs",
				"precisions": "", "max_rhat": "ordinal:gibbs confusion:gibbs", "ref_rater": "ordinal:gibbs"}}},
		// The auc model reads the items' covariates: the binary project has
		// none, so it is not offered (the page says why).
		{"binary", bin, want{[]string{"classification", "robust", "confusion"}, map[string]string{"gibbs": "classification confusion", "ep": "robust", "vb": "confusion"},
			map[string]string{"gibbs": "classification:gibbs confusion:gibbs", "evidence": "robust:ep", "bounded": "", "robust": "robust:ep", "auc": ""},
			map[string]string{"precisions": "classification:gibbs", "sigma": "robust:ep", "restarts": "robust:ep", "thresholds": "", "sigma_b": "",
				"v": "classification:gibbs", "max_rhat": "classification:gibbs confusion:gibbs", "prior": ""}}},
		// The nominal project's items have no texts: the confusion model
		// is its default (analysis.DefaultModelFor, issue 29).
		{"nominal", nom, want{[]string{"confusion", "classification"}, map[string]string{"gibbs": "confusion classification", "vb": "confusion"},
			map[string]string{"gibbs": "confusion:gibbs classification:gibbs", "evidence": "", "bounded": "", "robust": ""},
			map[string]string{"precisions": "classification:gibbs", "sigma": "", "v": "classification:gibbs"}}},
		{"bounded", bnd, want{[]string{"bounded"}, map[string]string{"ep": "bounded", "laplace": "bounded"},
			map[string]string{"gibbs": "", "evidence": "bounded:ep bounded:laplace", "bounded": "bounded:ep bounded:laplace", "robust": ""},
			map[string]string{"restarts": "bounded:ep bounded:laplace", "sigma": "", "thresholds": "", "v": "", "sigma_b": "", "max_rhat": "", "precisions": ""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, page := b.get(fmt.Sprintf("/projects/%d", tc.id))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("project page: %d", resp.StatusCode)
			}
			form := between(page, `id="fit-form"`, "</form>")
			if form == "" || strings.Contains(page, `id="no-model"`) {
				t.Fatalf("no fit form")
			}
			models, _, selected := formSelect(t, form, "fit-model")
			if hidden := between(page, `id="hidden-models"`, "</p>"); (tc.name == "binary") != strings.Contains(hidden, "auc (its scores read the items&#39; numeric covariates") {
				t.Errorf("hidden models: %q", hidden)
			}
			if strings.Join(models, ",") != strings.Join(tc.want.models, ",") || selected != tc.want.models[0] {
				t.Errorf("models %v (selected %q), want %v, the first selected", models, selected, tc.want.models)
			}
			for _, name := range models {
				m, err := analysis.LookupModel(name)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(form, `title="`+html.EscapeString(m.Doc)+`"`) {
					t.Errorf("model %s has not its Doc as title", name)
				}
			}
			def, _ := analysis.LookupModel(tc.want.models[0])
			if doc := between(page, `<p class="hint" id="model-doc">`, "</p>"); !strings.Contains(doc, html.EscapeString(def.Doc)) {
				t.Errorf("the hint under the form %q does not describe the %s model", doc, def.Name)
			}
			engines, engModels, engSel := formSelect(t, form, "fit-engine")
			got := map[string]string{}
			for i, en := range engines {
				got[en] = engModels[i]
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want.engines) || engSel != def.Engines[0] {
				t.Errorf("engines %v (selected %q), want %v (selected %q)", got, engSel, tc.want.engines, def.Engines[0])
			}
			for g, pairs := range tc.want.groups {
				m := dataForRe("fit-group-" + g).FindStringSubmatch(form)
				switch {
				case pairs == "" && m != nil:
					t.Errorf("group %s shown for %s", g, m[1])
				case pairs != "" && (m == nil || m[1] != pairs):
					t.Errorf("group %s: %v, want data-for %q", g, m, pairs)
				}
			}
			for f, pairs := range tc.want.fields {
				re := regexp.MustCompile(`<label data-for="([^"]*)">[^<]*(<sub>b</sub>[^<]*)?<(input|select) name="` + f + `"`)
				m := re.FindStringSubmatch(form)
				switch {
				case pairs == "" && strings.Contains(form, `name="`+f+`"`):
					t.Errorf("field %s on the form", f)
				case pairs != "" && (m == nil || m[1] != pairs):
					t.Errorf("field %s: %v, want data-for %q", f, m, pairs)
				}
			}
		})
	}
}

// postFitForm posts the start-fit form of project id as a browser without
// scripts would: the pre-filled Gibbs fields and whatever else the test
// adds; it returns the new fit's id.
func postFitForm(t *testing.T, b *browser, id int64, fields url.Values) int64 {
	t.Helper()
	_, page := b.get(fmt.Sprintf("/projects/%d", id))
	form := url.Values{"engine": {"gibbs"}, "csrf": {b.csrf(page)}, "identifiability": {"weak"}, "sampler": {"default"}, "chains": {"4"}, "samples": {"2000"},
		"burnin": {"1000"}, "thin": {"1"}, "seed": {"3"}, "kernel": {""}, "kernel_custom": {""}, "v": {""}, "flag_threshold": {""}}
	for k, v := range fields {
		form[k] = v
	}
	resp, body := b.post(fmt.Sprintf("/projects/%d/fits", id), form)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/fits/") {
		t.Fatalf("start fit %v: %d %s", fields, resp.StatusCode, clipText(between(body, `class="error"`, "</"), 500))
	}
	var fid int64
	fmt.Sscanf(resp.Header.Get("Location"), "/fits/%d", &fid)
	return fid
}

// TestDashboardFitFormFits starts fits of every model from the dashboard's
// form, as a browser without scripts posts it (every model's settings, the
// Gibbs fields pre-filled): a bounded EP fit, a robust fit with model
// selection (with the engine select left at the classification model's
// gibbs), an ordinal EP fit and a Gibbs classification fit; the settings
// of the other models and engines are left out, so that the fits start
// with the right specs and finish. A robust fit with select and a fixed
// epsilon is refused with the form kept.
func TestDashboardFitFormFits(t *testing.T) {
	e := newEnv(t)
	bnd, bkey := e.boundedProject("sliders", 5)
	bin, rkey := e.binaryProject("rte")
	ord, okey := e.loadedProject("essays")
	b := newBrowser(t, e)
	b.login(testAdmin)

	done := func(fid int64, key string) map[string]any {
		t.Helper()
		f := e.waitFit(fid, key, 120*time.Second)
		if f["state"] != "done" {
			t.Fatalf("fit %d ended %s: %v", fid, f["state"], f["message"])
		}
		return f["spec"].(map[string]any)
	}
	check := func(what string, spec map[string]any, want map[string]any, absent ...string) {
		t.Helper()
		for k, v := range want {
			if fmt.Sprint(spec[k]) != fmt.Sprint(v) {
				t.Errorf("%s: spec %s = %v, want %v (spec %v)", what, k, spec[k], v, spec)
			}
		}
		for _, k := range absent {
			if _, ok := spec[k]; ok {
				t.Errorf("%s: spec has %s = %v", what, k, spec[k])
			}
		}
	}

	// Bounded, EP, with robust and ordinal fields that do not apply.
	fid := postFitForm(t, b, bnd, url.Values{"model": {"bounded"}, "engine": {"ep"}, "likelihood": {"truncnorm"}, "bias": {"1"}, "bounds": {"censor"},
		"dispersion": {""}, "restarts": {"2"}, "epsilon": {"0.1"}, "select": {"1"}, "sigma": {"0.5"}, "thresholds": {"-1,1"}, "max_rhat": {"1.05"}})
	check("bounded", done(fid, bkey), map[string]any{"model": "bounded", "engine": "ep", "likelihood": "truncnorm", "bias": true, "bounds": "censor", "restarts": 2},
		"epsilon", "select", "sigma", "thresholds", "em")

	// Robust with model selection; the engine select still says gibbs
	// (the classification model's), as without the page's script.
	fid = postFitForm(t, b, bin, url.Values{"model": {"robust"}, "engine": {"gibbs"}, "kernel": {"identity"}, "select": {"1"}, "em": {"tilted"}, "epsilon": {""},
		"precisions": {"inferred"}, "likelihood": {"beta"}, "bounds": {"squeeze"}})
	check("robust", done(fid, rkey), map[string]any{"model": "robust", "engine": "ep", "select": true, "em": "tilted", "kernel": "identity"},
		"epsilon", "likelihood", "bounds", "precisions")

	// Ordinal by EP, with its thresholds' evidence maximisation from 2
	// starting points; the bounded and robust settings are ignored.
	fid = postFitForm(t, b, ord, url.Values{"model": {"ordinal"}, "engine": {"ep"}, "kernel": {"identity"}, "restarts": {"2"},
		"likelihood": {"beta"}, "em": {"tilted"}, "bias": {"1"}})
	check("ordinal ep", done(fid, okey), map[string]any{"model": "ordinal", "engine": "ep", "restarts": 2}, "likelihood", "em", "bias", "thresholds")

	// Gibbs still: the classification model of the binary project, with
	// the robust settings posted too.
	fid = postFitForm(t, b, bin, url.Values{"model": {"classification"}, "engine": {"gibbs"}, "kernel": {"identity"}, "chains": {"2"}, "samples": {"100"},
		"burnin": {"50"}, "precisions": {"fixed"}, "select": {"1"}, "epsilon": {"0.2"}, "em": {"paper"}, "restarts": {"4"}})
	check("classification", done(fid, rkey), map[string]any{"model": "classification", "engine": "gibbs", "chains": 2, "samples": 100, "burnin": 50, "precisions": "fixed"},
		"select", "epsilon", "em", "restarts")

	// A robust fit that selects the model cannot fix epsilon: refused,
	// with the form as posted.
	_, page := b.get(fmt.Sprintf("/projects/%d", bin))
	resp, page := b.post(fmt.Sprintf("/projects/%d/fits", bin), url.Values{"csrf": {b.csrf(page)}, "model": {"robust"}, "engine": {"ep"},
		"select": {"1"}, "epsilon": {"0.1"}, "chains": {"4"}})
	form := between(page, `id="fit-form"`, "</form>")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "The fit was not started") || !strings.Contains(page, "leave epsilon out") ||
		!strings.Contains(form, `<option value="robust" selected `) || !regexp.MustCompile(`name="epsilon"[^>]*value="0.1"`).MatchString(form) ||
		!regexp.MustCompile(`<option value="ep" data-models="robust" selected>`).MatchString(form) {
		t.Errorf("refused robust fit: %d %s", resp.StatusCode, clipText(form, 800))
	}
}
