package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"concord/annotations"
	"concord/db"
	"concord/internal/testutil"
	"concord/multirater"
)

// TestWorkerCommand runs concord worker on a database (a SQLite file, and
// PostgreSQL when CONCORD_TEST_POSTGRES_DSN is set) that another handle
// (standing for concord serve --workers 0) queues a fit in: the worker runs
// it to the end under its name, and stops cleanly when its context ends.
// By default the fit's chains run as jobs of their own (the fit lists
// them); --fan-out=false runs it as one job; both results are the same bit
// for bit (timings aside; both have ess_per_cpu_second), and --fan-out (the
// old opt-in) is still taken.
func TestWorkerCommand(t *testing.T) {
	backends := map[string]string{"sqlite": filepath.Join(t.TempDir(), "c.db")}
	if dsn := testutil.PostgresSchema(t, "concord_cmd_"); dsn != "" {
		backends["postgres"] = dsn
	}
	for backend, dsn := range backends {
		t.Run(backend, func(t *testing.T) {
			if code, _, errb := runCmd(t, "import", "--db", dsn, "--project", "k1", "--scheme", "ordinal:0..3", sirtK1); code != 0 {
				t.Fatalf("import: %s", errb)
			}
			var results []string
			for _, tc := range []struct {
				flags  []string
				chains int // chain jobs the fit lists
			}{
				{nil, 2},
				{[]string{"--fan-out=false"}, 0},
				{[]string{"--fan-out"}, 2},
			} {
				results = append(results, workFit(t, dsn, tc.flags, tc.chains))
			}
			for i := 1; i < len(results); i++ {
				if results[i] != results[0] {
					t.Errorf("fit %d's result differs from fit 1's (same seed):\n%s\n%s", i+1, results[i], results[0])
				}
			}
		})
	}
}

// workFit queues a seeded 2-chain fit on the database dsn, runs concord worker with flags until the fit ends, checks that it is done
// by this worker with the given number of chain jobs, and returns its
// result without timings.
func workFit(t *testing.T, dsn string, flags []string, chains int) string {
	t.Helper()
	ctx := context.Background()
	st, err := db.Open(ctx, dsn, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.FindProjectByName(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	// The same spec each time: the fit before has ended, so this one is not
	// a duplicate.
	f := &annotations.Fit{ProjectID: p.ID, Model: "ordinal", Seed: 1,
		Spec: json.RawMessage(`{"model":"ordinal","engine":"gibbs","chains":2,"samples":200,"burnin":100,"seed":1}`)}
	if err := st.CreateFit(ctx, f); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	args := append([]string{"worker", "--db", dsn, "--concurrency", "1", "--name", "test-worker", "--fits-in-process",
		"--poll-interval", "50ms", "--log-level", "warn"}, flags...)
	_, errb, wait := background(wctx, t, args...)
	defer wait()
	defer stop()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got, err := st.FindFitByID(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Terminal() {
			if got.Status != annotations.FitDone || got.Attempts != 1 {
				t.Fatalf("%v: fit ended as %+v (worker log: %s)", flags, got, errb.String())
			}
			if len(got.Chains) != chains {
				t.Errorf("%v: the fit lists %d chain jobs, want %d", flags, len(got.Chains), chains)
			}
			for _, c := range got.Chains {
				if c.Worker != "test-worker" || c.State != "done" {
					t.Errorf("%v: chain %+v", flags, c)
				}
			}
			if chains == 0 && got.Worker != "test-worker" {
				t.Errorf("%v: the fit ran on %q", flags, got.Worker)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: fit still %s (worker log: %s)", flags, got.Status, errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	raw, err := st.FitResult(ctx, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	var res multirater.FitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	d := &res.Diagnostics
	if !(d.ESSPerCPUSecond > 0) {
		t.Errorf("%v: no ess_per_cpu_second", flags)
	}
	d.Seconds, d.SamplingSeconds, d.SweepsPerSecond, d.ESSPerCPUSecond = 0, 0, 0, 0
	b, _ := json.Marshal(&res)
	return string(b)
}

func TestWorkerFlags(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "c.db")
	for _, args := range [][]string{
		{"worker", "--db", dbPath, "--concurrency", "0"},
		{"worker", "--db", dbPath, "--queues", "nope"},
		{"worker", "--db", dbPath, "--log-format", "xml"},
		{"worker", "--db", dbPath, "extra"},
	} {
		e, _, errb := testEnv()
		if code := run(context.Background(), e, args); code == 0 {
			t.Errorf("%v: exit 0", args)
		} else if errb.Len() == 0 {
			t.Errorf("%v: no message", args)
		}
	}
}

// TestEvalJobs: concord eval --jobs queues an evaluation's folds as jobs;
// two concord worker processes' worth of workers (two in this process, on
// one SQLite file) run them and the command writes the metrics that the
// evaluation in one process writes, byte for byte, and says which worker
// ran which fold. --jobs without --project is refused.
func TestEvalJobs(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "c.db")
	if code, _, errb := runCmd(t, "import", "--db", dbPath, "--project", "k1", "--scheme", "ordinal:0..3", sirtK1); code != 0 {
		t.Fatalf("import: %s", errb)
	}
	args := []string{"eval", "--db", dbPath, "--project", "k1", "--folds", "3", "--engine", "gibbs", "--samples", "100", "--burnin", "50", "--rater-baselines", "2", "--out", "-"}
	code, local, errb := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("eval in one process: %s", errb)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 2)
	var logs [2]testutil.SyncBuffer
	for i, name := range []string{"worker-a", "worker-b"} {
		e, _, _ := testEnv()
		e.stderr = &logs[i]
		go func() {
			done <- run(ctx, e, []string{"worker", "--db", dbPath, "--concurrency", "1", "--name", name, "--fits-in-process",
				"--poll-interval", "50ms", "--log-level", "warn"})
		}()
	}
	e, _, _ := testEnv()
	var out, summary testutil.SyncBuffer
	e.stdout, e.stderr = &out, &summary
	if code := run(context.Background(), e, append(args, "--jobs")); code != 0 {
		t.Fatalf("eval --jobs: %s (workers: %s %s)", summary.String(), logs[0].String(), logs[1].String())
	}
	stop()
	for range 2 {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("a worker did not stop")
		}
	}
	if out.String() != local {
		t.Errorf("eval --jobs wrote\n%s\nin one process:\n%s", out.String(), local)
	}
	for f := 1; f <= 3; f++ {
		if !strings.Contains(summary.String(), fmt.Sprintf("Fold %d: worker worker-", f)) {
			t.Errorf("no worker named for fold %d: %s", f, summary.String())
		}
	}
	if code, _, errb := runCmd(t, "eval", "--labels", "x.csv", "--jobs", "--out", "-"); code == 0 || !strings.Contains(errb, "--jobs runs the folds of a project") {
		t.Errorf("--jobs with --labels: %d %s", code, errb)
	}
}
