package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkReads measures the server's cost of the load test's requests
// (handler only, no network): a cached report read (gzip and identity), a
// page of labels and a fit's status.
func BenchmarkReads(b *testing.B) {
	e := newEnv(b, func(c *Config) { c.KeyCacheTTL = 0 })
	id, key := e.loadedProject("k1")
	fid := e.doneFit(id, key)
	e.call("GET", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), key, nil, 200)
	h := e.srv.Handler()
	for _, bc := range []struct{ name, path, enc string }{
		{"report.json/gzip", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), "gzip"},
		{"report.json/identity", fmt.Sprintf("/api/v1/fits/%d/report.json", fid), ""},
		{"labels", fmt.Sprintf("/api/v1/projects/%d/labels?limit=100&offset=50", id), "gzip"},
		{"fit", fmt.Sprintf("/api/v1/fits/%d", fid), "gzip"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("GET", bc.path, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				if bc.enc != "" {
					req.Header.Set("Accept-Encoding", bc.enc)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d", bc.path, w.Code)
				}
			}
		})
	}
}
