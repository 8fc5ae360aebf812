package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserAgreementWeights drives the project page's agreement options
// in headless Chromium: with ?weights=radical the coefficient table shows
// the radical-weighted coefficients (Fleiss' kappa, Gwet's AC2, ...), each
// with the API's value to the 3 decimals shown; without a weights option
// it shows none (the default weightings stay in the API's document); SE
// and z are the API's too. The
// aggregator table shows each baseline aggregator's run, so that the
// options show: ds_iter=2 stops Dawid-Skene after 2 iterations,
// random_start=crowdkit starts M-MSR from crowd-kit's draws with seed 0.
// It skips as TestBrowserDashboard does.
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
	// SE and z beside the p-value, as the API has them.
	fk := doc["weighted"].(map[string]any)["radical"].(map[string]any)["fleiss_kappa"].(map[string]any)
	cells := `(Array.from(document.querySelectorAll("#agreement-table tbody tr")).find(tr => tr.firstChild.textContent === "Fleiss' kappa (radical weights)") || {children: []}).children`
	if se, z := cr.eval(cells+`[3].textContent`), cr.eval(cells+`[4].textContent`); se != strconv.FormatFloat(fk["se"].(float64), 'f', 3, 64) || z != strconv.FormatFloat(fk["z"].(float64), 'f', 2, 64) {
		t.Errorf("Fleiss' kappa (radical weights): SE %q, z %q; the API has %v, %v", se, z, fk["se"], fk["z"])
	}
	if n := cr.count(weightedRows); n < 5 {
		t.Errorf("weights=radical: %d weighted rows, want the radical set (at least 5)", n)
	}
	cr.shot("dashboard-agreement-radical.png")

	run := func(agg string) string {
		return cr.eval(`(document.querySelector("#aggregator-table tr[data-aggregator='` + agg + `'] td:nth-child(3)") || {textContent: "none"}).textContent`)
	}
	if err := chromedp.Do(cr.ctx,
		chromedp.Navigate(fmt.Sprintf("%s/projects/%d?ds_iter=2&random_start=crowdkit&bootstrap=0", e.url, id)),
		chromedp.WaitVisible(chromedp.ID("aggregator-table")),
	); err != nil {
		t.Fatalf("page with ds_iter=2, random_start=crowdkit: %v", err)
	}
	if got := run("dawid_skene"); !strings.HasPrefix(got, "2 iterations, ") {
		t.Errorf("ds_iter=2: Dawid-Skene's run %q", got)
	}
	if got := run("mmsr"); !strings.HasSuffix(got, "crowdkit start, seed 0") {
		t.Errorf("random_start=crowdkit: M-MSR's run %q", got)
	}
	if n := cr.count(`document.querySelectorAll("#aggregator-table tbody tr").length`); n < 8 {
		t.Errorf("aggregator table: %d rows", n)
	}
	cr.shot("dashboard-agreement-aggregators.png")
}
