package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"concord/internal/testutil"
)

// background runs the command args until ctx ends, its output going to
// out and errb (safe to read meanwhile); wait waits for it to exit (30 s at
// most) and fails the test unless it exits 0.
func background(ctx context.Context, t *testing.T, args ...string) (out, errb *testutil.SyncBuffer, wait func()) {
	e, _, _ := testEnv()
	out, errb = &testutil.SyncBuffer{}, &testutil.SyncBuffer{}
	e.stdout, e.stderr = out, errb
	done := make(chan int, 1)
	go func() { done <- run(ctx, e, args) }()
	return out, errb, func() {
		t.Helper()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("%s exited %d: %s", args[0], code, errb.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s did not stop", args[0])
		}
	}
}

// TestServeCommand starts concord serve on a free port without an admin
// token: it prints the URL, a generated token and a login link that work,
// and stops cleanly when its context ends.
func TestServeCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	db := filepath.Join(t.TempDir(), "c.db")
	out, errb, wait := background(ctx, t, "serve", "--addr", "127.0.0.1:0", "--db", db, "--workers", "1", "--fits-in-process", "--log-level", "warn")
	var url, token, link string
	deadline := time.Now().Add(30 * time.Second)
	for token == "" || link == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no start-up lines: %q %q", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond)
		s := out.String()
		if m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(s); m != nil {
			url = m[1]
		}
		if m := regexp.MustCompile(`Admin token \(generated[^:]*: (\S+)`).FindStringSubmatch(s); m != nil {
			token = m[1]
		}
		if m := regexp.MustCompile(`single-use link\): (\S+)`).FindStringSubmatch(s); m != nil {
			link = m[1]
		}
	}
	req, _ := http.NewRequest("GET", url+"/api/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"admin":true`) {
		t.Errorf("generated token: %d %s", resp.StatusCode, b)
	}
	if !strings.HasPrefix(link, url+"/login?code=") {
		t.Errorf("login link %q", link)
	}
	cancel()
	wait()
}

func TestServeFlags(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--workers", "-1"},
		{"serve", "--log-format", "xml"},
		{"serve", "--log-level", "loud"},
		{"serve", "extra"},
	} {
		e, _, errb := testEnv()
		if code := run(context.Background(), e, args); code == 0 {
			t.Errorf("%v: exit 0", args)
		} else if errb.Len() == 0 {
			t.Errorf("%v: no message", args)
		}
	}
}
