package db

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"concord/annotations"
)

// agreementRunner is an AgreementRunner whose analyses are named by their
// options: the plan says the replicates and parts (plan), a part outputs
// its range, the combine joins the outputs; fail says how a job fails.
type agreementRunner struct {
	plan map[string][2]int
	fail func(a *annotations.AgreementJob, what string, lo, attempt int) error
	mu   sync.Mutex
	runs map[string]int // "options/lo" -> attempts
}

func (r *agreementRunner) RunFit(ctx context.Context, f *annotations.Fit) error {
	return fmt.Errorf("fit %d: no fits here", f.ID)
}

func (r *agreementRunner) PlanAgreement(ctx context.Context, a *annotations.AgreementJob) (int, int, error) {
	if err := r.fail(a, "plan", -1, 1); err != nil {
		return 0, 0, err
	}
	p := r.plan[string(a.Options)]
	return p[0], p[1], nil
}

func (r *agreementRunner) RunAgreementPart(ctx context.Context, a *annotations.AgreementJob, lo, hi int, report func(float64) error) ([]byte, error) {
	r.mu.Lock()
	k := fmt.Sprintf("%s/%d", a.Options, lo)
	r.runs[k]++
	n := r.runs[k]
	r.mu.Unlock()
	if err := report(0.5); err != nil {
		return nil, err
	}
	if err := r.fail(a, "part", lo, n); err != nil {
		return nil, err
	}
	return []byte(fmt.Sprintf("[%d,%d)", lo, hi)), nil
}

func (r *agreementRunner) CombineAgreement(ctx context.Context, a *annotations.AgreementJob, outputs [][]byte, report func(string) error) ([]byte, error) {
	if err := report("analysing"); err != nil {
		return nil, err
	}
	if err := r.fail(a, "combine", -1, 1); err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, o := range outputs {
		b.Write(o)
	}
	return []byte(b.String() + "done"), nil
}

