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
)

// TestWorkerCommand runs concord worker on a SQLite file that another
// handle (standing for concord serve --workers 0) queues a fit in: the
// worker runs it to the end under its name, and stops cleanly when its
// context ends.
func TestWorkerCommand(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "c.db")
	if code, _, errb := runCmd(t, "import", "--db", dbPath, "--project", "k1", "--scheme", "ordinal:0..3", sirtK1); code != 0 {
		t.Fatalf("import: %s", errb)
	}
	ctx := context.Background()
	st, err := db.Open(ctx, dbPath, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := st.FindProjectByName(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	f := &annotations.Fit{ProjectID: p.ID, Model: "ordinal", Seed: 1,
		Spec: json.RawMessage(`{"model":"ordinal","engine":"gibbs","chains":2,"samples":200,"burnin":100,"seed":1}`)}
	if err := st.CreateFit(ctx, f); err != nil {
		t.Fatal(err)
	}

	wctx, stop := context.WithCancel(ctx)
	_, errb, wait := background(wctx, t, "worker", "--db", dbPath, "--concurrency", "1", "--name", "test-worker", "--fits-in-process",
		"--poll-interval", "50ms", "--log-level", "warn")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got, err := st.FindFitByID(ctx, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Terminal() {
			if got.Status != annotations.FitDone || got.Worker != "test-worker" || got.Attempts != 1 {
				t.Errorf("fit ended as %+v (worker log: %s)", got, errb.String())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fit still %s (worker log: %s)", got.Status, errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	wait()
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
	var logs [2]lockedBuffer
	for i, name := range []string{"worker-a", "worker-b"} {
		e, _, _ := testEnv()
		e.stderr = &logs[i]
		go func() {
			done <- run(ctx, e, []string{"worker", "--db", dbPath, "--concurrency", "1", "--name", name, "--fits-in-process",
				"--poll-interval", "50ms", "--log-level", "warn"})
		}()
	}
	e, _, _ := testEnv()
	var out, summary lockedBuffer
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
