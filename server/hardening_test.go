package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"concord/db"
	"concord/internal/testutil"
)

// TestPanicIsRecovered: a panicking handler answers 500 in the JSON error
// shape with the request id and no stack, and the panic is logged with its
// stack.
func TestPanicIsRecovered(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	st, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(Config{AdminToken: testAdmin}, st, log)
	if err != nil {
		t.Fatal(err)
	}
	s.engine.GET("/api/v1/test-panic", s.authenticate, func(*gin.Context) { panic("boom at a secret place") })
	req := httptest.NewRequest("GET", "/api/v1/test-panic", nil)
	req.Header.Set("Authorization", "Bearer "+testAdmin)
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	body := w.Body.String()
	if w.Code != 500 || strings.Contains(body, "secret") || strings.Contains(body, "goroutine") {
		t.Errorf("panic answer: %d %s", w.Code, body)
	}
	var eb errorBody
	if err := json.Unmarshal(w.Body.Bytes(), &eb); err != nil || eb.Error.Code != "internal" || eb.Error.RequestID == "" || eb.Error.RequestID != w.Header().Get("X-Request-ID") {
		t.Errorf("panic error body: %s", body)
	}
	if !strings.Contains(logs.String(), "boom at a secret place") || !strings.Contains(logs.String(), "goroutine") || !strings.Contains(logs.String(), eb.Error.RequestID) {
		t.Errorf("panic not logged with its stack and request id: %s", clipText(logs.String(), 500))
	}
	// The server keeps serving.
	w = httptest.NewRecorder()
	s.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/healthz", nil))
	if w.Code != 200 {
		t.Errorf("after a panic: %d", w.Code)
	}
}

// TestSlowClientsAreCut: a client that never finishes its request headers
// is disconnected after ReadHeaderTimeout.
func TestSlowClientsAreCut(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ReadHeaderTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	// Cut after 300 ms; the deadline only catches a connection that is
	// never cut (it is generous so that a loaded machine cannot fail it).
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	start := time.Now()
	_, err = io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection still open after %s", time.Since(start))
	}
	t.Logf("slow client cut after %s", time.Since(start))
}

// TestRequestLogs: every request is logged with its id, route, status and,
// when known, project and fit.
func TestRequestLogs(t *testing.T) {
	var logs testutil.SyncBuffer
	st, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(Config{AdminToken: testAdmin, Workers: -1}, st, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/api/v1/projects", strings.NewReader(`{"name": "p", "scheme": "ordinal:1..3"}`))
	req.Header.Set("Authorization", "Bearer "+testAdmin)
	req.Header.Set("X-Request-ID", "req-42")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
			line = m
		}
	}
	if line == nil || line["request_id"] != "req-42" || line["route"] != "/api/v1/projects" || line["status"].(float64) != 201 || line["project"].(float64) != 1 || line["auth"] != "admin" {
		t.Errorf("request log: %v\n%s", line, logs.String())
	}
	if strings.Contains(logs.String(), testAdmin) {
		t.Error("the admin token is in the logs")
	}
}

// TestKernelCheckedAtSubmission: a kernel that reads covariates or texts
// the project's items do not have is refused when the fit is submitted
// (400 naming the term), not when it runs (issue 19 item 9).
func TestKernelCheckedAtSubmission(t *testing.T) {
	e := newEnv(t)
	id, key := e.project("bare", "ordinal:1..3")
	e.call("POST", fmt.Sprintf("/api/v1/projects/%d/labels", id), key, map[string]any{"labels": []map[string]any{
		{"item_id": "a", "rater_id": "r1", "label": "1"}, {"item_id": "b", "rater_id": "r1", "label": "3"}}}, 201)
	for kernel, want := range map[string]string{
		"rbf:gamma=1":      "reads numeric item covariates, and none of the project's 2 items has any",
		"ard":              "reads numeric item covariates",
		"text":             "reads the items' texts, and none of the project's 2 items has one",
		"identity+linear":  "reads numeric item covariates",
		"text-rbf:gamma=1": "reads the items' texts",
	} {
		e.wantError("POST", fmt.Sprintf("/api/v1/projects/%d/fits", id), key, map[string]any{"kernel": kernel}, 400, "invalid", want)
	}
	e.call("POST", fmt.Sprintf("/api/v1/projects/%d/fits", id), key, map[string]any{"engine": "gibbs", "kernel": "identity", "samples": 20, "burnin": 10}, 202)
}

// TestBurninZeroStaysZero: a fit asked for with "burnin": 0 says 0 in its
// spec (issue 19 item 10: it came back as -1, the internal "none") and runs
// without burn-in; a fit without burnin gets the default.
func TestBurninZeroStaysZero(t *testing.T) {
	e, id, key := loadedEnv(t, "burnin")
	fid := e.startFit(id, key, map[string]any{"engine": "gibbs", "burnin": 0, "chains": 1, "samples": 20, "seed": 3})
	f := e.call("GET", fmt.Sprintf("/api/v1/fits/%d", fid), key, nil, 200)
	spec, _ := f["spec"].(map[string]any)
	if b, ok := spec["burnin"]; !ok || b != 0.0 {
		t.Errorf("spec %v: want burnin 0", spec)
	}
	if f = e.waitFit(fid, key, 60*time.Second); f["state"] != "done" {
		t.Fatalf("fit ended %s: %v", f["state"], f["message"])
	}
	var res struct {
		Model struct {
			Burnin *int `json:"burnin"`
		} `json:"model"`
		Diagnostics struct {
			Engine struct {
				Iterations int `json:"iterations"`
			} `json:"engine"`
		} `json:"diagnostics"`
	}
	_, b := e.request("GET", fmt.Sprintf("/api/v1/fits/%d/result", fid), key, nil)
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Model.Burnin != nil && *res.Model.Burnin != 0 || res.Diagnostics.Engine.Iterations != 20 {
		t.Errorf("result burnin %v, %d sweeps: want 0 and 20", res.Model.Burnin, res.Diagnostics.Engine.Iterations)
	}
	f = e.call("POST", fmt.Sprintf("/api/v1/projects/%d/fits", id), key, map[string]any{"engine": "gibbs", "chains": 1, "samples": 20}, 202)
	if spec, _ := f["spec"].(map[string]any); spec["burnin"] != 1000.0 {
		t.Errorf("spec %v: want the default burnin 1000", spec)
	}
}

// TestNullFitFieldsRejected: a fit field given as null is refused with 400
// naming the field (issue 19 item 10: null silently meant the default), in
// nested objects too; leaving the field out still gives the default.
func TestNullFitFieldsRejected(t *testing.T) {
	e := newEnv(t)
	id, key := e.project("nulls", "ordinal:1..3")
	path := fmt.Sprintf("/api/v1/projects/%d/fits", id)
	for body, field := range map[string]string{
		`{"chains": null}`:                   "chains",
		`{"samples": 20, "burnin": null}`:    "burnin",
		`{"kernel": null}`:                   "kernel",
		`{"v": null, "lambda": 1}`:           "v",
		`{"text": {"stem": null}}`:           "text.stem",
		`{"text": null, "thresholds": null}`: "text",
	} {
		e.wantError("POST", path, key, body, 400, "invalid", fmt.Sprintf("field %q is null: give a value, or leave the field out for its default", field))
	}
}
