package server

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// browser is an HTTP client with cookies that does not follow redirects.
type browser struct {
	t  *testing.T
	e  *testEnv
	hc *http.Client
}

func newBrowser(t *testing.T, e *testEnv) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, e: e, hc: &http.Client{Jar: jar, Timeout: hangTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(req *http.Request) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.e.url+path, nil)
	return b.do(req)
}

// agreementSection gets the project page of project with query and
// checks, in t (a subtest's), that its agreement section has every string
// of want and none of not.
func (b *browser) agreementSection(t *testing.T, project int64, query string, want, not []string) {
	t.Helper()
	resp, page := b.get(fmt.Sprintf("/projects/%d%s", project, query))
	if resp.StatusCode != 200 {
		t.Fatalf("project page: %d", resp.StatusCode)
	}
	sec := between(page, `<section class="card" id="agreement"`, "</section>")
	for _, w := range want {
		if !strings.Contains(sec, w) {
			t.Errorf("the agreement section has no %q", w)
		}
	}
	for _, w := range not {
		if strings.Contains(sec, w) {
			t.Errorf("the agreement section has %q", w)
		}
	}
}

// hasLink checks that the page at path links to href; lacking says what
// the page lacks otherwise.
func (b *browser) hasLink(path, href, lacking string) {
	b.t.Helper()
	if _, page := b.get(path); !strings.Contains(page, `href="`+href+`"`) {
		b.t.Errorf("%s lacks the link to %s", path, lacking)
	}
}

// fitPage returns the dashboard page of fit fid and fails the test
// unless it is there (200) and has every string of want.
func (b *browser) fitPage(fid int64, want ...string) string {
	b.t.Helper()
	resp, page := b.get(fmt.Sprintf("/fits/%d", fid))
	if resp.StatusCode != 200 {
		b.t.Fatalf("dashboard fit page: %d", resp.StatusCode)
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			b.t.Errorf("dashboard fit page: no %q", w)
		}
	}
	return page
}

func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.e.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrf reads the CSRF token from a page.
func (b *browser) csrf(page string) string {
	b.t.Helper()
	m := csrfRe.FindStringSubmatch(page)
	if m == nil {
		b.t.Fatalf("no CSRF token on the page")
	}
	return m[1]
}

func (b *browser) login(token string) {
	b.t.Helper()
	resp, _ := b.postLogin(url.Values{"token": {token}, "next": {"/projects"}})
	if resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("login: %d", resp.StatusCode)
	}
}

// postLogin posts the login form as a browser does: from the login page,
// with its CSRF token.
func (b *browser) postLogin(form url.Values) (*http.Response, string) {
	b.t.Helper()
	_, page := b.get("/login")
	form.Set("csrf", b.csrf(page))
	return b.post("/login", form)
}

