package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserAgreement drives the project page's agreement section in
// headless Chromium: the pairwise heatmap shows every pair of raters with
// its kappa, colour and shared items; the per-item table lists the items
// lowest agreement first; the low-agreement filter (below=0.5) reloads the
// page with fewer rows, all below 0.5; an item links to its labels. It
// skips as TestBrowserDashboard does.
func TestBrowserAgreement(t *testing.T) {
	cr := newChrome(t)
	e, id, key := loadedEnv(t, "sirt-writing-k1")
	ctx := cr.ctx
	rowsReady := `(document.querySelector("#item-agreement-table") || {getAttribute: () => null}).getAttribute("data-rows")`
	waitRows := func() string {
		t.Helper()
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if v := cr.eval(`String(` + rowsReady + `)`); v != "null" {
				return v
			}
		}
		t.Fatal("the per-item agreement table did not load")
		return ""
	}

	cr.login(e.url+"/login", key,
		chromedp.WaitVisible(chromedp.ID("agreement-table")),
		chromedp.WaitVisible(chromedp.CSS(`#matrix-table tbody td`)),
	)
	if r := waitRows(); r != "135" {
		t.Fatalf("per-item table: %s rows, want 135", r)
	}
	// The heatmap: 7 × 7 cells, 42 off the diagonal, each pair with its
	// shared items and (where defined) a kappa and a colour.
	if n := cr.count(`document.querySelectorAll("#matrix-table tbody td").length`); n != 49 {
		t.Errorf("heatmap has %d cells, want 49", n)
	}
	if n := cr.count(`document.querySelectorAll("#matrix-table tbody td.self").length`); n != 7 {
		t.Errorf("heatmap diagonal has %d cells, want 7", n)
	}
	coloured := cr.count(`Array.from(document.querySelectorAll("#matrix-table tbody td:not(.self)")).filter(td => td.style.backgroundColor && /^-?[0-9.]+/.test(td.firstChild && td.firstChild.textContent || "")).length`)
	withN := cr.count(`Array.from(document.querySelectorAll("#matrix-table tbody td small")).filter(s => /^n=[0-9]+$/.test(s.textContent)).length`)
	if coloured < 20 || withN < 20 {
		t.Errorf("heatmap: %d coloured kappa cells, %d with shared items", coloured, withN)
	}
	// The kappas are the API's.
	cell := cr.eval(`document.querySelector("#matrix-table tbody tr:nth-child(1) td:nth-child(3)").getAttribute("title")`)
	if !strings.Contains(cell, "kappa") || !strings.Contains(cell, "shared items") {
		t.Errorf("heatmap cell title %q", cell)
	}
	if n := cr.count(`document.querySelectorAll("#rater-agreement-table tbody tr").length`); n != 7 {
		t.Errorf("per-rater table has %d rows, want 7", n)
	}
	values := `Array.from(document.querySelectorAll("#item-agreement-table tbody tr td:nth-child(3)")).map(td => td.getAttribute("data-v")).filter(v => v !== "").map(parseFloat)`
	if sorted := cr.eval(`String(` + values + `.every((v, i, a) => i === 0 || a[i-1] <= v))`); sorted != "true" {
		t.Error("per-item table is not sorted by agreement, lowest first")
	}
	scored := cr.count(values + `.length`)
	low := cr.count(values + `.filter(v => v < 0.5).length`)
	if low == 0 || low >= scored {
		t.Fatalf("test data: %d of %d scored items below 0.5", low, scored)
	}
	cr.shot("dashboard-agreement.png")

	// The low-agreement filter.
	err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("below"), "0.5"),
		chromedp.Click(chromedp.ID("below-apply")),
		chromedp.WaitVisible(chromedp.ID("below-clear")),
	)
	if err != nil {
		t.Fatalf("applying the filter: %v", err)
	}
	if r := waitRows(); r != fmt.Sprint(low) {
		t.Errorf("filtered table: %s rows, want the %d below 0.5", r, low)
	}
	if url := cr.eval(`location.search`); url != "?below=0.5" {
		t.Errorf("filter URL %q", url)
	}
	if all := cr.eval(`String(` + values + `.every(v => v < 0.5))`); all != "true" {
		t.Error("the filtered table shows items at or above 0.5")
	}
	if st := cr.eval(`document.querySelector("#item-agreement-status").textContent`); !strings.Contains(st, fmt.Sprintf("%d of %d items", low, scored)) {
		t.Errorf("filter status %q", st)
	}
	if href := cr.eval(`document.querySelector("#dl-agreement-items").getAttribute("href")`); !strings.HasSuffix(href, "format=csv&below=0.5") {
		t.Errorf("items CSV link %q", href)
	}
	// The CSV downloads with the browser's session.
	csvRows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(async () => { const r = await fetch(document.querySelector("#dl-agreement-items").href); return r.ok ? (await r.text()).trim().split("\n").length : -r.status; })()`, chromedp.EvalAwaitPromise))
	if err != nil || csvRows != low+1 {
		t.Errorf("items CSV from the page: %d lines (want %d), %v", csvRows, low+1, err)
	}
	cr.shot("dashboard-agreement-below.png")

	// An item links to its labels.
	item := cr.eval(`document.querySelector("#item-agreement-table tbody tr td a").textContent`)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#item-agreement-table tbody tr td a`)),
		chromedp.WaitVisible(chromedp.ID("labels-table")),
	)
	if err != nil {
		t.Fatalf("item labels page: %v", err)
	}
	if got := cr.eval(`document.querySelector("#item-id").textContent`); got != item {
		t.Errorf("labels page of %q, want %q", got, item)
	}
	if n := cr.count(`document.querySelectorAll("#labels-table tbody tr").length`); n < 2 {
		t.Errorf("labels page lists %d labels", n)
	}
	if !strings.Contains(cr.eval(`location.pathname`), fmt.Sprintf("/projects/%d/labels", id)) {
		t.Errorf("labels page path %q", cr.eval(`location.pathname`))
	}
}

