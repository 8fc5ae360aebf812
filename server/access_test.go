package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"concord/analysis"
	"concord/annotations"
)

// accessFixture is two projects, A and B, each with labels, a done fit, a
// queued fit and keys; no workers run, so nothing changes by itself.
type accessFixture struct {
	e                   *testEnv
	a, b                int64
	rwA, roA, rwB       string
	keyB                int64 // a key of B
	fitA, fitB, queuedB int64
	queuedA             int64
}

func newAccessFixture(t *testing.T) *accessFixture {
	// No workers, and no stale-fit recovery of the fits run inline.
	e := newEnv(t, func(c *Config) { c.Workers = -1; c.StaleAfter = time.Hour })
	f := &accessFixture{e: e}
	f.a, f.rwA = e.loadedProject("project-a")
	f.b, f.rwB = e.loadedProject("project-b")
	_, f.roA = e.key(f.a, "a-reader", true)
	f.keyB, _ = e.key(f.b, "b-extra", false)
	f.fitA = runFitInline(t, e, f.a)
	f.fitB = runFitInline(t, e, f.b)
	f.queuedA = e.startFit(f.a, f.rwA, quickFit)
	f.queuedB = e.startFit(f.b, f.rwB, quickFit)
	return f
}

// runFitInline queues a fit and runs it in the test (the server has no
// workers), through the store's job engine like a worker.
func runFitInline(t *testing.T, e *testEnv, project int64) int64 {
	t.Helper()
	id := e.startFit(project, testAdmin, quickFit)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- e.store.RunWorkers(ctx, annotations.WorkerOptions{Name: "inline", PollInterval: 50 * time.Millisecond},
			runnerFunc(func(ctx context.Context, f *annotations.Fit) error {
				var spec analysis.FitSpec
				json.Unmarshal(f.Spec, &spec)
				ds, err := e.store.Dataset(ctx, f.ProjectID)
				if err != nil {
					return err
				}
				res, err := analysis.Fit(ctx, ds, spec, nil)
				if err != nil {
					return err
				}
				raw, _ := json.Marshal(res)
				return e.store.FinishFit(ctx, f.ID, annotations.FitDone, "done", raw)
			}))
	}()
	waitState(t, e.store, id, annotations.FitDone, time.Minute)
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return id
}

// runnerFunc is a FitRunner.
type runnerFunc func(ctx context.Context, f *annotations.Fit) error

func (r runnerFunc) RunFit(ctx context.Context, f *annotations.Fit) error { return r(ctx, f) }

// snapshot is everything the admin can read about a project.
func (f *accessFixture) snapshot(t *testing.T, project int64, fits ...int64) string {
	t.Helper()
	e := f.e
	var parts []string
	get := func(path string) {
		resp, b := e.request("GET", path, testAdmin, nil)
		parts = append(parts, fmt.Sprintf("%s %d %s", path, resp.StatusCode, b))
	}
	p := fmt.Sprintf("/api/v1/projects/%d", project)
	for _, s := range []string{"", "/items?limit=10000", "/raters", "/labels?limit=10000", "/keys", "/fits"} {
		get(p + s)
	}
	for _, id := range fits {
		get(fmt.Sprintf("/api/v1/fits/%d", id))
		get(fmt.Sprintf("/api/v1/fits/%d/result", id))
	}
	return strings.Join(parts, "\n")
}

// routeCase says how to call one route against a target project's ids.
type routeCase struct {
	path      string // with the target's ids filled in
	body      any
	multipart bool
}

