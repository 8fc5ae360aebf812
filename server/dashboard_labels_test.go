package server

import (
	"concord/reports"
	"fmt"
	"html"
	"net/http"
	"strings"
	"testing"
)

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