// TestBrowserAgreementTies drives the agreement section's tie rule in
// headless Chromium on the RTE subset (10 labels per item, so majority
// votes tie): the page asks the agreement API with the default rule and
// says so; choosing "first" reloads the page with ?ties=first, asks the
// API with it and says so, with as many tied items, given to other labels. It skips as
// TestBrowserDashboard does.
func TestBrowserAgreementTies(t *testing.T) {
	cr := newChrome(t)
	e, _, key := binaryEnv(t, "rte-ties")
	ctx := cr.ctx
	// tryEval evaluates js, "" while the page is between two documents
	// (the select's change reloads it: an evaluation during the
	// navigation fails, and is tried again).
	tryEval := func(js string) string {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			return ""
		}
		return v
	}
	tiesText := func() string {
		t.Helper()
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if v := tryEval(`(document.querySelector("#aggregator-ties") || {}).textContent || ""`); v != "" {
				return v
			}
		}
		t.Fatal("the aggregators' tie line did not load")
		return ""
	}
	cr.login(e.url+"/login", key,
		chromedp.WaitVisible(chromedp.ID("ties")),
	)
	before := tiesText()
	if !strings.Contains(before, "Majority vote: ") || !strings.Contains(before, "most frequent overall") {
		t.Errorf("tie line with the default rule: %q", before)
	}
	cr.eval(`(() => { const s = document.getElementById("ties"); s.value = "first"; s.dispatchEvent(new Event("change")); return ""; })()`)
	for deadline := time.Now().Add(30 * time.Second); tryEval(`location.search`) != "?ties=first"; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("choosing the rule did not reload the page with ?ties=first: %q", cr.eval(`location.search`))
		}
	}
	after := tiesText()
	if !strings.Contains(after, "first label in the scheme's order") {
		t.Errorf("tie line with ties=first: %q", after)
	}
	if got := cr.eval(`document.getElementById("ties").value`); got != "first" {
		t.Errorf("the select shows %q after the reload", got)
	}
	if asked := cr.eval(`String(performance.getEntriesByType("resource").some(r => r.name.includes("/agreement?ties=first")))`); asked != "true" {
		t.Error("the page did not ask the agreement API with ties=first")
	}
	tied := func(s string) string { return strings.SplitN(strings.TrimPrefix(s, "Majority vote: "), " ", 2)[0] }
	if tied(before) != tied(after) || tied(before) == "0" {
		t.Errorf("tied items %s under frequent, %s under first; want the same, more than 0", tied(before), tied(after))
	}
	// RTE's two tied items: class 1 has more labels (218 of 400), so
	// they go to 1 under frequent and to 0 under first.
	perLabel := func(s string) string { return between(s, "(items per label: ", ")") }
	if perLabel(before) == perLabel(after) {
		t.Errorf("the majority vote's items per label do not change with the rule: %q", perLabel(after))
	}
	cr.shot("dashboard-agreement-ties.png")
}

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
