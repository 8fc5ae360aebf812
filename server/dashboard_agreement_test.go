package server

import (
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"concord/reports"
)

// TestDashboardAgreementOptions: the project page's agreement options
// (?ci=, ?null=, ?weights= and the API's other query parameters:
// population, bootstrap, seed, random_start, pairs, min_shared, ds_iter, ds_tol,
// ds_gold, ds_init, ds_init_strategy, weights_matrix) are offered, kept when valid (dropped when
// not), carried by the page's other agreement forms and passed on to the
// API as data-query; the JS reads data-query and shows the p-values.
func TestDashboardAgreementOptions(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	br := newBrowser(t, e)
	br.login(key)
	for _, tc := range []struct {
		name, query string
		want, not   []string
	}{
		{"defaults", "", []string{`id="agreement-options"`, `data-query=""`, `<option value="" selected>t (irrCAC, default)</option>`,
			`<option value="radical">radical</option>`, `<option value="bipolar">bipolar</option>`, `<option value="circular">circular</option>`},
			[]string{`name="ci" value=`, `p (vs 0.5)`}},
		{"chosen", "?ci=normal&null=0.5&weights=radical&ties=first", []string{`data-query="ci=normal&amp;null=0.5&amp;ties=first&amp;weights=radical"`,
			`<option value="normal" selected>`, `<option value="radical" selected>radical</option>`, `value="0.5"`,
			`<input type="hidden" name="ci" value="normal">`, `<input type="hidden" name="weights" value="radical">`, `p (vs 0.5)`}, nil},
		{"invalid dropped", "?ci=wald&null=half&weights=cubic", []string{`data-query=""`}, []string{"wald", "half", "cubic"}},
		{"population and the rest", "?population=500&bootstrap=0&seed=7&pairs=all&min_shared=2&ds_iter=50&ds_tol=1e-6&ds_gold=true",
			[]string{`data-query="bootstrap=0&amp;ds_gold=true&amp;ds_iter=50&amp;ds_tol=1e-6&amp;min_shared=2&amp;pairs=all&amp;population=500&amp;seed=7"`,
				`name="population" id="agreement-population" min="0" step="1" value="500"`, `id="agreement-bootstrap" min="0" max="10000" step="1" value="0"`,
				`id="agreement-seed" min="0" step="1" value="7"`, `id="agreement-pairs" size="6" value="all"`, `id="agreement-min-shared" min="0" step="1" value="2"`,
				`value="50" placeholder="500"`, `value="1e-6" placeholder="1e-10"`, `id="agreement-ds-gold" value="true" checked`,
				`<input type="hidden" name="population" value="500">`, `<input type="hidden" name="ds_gold" value="true">`},
			[]string{`name="ci" value=`}},
		{"custom weights and DS initial errors", "?weights_matrix=" + url.QueryEscape("1,0.8,0.5,0") + "&ds_init_strategy=addition&ds_init=" + url.QueryEscape("rater,true,label,value\nr1,0,0,5"),
			[]string{`data-query="ds_init=rater%2Ctrue%2Clabel%2Cvalue%0Ar1%2C0%2C0%2C5&amp;ds_init_strategy=addition&amp;weights_matrix=1%2C0.8%2C0.5%2C0"`,
				`placeholder="1,0.5,0">1,0.8,0.5,0</textarea>`, `placeholder="rater,true,label,value">rater,true,label,value`, `<option value="addition" selected>`,
				`<input type="hidden" name="weights_matrix" value="1,0.8,0.5,0">`}, nil},
		{"crowd-kit's random starts", "?random_start=crowdkit", []string{`data-query="random_start=crowdkit"`, `<option value="crowdkit" selected>crowd-kit's (numpy)</option>`,
			`id="agreement-seed" min="0" step="1" value="" placeholder="0"`, `<input type="hidden" name="random_start" value="crowdkit">`}, nil},
		{"invalid others dropped", "?population=-3&bootstrap=99999&seed=x&pairs=some&min_shared=-1&ds_iter=1e9&ds_tol=-1&ds_gold=maybe&ds_init_strategy=merge&random_start=numpy",
			[]string{`data-query=""`, `id="agreement-population" min="0" step="1" value=""`, `placeholder="1000"`},
			[]string{`value="-3"`, "99999", `value="some"`, "maybe", `value="1e9"`, `type="hidden" name="population"`, "merge", `value="numpy"`, "random_start=numpy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			br.agreementSection(t, id, tc.query, tc.want, tc.not)
		})
	}
	// The page's query is the API's: population reaches the analysis.
	_, page := br.get(fmt.Sprintf("/projects/%d?population=500&bootstrap=0", id))
	dq := strings.TrimPrefix(between(page, `data-query="`, `">`), `data-query="`)
	doc := e.call("GET", fmt.Sprintf("/api/v1/projects/%d/agreement?only=coefficients&%s", id, strings.ReplaceAll(dq, "&amp;", "&")), key, nil, 200)
	if doc["population"] != 500.0 || doc["bootstrap"] != nil && doc["bootstrap"] != 0.0 {
		t.Errorf("the API on the page's query %q: population %v, bootstrap %v", dq, doc["population"], doc["bootstrap"])
	}
	// The custom weights reach the analysis too: quadratic weights on
	// 0..3 as a toeplitz row give weighted.custom = weighted.quadratic.
	_, page = br.get(fmt.Sprintf("/projects/%d?bootstrap=0&weights=quadratic&weights_matrix=%s", id, url.QueryEscape("1,0.8888888888888888,0.5555555555555556,0")))
	dq = strings.TrimPrefix(between(page, `data-query="`, `">`), `data-query="`)
	doc = e.call("GET", fmt.Sprintf("/api/v1/projects/%d/agreement?only=coefficients&%s", id, strings.ReplaceAll(dq, "&amp;", "&")), key, nil, 200)
	w, _ := doc["weighted"].(map[string]any)
	quad, _ := w["quadratic"].(map[string]any)
	custom, _ := w["custom"].(map[string]any)
	if a, b := quad["gwet_ac2"].(map[string]any)["value"], custom["gwet_ac2"].(map[string]any)["value"]; a == nil || math.Abs(a.(float64)-b.(float64)) > 1e-9 {
		t.Errorf("the API on the page's query %q: custom Gwet AC2 %v, quadratic %v", dq, b, a)
	}
	_, js := br.get("/static/app.js")
	for _, w := range []string{`getAttribute("data-query")`, `fmtP(c.p_value)`, `fmtP(c.p_value_null)`} {
		if !strings.Contains(js, w) {
			t.Errorf("app.js has no %q", w)
		}
	}
}

