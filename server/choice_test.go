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
	sliders, sliderKey := e.boundedProject("sliders-choice", 5)

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