// cases returns a call of every API route aimed at project p (ids of its
// fits and keys as given). Bodies are valid, so that only access control
// can stop them.
func routeCases(p, doneFit, queuedFit, key int64) map[string]routeCase {
	pp := fmt.Sprintf("/api/v1/projects/%d", p)
	fp := fmt.Sprintf("/api/v1/fits/%d", doneFit)
	return map[string]routeCase{
		"GET /api/v1/projects/{id}":                   {path: pp},
		"DELETE /api/v1/projects/{id}":                {path: pp},
		"GET /api/v1/projects/{id}/items":             {path: pp + "/items"},
		"POST /api/v1/projects/{id}/items":            {path: pp + "/items", body: map[string]any{"items": []map[string]any{{"id": "intruder", "text": "x"}}}},
		"GET /api/v1/projects/{id}/raters":            {path: pp + "/raters"},
		"GET /api/v1/projects/{id}/labels":            {path: pp + "/labels"},
		"POST /api/v1/projects/{id}/labels":           {path: pp + "/labels", body: map[string]any{"labels": []map[string]any{{"item_id": "intruder", "rater_id": "x", "label": "1"}}, "replace": true}},
		"DELETE /api/v1/projects/{id}/labels":         {path: pp + "/labels?all=true"},
		"POST /api/v1/projects/{id}/imports":          {path: pp + "/imports", multipart: true},
		"GET /api/v1/projects/{id}/agreement":         {path: pp + "/agreement?bootstrap=0"},
		"DELETE /api/v1/projects/{id}/agreement":      {path: pp + "/agreement"},
		"GET /api/v1/projects/{id}/agreement/{table}": {path: pp + "/agreement/items?bootstrap=0&format=csv"},
		"GET /api/v1/projects/{id}/judge":             {path: pp + "/judge"},
		"GET /api/v1/projects/{id}/keys":              {path: pp + "/keys"},
		"POST /api/v1/projects/{id}/keys":             {path: pp + "/keys", body: map[string]any{"name": "intruder"}},
		"DELETE /api/v1/projects/{id}/keys/{key}":     {path: fmt.Sprintf("%s/keys/%d", pp, key)},
		"GET /api/v1/projects/{id}/fits":              {path: pp + "/fits"},
		"POST /api/v1/projects/{id}/fits":             {path: pp + "/fits", body: quickFit},
		"GET /api/v1/fits/{id}":                       {path: fp},
		"DELETE /api/v1/fits/{id}":                    {path: fp},
		"POST /api/v1/fits/{id}/cancel":               {path: fmt.Sprintf("/api/v1/fits/%d/cancel", queuedFit)},
		"GET /api/v1/fits/{id}/result":                {path: fp + "/result"},
		"GET /api/v1/fits/{id}/report.json":           {path: fp + "/report.json"},
		"GET /api/v1/fits/{id}/report.xlsx":           {path: fp + "/report.xlsx"},
		"POST /api/v1/fits/{id}/report.json":          {path: fp + "/report.json?ci=normal"},
		"POST /api/v1/fits/{id}/report.xlsx":          {path: fp + "/report.xlsx?null=0.5"},
		"DELETE /api/v1/fits/{id}/exports":            {path: fp + "/exports"},
		"GET /api/v1/fits/{id}/tables/{table}":        {path: fp + "/tables/items.csv"},
		"GET /api/v1/fits/{id}/plots/{plot}":          {path: fp + "/plots/precision.svg"},
		"GET /api/v1/fits/{id}/export/{format}":       {path: fp + "/export/crowdkit"},
		"GET /api/v1/fits/{id}/next":                  {path: fp + "/next"},
		"GET /api/v1/fits/{id}/judge":                 {path: fp + "/judge"},
		"POST /api/v1/fits/{id}/predictions":          {path: fp + "/predictions", body: map[string]any{"items": []map[string]any{{"id": "x"}}}},
	}
}

// unscoped are the routes that name no project: what a project key gets
// from them is checked separately.
var unscoped = map[string]bool{
	"GET /api/v1/openapi.json": true, "GET /api/v1/me": true, "GET /api/v1/projects": true, "POST /api/v1/projects": true,
	"GET /healthz": true, "GET /readyz": true, "GET /metrics": true, "GET /api/v1/jobs": true,
	"POST /api/v1/agreement": true, // a table or counts in the body; no project's data
}

func (f *accessFixture) send(t *testing.T, method string, rc routeCase, token string) (*http.Response, []byte) {
	t.Helper()
	if rc.multipart {
		return f.e.upload(rc.path, token, map[string][2]string{"file": {"x.csv", "item_id,rater_id,label\nintruder,x,1\n"}}, nil)
	}
	return f.e.request(method, rc.path, token, rc.body)
}

