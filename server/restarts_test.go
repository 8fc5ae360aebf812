package server

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// TestFanOutRestartsOnSQLite: with FanOutChains an EP fit with 4 restarts
// runs start 1 in the fit's job, the 3 later starts as jobs of their own
// (two workers here; the fit document lists them as its parts), the last
// enqueues the combine, and the stored result is the fit in one process
// bit for bit. Here every piece runs in a fit worker child process
// (Config.FitCommand: the plan, the starts and the combine through its
// protocol).
func TestFanOutRestartsOnSQLite(t *testing.T) {
	fanOutRestarts(t, filepath.Join(t.TempDir(), "concord.db"), true)
}

// TestFanOutRestartsOnPostgres is TestFanOutRestartsOnSQLite on
// PostgreSQL, the fits in the server's process.
func TestFanOutRestartsOnPostgres(t *testing.T) {
	fanOutRestarts(t, postgresDSN(t), false)
}

func fanOutRestarts(t *testing.T, dsn string, child bool) {
	var cmd []string
	if child {
		cmd = childFitWorkers(t)
	}
	e := newEnvDSN(t, dsn, func(c *Config) {
		c.FanOutChains, c.WorkerName = true, "fan"
		if child {
			c.FitCommand = cmd
		}
	})
	id, key := e.loadedProject("k1")
	for _, tc := range []struct {
		settings map[string]any
		parts    int
	}{
		{map[string]any{"engine": "ep", "restarts": 4, "seed": 5}, 3},
		{map[string]any{"engine": "laplace", "restarts": 2, "noise": "per-rater", "seed": 3}, 1},
		{map[string]any{"engine": "ep", "restarts": 1, "seed": 3}, 0}, // one job
	} {
		fid := e.startFit(id, key, tc.settings)
		f := e.waitFit(fid, key, 2*time.Minute)
		if f["state"] != "done" {
			t.Fatalf("%v: fit ended %s: %v", tc.settings, f["state"], f["message"])
		}
		parts, _ := f["chains"].([]any)
		if len(parts) != tc.parts {
			t.Fatalf("%v: parts in the fit document: %v, want %d", tc.settings, f["chains"], tc.parts)
		}
		for c, x := range parts {
			ch := x.(map[string]any)
			if ch["chain"].(float64) != float64(c) || ch["state"] != "done" || ch["worker"] != "fan" || ch["attempts"].(float64) != 1 {
				t.Errorf("%v: part %d: %v", tc.settings, c, ch)
			}
		}
		sameAsOneProcess(t, e.store, fid)
		want := map[string]int{"fit completed": 1}
		if tc.parts > 0 {
			want = map[string]int{"fit completed": 1, "fit_chain completed": tc.parts, "fit_combine completed": 1}
		}
		var kinds map[string]int
		for deadline := time.Now().Add(hangTimeout); fmt.Sprint(kinds) != fmt.Sprint(want); time.Sleep(50 * time.Millisecond) {
			// River records a job's end just after the fit's.
			if time.Now().After(deadline) {
				t.Fatalf("%v: jobs of the fit: %v, want %v", tc.settings, kinds, want)
			}
			kinds = map[string]int{}
			for _, x := range e.call("GET", "/api/v1/jobs?limit=20", testAdmin, nil, http.StatusOK)["jobs"].([]any) {
				j := x.(map[string]any)
				if j["fit_id"] == float64(fid) {
					kinds[fmt.Sprint(j["kind"], " ", j["state"])]++
				}
			}
		}
	}
}
