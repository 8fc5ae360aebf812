package mcmc

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"concord/multirater"
	"concord/multirater/diag"
)

// Settings are the MCMC settings shared by the Gibbs samplers. The zero value means the
// defaults given for each field.
type Settings struct {
	// Chains is the number of chains, run in parallel goroutines; 0 means 4.
	Chains int
	// Samples is the number of draws kept per chain; 0 means 2000.
	Samples int
	// Burnin is the number of sweeps discarded at the start of each chain;
	// 0 means 1000 and a negative value means none.
	Burnin int
	// Thin keeps every Thin-th sweep after the burn-in; 0 means 1.
	Thin int
	// Seed seeds every chain's generator: chain c uses
	// rand.NewPCG(Seed, c). The same seed, chain count and sampler give the
	// same draws, bit for bit.
	Seed uint64
}

// Defaults of MCMC.
const (
	DefaultChains  = 4
	DefaultSamples = 2000
	DefaultBurnin  = 1000
)

// WithDefaults returns m with zero fields replaced by their defaults.
func (m Settings) WithDefaults() Settings {
	m.Chains = cmp.Or(m.Chains, DefaultChains)
	m.Samples = cmp.Or(m.Samples, DefaultSamples)
	switch {
	case m.Burnin == 0:
		m.Burnin = DefaultBurnin
	case m.Burnin < 0:
		m.Burnin = 0
	}
	if m.Thin == 0 {
		m.Thin = 1
	}
	return m
}

// Check panics on settings no sampler can run (after WithDefaults).
func (m Settings) Check() {
	if m.Chains < 1 || m.Samples < 1 || m.Thin < 1 {
		panic(fmt.Sprintf("multirater: invalid MCMC settings %+v (need chains, samples, thin >= 1)", m))
	}
	if m.Chains > 256 {
		panic("multirater: more than 256 chains")
	}
}

// Chain is one Markov chain driven by Run.
type Chain interface {
	// sweep advances the chain by one iteration; warmup is true during
	// the burn-in, when the sampler may adapt its tuning.
	Sweep(warmup bool) error
	// endWarmup is called once, after the last burn-in sweep; tuning is
	// frozen from then on so that the kept draws come from a fixed Markov
	// kernel.
	EndWarmup()
	// record stores the current state as kept draw i.
	Record(i int)
	// monitored returns the series watched for the live R-hat (one slice
	// of length Samples per parameter, filled up to the kept draws).
	Monitored() [][]float64
}

// RunStats describes a Run call.
type RunStats struct {
	Sampling time.Duration
	// SamplingCPU is the CPU time (user + system, every thread) the whole
	// process used while the chains ran, from their start until the last
	// one finished (the chains run in parallel, so it is not separable by
	// chain; it includes the progress reports and the garbage collector,
	// and any other work of the process meanwhile); 0 where the platform
	// does not report it.
	SamplingCPU time.Duration
}

// NewChainRand returns the generator of chain c: PCG seeded with (seed, c).
func NewChainRand(seed uint64, c int) (*rand.Rand, *rand.PCG) {
	src := rand.NewPCG(seed, uint64(c))
	return rand.New(src), src
}

// progressEvery is the interval between progress reports.
const progressEvery = 500 * time.Millisecond

// ChainPanic is the error of a chain that panicked (a bug): its message
// names the chain and the panic value; the goroutine stack is kept apart in
// Stack, for logs, never for users' eyes.
type ChainPanic struct {
	Chain int
	Value string
	Stack string
}

func (e *ChainPanic) Error() string {
	return fmt.Sprintf("multirater: internal error in chain %d: %s", e.Chain, e.Value)
}