// TestDashboardAgreementSection: the project page has the agreement
// detail (heatmap, per-item table with the low-agreement filter carried
// from ?below=, per-rater table, CSV links that download with the session);
// the item labels page lists an item's labels, and refuses items of no
// project and other projects' items.
func TestDashboardAgreementSection(t *testing.T) {
	e, id, key := loadedEnv(t, "k1")
	other, _ := e.project("other", "ordinal:0..3")
	b := newBrowser(t, e)
	b.login(key)

	_, page := b.get(fmt.Sprintf("/projects/%d?below=0.5", id))
	for _, want := range []string{`id="matrix-table"`, `id="item-agreement-table" data-below="0.5"`, `id="rater-agreement-table"`, `name="below"`, `value="0.5"`,
		fmt.Sprintf(`href="/api/v1/projects/%d/agreement/items?format=csv&amp;below=0.5"`, id), `id="below-clear"`} {
		if !strings.Contains(page, want) {
			t.Errorf("project page lacks %s", want)
		}
	}
	// The agreement tables' numbers are explained in tooltips (issue 20
	// item 6).
	for _, key := range []string{"item_agreement", "mean_kappa", "cohen_kappa", "krippendorff_alpha"} {
		if g := html.EscapeString(reports.Gloss(key)); g == "" || !strings.Contains(page, `title="`+g+`"`) {
			t.Errorf("project page lacks the tooltip of %s", key)
		}
	}
	_, page = b.get(fmt.Sprintf("/projects/%d?below=%%22%%3E%%3Cscript%%3E", id))
	if strings.Contains(page, `"><script>`) {
		t.Error("the below parameter is not escaped")
	}
	// The CSV links download with the session cookie.
	resp, body := b.get(fmt.Sprintf("/api/v1/projects/%d/agreement/items?format=csv&below=0.5&bootstrap=0", id))
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "Item,Labels,Agreement\n") {
		t.Errorf("items CSV with the session: %d %q", resp.StatusCode, clipText(body, 200))
	}

	// The item labels page (the items table links to it).
	resp, page = b.get(fmt.Sprintf("/projects/%d/labels?item=100020106", id))
	if resp.StatusCode != 200 || !strings.Contains(page, `id="labels-table"`) || !strings.Contains(page, "db03") || !strings.Contains(page, "db54") || !strings.Contains(page, "2 labels") {
		t.Errorf("labels page: %d\n%s", resp.StatusCode, clipText(page, 3000))
	}
	if resp, _ := b.get(fmt.Sprintf("/projects/%d/labels?item=nope", id)); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown item: %d", resp.StatusCode)
	}
	if resp, _ := b.get(fmt.Sprintf("/projects/%d/labels", id)); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("no item: %d", resp.StatusCode)
	}
	if resp, _ := b.get(fmt.Sprintf("/projects/%d/labels?item=100020106", other)); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another project's page: %d", resp.StatusCode)
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
