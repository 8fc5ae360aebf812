package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"concord/annotations"
	"concord/db"
)

const testAdmin = "test-admin-token-0123456789"

// hangTimeout bounds the waits of tests for something that happens soon
// (a fit starting, a cancel taking effect): long enough that a loaded
// 2-core machine (load 30-50 seen) never reaches it, so that it only
// catches a hang. Tests check the order of events, never how long they
// take.
const hangTimeout = 5 * time.Minute

// testEnv is a real server on a free loopback port over a fresh SQLite
// database, with its workers running.
type testEnv struct {
	t     testing.TB
	srv   *Server
	store *db.DB
	url   string
	dsn   string
	hc    *http.Client
	stop  func()
}

// quickFit is a fit request small enough to finish in well under a second
// on the sirt k1 data.
var quickFit = map[string]any{"engine": "gibbs", "chains": 2, "samples": 200, "burnin": 100, "seed": 7}

// newEnv starts a server; mods adjust its configuration.
func newEnv(t testing.TB, mods ...func(*Config)) *testEnv {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "concord.db")
	return newEnvDSN(t, dsn, mods...)
}

func newEnvDSN(t testing.TB, dsn string, mods ...func(*Config)) *testEnv {
	t.Helper()
	return newEnvWrapped(t, dsn, nil, mods...)
}

// newEnvWrapped is newEnvDSN with the server's store wrapped by wrap (nil:
// not wrapped), to watch or alter what the server asks of it; e.store stays
// the database itself.
func newEnvWrapped(t testing.TB, dsn string, wrap func(annotations.Store) annotations.Store, mods ...func(*Config)) *testEnv {
	t.Helper()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := db.Open(context.Background(), dsn, db.Options{Logger: log})
	if err != nil {
		t.Fatalf("db.Open: %v", err)
	}
	var served annotations.Store = st
	if wrap != nil {
		served = wrap(st)
	}
	cfg := Config{
		Addr: "127.0.0.1:0", AdminToken: testAdmin, Workers: 2,
		PollInterval: 200 * time.Millisecond, ProgressInterval: 100 * time.Millisecond,
		StaleAfter: 2 * time.Second, ShutdownGrace: 2 * time.Second, KeyCacheTTL: -1,
		// The tests' long fits (a million sweeps, to be cancelled) are
		// over the default work budget; TestFitWorkBudget sets it.
		MaxFitWork: -1,
	}
	for _, m := range mods {
		m(&cfg)
	}
	srv, err := New(cfg, served, log)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	e := &testEnv{t: t, srv: srv, store: st, url: srv.URL(), dsn: dsn, hc: &http.Client{Timeout: hangTimeout}}
	stopped := false
	e.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		waitReturn(t, done, "Serve")
		st.Close()
	}
	t.Cleanup(e.stop)
	return e
}

// testWriter sends logs to the test's output.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// fitWorkbook downloads the report.xlsx of the fit at base (its
// /api/v1/fits/{id} path) and opens it; it is closed when the test ends.
func (e *testEnv) fitWorkbook(base, key string) *excelize.File {
	e.t.Helper()
	resp, b := e.request("GET", base+"/report.xlsx", key, nil)
	if resp.StatusCode != 200 {
		e.t.Fatalf("report.xlsx: %d %s", resp.StatusCode, clipText(string(b), 300))
	}
	book, err := excelize.OpenReader(bytes.NewReader(b))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { book.Close() })
	return book
}

// wantPlots fails the test unless every plot of the fit at base is served
// (200, at least 1000 bytes).
func (e *testEnv) wantPlots(base, key string, plots ...string) {
	e.t.Helper()
	for _, plot := range plots {
		resp, b := e.request("GET", base+"/plots/"+plot, key, nil)
		if resp.StatusCode != 200 || len(b) < 1000 {
			e.t.Errorf("plots/%s: %d, %d bytes", plot, resp.StatusCode, len(b))
		}
	}
}

// request sends a request; body is nil, a string or []byte (sent as is),
// or anything else (sent as JSON).
func (e *testEnv) request(method, path, token string, body any, hdr ...string) (*http.Response, []byte) {
	e.t.Helper()
	var r io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
		ct = "application/json"
	case []byte:
		r = bytes.NewReader(b)
		ct = "application/json"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(j)
		ct = "application/json"
	}
	req, err := http.NewRequest(method, e.url+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return resp, b
}

// call sends a request, checks the status and decodes a JSON answer.
func (e *testEnv) call(method, path, token string, body any, want int) map[string]any {
	e.t.Helper()
	resp, b := e.request(method, path, token, body)
	if resp.StatusCode != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, resp.StatusCode, want, clipText(string(b), 2000))
	}
	out := map[string]any{}
	if len(b) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &out); err != nil {
			e.t.Fatalf("%s %s: decoding %q: %v", method, path, clipText(string(b), 300), err)
		}
	}
	return out
}

// wantError checks an error answer: status, code and a message fragment.
func (e *testEnv) wantError(method, path, token string, body any, status int, code, fragment string) {
	e.t.Helper()
	resp, b := e.request(method, path, token, body)
	checkError(e.t, method+" "+path, resp, b, status, code, fragment)
}