// TestKeyCannotReachAnotherProject proves, for every route, that a key of
// project A (read-write or read-only) can neither read nor change project
// B: every id of B answers 404 exactly like an id that does not exist, and
// B is unchanged afterwards.
func TestKeyCannotReachAnotherProject(t *testing.T) {
	f := newAccessFixture(t)
	e := f.e
	cases := routeCases(f.b, f.fitB, f.queuedB, f.keyB)
	routes := apiRoutes(e.srv)
	for r := range routes {
		if _, ok := cases[r]; !ok && !unscoped[r] {
			t.Errorf("route %s has no access-control case", r)
		}
	}
	before := f.snapshot(t, f.b, f.fitB, f.queuedB)
	names := make([]string, 0, len(cases))
	for r := range cases {
		if !routes[r] {
			t.Errorf("case %s is not a route", r)
		}
		names = append(names, r)
	}
	sort.Strings(names)
	for _, r := range names {
		rc := cases[r]
		method := strings.Fields(r)[0]
		for _, tok := range []struct{ name, token string }{{"read-write key of A", f.rwA}, {"read-only key of A", f.roA}} {
			t.Run(r+"/"+tok.name, func(t *testing.T) {
				resp, b := f.send(t, method, rc, tok.token)
				checkError(t, r, resp, b, http.StatusNotFound, "not_found", "not found")
				// Indistinguishable from an id that does not exist.
				var eb errorBody
				json.Unmarshal(b, &eb)
				if !strings.HasPrefix(eb.Error.Message, "project ") && !strings.HasPrefix(eb.Error.Message, "fit ") {
					t.Errorf("%s: message %q names more than the id", r, eb.Error.Message)
				}
			})
		}
	}
	// Unscoped routes: the list shows only A, /me names A, creating is
	// forbidden.
	for _, tok := range []string{f.rwA, f.roA} {
		list := e.call("GET", "/api/v1/projects", tok, nil, 200)["projects"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["id"].(float64) != float64(f.a) {
			t.Errorf("project list for a key of A: %v", list)
		}
		if me := e.call("GET", "/api/v1/me", tok, nil, 200); me["project_id"].(float64) != float64(f.a) {
			t.Errorf("me: %v", me)
		}
		e.wantError("POST", "/api/v1/projects", tok, map[string]any{"name": "c", "scheme": "ordinal:1..3"}, 403, "forbidden", "admin token")
	}
	// Dashboard pages of B, with A's key as the session.
	for _, path := range []string{
		fmt.Sprintf("/projects/%d", f.b), fmt.Sprintf("/fits/%d", f.fitB),
	} {
		resp, _ := f.dashGet(t, path, f.rwA)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("dashboard GET %s with A's key: %d", path, resp.StatusCode)
		}
	}
	for _, path := range []string{
		fmt.Sprintf("/projects/%d/fits", f.b), fmt.Sprintf("/projects/%d/import", f.b), fmt.Sprintf("/projects/%d/keys", f.b),
		fmt.Sprintf("/projects/%d/keys/%d/delete", f.b, f.keyB), fmt.Sprintf("/projects/%d/delete", f.b),
		fmt.Sprintf("/fits/%d/cancel", f.queuedB), fmt.Sprintf("/fits/%d/delete", f.fitB),
	} {
		resp, _ := f.dashPost(t, path, f.rwA, url.Values{"confirm": {"project-b"}, "name": {"intruder"}})
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("dashboard POST %s with A's key: %d", path, resp.StatusCode)
		}
	}
	if after := f.snapshot(t, f.b, f.fitB, f.queuedB); after != before {
		t.Errorf("project B changed:\nbefore:\n%s\nafter:\n%s", clipText(before, 3000), clipText(after, 3000))
	}
}

// TestReadOnlyKeyCannotWrite proves, for every route that changes
// something, that a read-only key gets 403 on its own project and changes
// nothing, and that admin-only routes refuse a read-write key.
func TestReadOnlyKeyCannotWrite(t *testing.T) {
	f := newAccessFixture(t)
	e := f.e
	keyA, _ := e.key(f.a, "a-extra", false)
	cases := routeCases(f.a, f.fitA, f.queuedA, keyA)
	adminOnly := map[string]bool{
		"DELETE /api/v1/projects/{id}": true, "POST /api/v1/projects/{id}/keys": true, "DELETE /api/v1/projects/{id}/keys/{key}": true,
	}
	before := f.snapshot(t, f.a, f.fitA, f.queuedA)
	for r, rc := range cases {
		method := strings.Fields(r)[0]
		if method == "GET" {
			resp, b := f.send(t, method, rc, f.roA)
			if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
				// A table or plot the build lacks is a 404 of its own.
				if !strings.Contains(string(b), "no table") && !strings.Contains(string(b), "no plot") {
					t.Errorf("read-only key reading %s: %d %s", r, resp.StatusCode, b)
				}
			}
			continue
		}
		switch r {
		case "POST /api/v1/fits/{id}/predictions", "POST /api/v1/fits/{id}/report.json", "POST /api/v1/fits/{id}/report.xlsx":
			continue // a read, by POST (a report's POST does what its GET does)
		}
		t.Run(r, func(t *testing.T) {
			resp, b := f.send(t, method, rc, f.roA)
			checkError(t, r+" (read-only key)", resp, b, http.StatusForbidden, "forbidden", "")
			if adminOnly[r] {
				resp, b = f.send(t, method, rc, f.rwA)
				checkError(t, r+" (read-write key)", resp, b, http.StatusForbidden, "forbidden", "admin token")
			}
		})
	}
	if after := f.snapshot(t, f.a, f.fitA, f.queuedA); after != before {
		t.Errorf("project A changed:\nbefore:\n%s\nafter:\n%s", clipText(before, 3000), clipText(after, 3000))
	}
	// Reading with a read-only key works.
	resp, _ := e.request("POST", fmt.Sprintf("/api/v1/fits/%d/predictions", f.fitA), f.roA, map[string]any{"items": []map[string]any{{"id": "x"}}})
	if resp.StatusCode != 200 {
		t.Errorf("read-only prediction: %d", resp.StatusCode)
	}
}

// dashGet and dashPost call the dashboard with token as the session.
func (f *accessFixture) dashGet(t *testing.T, path, token string) (*http.Response, []byte) {
	return dashRequest(t, f.e, "GET", path, token, nil)
}

func (f *accessFixture) dashPost(t *testing.T, path, token string, form url.Values) (*http.Response, []byte) {
	form.Set(csrfField, f.e.srv.csrfToken(token))
	return dashRequest(t, f.e, "POST", path, token, form)
}

func dashRequest(t *testing.T, e *testEnv, method, path, token string, form url.Values) (*http.Response, []byte) {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, _ := http.NewRequest(method, e.url+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if token != "" {
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: token})
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}