func TestDashboardLogin(t *testing.T) {
	e := newEnv(t)
	b := newBrowser(t, e)
	resp, _ := b.get("/")
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/login" {
		t.Errorf("/ without session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = b.get("/projects")
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=") {
		t.Errorf("/projects without session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, page := b.get("/login")
	if resp.StatusCode != 200 || !strings.Contains(page, `name="token"`) {
		t.Errorf("login page: %d", resp.StatusCode)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	resp, page = b.postLogin(url.Values{"token": {"nope"}})
	if resp.StatusCode != 401 || !strings.Contains(page, "neither the admin token nor a valid project API key") {
		t.Errorf("bad login: %d", resp.StatusCode)
	}
	// A key logs in to its own project.
	id, key := e.project("p", "ordinal:1..3")
	resp, _ = b.postLogin(url.Values{"token": {key}, "next": {"/projects"}})
	if resp.StatusCode != 303 || resp.Header.Get("Location") != fmt.Sprintf("/projects/%d", id) {
		t.Errorf("key login: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode {
		t.Errorf("session cookie: %+v", session)
	}
	// Off-site next is ignored, also when a browser would drop a tab or a
	// newline or read a backslash as a slash (the red team's /<TAB>/host).
	for _, next := range []string{"//evil.example/", "/\t/evil.example/", "/\n/evil.example", "/\\evil.example", "/\\/evil.example",
		"/%09/evil.example", "https://evil.example/", "/ /evil.example", "javascript:alert(1)"} {
		resp, _ = b.postLogin(url.Values{"token": {testAdmin}, "next": {next}})
		if loc := resp.Header.Get("Location"); loc != "/projects" && !(next == "/%09/evil.example" && loc == next) {
			t.Errorf("next=%q: redirected to %q", next, loc)
		}
		if resp, page := b.get("/login?next=" + url.QueryEscape(next)); resp.StatusCode != 200 || strings.Contains(page, "evil.example") && next != "/%09/evil.example" {
			t.Errorf("login page with next=%q offers it", next)
		}
	}
	// A same-site path is kept.
	resp, _ = b.postLogin(url.Values{"token": {testAdmin}, "next": {"/projects/1?tab=fits"}})
	if loc := resp.Header.Get("Location"); loc != "/projects/1?tab=fits" {
		t.Errorf("next=/projects/1?tab=fits: redirected to %q", loc)
	}
	// Login CSRF: a post without the login page's token (another site's
	// form) logs nobody in.
	fresh := newBrowser(t, e)
	resp, page = fresh.post("/login", url.Values{"token": {testAdmin}, "next": {"/projects"}})
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(page, "did not come from this dashboard") {
		t.Errorf("login without the form's token: %d", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			t.Errorf("login without the form's token set a session")
		}
	}
	_, lp := fresh.get("/login")
	resp, _ = fresh.post("/login", url.Values{"token": {testAdmin}, "csrf": {fresh.csrf(lp) + "0"}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("login with a wrong token: %d", resp.StatusCode)
	}
	resp, _ = b.post("/logout", nil)
	if resp.StatusCode != 303 {
		t.Errorf("logout: %d", resp.StatusCode)
	}
	if resp, _ = b.get("/projects"); resp.StatusCode != 303 {
		t.Errorf("after logout: %d", resp.StatusCode)
	}
	// A single-use login link.
	link := e.srv.LoginURL()
	path := strings.TrimPrefix(link, e.url)
	resp, _ = b.get(path)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/projects" {
		t.Errorf("login link: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, page = b.get("/projects"); resp.StatusCode != 200 || !strings.Contains(page, "New project") {
		t.Errorf("admin projects page: %d", resp.StatusCode)
	}
	b2 := newBrowser(t, e)
	if resp, _ = b2.get(path); resp.StatusCode != 401 {
		t.Errorf("second use of the login link: %d", resp.StatusCode)
	}
}

func TestDashboardPages(t *testing.T) {
	e, id, key := loadedEnv(t, "essays-k1")
	fid := e.doneFit(id, key)
	e.project("other", "ordinal:1..3")

	admin := newBrowser(t, e)
	admin.login(testAdmin)
	_, page := admin.get("/projects")
	if !strings.Contains(page, "essays-k1") || !strings.Contains(page, "other") {
		t.Errorf("admin's projects page lacks projects")
	}
	user := newBrowser(t, e)
	user.login(key)
	_, page = user.get("/projects")
	if !strings.Contains(page, "essays-k1") || strings.Contains(page, ">other<") || strings.Contains(page, "New project") {
		t.Errorf("key's projects page shows other projects or the admin form")
	}
	resp, page := user.get(fmt.Sprintf("/projects/%d", id))
	for _, want := range []string{"Label distribution", "Labels per rater", "db03", `id="agreement"`, `id="fit-form"`, "Import labels", fmt.Sprintf("/fits/%d", fid)} {
		if !strings.Contains(page, want) {
			t.Errorf("project page lacks %q", want)
		}
	}
	if resp.StatusCode != 200 || strings.Contains(page, "API keys") {
		t.Errorf("project page for a key: %d (API keys shown: %v)", resp.StatusCode, strings.Contains(page, "API keys"))
	}
	resp, page = user.get(fmt.Sprintf("/fits/%d", fid))
	for _, want := range []string{"Consensus ranking", `id="ranking-table"`, "Rater reliability", "<svg", "Thresholds", "Surprising labels", "report.xlsx", "report.json", "tables/items.csv", "plots/precision.svg", "export/labelstudio", "export/crowdkit", `id="ls-names"`} {
		if !strings.Contains(page, want) {
			t.Errorf("fit page lacks %q", want)
		}
	}
	if strings.Count(page, "<tr") < 135 {
		t.Errorf("ranking table has %d rows", strings.Count(page, "<tr"))
	}
	checkPlotLayout(t, page, fid)
	if resp.StatusCode != 200 {
		t.Errorf("fit page: %d", resp.StatusCode)
	}
	for _, asset := range []string{"/static/style.css", "/static/app.js", "/static/favicon.svg"} {
		if resp, _ := user.get(asset); resp.StatusCode != 200 {
			t.Errorf("%s: %d", asset, resp.StatusCode)
		}
	}
	// No external resources anywhere.
	for _, p := range []string{"/projects", fmt.Sprintf("/projects/%d", id), fmt.Sprintf("/fits/%d", fid), "/static/app.js", "/static/style.css"} {
		_, body := user.get(p)
		if m := regexp.MustCompile(`(src|href)="(https?:)?//`).FindString(body); m != "" {
			t.Errorf("%s refers to an external resource: %s", p, m)
		}
	}
	// Pages of other schemes render too.
	for _, sc := range []struct{ scheme, label string }{{"binary:0,1,pos=1", "1"}, {"bounded:0..100", "42.5"}, {"nominal:a,b,c", "b"}} {
		pid, _ := e.project("p-"+strings.Split(sc.scheme, ":")[0], sc.scheme)
		e.call("POST", fmt.Sprintf("/api/v1/projects/%d/labels", pid), testAdmin, map[string]any{"labels": []map[string]any{
			{"item_id": "i1", "rater_id": "r1", "label": sc.label}, {"item_id": "i1", "rater_id": "r2", "label": sc.label}}}, 201)
		resp, page := admin.get(fmt.Sprintf("/projects/%d", pid))
		if resp.StatusCode != 200 || !strings.Contains(page, "the classification model") && !strings.Contains(page, `id="fit-form"`) {
			t.Errorf("%s project page: %d", sc.scheme, resp.StatusCode)
		}
	}
	if resp, page = user.get("/fits/999"); resp.StatusCode != 404 || !strings.Contains(page, "fit 999 not found") {
		t.Errorf("missing fit page: %d", resp.StatusCode)
	}
	if resp, _ = user.get("/nowhere"); resp.StatusCode != 404 {
		t.Errorf("unknown page: %d", resp.StatusCode)
	}
	// The pages' scripts read the API with the session cookie.
	if resp, _ = user.get(fmt.Sprintf("/api/v1/fits/%d", fid)); resp.StatusCode != 200 {
		t.Errorf("API with the session cookie: %d", resp.StatusCode)
	}
	// ... but cannot write without the CSRF header.
	req, _ := http.NewRequest("POST", e.url+fmt.Sprintf("/api/v1/projects/%d/fits", id), strings.NewReader("{}"))
	resp, body := user.do(req)
	checkError(t, "cookie POST without CSRF", resp, []byte(body), 403, "forbidden", "X-CSRF-Token")
}

func TestDashboardForms(t *testing.T) {
	e := newEnv(t)
	b := newBrowser(t, e)
	b.login(testAdmin)
	_, page := b.get("/projects")
	csrf := b.csrf(page)

	// Forms without the CSRF token are refused.
	resp, _ := b.post("/projects", url.Values{"name": {"x"}, "scheme": {"ordinal:1..3"}})
	if resp.StatusCode != 403 {
		t.Errorf("post without CSRF: %d", resp.StatusCode)
	}
	resp, page = b.post("/projects", url.Values{"csrf": {csrf}, "name": {"x"}, "scheme": {"ordinal:9"}})
	if resp.StatusCode != 400 || !strings.Contains(page, "ordinal:9") {
		t.Errorf("bad scheme: %d", resp.StatusCode)
	}
	resp, page = b.post("/projects", url.Values{"csrf": {csrf}, "name": {"essays"}, "scheme": {"ordinal:0..3"}})
	if resp.StatusCode != 201 || !strings.Contains(page, `id="new-key"`) {
		t.Fatalf("create project: %d", resp.StatusCode)
	}
	key := regexp.MustCompile(`<code id="new-key">(ck_[^<]+)</code>`).FindStringSubmatch(page)[1]
	id := int64(e.call("GET", "/api/v1/me", key, nil, 200)["project_id"].(float64))

	// Import by the form: a bad file first, then the real one.
	upload := func(content string) (*http.Response, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("csrf", csrf)
		mw.WriteField("format", "auto")
		w, _ := mw.CreateFormFile("file", "ratings.csv")
		io.WriteString(w, content)
		mw.Close()
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/projects/%d/import", e.url, id), &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return b.do(req)
	}
	resp, page = upload("item_id,rater_id,label\na,r1,1\nb,r1,9\n")
	if resp.StatusCode != 400 || !strings.Contains(page, "Import rejected, nothing was written") || !strings.Contains(page, "ratings.csv:3") {
		t.Errorf("bad import: %d %s", resp.StatusCode, clipText(page, 300))
	}
	resp, _ = upload(sirtK1(t))
	if resp.StatusCode != 303 {
		t.Fatalf("import: %d", resp.StatusCode)
	}
	_, page = b.get(resp.Header.Get("Location"))
	if !strings.Contains(page, "Imported ratings.csv (csv-long): 274 labels added") {
		t.Errorf("import message missing")
	}

	// Start a fit: bad settings keep the form, good ones go to the fit.
	resp, page = b.post(fmt.Sprintf("/projects/%d/fits", id), url.Values{"engine": {"gibbs"}, "csrf": {csrf}, "chains": {"0"}, "samples": {"100"}})
	if resp.StatusCode != 400 || !strings.Contains(page, "The fit was not started") || !strings.Contains(page, `value="100"`) {
		t.Errorf("bad fit form: %d", resp.StatusCode)
	}
	resp, _ = b.post(fmt.Sprintf("/projects/%d/fits", id), url.Values{"csrf": {csrf}, "model": {"ordinal"}, "engine": {"gibbs"}, "kernel": {"identity"}, "identifiability": {"weak"},
		"sampler": {"default"}, "chains": {"2"}, "samples": {"200"}, "burnin": {"100"}, "thin": {"1"}, "seed": {"5"}})
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/fits/") {
		t.Fatalf("start fit: %d", resp.StatusCode)
	}
	var fid int64
	fmt.Sscanf(resp.Header.Get("Location"), "/fits/%d", &fid)
	if f := e.waitFit(fid, key, 60*time.Second); f["state"] != "done" || f["seed"].(float64) != 5 {
		t.Errorf("fit from the form: %v", f)
	}
	// The EP engine from the form (its MCMC fields, pre-filled, are left
	// out); the fit page shows the engine and the evidence instead of R-hat.
	resp, _ = b.post(fmt.Sprintf("/projects/%d/fits", id), url.Values{"csrf": {csrf}, "model": {"ordinal"}, "engine": {"ep"}, "kernel": {"identity"},
		"identifiability": {"weak"}, "sampler": {"default"}, "chains": {"4"}, "samples": {"2000"}, "burnin": {"1000"}, "thin": {"1"}, "seed": {"5"}})
	if resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/fits/") {
		t.Fatalf("start EP fit: %d", resp.StatusCode)
	}
	fmt.Sscanf(resp.Header.Get("Location"), "/fits/%d", &fid)
	if f := e.waitFit(fid, key, 60*time.Second); f["state"] != "done" {
		t.Errorf("EP fit from the form: %v", f)
	}
	_, page = b.get(fmt.Sprintf("/fits/%d", fid))
	if !strings.Contains(page, `id="engine">ep<`) || !strings.Contains(page, "Log evidence") || strings.Contains(page, "Max R-hat") {
		t.Errorf("EP fit page: %s", clipText(page, 400))
	}

	// Keys: create, revoke.
	resp, page = b.post(fmt.Sprintf("/projects/%d/keys", id), url.Values{"csrf": {csrf}, "name": {"viewer"}, "read_only": {"1"}})
	if resp.StatusCode != 201 || !strings.Contains(page, "API key viewer created") {
		t.Errorf("create key: %d", resp.StatusCode)
	}
	keys := e.call("GET", fmt.Sprintf("/api/v1/projects/%d/keys", id), testAdmin, nil, 200)["keys"].([]any)
	viewer := int64(keys[1].(map[string]any)["id"].(float64))
	if keys[1].(map[string]any)["read_only"] != true {
		t.Errorf("viewer key: %v", keys[1])
	}
	resp, _ = b.post(fmt.Sprintf("/projects/%d/keys/%d/delete", id, viewer), url.Values{"csrf": {csrf}})
	if resp.StatusCode != 303 {
		t.Errorf("revoke key: %d", resp.StatusCode)
	}

	// A read-only key sees no forms.
	_, ro := e.key(id, "ro", true)
	rb := newBrowser(t, e)
	rb.login(ro)
	_, page = rb.get(fmt.Sprintf("/projects/%d", id))
	if strings.Contains(page, `id="fit-form"`) || strings.Contains(page, "Import labels") {
		t.Errorf("read-only key sees write forms")
	}
	resp, _ = rb.post(fmt.Sprintf("/projects/%d/fits", id), url.Values{"csrf": {e.srv.csrfToken(ro)}})
	if resp.StatusCode != 403 {
		t.Errorf("read-only fit form: %d", resp.StatusCode)
	}

	// Cancel and delete fits, delete the project.
	long := e.startFit(id, key, longFit)
	resp, _ = b.post(fmt.Sprintf("/fits/%d/cancel", long), url.Values{"csrf": {csrf}})
	if resp.StatusCode != 303 {
		t.Errorf("cancel: %d", resp.StatusCode)
	}
	e.waitFit(long, key, hangTimeout)
	resp, _ = b.post(fmt.Sprintf("/fits/%d/delete", long), url.Values{"csrf": {csrf}})
	if resp.StatusCode != 303 {
		t.Errorf("delete fit: %d", resp.StatusCode)
	}
	resp, _ = b.post(fmt.Sprintf("/projects/%d/delete", id), url.Values{"csrf": {csrf}, "confirm": {"wrong"}})
	if resp.StatusCode != 400 {
		t.Errorf("delete without confirmation: %d", resp.StatusCode)
	}
	resp, _ = b.post(fmt.Sprintf("/projects/%d/delete", id), url.Values{"csrf": {csrf}, "confirm": {"essays"}})
	if resp.StatusCode != 303 {
		t.Errorf("delete project: %d", resp.StatusCode)
	}
	e.wantError("GET", fmt.Sprintf("/api/v1/projects/%d", id), testAdmin, nil, 404, "not_found", "")
}

// checkPlotLayout checks the plot section of an ordinal fit's page (issue 19
// item 13: six plots as unreadable thumbnails): the rater precisions and
// the consensus scores at full width, in that order, each with its title
// and downloads, and the other plots inside a closed <details> that names
// them, their images loaded lazily, each with a link that opens it.
func checkPlotLayout(t *testing.T, page string, fid int64) {
	t.Helper()
	start := strings.Index(page, `<section class="card" id="plots">`)
	if start < 0 {
		t.Fatal("fit page has no plot section")
	}
	sec := page[start:]
	sec = sec[:strings.Index(sec, "</section>")]
	open := strings.Index(sec, `<details class="more-plots" id="more-plots">`)
	if open < 0 || !strings.Contains(sec, "</details>") {
		t.Fatalf("no closed <details> for the other plots:\n%s", sec)
	}
	main, more := sec[:open], sec[open:]
	img := func(name string) string { return fmt.Sprintf(`src="/api/v1/fits/%d/plots/%s.svg"`, fid, name) }
	p, c := strings.Index(main, `<figure class="plot-main" id="plot-precision">`), strings.Index(main, `<figure class="plot-main" id="plot-consensus">`)
	if p < 0 || c < p || strings.Count(main, `<figure`) != 2 || strings.Count(main, "<img") != 2 ||
		!strings.Contains(main, img("precision")) || !strings.Contains(main, img("consensus")) ||
		!strings.Contains(main, "<strong>Rater precisions</strong>") || !strings.Contains(main, "<strong>Consensus scores of the items</strong>") {
		t.Errorf("main plots: want the precisions and then the consensus at full width, with titles:\n%s", main)
	}
	others := []string{"variance-density", "trace", "convergence", "thresholds", "agreement"}
	if !strings.Contains(more, "<summary>5 more plots: Posterior densities of the rater variances, Trace plots of the rater precisions, Convergence: R-hat, ESS and autocorrelation, Rater thresholds on the consensus scale, Agreement heatmap: pairwise Cohen&#39;s kappa</summary>") {
		t.Errorf("the details' summary does not name the other plots:\n%s", more)
	}
	for _, name := range others {
		if !strings.Contains(more, fmt.Sprintf(`<figure class="plot-more" id="plot-%s">`, name)) ||
			!strings.Contains(more, `<img loading="lazy" `+img(name)) ||
			!strings.Contains(more, fmt.Sprintf(`<a href="/api/v1/fits/%d/plots/%s.svg" target="_blank" rel="noopener">open</a>`, fid, name)) {
			t.Errorf("plot %s is not on demand in the details", name)
		}
		if strings.Contains(main, "/plots/"+name+".") {
			t.Errorf("plot %s is shown outside the details", name)
		}
	}
	if strings.Contains(sec, "<details class=\"more-plots\" id=\"more-plots\" open") {
		t.Error("the other plots are open by default")
	}
}
