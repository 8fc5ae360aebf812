package server

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestModelChoicePage fits models that choose among candidates by the
// evidence (the crowd consensus's rater models on the RTE subset; the
// bounded model's likelihoods and dispersions on a few slider ratings)
// and one whose rater model is forced, and checks the fit page's Model
// choice table: a row per candidate of report.json's model_choice, the
// chosen one marked, the reason; none for the forced model.
func TestModelChoicePage(t *testing.T) {
	e, rte, rteKey := binaryEnv(t, "rte-choice")
	sliders, sliderKey := e.project("sliders-choice", "bounded:0..100")
	var labels []map[string]any
	for i, vs := range [][]string{{"42.5", "40", "55"}, {"90", "85", "100"}, {"10", "0", "20"}, {"60", "70", "30"}, {"75", "80", "65"}} {
		for r, v := range vs {
			labels = append(labels, map[string]any{"item_id": fmt.Sprintf("i%d", i), "rater_id": fmt.Sprintf("r%d", r), "label": v})
		}
	}
	e.call("POST", fmt.Sprintf("/api/v1/projects/%d/labels", sliders), sliderKey, map[string]any{"labels": labels}, 201)

	br := newBrowser(t, e)
	for _, tc := range []struct {
		name    string
		project int64
		key     string
		spec    map[string]any
		family  string // "" when the fit makes no choice
	}{
		{"confusion auto", rte, rteKey, map[string]any{"model": "confusion", "seed": 5}, "rater model"},
		{"confusion forced", rte, rteKey, map[string]any{"model": "confusion", "rater_model": "spammer", "seed": 5}, ""},
		{"bounded auto", sliders, sliderKey, map[string]any{"model": "bounded", "seed": 5}, "bounded model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := e.call("POST", fmt.Sprintf("/api/v1/projects/%d/fits", tc.project), tc.key, tc.spec, 202)
			fid := int64(f["id"].(float64))
			if done := e.waitFit(fid, tc.key, 120*time.Second); done["state"] != "done" {
				t.Fatalf("fit: %v", done)
			}
			rep := e.call("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), tc.key, nil, 200)
			br.login(tc.key)
			resp, page := br.get(fmt.Sprintf("/fits/%d", fid))
			if resp.StatusCode != 200 {
				t.Fatalf("fit page: %d", resp.StatusCode)
			}
			mc, _ := rep["model_choice"].(map[string]any)
			if tc.family == "" {
				if mc != nil || strings.Contains(page, `id="model-choice"`) {
					t.Errorf("a forced rater model has a model choice: report %v, page %v", mc, strings.Contains(page, `id="model-choice"`))
				}
				return
			}
			if mc == nil || mc["family"] != tc.family {
				t.Fatalf("report.json: model_choice %v, want family %q", mc, tc.family)
			}
			cands := mc["candidates"].([]any)
			table := between(page, `id="model-choice-table"`, "</table>")
			if n := strings.Count(table, "<tr"); n != len(cands)+1 {
				t.Errorf("the model choice table has %d rows, want %d candidates and the header", n, len(cands))
			}
			chosen := mc["chosen"].(string)
			if n := strings.Count(table, `<tr class="chosen"><td>`+chosen+`</td>`); n != 1 {
				t.Errorf("the chosen candidate %s is marked %d times in\n%s", chosen, n, table)
			}
			if strings.Count(table, `class="chosen"`) != 1 {
				t.Errorf("%d rows marked chosen", strings.Count(table, `class="chosen"`))
			}
			for _, c := range cands {
				if name := c.(map[string]any)["name"].(string); !strings.Contains(table, "<td>"+name+"</td>") {
					t.Errorf("candidate %s is not in the table", name)
				}
			}
			why := between(page, `id="model-choice-why"`, "</p>")
			if why == "" || !strings.Contains(page, "Model choice ("+tc.family+")") {
				t.Errorf("no reason or title for the choice: %q", why)
			}
		})
	}
}

// TestAgreementTiesControl checks the project page's tie rule control
// (issue 29 item 5) without a browser: the agreement section of a project
// of labels has a select of the majority vote's and Wawa's tie rule that
// reloads the page with ?ties=, the page hands the rule to app.js (which
// passes it to the agreement API) and keeps it in the low-agreement
// filter; an unknown rule is ignored; bounded ratings have no control.
func TestAgreementTiesControl(t *testing.T) {
	e, rte, rteKey := binaryEnv(t, "rte-ties")
	sliders, sliderKey := e.project("sliders-ties", "bounded:0..100")
	br := newBrowser(t, e)
	for _, tc := range []struct {
		name      string
		project   int64
		key       string
		query     string
		want, not []string
	}{
		{"default", rte, rteKey, "", []string{`data-ties=""`, `id="ties-form"`, `<select name="ties" id="ties">`,
			`<option value="frequent" selected>`, `<option value="first">`, `id="aggregator-ties"`}, []string{`name="ties" value=`}},
		{"first", rte, rteKey, "?ties=first&below=0.5", []string{`data-ties="first"`, `data-query="ties=first"`, `<option value="first" selected>`,
			`<option value="frequent">`, `<input type="hidden" name="below" value="0.5">`, `<input type="hidden" name="ties" value="first">`}, nil},
		{"frequent", rte, rteKey, "?ties=frequent", []string{`data-ties="frequent"`, `<option value="frequent" selected>`}, nil},
		{"unknown rule", rte, rteKey, "?ties=random", []string{`data-ties=""`, `<option value="frequent" selected>`}, []string{`value="random"`, "ties=random", `data-ties="random"`}},
		{"bounded", sliders, sliderKey, "", []string{`id="agreement"`}, []string{`id="ties-form"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			br.login(tc.key)
			br.agreementSection(t, tc.project, tc.query, tc.want, tc.not)
		})
	}
	_, js := br.get("/static/app.js")
	for _, w := range []string{`getAttribute("data-ties")`, `getAttribute("data-query")`, `(query ? "?" + query : "")`, `getElementById("ties-form")`} {
		if !strings.Contains(js, w) {
			t.Errorf("app.js does not pass the tie rule on: no %q", w)
		}
	}
}
