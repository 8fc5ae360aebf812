package mcmc

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"concord/multirater"
)

// busyChain spends real CPU in every sweep (a deterministic sum).
type busyChain struct{ acc float64 }

func (c *busyChain) Sweep(bool) error {
	for i := range 20000 {
		c.acc += math.Sin(float64(i) + c.acc)
	}
	return nil
}
func (c *busyChain) EndWarmup()             {}
func (c *busyChain) Record(int)             {}
func (c *busyChain) Monitored() [][]float64 { return nil }

// TestESSPerCPUSecond: Fit divides the summary's min bulk ESS by the
// process CPU time of the sampling phase (Run's SamplingCPU, known on unix
// platforms): positive, and no more CPU than the cores could give in the
// fit's wall time; a summary without an ESS (0) gets no
// ess_per_cpu_second.
func TestESSPerCPUSecond(t *testing.T) {
	if _, ok := ProcessCPU(); !ok {
		t.Skip("no process CPU time on this platform")
	}
	s := Settings{Chains: 2, Samples: 100, Burnin: 50, Thin: 1}
	for _, tc := range []struct {
		name string
		ess  float64
	}{{"ess 400", 400}, {"no ess", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res, err := Fit(context.Background(), s, nil, start, 1, func(int) *busyChain { return &busyChain{} },
				func([]*busyChain) *multirater.FitResult {
					return &multirater.FitResult{Diagnostics: multirater.Diagnostics{MinESSBulk: tc.ess}}
				})
			wall := time.Since(start).Seconds()
			if err != nil {
				t.Fatal(err)
			}
			got := res.Diagnostics.ESSPerCPUSecond
			if tc.ess == 0 {
				if got != 0 {
					t.Errorf("ess_per_cpu_second %v without an ESS", got)
				}
				return
			}
			if !(got > 0) || math.IsInf(got, 0) {
				t.Fatalf("ess_per_cpu_second %v", got)
			}
			// The CPU time it implies; rusage counts in microseconds.
			cpu := tc.ess / got
			t.Logf("sampling: %.3f s wall, %.3f CPU s", res.Diagnostics.SamplingSeconds, cpu)
			if cpu > wall*float64(runtime.NumCPU())+0.01 {
				t.Errorf("%.3f CPU s in %.3f s on %d CPUs", cpu, wall, runtime.NumCPU())
			}
		})
	}
}

// TestRunSamplingCPU: Run measures the process CPU time across the chains
// that spent some (every thread together), and none before they start.
func TestRunSamplingCPU(t *testing.T) {
	if _, ok := ProcessCPU(); !ok {
		t.Skip("no process CPU time on this platform")
	}
	st, err := Run(context.Background(), Settings{Chains: 2, Samples: 100, Burnin: 50, Thin: 1}, []Chain{&busyChain{}, &busyChain{}}, nil, time.Now(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !(st.SamplingCPU > 0) {
		t.Errorf("SamplingCPU %v after %v of sampling", st.SamplingCPU, st.Sampling)
	}
}
