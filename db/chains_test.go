package db

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"concord/annotations"
)

// chainRunner is a ChainRunner whose chains output their number; chain
// jobs fail as fail says.
type chainRunner struct {
	d    *DB
	fail func(f *annotations.Fit, chain, attempt int) error
	mu   sync.Mutex
	runs map[[2]int64]int                   // (fit, chain) -> attempts
	comb map[int64]int                      // fit -> combines
	time map[int64]annotations.SamplingTime // fit -> the sampling time combined
}

func (r *chainRunner) RunFit(ctx context.Context, f *annotations.Fit) error {
	return fmt.Errorf("fit %d ran as one job", f.ID)
}

func (r *chainRunner) ChainJobs(f *annotations.Fit) int {
	var s struct{ Chains int }
	_ = json.Unmarshal(f.Spec, &s)
	return s.Chains
}

func (r *chainRunner) RunChains(ctx context.Context, f *annotations.Fit, lo, hi int, report func(annotations.FitProgress) error) ([][]byte, annotations.SamplingTime, error) {
	r.mu.Lock()
	r.runs[[2]int64{f.ID, int64(lo)}]++
	n := r.runs[[2]int64{f.ID, int64(lo)}]
	r.mu.Unlock()
	if err := report(annotations.FitProgress{Progress: 0.5}); err != nil {
		return nil, annotations.SamplingTime{}, err
	}
	if err := r.fail(f, lo, n); err != nil {
		return nil, annotations.SamplingTime{}, err
	}
	// Chain c samples c+1 ms using 2(c+1) ms of CPU.
	return [][]byte{{byte('a' + lo)}}, annotations.SamplingTime{Wall: time.Duration(lo+1) * time.Millisecond, CPU: time.Duration(2*lo+2) * time.Millisecond}, nil
}

func (r *chainRunner) CombineChains(ctx context.Context, f *annotations.Fit, outputs [][]byte, sampling annotations.SamplingTime) error {
	r.mu.Lock()
	r.comb[f.ID]++
	r.time[f.ID] = sampling
	r.mu.Unlock()
	var all []byte
	for _, o := range outputs {
		all = append(all, o...)
	}
	return r.d.FinishFit(ctx, f.ID, annotations.FitDone, "done", []byte(fmt.Sprintf("%q", all)))
}

// TestChainJobs: a fit whose runner fans it out runs one job per chain
// (three at once here, so chains end together) and one combine, with the
// outputs in chain order; a chain killed once is retried; a chain that
// fails on the data fails the fit, whose other chains end, with no
// combine. The combine gets the longest time a chain sampled and the sum
// of their CPU times.
func TestChainJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, ctx context.Context, d *DB) {
		p := newProject(t, d, "p", "ordinal:1..5")
		mk := func(chains int) int64 { return createFit(ctx, t, d, specFit(p.ID, `{"chains":%d}`, chains)) }
		good, bad := mk(6), mk(3)
		r := &chainRunner{d: d, runs: map[[2]int64]int{}, comb: map[int64]int{}, time: map[int64]annotations.SamplingTime{}, fail: func(f *annotations.Fit, chain, attempt int) error {
			switch {
			case f.ID == good && chain == 2 && attempt == 1:
				return fmt.Errorf("fit worker killed by signal 9: %w", annotations.ErrRetry)
			case f.ID == bad && chain == 1:
				return annotations.Errorf(annotations.EINVALID, "chain 1 found no labels")
			}
			return nil
		}}
		stop := startWorkers(ctx, t, d, retrying(), r)
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
			fg, _ := d.FindFitByID(ctx, good)
			fb, _ := d.FindFitByID(ctx, bad)
			if fg.Status.Terminal() && fb.Status.Terminal() {
				if fg.Status != annotations.FitDone || len(fg.Chains) != 6 {
					t.Errorf("fanned-out fit: %+v", fg)
				}
				for _, c := range fg.Chains {
					if want := 1 + btoi(c.Chain == 2); c.State != "done" || c.Worker != "w" || c.Attempts != want {
						t.Errorf("chain %d: %+v, want %d attempts", c.Chain, c, want)
					}
				}
				if fb.Status != annotations.FitFailed || fb.Message != "chain 1 found no labels" {
					t.Errorf("fit failing on its data: %+v", fb)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("fits not ended: %+v %+v", fg, fb)
			}
		}
		res, err := d.FitResult(ctx, good)
		must(t, err)
		if string(res) != `"abcdef"` {
			t.Errorf("combined outputs %s, want the chains' in order", res)
		}
		// The failed fit's chain jobs end (none left to run).
		waitJobsEnded(t, d)
		stop()
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.comb[good] != 1 || r.comb[bad] != 0 {
			t.Errorf("combines: %v", r.comb)
		}
		if got, want := r.time[good], (annotations.SamplingTime{Wall: 6 * time.Millisecond, CPU: 42 * time.Millisecond}); got != want {
			t.Errorf("sampling time combined: %+v, want %+v (the longest chain's, the sum of the CPU)", got, want)
		}
		// The outputs are cleared once combined.
		var left int64
		must(t, d.r.Raw("SELECT COUNT(*) FROM fit_chains WHERE output IS NOT NULL AND fit_id = ?", good).Scan(&left).Error)
		if left != 0 {
			t.Errorf("%d chain outputs kept after the combine", left)
		}
	})
}

// waitJobsEnded waits until no job of d is available, running, retryable
// or scheduled.
func waitJobsEnded(t *testing.T, d *DB) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		counts, err := d.JobCounts(context.Background())
		must(t, err)
		busy := int64(0)
		for _, c := range counts {
			if c.State == "available" || c.State == "running" || c.State == "retryable" || c.State == "scheduled" {
				busy += c.Count
			}
		}
		if busy == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs left: %+v", counts)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
