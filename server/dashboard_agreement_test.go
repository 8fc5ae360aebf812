package server

import (
	"strings"
	"testing"
)

// TestDashboardAgreementOptions: the project page's agreement options
// (?ci=, ?null=, ?weights=) are offered, kept when valid (dropped when
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			br.agreementSection(t, id, tc.query, tc.want, tc.not)
		})
	}
	_, js := br.get("/static/app.js")
	for _, w := range []string{`getAttribute("data-query")`, `fmtP(c.p_value)`, `fmtP(c.p_value_null)`} {
		if !strings.Contains(js, w) {
			t.Errorf("app.js has no %q", w)
		}
	}
}
