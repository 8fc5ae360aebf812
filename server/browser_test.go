package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// findChromium returns the headless browser to drive: $CONCORD_CHROMIUM, or
// Debian's chromium (or another Chrome) on the PATH.
func findChromium() string {
	if p := os.Getenv("CONCORD_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// artefactDir is where the browser test saves its screenshots:
// $CONCORD_ARTIFACTS, or a temporary directory.
func artefactDir(t *testing.T) string {
	if d := os.Getenv("CONCORD_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// chrome is a headless Chromium session of a test.
type chrome struct {
	t   *testing.T
	ctx context.Context
	dir string
}

// newChrome starts headless Chromium for a test. It skips the test when
// Chromium is missing, unless CONCORD_REQUIRE_BROWSER=1 (CI).
func newChrome(t *testing.T) *chrome {
	t.Helper()
	chromium := findChromium()
	if chromium == "" {
		if os.Getenv("CONCORD_REQUIRE_BROWSER") == "1" {
			t.Fatal("CONCORD_REQUIRE_BROWSER=1 but no chromium found (apt-get install chromium, or set CONCORD_CHROMIUM)")
		}
		t.Skip("chromium not found: browser test skipped (set CONCORD_REQUIRE_BROWSER=1 to make this an error)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.WindowSize(1280, 1000),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(cancelCtx)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel)
	return &chrome{t: t, ctx: ctx, dir: artefactDir(t)}
}

// login opens page (the dashboard's "/" or "/login"), logs in with key and
// runs the actions that follow (waiting for what the landing page shows);
// a failure fails the test.
func (c *chrome) login(page, key string, then ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	err := chromedp.Do(c.ctx, append([]chromedp.Action[chromedp.Void]{
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), key),
		chromedp.Click(chromedp.ID("login-button")),
	}, then...)...)
	if err != nil {
		c.t.Fatalf("login and project page: %v", err)
	}
}

// download fetches the href of the link sel with the page's session and
// returns its size in bytes (its HTTP status, negated, when it fails).
func (c *chrome) download(sel string) int {
	c.t.Helper()
	size, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](`(async () => { const r = await fetch(document.querySelector("`+sel+`").href); return r.ok ? (await r.arrayBuffer()).byteLength : -r.status; })()`, chromedp.EvalAwaitPromise))
	if err != nil {
		c.t.Fatal(err)
	}
	return size
}

// shot saves a full-page screenshot as name in the artefact directory.
func (c *chrome) shot(name string) {
	c.t.Helper()
	buf, err := chromedp.Run(c.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		c.t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.t.Logf("screenshot %s", p)
}

// eval evaluates JavaScript that yields a string.
func (c *chrome) eval(js string) string {
	c.t.Helper()
	v, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		c.t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// count evaluates JavaScript that yields an integer.
func (c *chrome) count(js string) int {
	c.t.Helper()
	n, err := strconv.Atoi(c.eval("String(" + js + ")"))
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// waitImages waits until the page's plot images have loaded and returns
// how many did, of how many. The two main plots show at full width (at
// least 700 of the window's 1280 pixels); the others load when their
// <details> is opened, which waitImages does by clicking its summary.
func (c *chrome) waitImages() (loaded, total int) {
	c.t.Helper()
	wait := func(sel string) (int, int) {
		js := `Array.from(document.querySelectorAll("` + sel + `")).filter(i => i.complete && i.naturalWidth > 0).length`
		total := c.count(`document.querySelectorAll("` + sel + `").length`)
		for until := time.Now().Add(60 * time.Second); c.count(js) < total && time.Now().Before(until); {
			time.Sleep(200 * time.Millisecond)
		}
		return c.count(js), total
	}
	if n, total := wait("#plots figure.plot-main img"); n != 2 || total != 2 {
		c.t.Errorf("%d of %d main plots loaded, want 2", n, total)
	}
	if w := c.count(`Math.round(Math.min(...Array.from(document.querySelectorAll("#plots figure.plot-main img")).map(i => i.getBoundingClientRect().width)))`); w < 700 {
		c.t.Errorf("main plots are %d pixels wide, want full width", w)
	}
	if c.count(`document.querySelectorAll("#more-plots").length`) == 1 {
		if c.count(`document.querySelector("#more-plots").open ? 1 : 0`) != 0 {
			c.t.Error("the other plots are open before asked for")
		}
		if err := chromedp.Do(c.ctx, chromedp.Click(chromedp.CSS(`#more-plots summary`))); err != nil {
			c.t.Fatalf("opening the other plots: %v", err)
		}
	}
	return wait("#plots img")
}

// TestBrowserDashboard drives the dashboard in headless Chromium: log in
// with a project key, see the project's statistics and agreement, start a
// fit from the form, watch the progress bar finish and the ranking table
// appear, sort and search it, and save screenshots. It skips when Chromium
// is missing, unless CONCORD_REQUIRE_BROWSER=1 (CI).
func TestBrowserDashboard(t *testing.T) {
	cr := newChrome(t)
	e, id, key := loadedEnv(t, "sirt-writing-k1")
	ctx, shot, eval, count := cr.ctx, cr.shot, cr.eval, cr.count

	// Log in with the project's key: the browser lands on its project.
	cr.login(e.url+"/", key,
		chromedp.WaitVisible(chromedp.ID("fit-form")),
		chromedp.WaitVisible(chromedp.ID("agreement-table")),
	)
	shot("dashboard-project.png")
	if n := count(`document.querySelectorAll("#agreement-table tbody tr").length`); n < 5 {
		t.Errorf("agreement table has %d rows", n)
	}

	// Start a fit from the form, with enough draws that the bar moves.
	err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#fit-form input[name=chains]`), "2"),
		chromedp.SetValue(chromedp.CSS(`#fit-form input[name=samples]`), "4000"),
		chromedp.SetValue(chromedp.CSS(`#fit-form input[name=burnin]`), "500"),
		chromedp.SetValue(chromedp.CSS(`#fit-form input[name=seed]`), "42"),
		chromedp.Click(chromedp.ID("start-fit")),
		chromedp.WaitVisible(chromedp.ID("progress")),
	)
	if err != nil {
		t.Fatalf("starting a fit: %v", err)
	}
	// Watch the progress bar until the ranking table appears.
	var seen []int
	deadline := time.Now().Add(2 * time.Minute)
	for {
		now := eval(`String((document.querySelector("#progress") || {getAttribute: () => ""}).getAttribute("aria-valuenow"))`)
		if v, err := strconv.Atoi(now); err == nil && (len(seen) == 0 || seen[len(seen)-1] != v) {
			seen = append(seen, v)
			if len(seen) == 2 && v < 100 {
				shot("dashboard-fit-running.png")
			}
		}
		if eval(`String(!!document.querySelector("#ranking-table"))`) == "true" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ranking table after 2 minutes; progress seen %v", seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("progress bar values seen: %v", seen)
	if len(seen) < 2 || seen[len(seen)-1] != 100 {
		t.Errorf("progress bar did not move to 100%%: %v", seen)
	}

	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("ranking-table")), chromedp.WaitVisible(chromedp.CSS(`#precision-chart svg`))); err != nil {
		t.Fatalf("fit page: %v", err)
	}
	// The plots of package reports load with the browser's session.
	if n, total := cr.waitImages(); total < 5 || n != total {
		t.Errorf("%d of %d plot images loaded", n, total)
	}
	shot("dashboard-fit-done.png")
	state := eval(`document.querySelector("#fit-state").textContent`)
	verdict := eval(`document.querySelector("#verdict").textContent`)
	rows := count(`document.querySelectorAll("#ranking-table tbody tr").length`)
	firstRow := `document.querySelector("#ranking-table tbody tr:first-child td:nth-child(3)").textContent`
	first := eval(firstRow)
	if state != "done" || rows != 135 {
		t.Errorf("fit page: state %q, %d ranking rows", state, rows)
	}
	if verdict == "" {
		t.Error("no convergence verdict")
	}
	// Sort by item id, descending, by clicking its header twice.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#ranking-table thead th:nth-child(3)`)),
		chromedp.Click(chromedp.CSS(`#ranking-table thead th:nth-child(3)`)),
	); err != nil {
		t.Fatal(err)
	}
	if after := eval(firstRow); after == first || after == "" {
		t.Errorf("sorting by item did not reorder the table (first row %q before and after)", first)
	}
	// Search.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("ranking-search"), "100020106")); err != nil {
		t.Fatal(err)
	}
	if shown := count(`Array.from(document.querySelectorAll("#ranking-table tbody tr")).filter(r => !r.hidden).length`); shown != 1 {
		t.Errorf("search shows %d rows, want 1", shown)
	}
	href := eval(`document.querySelector("#dl-xlsx").getAttribute("href")`)
	if !strings.HasSuffix(href, "/report.xlsx") {
		t.Errorf("workbook link %q", href)
	}
	// The workbook downloads with the browser's session cookie.
	size := cr.download("#dl-xlsx")
	if size < 1000 {
		t.Errorf("workbook download from the page: %d bytes", size)
	}
	fits := e.call("GET", fmt.Sprintf("/api/v1/projects/%d/fits", id), key, nil, 200)["fits"].([]any)
	if len(fits) != 1 || fits[0].(map[string]any)["seed"].(float64) != 42 {
		t.Errorf("fits after the browser run: %v", fits)
	}
}

// TestBrowserClassification opens a binary project's done classification
// fit in headless Chromium: the consensus class table appears with every
// item, sorts and searches; the rater reliability chart, the confusion
// tables and the plots (ROC included) show; screenshots of the project page
// and the fit page are saved. It skips as TestBrowserDashboard does.
func TestBrowserClassification(t *testing.T) {
	cr := newChrome(t)
	e, id, key := binaryEnv(t, "rte-binary")
	fid := e.doneSpec(id, key, quickClassFit)

	cr.login(e.url+"/login", key,
		chromedp.WaitVisible(chromedp.ID("fit-form")),
	)
	if model := cr.eval(`document.querySelector("#fit-model").value`); model != "classification" {
		t.Errorf("start-fit form offers model %q", model)
	}
	if n := cr.count(`document.querySelectorAll("#fit-precisions option").length`); n != 3 {
		t.Errorf("precisions choices: %d", n)
	}
	cr.shot("dashboard-classification-project.png")

	// The form shows the chosen model's settings: the Gibbs group for the
	// classification model; switching to the robust model shows its group
	// and engine and hides (and disables) the Gibbs settings and the
	// precisions; the hint under the form describes the robust model.
	shown := func(sel string) string {
		return cr.eval(`(() => { const el = document.querySelector("` + sel + `"); return el ? String(!el.hidden && el.offsetParent !== null) : "missing"; })()`)
	}
	state := func() string {
		return fmt.Sprintf("gibbs %s, robust %s, evidence %s, precisions %s, engine %s, chains disabled %s",
			shown("#fit-group-gibbs"), shown("#fit-group-robust"), shown("#fit-group-evidence"), shown("#fit-precisions"),
			cr.eval(`document.querySelector("#fit-engine").value`), cr.eval(`String(document.querySelector("#fit-form input[name=chains]").matches(":disabled"))`))
	}
	if got, want := state(), "gibbs true, robust false, evidence false, precisions true, engine gibbs, chains disabled false"; got != want {
		t.Errorf("classification form: %s, want %s", got, want)
	}
	choose := func(model string) {
		cr.eval(`(() => { const s = document.querySelector("#fit-model"); s.value = "` + model + `"; s.dispatchEvent(new Event("change")); return s.value; })()`)
	}
	choose("robust")
	if got, want := state(), "gibbs false, robust true, evidence true, precisions false, engine ep, chains disabled true"; got != want {
		t.Errorf("robust form: %s, want %s", got, want)
	}
	if doc := cr.eval(`document.querySelector("#model-doc").textContent`); !strings.HasPrefix(doc, "The robust model: label-noise-robust") {
		t.Errorf("hint under the form for the robust model: %q", doc)
	}
	if n := cr.count(`Array.from(document.querySelectorAll("#fit-engine option")).filter(o => !o.disabled).length`); n != 1 {
		t.Errorf("the robust model's engine select offers %d engines, want 1 (ep)", n)
	}
	cr.shot("dashboard-robust-form.png")
	choose("classification")
	if got, want := state(), "gibbs true, robust false, evidence false, precisions true, engine gibbs, chains disabled false"; got != want {
		t.Errorf("classification form again: %s, want %s", got, want)
	}

	err := chromedp.Do(cr.ctx,
		chromedp.Navigate(fmt.Sprintf("%s/fits/%d", e.url, fid)),
		chromedp.WaitVisible(chromedp.ID("consensus-table")),
		chromedp.WaitVisible(chromedp.CSS(`#precision-chart svg`)),
		chromedp.WaitVisible(chromedp.ID("confusion")),
	)
	if err != nil {
		t.Fatalf("fit page: %v", err)
	}
	rows := `document.querySelectorAll("#consensus-table tbody tr")`
	if n := cr.count(rows + ".length"); n != 40 {
		t.Errorf("consensus table has %d rows, want 40", n)
	}
	if n := cr.count(`document.querySelectorAll("#precision-chart svg circle").length`); n != 17 {
		t.Errorf("precision chart shows %d raters, want 17", n)
	}
	if n := cr.count(`document.querySelectorAll("#confusion figure.confusion").length`); n != 17 {
		t.Errorf("%d confusion tables, want 17", n)
	}
	if n, total := cr.waitImages(); total < 5 || n != total {
		t.Errorf("%d of %d plot images loaded", n, total)
	}
	if cr.count(`document.querySelectorAll('#plots img[src$="/roc.svg"]').length`) != 1 {
		t.Error("no ROC plot on the page of a binary fit")
	}
	cr.shot("dashboard-classification-fit.png")

	// Sort by P(class), ascending: the least certain item first.
	probs := `Array.from(document.querySelectorAll("#consensus-table tbody tr td:nth-child(3)")).map(td => parseFloat(td.getAttribute("data-v")))`
	if err := chromedp.Do(cr.ctx, chromedp.Click(chromedp.CSS(`#consensus-table thead th:nth-child(3)`))); err != nil {
		t.Fatal(err)
	}
	if sorted := cr.eval(`String(` + probs + `.every((v, i, a) => i === 0 || a[i-1] <= v))`); sorted != "true" {
		t.Errorf("consensus table not sorted by P(class) after a click on its header")
	}
	// Search by rater: the items amt017 labelled (20).
	if err := chromedp.Do(cr.ctx, chromedp.SendKeys(chromedp.ID("consensus-search"), "amt017")); err != nil {
		t.Fatal(err)
	}
	if shown := cr.count(`Array.from(` + rows + `).filter(r => !r.hidden).length`); shown != 20 {
		t.Errorf("search for amt017 shows %d rows, want 20", shown)
	}
	if txt := cr.eval(`document.querySelector("#consensus-count").textContent`); txt != "20 items" {
		t.Errorf("search counter says %q", txt)
	}
	size := cr.download("#dl-xlsx")
	if size < 1000 {
		t.Errorf("workbook download from the page: %d bytes", size)
	}
}