// TestAgreementJobs: an agreement analysis is a plan job, part jobs of
// ranges of replicates (one killed once is retried) and a combine with
// the parts' outputs in order (the parts of fanout.go); the same key twice
// is one analysis, the second start told so; a project's running analyses
// are bounded; a failure on the data is kept with its code, another is
// answered once and then started again; a cancelled analysis' jobs end
// unrun and a new start replaces it; an analysis without a bootstrap has
// no parts; the analyses of older labels go.
func TestAgreementJobs(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		d := b.open(t)
		p := newProject(t, d, "p", "ordinal:1..5")
		start := func(key string, version int64, limit int) (*annotations.AgreementJob, bool, error) {
			a := &annotations.AgreementJob{ProjectID: p.ID, LabelsVersion: version, Key: key, Options: []byte(key), Labels: 100}
			created, err := d.StartAgreement(ctx, a, limit)
			return a, created, err
		}
		mk := func(key string) int64 {
			a, created, err := start(key, 1, 0)
			must(t, err)
			if !created || a.Status != annotations.FitRunning || a.Message != "queued" {
				t.Fatalf("start %s: created %v, %+v", key, created, a)
			}
			return a.ID
		}
		good := mk("good")
		for _, k := range []string{"none", "bad", "internal"} {
			mk(k)
		}
		cancelled := mk("cancelled")
		// The same key again: the same analysis, not created.
		if a, created, err := start("good", 1, 0); err != nil || created || a.ID != good {
			t.Errorf("the same key twice: %v, created %v, id %d want %d", err, created, a.ID, good)
		}
		// Five running: a sixth is refused at a limit of 5.
		if _, _, err := start("sixth", 1, 5); annotations.ErrorCode(err) != annotations.ETOOMANY || !strings.Contains(err.Error(), "5 agreement analyses") {
			t.Errorf("over the limit: %v", err)
		}
		// Cancelling stops the running analyses of the project: all five
		// here, so start them again but the cancelled one.
		n, err := d.CancelAgreements(ctx, p.ID)
		must(t, err)
		if n != 5 {
			t.Errorf("cancelled %d analyses, want 5", n)
		}
		c, err := d.FindAgreement(ctx, cancelled)
		must(t, err)
		if c.Status != annotations.FitCancelled || c.Message != "cancelled by request" {
			t.Errorf("cancelled analysis: %+v", c)
		}
		good = mk("good")
		none, bad, internal := mk("none"), mk("bad"), mk("internal")

		killed := fmt.Errorf("fit worker killed by signal 9: %w", annotations.ErrRetry)
		r := &agreementRunner{runs: map[string]int{},
			plan: map[string][2]int{"good": {10, 3}, "none": {-1, 0}, "bad": {10, 2}, "internal": {4, 2}},
			fail: func(a *annotations.AgreementJob, what string, lo, attempt int) error {
				switch {
				case string(a.Options) == "good" && what == "part" && lo == 3 && attempt == 1:
					return killed
				case string(a.Options) == "bad" && what == "plan":
					return annotations.Errorf(annotations.EINVALID, "agreement needs labels from at least 2 raters, found 1")
				case string(a.Options) == "internal" && what == "combine":
					return errors.New("out of disk")
				}
				return nil
			}}
		stop := startWorkers(ctx, t, d, retrying(), r)
		ended := waitEnded(ctx, t, "analyses", d.FindAgreement, func(a *annotations.AgreementJob) annotations.FitStatus { return a.Status }, good, none, bad, internal)
		waitJobsEnded(t, d)
		stop()

		if a := ended[good]; a.Status != annotations.FitDone || string(a.Result) != "[0,3)[3,6)[6,10)done" || a.Replicates != 10 || len(a.Parts) != 3 {
			t.Errorf("analysis: %+v, result %q", a, a.Result)
		} else {
			for _, pt := range a.Parts {
				lo, hi := partRange(10, 3, pt.Part)
				if want := 1 + btoi(pt.Part == 1); pt.State != "done" || pt.Worker != "w" || pt.Attempts != want || pt.Lo != lo || pt.Hi != hi {
					t.Errorf("part %d: %+v, want %d attempts", pt.Part, pt, want)
				}
			}
		}
		if a := ended[none]; a.Status != annotations.FitDone || string(a.Result) != "done" || len(a.Parts) != 0 {
			t.Errorf("analysis without a bootstrap: %+v, result %q", a, a.Result)
		}
		if a := ended[bad]; a.Status != annotations.FitFailed || a.ErrorCode != annotations.EINVALID || !strings.Contains(a.Message, "at least 2 raters") {
			t.Errorf("analysis failing on its data: %+v", a)
		}
		if a := ended[internal]; a.Status != annotations.FitFailed || a.ErrorCode != "" {
			t.Errorf("analysis failing inside: %+v", a)
		}
		r.mu.Lock()
		for k := range r.runs {
			if strings.HasPrefix(k, "cancelled/") || strings.HasPrefix(k, "bad/") {
				t.Errorf("part %s ran", k)
			}
		}
		r.mu.Unlock()

		// Asked again: the done one with its result, the failure on the
		// data kept; the internal failure answered once, then started again;
		// the cancelled one started again.
		for _, tc := range []struct {
			key     string
			id      int64
			created bool
			status  annotations.FitStatus
		}{
			{"good", good, false, annotations.FitDone},
			{"bad", bad, false, annotations.FitFailed},
			{"bad", bad, false, annotations.FitFailed},
			{"internal", internal, false, annotations.FitFailed},
			{"internal", 0, true, annotations.FitRunning},
			{"cancelled", 0, true, annotations.FitRunning},
		} {
			a, created, err := start(tc.key, 1, 0)
			must(t, err)
			if created != tc.created || a.Status != tc.status || (tc.id != 0 && a.ID != tc.id) {
				t.Errorf("%s again: created %v, %+v; want created %v, %s, id %d", tc.key, created, a, tc.created, tc.status, tc.id)
			}
			if tc.key == "good" && string(a.Result) != "[0,3)[3,6)[6,10)done" {
				t.Errorf("good again: result %q", a.Result)
			}
		}
		// New labels: the finished analyses of the older ones go.
		_, err = d.CancelAgreements(ctx, p.ID)
		must(t, err)
		if _, _, err := start("good/v2", 2, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := d.FindAgreement(ctx, good); annotations.ErrorCode(err) != annotations.ENOTFOUND {
			t.Errorf("the analysis of older labels: %v, want not found", err)
		}
	})
}

// TestAgreementPhase: an analysis' phase adds up its parts: the
// replicates done and the time left at the rate so far.
func TestAgreementPhase(t *testing.T) {
	for _, c := range []struct {
		t       partTally
		elapsed time.Duration
		want    string
	}{
		{partTally{parts: 4, queued: 4}, time.Second, "queued: bootstrap 0 of 1000 replicates (4 parts: 0 done, 0 running on 0 workers, 4 queued)"},
		{partTally{parts: 4, done: 1, running: 2, queued: 1, workers: 2, sum: 1.6}, 10 * time.Second,
			"analysing: bootstrap 400 of 1000 replicates, about 15s left (4 parts: 1 done, 2 running on 2 workers, 1 queued)"},
		{partTally{parts: 4, done: 4, sum: 4}, time.Minute, "analysing: bootstrap 1000 of 1000 replicates (4 parts: 4 done, 0 running on 0 workers, 0 queued)"},
	} {
		if got := agreementPhase(c.t, 1000, c.elapsed); got != c.want {
			t.Errorf("%+v: %q\nwant %q", c.t, got, c.want)
		}
	}
}

