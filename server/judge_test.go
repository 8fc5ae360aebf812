package server

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"concord/analysis"
	"concord/annotations"
)

// judgeFixture is 40 items labelled by 4 humans and one model rater with
// probabilities: the humans agree with the item's class except that
// human k errs on the items i with i % 5 == k, the model errs on every
// fourth item.
func judgeFixture() string {
	var b strings.Builder
	b.WriteString("item_id,rater_id,label,confidence,is_model\n")
	for i := 0; i < 40; i++ {
		class := i % 2
		for h := 0; h < 4; h++ {
			v := class
			if i%5 == h {
				v = 1 - class
			}
			fmt.Fprintf(&b, "i%d,h%d,%d,,no\n", i, h, v)
		}
		v := class
		if i%4 == 0 {
			v = 1 - class
		}
		fmt.Fprintf(&b, "i%d,llm,%d,0.%d,yes\n", i, v, 6+i%4)
	}
	return b.String()
}

// Model raters through the server: the import stores the probabilities
// and the marks, the judge route answers what analysis.JudgeReport gives
// on the same labels, the dashboard shows it, and a project without model
// raters gets a precise 400.
func TestJudgeRoute(t *testing.T) {
	e := newEnv(t, func(*Config) {})
	id, key := e.project("judged", "nominal:0,1")
	file := judgeFixture()
	resp, b := e.upload(fmt.Sprintf("/api/v1/projects/%d/imports", id), key, map[string][2]string{"file": {"judged.csv", file}}, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("import: %d %s", resp.StatusCode, b)
	}
	raters := e.call("GET", fmt.Sprintf("/api/v1/projects/%d/raters", id), key, nil, 200)
	kinds := map[string]any{}
	for _, r := range raters["raters"].([]any) {
		m := r.(map[string]any)
		kinds[m["id"].(string)] = m["kind"]
	}
	if kinds["llm"] != "model" || kinds["h0"] != nil {
		t.Errorf("rater kinds %v", kinds)
	}
	labels := e.call("GET", fmt.Sprintf("/api/v1/projects/%d/labels?rater=llm&limit=2", id), key, nil, 200)
	if l := labels["labels"].([]any)[1].(map[string]any); l["prob"] != 0.7 {
		t.Errorf("label probability %v", l)
	}

	resp, b = e.request("GET", fmt.Sprintf("/api/v1/projects/%d/judge?epsilon=0.2&min_instances=10", id), key, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("judge: %d %s", resp.StatusCode, b)
	}
	var got struct {
		Schema string `json:"schema"`
		Judges []struct {
			Judge       string   `json:"judge"`
			Passed      bool     `json:"passed"`
			Verdict     string   `json:"verdict"`
			WinningRate *float64 `json:"winning_rate"`
			Humans      []struct {
				Rater  string  `json:"rater"`
				PValue float64 `json:"p_value"`
			} `json:"humans"`
			Agreement struct {
				Agreement, Q025, Q975 float64
			} `json:"agreement"`
		} `json:"judges"`
		Humans []struct {
			Rater     string  `json:"rater"`
			Agreement float64 `json:"agreement"`
		} `json:"humans"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	// The reference: the same test on the file read directly.
	p, err := annotations.ReadLabels(strings.NewReader(file), annotations.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := annotations.BuildDataset(annotations.MustParseScheme("nominal:0,1"), p, nil, annotations.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := analysis.JudgeReport(ds, analysis.JudgeOptions{Epsilon: 0.2, MinInstances: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != analysis.JudgeSchema || len(got.Judges) != 1 || got.Judges[0].Judge != "llm" || len(got.Humans) != 4 ||
		len(got.Judges[0].Humans) != len(want.Judges[0].Humans) || got.Judges[0].Passed != want.Judges[0].Passed ||
		got.Judges[0].Verdict != want.Judges[0].Verdict {
		t.Fatalf("judge report %s\nwant %+v", b, want.Judges[0])
	}
	for i, h := range got.Judges[0].Humans {
		if w := want.Judges[0].Humans[i]; h.Rater != w.Rater || math.Abs(h.PValue-w.PValue) > 1e-12 {
			t.Errorf("human %d: %+v, want %+v", i, h, w)
		}
	}
	if a := got.Judges[0].Agreement; !(a.Q025 <= a.Agreement && a.Agreement <= a.Q975) || math.Abs(a.Agreement-want.Judges[0].Agreement.Agreement) > 1e-12 {
		t.Errorf("judge agreement %+v, want %+v", a, want.Judges[0].Agreement)
	}

	br := newBrowser(t, e)
	br.login(key)
	br.hasLink(fmt.Sprintf("/projects/%d", id), fmt.Sprintf("/projects/%d/judge", id), "the judge report")
	_, page := br.get(fmt.Sprintf("/projects/%d/judge?epsilon=0.2", id))
	if !strings.Contains(page, `<h2 class="judge-name">llm</h2>`) || strings.Count(between(page, `id="judge-humans"`, "</table>"), "<tr>") != 5 ||
		!strings.Contains(page, want.Judges[0].Agreement.Rater) {
		t.Errorf("judge page:\n%s", between(page, `id="judge"`, "</section>"))
	}

	// A fit of the project flags the model rater in its rater table and
	// reads its probabilities (the note of soft evidence).
	fid := e.startFit(id, key, map[string]any{"model": "confusion", "seed": 1})
	if f := e.waitFit(fid, key, 60*time.Second); f["state"] != "done" {
		t.Fatalf("fit: %v", f)
	}
	_, page = br.get(fmt.Sprintf("/fits/%d", fid))
	if strings.Count(between(page, `id="raters-table"`, "</table>"), "model-rater") != 1 {
		t.Errorf("fit page does not tag the one model rater")
	}
	res := e.call("GET", fmt.Sprintf("/api/v1/fits/%d/result", fid), key, nil, 200)
	if notes := fmt.Sprint(res["diagnostics"].(map[string]any)["notes"]); !strings.Contains(notes, "40 labels carry probabilities") {
		t.Errorf("fit notes: %s", notes)
	}

	// The fit's judge report: the same test on the labels the fit used,
	// in the API and on the fit page.
	resp, b = e.request("GET", fmt.Sprintf("/api/v1/fits/%d/judge?epsilon=0.2&min_instances=10", fid), key, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("fit judge: %d %s", resp.StatusCode, b)
	}
	var fj struct {
		Judges []struct {
			Judge   string `json:"judge"`
			Verdict string `json:"verdict"`
			Humans  []struct {
				Rater  string  `json:"rater"`
				PValue float64 `json:"p_value"`
			} `json:"humans"`
		} `json:"judges"`
	}
	if err := json.Unmarshal(b, &fj); err != nil {
		t.Fatal(err)
	}
	if len(fj.Judges) != 1 || fj.Judges[0].Judge != "llm" || fj.Judges[0].Verdict != want.Judges[0].Verdict || len(fj.Judges[0].Humans) != len(want.Judges[0].Humans) {
		t.Fatalf("fit judge report %s\nwant %+v", b, want.Judges[0])
	}
	for i, h := range fj.Judges[0].Humans {
		if w := want.Judges[0].Humans[i]; h.Rater != w.Rater || math.Abs(h.PValue-w.PValue) > 1e-12 {
			t.Errorf("fit judge, human %d: %+v, want %+v", i, h, w)
		}
	}
	if sec := between(page, `id="fit-judge"`, "</section>"); !strings.Contains(sec, "<td>llm</td>") || !strings.Contains(sec, fmt.Sprintf(`href="/api/v1/fits/%d/judge"`, fid)) {
		t.Errorf("fit page's judge section:\n%s", sec)
	}
	e.wantError("GET", fmt.Sprintf("/api/v1/fits/%d/judge?q=2", fid), key, nil, 400, "invalid", "--q 2")

	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d/judge?epsilon=x", id), key, nil, 400, "invalid", "epsilon")
	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d/judge?judges=nobody", id), key, nil, 400, "invalid", `model rater "nobody" has no labels`)
	other, okey := e.project("humans only", "nominal:0,1")
	e.upload(fmt.Sprintf("/api/v1/projects/%d/imports", other), okey, map[string][2]string{"file": {"h.csv", "item_id,rater_id,label\n1,a,0\n1,b,1\n"}}, nil)
	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d/judge", other), okey, nil, 400, "invalid", "no model raters")
	_, page = br.get(fmt.Sprintf("/projects/%d/judge", id))
	if !strings.Contains(page, `id="judge"`) {
		t.Errorf("judge page without parameters")
	}
}