// Run runs the chains in parallel, one goroutine each, until every
// chain has kept m.Samples draws, ctx is cancelled (then the context's error
// is returned within one sweep of each chain) or a chain fails.
// work is the fraction of the whole fit the Sampling accounts for, for the
// progress reports; start is when the fit started.
func Run(ctx context.Context, m Settings, chains []Chain, progress func(multirater.Progress), start time.Time, work float64) (RunStats, error) {
	nc := len(chains)
	total := m.Burnin + m.Samples*m.Thin
	done := make([]atomic.Int64, nc)
	kept := make([]atomic.Int64, nc)
	var stop atomic.Bool
	errs := make([]error, nc)
	var wg sync.WaitGroup
	t0 := time.Now()
	cpu0, cpuKnown := ProcessCPU()
	for c := range chains {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					errs[c] = &ChainPanic{Chain: c, Value: fmt.Sprint(r), Stack: string(debug.Stack())}
					stop.Store(true)
				}
			}()
			ch := chains[c]
			k := 0
			for it := 0; it < total; it++ {
				if stop.Load() {
					return
				}
				warm := it < m.Burnin
				if err := ch.Sweep(warm); err != nil {
					errs[c] = err
					stop.Store(true)
					return
				}
				if it == m.Burnin-1 {
					ch.EndWarmup()
				}
				if !warm && (it-m.Burnin+1)%m.Thin == 0 {
					ch.Record(k)
					k++
					kept[c].Store(int64(k))
				}
				done[c].Store(int64(it + 1))
			}
			if m.Burnin == 0 {
				// endWarmup was never called.
				ch.EndWarmup()
			}
		}(c)
	}
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	var mon [][][]float64
	if progress != nil {
		mon = make([][][]float64, nc)
		for c, ch := range chains {
			mon[c] = ch.Monitored()
		}
	}
	live := liveRhat{every: max(8, int64(m.Samples/liveRhatTimes))}
	report := func() {
		if progress == nil {
			return
		}
		var sum, minKept int64
		minKept = math.MaxInt64
		for c := range chains {
			sum += done[c].Load()
			minKept = min(minKept, kept[c].Load())
		}
		frac := float64(sum) / float64(total*nc)
		p := multirater.Progress{Fraction: work * frac, Elapsed: time.Since(start), Phase: "sampling"}
		if frac < 1 && sum < int64(m.Burnin*nc) {
			p.Phase = "burn-in"
		}
		if el := time.Since(t0); frac > 0.005 && frac < 1 {
			left := time.Duration(float64(el) * (1 - frac) / frac)
			// The summary after sampling costs a few percent more.
			p.ETA = left + time.Duration(float64(el)/frac*(1-work)/work)
		}
		p.MaxRhat = live.at(mon, minKept)
		progress(p)
	}
	ticker := time.NewTicker(progressEvery)
	defer ticker.Stop()
	var err error
loop:
	for {
		select {
		case <-finished:
			break loop
		case <-ctx.Done():
			stop.Store(true)
			<-finished
			err = ctx.Err()
			break loop
		case <-ticker.C:
			report()
		}
	}
	st := RunStats{Sampling: time.Since(t0)}
	if cpu1, ok := ProcessCPU(); ok && cpuKnown && cpu1 > cpu0 {
		st.SamplingCPU = cpu1 - cpu0
	}
	for _, e := range errs {
		if e != nil {
			return st, e
		}
	}
	if err != nil {
		return st, err
	}
	report()
	return st, nil
}

// liveRhatTimes bounds how often a run computes its live R-hat: after
// every Samples/liveRhatTimes more kept draws (and at least 8).
const liveRhatTimes = 50

// liveRhat is the live R-hat of the progress reports, computed first at 8
// draws per chain and then only when every chain has kept liveRhat.every
// more draws than at the last computation (or all its draws), so that its cost is a bounded multiple
// of one computation whatever the wall time: at one computation per
// report (two a second) a loaded machine made a long fit compute it
// thousands of times (at 16,000 ladder items with 40 raters, about a third
// of the fit's CPU seconds).
type liveRhat struct {
	every, kept int64
	rhat        float64
}

// at returns the live R-hat with minKept draws kept by every chain (0
// before 8).
func (l *liveRhat) at(mon [][][]float64, minKept int64) float64 {
	all := minKept >= int64(len(firstSeries(mon)))
	if minKept >= 8 && (l.kept == 0 || minKept >= l.kept+l.every || all && minKept > l.kept) {
		l.kept = minKept
		l.rhat = liveMaxRhat(mon, int(minKept))
	}
	return l.rhat
}

// firstSeries returns the first chain's first monitored series (nil when
// none).
func firstSeries(mon [][][]float64) []float64 {
	if len(mon) == 0 || len(mon[0]) == 0 {
		return nil
	}
	return mon[0][0]
}

// liveMaxRhat returns the largest split R-hat over the monitored series,
// using the first n draws of every chain.
func liveMaxRhat(mon [][][]float64, n int) float64 {
	if len(mon) == 0 || len(mon[0]) == 0 {
		return 0
	}
	worst := 0.0
	chains := make([][]float64, len(mon))
	for p := range mon[0] {
		for c := range mon {
			chains[c] = mon[c][p][:n]
		}
		r := diag.SplitRhat(chains)
		if math.IsNaN(r) {
			continue
		}
		worst = max(worst, r)
	}
	return worst
}

// SetEngineDiagnostics fills the engine-neutral part of an MCMC fit's
// diagnostics; sweeps is the number of sweeps per chain.
func SetEngineDiagnostics(d *multirater.Diagnostics, sweeps int) {
	d.Engine = &multirater.EngineDiagnostics{Name: multirater.EngineGibbs, Iterations: sweeps}
}
