package server

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserAgreementWeights drives the project page's weights option in
// headless Chromium: with ?weights=radical the coefficient table shows the
// radical-weighted coefficients (Fleiss' kappa, Gwet's AC2, ...), each
// with the API's value to the 3 decimals shown; without a weights option
// it shows none (the default weightings stay in the API's document). It
// skips as TestBrowserDashboard does.
func TestBrowserAgreementWeights(t *testing.T) {
	cr := newChrome(t)
	e, id, key := loadedEnv(t, "sirt-writing-k1")
	doc := e.call("GET", fmt.Sprintf("/api/v1/projects/%d/agreement?only=coefficients&bootstrap=0&weights=radical", id), key, nil, 200)
	want := doc["weighted"].(map[string]any)["radical"].(map[string]any)["fleiss_kappa"].(map[string]any)["value"].(float64)
	rowValue := `(Array.from(document.querySelectorAll("#agreement-table tbody tr")).find(tr => tr.firstChild.textContent === "Fleiss' kappa (radical weights)") || {children: [{}, {textContent: "none"}]}).children[1].textContent`
	weightedRows := `Array.from(document.querySelectorAll("#agreement-table tbody tr")).filter(tr => / weights\)$/.test(tr.firstChild.textContent)).length`
	cr.login(e.url+"/login", key, chromedp.WaitVisible(chromedp.ID("agreement-table")))
	if n := cr.count(weightedRows); n != 0 {
		t.Errorf("default options: %d weighted rows, want none", n)
	}
	if err := chromedp.Do(cr.ctx,
		chromedp.Navigate(fmt.Sprintf("%s/projects/%d?weights=radical&bootstrap=0", e.url, id)),
		chromedp.WaitVisible(chromedp.ID("agreement-table")),
	); err != nil {
		t.Fatalf("page with weights=radical: %v", err)
	}
	if got := cr.eval(rowValue); got != strconv.FormatFloat(want, 'f', 3, 64) {
		t.Errorf("Fleiss' kappa (radical weights) shows %q, the API has %.6g", got, want)
	}
	if n := cr.count(weightedRows); n < 5 {
		t.Errorf("weights=radical: %d weighted rows, want the radical set (at least 5)", n)
	}
	cr.shot("dashboard-agreement-radical.png")
}
