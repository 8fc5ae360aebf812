package server

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"concord/annotations"
	"concord/internal/testutil"
)

// postgresDSN returns the DSN of a fresh PostgreSQL schema for the test
// (dropped at the end), from CONCORD_TEST_POSTGRES_DSN (start a server with
// db/testdata/start-postgres.sh). Without it the test skips, or fails when
// CONCORD_REQUIRE_POSTGRES=1.
func postgresDSN(t *testing.T) string {
	t.Helper()
	dsn := testutil.PostgresSchema(t, "concord_server_")
	if dsn == "" {
		t.Skip("CONCORD_TEST_POSTGRES_DSN not set: PostgreSQL test skipped")
	}
	return dsn
}

// forEachBackend runs test as subtests "sqlite" (a new database file) and
// "postgres" (a new schema; skipped without CONCORD_TEST_POSTGRES_DSN).
func forEachBackend(t *testing.T, test func(t *testing.T, dsn string)) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "concord.db")
			if backend == "postgres" {
				dsn = postgresDSN(t)
			}
			test(t, dsn)
		})
	}
}

// TestTwoServersShareOnePostgres runs two servers on one PostgreSQL
// database: every fit is claimed by exactly one worker of one process and
// runs once, both processes serve every project, and fits queued through
// one are run by either.
func TestTwoServersShareOnePostgres(t *testing.T) {
	dsn := postgresDSN(t)
	a := newEnvDSN(t, dsn, func(c *Config) {
		c.WorkerName = "server-a"
		c.PollInterval = 100 * time.Millisecond
		c.MaxProjectFits = -1
	})
	b := newEnvDSN(t, dsn, func(c *Config) {
		c.WorkerName = "server-b"
		c.PollInterval = 100 * time.Millisecond
		c.MaxProjectFits = -1
	})
	id, key := a.loadedProject("k1")
	// Both processes see the same project.
	if got := b.call("GET", fmt.Sprintf("/api/v1/projects/%d", id), key, nil, 200); got["labels"].(float64) != 274 {
		t.Fatalf("server b: %v", got)
	}
	const n = 12
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			e := a
			if i%2 == 1 {
				e = b
			}
			ids[i] = e.startFit(id, key, map[string]any{"engine": "gibbs", "chains": 1, "samples": 300, "burnin": 50, "seed": i})
		})
	}
	wg.Wait()
	ctx := context.Background()
	byWorker := map[string]int{}
	for _, fid := range ids {
		f := a.waitFit(fid, key, 120*time.Second)
		if f["state"] != "done" {
			t.Errorf("fit %d: %v", fid, f)
		}
		ft, err := a.store.FindFitByID(ctx, fid)
		if err != nil {
			t.Fatal(err)
		}
		if ft.Attempts != 1 {
			t.Errorf("fit %d claimed %d times", fid, ft.Attempts)
		}
		byWorker[ft.Worker]++
	}
	// Each fit ran exactly once: the processes' counts of finished fits add
	// up to the number of fits.
	done := counterValue(a.srv.metrics.finished.WithLabelValues(string(annotations.FitDone))) +
		counterValue(b.srv.metrics.finished.WithLabelValues(string(annotations.FitDone)))
	if done != n {
		t.Errorf("%v fits finished over both servers, want %d", done, n)
	}
	t.Logf("fits by worker: %v", byWorker)
	if byWorker["server-a"]+byWorker["server-b"] != n {
		t.Errorf("fits by worker: %v", byWorker)
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}