// blockingRunner is an agreementRunner whose parts run until their report
// is refused, and say so on started and stopped.
type blockingRunner struct {
	agreementRunner
	started chan int
	stopped chan error
}

// runSlowAgreement starts, in a new project p, analysis a of the options
// "slow", whose bootstrap of replicates runs as parts of blocking runner
// r, and parts workers named worker (until stop); it returns once every
// part has started (2 minutes at most each).
func runSlowAgreement(ctx context.Context, t *testing.T, d *DB, worker string, replicates, parts int) (p *annotations.Project, a *annotations.AgreementJob, r *blockingRunner, stop func()) {
	t.Helper()
	p = newProject(t, d, "p", "ordinal:1..5")
	a = &annotations.AgreementJob{ProjectID: p.ID, LabelsVersion: 1, Key: "slow", Options: []byte("slow"), Labels: 10}
	_, err := d.StartAgreement(ctx, a, 0)
	must(t, err)
	r = &blockingRunner{agreementRunner: agreementRunner{runs: map[string]int{}, plan: map[string][2]int{"slow": {replicates, parts}},
		fail: func(*annotations.AgreementJob, string, int, int) error { return nil }},
		started: make(chan int, parts), stopped: make(chan error, parts)}
	stop = startWorkers(ctx, t, d, annotations.WorkerOptions{Name: worker, Concurrency: parts, MaxAttempts: 2, PollInterval: 20 * time.Millisecond, StaleAfter: time.Hour}, r)
	for i := range parts {
		select {
		case <-r.started:
		case <-time.After(2 * time.Minute):
			t.Fatalf("part %d of %d did not start", i+1, parts)
		}
	}
	return p, a, r, stop
}

func (r *blockingRunner) RunAgreementPart(ctx context.Context, a *annotations.AgreementJob, lo, hi int, report func(float64) error) ([]byte, error) {
	r.started <- lo
	for {
		if err := report(0.1); err != nil {
			r.stopped <- err
			return nil, err
		}
		select {
		case <-ctx.Done():
			r.stopped <- ctx.Err()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestAgreementCancelReachesParts: cancelling an analysis whose parts run
// stops them at their next progress write (told that the analysis ended,
// not retried), and nothing is combined.
func TestAgreementCancelReachesParts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		d := b.open(t)
		p, a, r, stop := runSlowAgreement(ctx, t, d, "w", 10, 2)
		n, err := d.CancelAgreements(ctx, p.ID)
		must(t, err)
		if n != 1 {
			t.Errorf("cancelled %d", n)
		}
		for range 2 {
			select {
			case err := <-r.stopped:
				if c := annotations.ErrorCode(err); c != annotations.ECONFLICT {
					t.Errorf("a part stopped with %v (%s), want the analysis' end (conflict)", err, c)
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("a running part did not stop")
			}
		}
		waitJobsEnded(t, d)
		stop()
		got, err := d.FindAgreement(ctx, a.ID)
		must(t, err)
		if got.Status != annotations.FitCancelled || got.Result != nil {
			t.Errorf("the analysis: %+v", got)
		}
		for _, pt := range got.Parts {
			if pt.State == "done" {
				t.Errorf("part %+v done", pt)
			}
		}
	})
}

// TestAgreementRescue: the part job of a worker that stopped recording
// that it is alive is rescued (rescueAt at a chosen instant, so that the
// test does not depend on the machine's speed): the part goes back to the
// queue, the analysis' message says why, and the analysis runs on.
func TestAgreementRescue(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		d := b.open(t)
		_, a, r, stop := runSlowAgreement(ctx, t, d, "ghost", 5, 1)
		// An hour on, the ghost has not been seen for StaleAfter.
		n, err := d.rescueAt(ctx, time.Now().Add(time.Hour), 30*time.Second, 2)
		must(t, err)
		got, err := d.FindAgreement(ctx, a.ID)
		must(t, err)
		if n != 1 || got.Status != annotations.FitRunning || len(got.Parts) != 1 || got.Parts[0].State != "queued" ||
			got.Message != `bootstrap replicates 0..4: worker "ghost" stopped responding, re-queued, attempt 1 of 2` {
			t.Errorf("rescued %d; the analysis: %+v", n, got)
		}
		// The ghost's part learns at its next progress write that it was
		// taken over.
		select {
		case err := <-r.stopped:
			if !errors.Is(err, errChainLost) {
				t.Errorf("the ghost's part stopped with %v, want that it was taken over", err)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("the ghost's part did not stop")
		}
		stop()
	})
}
