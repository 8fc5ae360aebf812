package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"concord/db"
)

// TestEndToEnd runs the real server (Run, on a free port) and uses it only
// through HTTP, as a new user would: create a project with the admin token,
// import the real sirt k1 file with the project's key, run a fit to
// completion, read its report and download the workbook; then shut the
// server down.
func TestEndToEnd(t *testing.T) {
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "concord.db"), db.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := New(Config{Addr: "127.0.0.1:0", AdminToken: testAdmin, Workers: 2}, st, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	deadline := time.Now().Add(hangTimeout)
	for srv.URL() == "" {
		if time.Now().After(deadline) {
			t.Fatal("server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := helperClient(t, srv.URL())
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q", srv.URL())
	}

	c.call("GET", "/readyz", "", nil, http.StatusOK)
	p := c.call("POST", "/api/v1/projects", testAdmin, map[string]any{"name": "sirt-writing-k1", "scheme": "ordinal:0..3"}, http.StatusCreated)
	id, key := int64(p["id"].(float64)), p["api_key"].(string)
	resp, b := c.upload(fmt.Sprintf("/api/v1/projects/%d/imports", id), key, map[string][2]string{"file": {"sirt_k1.csv", sirtK1(t)}}, map[string]string{"format": "auto"})
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(b), `"labels_added":274`) {
		t.Fatalf("import: %d %s", resp.StatusCode, b)
	}
	got := c.call("GET", fmt.Sprintf("/api/v1/projects/%d", id), key, nil, http.StatusOK)
	if got["items"].(float64) != 135 || got["raters"].(float64) != 7 || got["labels"].(float64) != 274 {
		t.Errorf("project: %v", got)
	}
	f := c.call("POST", fmt.Sprintf("/api/v1/projects/%d/fits", id), key, map[string]any{"engine": "gibbs", "model": "ordinal", "kernel": "identity", "chains": 2, "samples": 500, "burnin": 250, "seed": 1}, http.StatusAccepted)
	fid := int64(f["id"].(float64))
	f = c.waitFit(fid, key, 2*time.Minute)
	if f["state"] != "done" || f["progress"].(float64) != 1 {
		t.Fatalf("fit: %v", f)
	}
	rep := c.call("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), key, nil, http.StatusOK)
	if rep["schema"] != "concord.report/v1" || len(rep["items"].([]any)) != 135 {
		t.Errorf("report: schema %v, %d items", rep["schema"], len(rep["items"].([]any)))
	}
	resp, b = c.request("GET", fmt.Sprintf("/api/v1/fits/%d/report.xlsx", fid), key, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("workbook: %d %s", resp.StatusCode, clipText(string(b), 300))
	}
	checkWorkbook(t, b, 135)
	t.Logf("fit %d: %v; workbook %d bytes", fid, f["message"], len(b))

	cancel()
	if !waitReturn(t, done, "Run") {
		t.FailNow()
	}
	if _, err := http.Get(srv.URL() + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
}
