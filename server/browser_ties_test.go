package server

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

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