func checkError(t testing.TB, what string, resp *http.Response, b []byte, status int, code, fragment string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, resp.StatusCode, status, clipText(string(b), 1000))
	}
	var eb errorBody
	if err := json.Unmarshal(b, &eb); err != nil {
		t.Fatalf("%s: error body %q is not the JSON error shape: %v", what, clipText(string(b), 300), err)
	}
	if eb.Error.Code != code {
		t.Fatalf("%s: error code %q, want %q (message %q)", what, eb.Error.Code, code, eb.Error.Message)
	}
	if !strings.Contains(eb.Error.Message, fragment) {
		t.Fatalf("%s: error message %q does not contain %q", what, eb.Error.Message, fragment)
	}
	if strings.Contains(string(b), "goroutine ") || strings.Contains(string(b), ".go:") {
		t.Fatalf("%s: error body leaks internals: %s", what, b)
	}
}

// project creates a project and returns its id and read-write key.
func (e *testEnv) project(name, scheme string) (int64, string) {
	e.t.Helper()
	out := e.call("POST", "/api/v1/projects", testAdmin, map[string]any{"name": name, "scheme": scheme}, http.StatusCreated)
	return int64(out["id"].(float64)), out["api_key"].(string)
}

// key creates an API key for a project.
func (e *testEnv) key(project int64, name string, readOnly bool) (int64, string) {
	e.t.Helper()
	out := e.call("POST", fmt.Sprintf("/api/v1/projects/%d/keys", project), testAdmin, map[string]any{"name": name, "read_only": readOnly}, http.StatusCreated)
	return int64(out["id"].(float64)), out["key"].(string)
}

// upload posts a multipart form: files maps field to (name, content).
func (e *testEnv) upload(path, token string, files map[string][2]string, fields map[string]string) (*http.Response, []byte) {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for field, f := range files {
		w, err := mw.CreateFormFile(field, f[0])
		if err != nil {
			e.t.Fatal(err)
		}
		io.WriteString(w, f[1])
	}
	mw.Close()
	req, _ := http.NewRequest("POST", e.url+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// readTestdata returns the file name of testdata (testdata/README.md
// says where each comes from).
func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sirtK1 is the test data set (testdata/README.md).
func sirtK1(t testing.TB) string {
	t.Helper()
	return readTestdata(t, "sirt_k1.csv")
}

// projectEnv starts a test server with one project, name, that load
// creates; it returns the project and its key.
func projectEnv(t *testing.T, load func(*testEnv, string) (int64, string), name string) (*testEnv, int64, string) {
	t.Helper()
	e := newEnv(t)
	id, key := load(e, name)
	return e, id, key
}

// loadedEnv is projectEnv with the sirt k1 labels (loadedProject).
func loadedEnv(t *testing.T, name string) (*testEnv, int64, string) {
	t.Helper()
	return projectEnv(t, (*testEnv).loadedProject, name)
}

// binaryEnv is projectEnv with the RTE subset (binaryProject).
func binaryEnv(t *testing.T, name string) (*testEnv, int64, string) {
	t.Helper()
	return projectEnv(t, (*testEnv).binaryProject, name)
}

// loadedProject creates an ordinal project with the sirt k1 labels.
func (e *testEnv) loadedProject(name string) (int64, string) {
	e.t.Helper()
	id, key := e.project(name, "ordinal:0..3")
	resp, b := e.upload(fmt.Sprintf("/api/v1/projects/%d/imports", id), key, map[string][2]string{"file": {"sirt_k1.csv", sirtK1(e.t)}}, nil)
	if resp.StatusCode != http.StatusCreated {
		e.t.Fatalf("import: status %d: %s", resp.StatusCode, b)
	}
	return id, key
}

// minFitWait is the least time waitFit waits for a fit to finish.
const minFitWait = 10 * time.Minute

// startFit queues a fit and returns its id.
func (e *testEnv) startFit(project int64, token string, spec any) int64 {
	e.t.Helper()
	out := e.call("POST", fmt.Sprintf("/api/v1/projects/%d/fits", project), token, spec, http.StatusAccepted)
	return int64(out["id"].(float64))
}

// waitFit polls a fit until it is in a final state (or the timeout). The
// timeout is a liveness bound, not a speed check: it is at least
// minFitWait, because on a starved machine (load 30-50 on 2 cores) a fit that
// takes 10 CPU s can take minutes of wall time.
func (e *testEnv) waitFit(id int64, token string, timeout time.Duration) map[string]any {
	e.t.Helper()
	timeout = max(timeout, minFitWait)
	deadline := time.Now().Add(timeout)
	for {
		f := e.call("GET", fmt.Sprintf("/api/v1/fits/%d", id), token, nil, http.StatusOK)
		if annotations.FitStatus(f["state"].(string)).Terminal() {
			return f
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("fit %d still %s after %s", id, f["state"], timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// doneFit runs a quick fit to completion.
func (e *testEnv) doneFit(project int64, token string) int64 {
	e.t.Helper()
	return e.doneSpec(project, token, quickFit)
}

// doneSpec runs a fit with spec to completion.
func (e *testEnv) doneSpec(project int64, token string, spec any) int64 {
	e.t.Helper()
	id := e.startFit(project, token, spec)
	f := e.waitFit(id, token, 60*time.Second)
	if f["state"] != "done" {
		e.t.Fatalf("fit %d ended %s: %v", id, f["state"], f["message"])
	}
	return id
}

// waitReturn waits 30 s at most for the error of what (a server's Run or
// Serve, cancelled) on done and fails the test on an error; false: it did
// not return in time (a failure too).
func waitReturn(t testing.TB, done <-chan error, what string) bool {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
		return true
	case <-time.After(30 * time.Second):
		t.Errorf("%s did not return within 30 s of its cancel", what)
		return false
	}
}
