package mcmc

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"concord/internal/testutil"
	"concord/multirater"
	"concord/multirater/numeric"
)

func TestCommonWithDefaults(t *testing.T) {
	cases := []struct {
		in         Common
		vague      bool
		wantLambda float64
	}{
		{Common{}, false, 1},
		{Common{}, true, 0.1},
		{Common{Lambda: 3}, true, 3},
	}
	for _, tc := range cases {
		c := tc.in.WithDefaults(tc.vague)
		if c.Chains != DefaultChains || c.Samples != DefaultSamples || c.Burnin != DefaultBurnin || c.Thin != 1 {
			t.Errorf("%+v: settings %+v", tc.in, c.Settings)
		}
		if c.V != 1 || c.Lambda != tc.wantLambda || c.FlagThreshold != multirater.DefaultFlagThreshold ||
			c.MaxRhat != multirater.DefaultMaxRhat || c.MinESS != multirater.DefaultMinESS || c.KeepDraws != multirater.DefaultKeepDraws {
			t.Errorf("%+v (vague %t): defaults %+v", tc.in, tc.vague, c)
		}
		c.Check()
	}
	if s := (Settings{Burnin: -1}).WithDefaults(); s.Burnin != 0 {
		t.Errorf("negative burn-in means none, got %d", s.Burnin)
	}
}

func TestCommonCheckPanics(t *testing.T) {
	ok := Common{}.WithDefaults(false)
	cases := map[string]func(c *Common){
		"lambda":  func(c *Common) { c.Lambda = -1 },
		"flag":    func(c *Common) { c.FlagThreshold = 1 },
		"sampler": func(c *Common) { c.Sampler = 7 },
		"ident":   func(c *Common) { c.Identifiability = 9 },
		"chains":  func(c *Common) { c.Chains = 0 },
		"min ess": func(c *Common) { c.MinESS = -1 },
	}
	for name, mod := range cases {
		c := ok
		mod(&c)
		testutil.Panics(t, name, "multirater: ", c.Check)
	}
}

func TestVerdict(t *testing.T) {
	d := &multirater.Diagnostics{MaxRhat: 1.002, MinESSBulk: 900, Converged: true, Parameters: make([]multirater.ParamDiag, 3)}
	if got, want := Verdict(d, 1.01, 400, 4, 2000), "converged: max R-hat 1.0020 < 1.01 and min bulk ESS 900 >= 400 over 3 free parameters"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	d = &multirater.Diagnostics{MaxRhat: 1.05, MinESSBulk: 100, WorstRhat: "alpha[a]", WorstESS: "m[x]"}
	got := Verdict(d, 1.01, 400, 4, 1000)
	for _, want := range []string{"NOT converged", "alpha[a]", "m[x]", "samples, e.g. 6000", "more chains than 4 (chains)"} {
		if !strings.Contains(got, want) {
			t.Errorf("verdict %q lacks %q", got, want)
		}
	}
}

// TestShortChainsRhatNotAvailable: chains too short for split R-hat (fewer
// than 4 draws) have R-hat "not available" (NaN, JSON null), not 1000000,
// and the verdict's advice makes sense for one chain of one draw (issue 19
// item 10: it said "R-hat 1000000.0000" and "samples 4").
func TestShortChainsRhatNotAvailable(t *testing.T) {
	draws := [][]float64{{0.3}, {1.2}}
	params := []*Param{
		{Name: "alpha[a]", Free: true, Get: func(c int) []float64 { return draws[0] }},
		{Name: "alpha[b]", Free: true, Get: func(c int) []float64 { return draws[1] }},
	}
	SummariseParams(params, 1)
	// SD 0 marks a constant parameter; these vary across parameters only,
	// so give each a nonzero SD as a longer chain would have.
	for _, p := range params {
		p.Sum.SD = 1
	}
	var dg multirater.Diagnostics
	Converge(&dg, params, 1.01, 400, 1, 1)
	if !math.IsNaN(dg.MaxRhat) || dg.WorstRhat != "" || dg.Converged {
		t.Fatalf("max R-hat %v (%q), converged %t; want not available", dg.MaxRhat, dg.WorstRhat, dg.Converged)
	}
	for _, p := range dg.Parameters {
		if !math.IsNaN(p.Rhat) {
			t.Errorf("%s: R-hat %v, want not available", p.Name, p.Rhat)
		}
	}
	for _, want := range []string{"R-hat is not available (each chain kept 1 draw(s); split R-hat needs at least 4 per chain)",
		"samples, e.g. 200", "several chains (chains, e.g. 4)"} {
		if !strings.Contains(dg.Verdict, want) {
			t.Errorf("verdict %q lacks %q", dg.Verdict, want)
		}
	}
	if strings.Contains(dg.Verdict, "1000000") || strings.Contains(dg.Verdict, "samples 4") {
		t.Errorf("verdict %q", dg.Verdict)
	}
	b, err := json.Marshal(dg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"max_rhat":null`) || !strings.Contains(string(b), `"rhat":null`) {
		t.Errorf("JSON %s: want max_rhat and rhat null", b)
	}
	var back multirater.Diagnostics
	if err := json.Unmarshal(b, &back); err != nil || !math.IsNaN(back.MaxRhat) || len(back.Parameters) != 2 || !math.IsNaN(back.Parameters[0].Rhat) || back.Verdict != dg.Verdict {
		t.Errorf("read back %+v, %v", back, err)
	}
	// A known R-hat survives the round trip as a number.
	dg.MaxRhat, dg.Parameters[0].Rhat = 1.5, 1.25
	b, _ = json.Marshal(dg)
	if err := json.Unmarshal(b, &back); err != nil || back.MaxRhat != 1.5 || back.Parameters[0].Rhat != 1.25 {
		t.Errorf("read back %s as %+v, %v", b, back, err)
	}
}

func TestMoveStats(t *testing.T) {
	var m MoveStats
	if len(m.Map()) != 0 {
		t.Error("statistics before any sweep")
	}
	m.Add(MoveStats{Sweeps: 10, CGIters: 30, Slices: 4, SliceEvals: 10})
	m.Add(MoveStats{Sweeps: 10, Slices: 4, SliceEvals: 6})
	got := m.Map()
	if got["cg_iterations_per_sweep"] != 1.5 || got["slice_evaluations_per_step"] != 2 || len(got) != 2 {
		t.Errorf("got %v", got)
	}
}

type stdNormal struct{}

func (stdNormal) LogF(x float64) float64 { return -0.5 * x * x }

// TestSliceSample: a chain of slice-sampling steps on N(0, 1) truncated to
// (-1, 2) has the truncated normal's mean and variance (exact values by
// their formulas), within 5 Monte Carlo standard errors of 200,000 draws.
func TestSliceSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	lo, hi := -1.0, 2.0
	x := 0.0
	var s, s2 float64
	for i := 0; i < n; i++ {
		x, _ = SliceSample(rng, stdNormal{}, x, 1, lo, hi)
		if !(x > lo && x < hi) {
			t.Fatalf("draw %v outside (%v, %v)", x, lo, hi)
		}
		s += x
		s2 += x * x
	}
	phi := func(z float64) float64 { return math.Exp(-0.5*z*z) / math.Sqrt(2*math.Pi) }
	cdf := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	z := cdf(hi) - cdf(lo)
	mean := (phi(lo) - phi(hi)) / z
	vr := 1 + (lo*phi(lo)-hi*phi(hi))/z - mean*mean
	gotMean := s / n
	gotVar := s2/n - gotMean*gotMean
	// The steps are autocorrelated; 4x the iid standard error is generous.
	if se := 4 * math.Sqrt(vr/n); math.Abs(gotMean-mean) > 5*se {
		t.Errorf("mean %v, want %v (se %v)", gotMean, mean, se)
	}
	if math.Abs(gotVar-vr) > 0.02 {
		t.Errorf("variance %v, want %v", gotVar, vr)
	}
}

func TestPrecisionsTraces(t *testing.T) {
	draws := [][]float64{make([]float64, 2500), make([]float64, 2500)}
	for i := range draws[0] {
		draws[0][i], draws[1][i] = float64(i), -float64(i)
	}
	p := Precisions{RaterIDs: []string{"a"}, Fixed: func(int) bool { return false }, Chains: 2, Samples: 2500,
		Draws: func(c, l int) []float64 { return draws[c] }}
	tr := p.Traces()
	if tr.Every != 3 || len(tr.Alpha["a"]) != 2 || len(tr.Alpha["a"][0]) != 834 || tr.Alpha["a"][1][1] != -3 {
		t.Errorf("traces every %d, %d chains of %d points", tr.Every, len(tr.Alpha["a"]), len(tr.Alpha["a"][0]))
	}
	alpha, variance := p.Params()
	if alpha[0].Name != "alpha[a]" || !alpha[0].Free || variance[0].Name != "variance[a]" || !variance[0].IsVar {
		t.Errorf("params %+v %+v", alpha[0], variance[0])
	}
}

// panicChain panics in its third sweep.
type panicChain struct{ n int }

func (c *panicChain) Sweep(bool) error {
	if c.n++; c.n == 3 {
		panic("boom")
	}
	return nil
}
func (c *panicChain) EndWarmup()             {}
func (c *panicChain) Record(int)             {}
func (c *panicChain) Monitored() [][]float64 { return nil }

// TestChainPanicHidesStack: a chain's panic (a bug) becomes a ChainPanic
// whose message names the chain and the value and carries no goroutine
// stack (a failed fit's public message showed one, issue 19 item 6); the
// stack is kept in the error for logs.
func TestChainPanicHidesStack(t *testing.T) {
	_, err := Run(context.Background(), Settings{Chains: 1, Samples: 5, Burnin: 2, Thin: 1}, []Chain{&panicChain{}}, nil, time.Now(), 1)
	var cp *ChainPanic
	if !errors.As(err, &cp) {
		t.Fatalf("error %v (%T), want a *ChainPanic", err, err)
	}
	if msg := err.Error(); strings.Contains(msg, "goroutine") || strings.Contains(msg, ".go:") || !strings.Contains(msg, "chain 0: boom") {
		t.Errorf("message %q", msg)
	}
	if !strings.Contains(cp.Stack, "goroutine") {
		t.Errorf("stack not kept: %q", cp.Stack)
	}
}

// sumLogPhi is exp(-x^2/2) prod_i Phi(s_i x), as a LogDensity and as an
// AboveDensity, for TestSliceSampleAboveSameDraws.
type sumLogPhi struct{ s []float64 }

func (d sumLogPhi) LogF(x float64) float64 {
	r := -0.5 * x * x
	for _, s := range d.s {
		r += numeric.LogNormCDF(s * x)
	}
	return r
}

type sumLogPhiAbove struct {
	sumLogPhi
	calls *int
}

func (d sumLogPhiAbove) Above(x, logy float64) bool {
	r, i := -0.5*x*x, 0
	for ; i < len(d.s) && r > logy; i++ {
		r += numeric.LogNormCDF(d.s[i] * x)
	}
	*d.calls += i
	return r > logy
}

// TestSliceSampleAboveSameDraws: SliceSampleAbove's chain is
// SliceSample's bit for bit, and the early stop leaves out terms.
func TestSliceSampleAboveSameDraws(t *testing.T) {
	s := make([]float64, 60)
	for i := range s {
		s[i] = 0.2 + 0.05*float64(i%7)
		if i%3 == 0 {
			s[i] = -s[i]
		}
	}
	calls := 0
	d := sumLogPhiAbove{sumLogPhi{s}, &calls}
	r1, r2 := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	x1, x2 := 0.0, 0.0
	evals := 0
	for it := 0; it < 2000; it++ {
		var e1, e2 int
		x1, e1 = SliceSample(r1, d.sumLogPhi, x1, 0.5, math.Inf(-1), math.Inf(1))
		x2, e2 = SliceSampleAbove(r2, d, x2, 0.5, math.Inf(-1), math.Inf(1))
		if x1 != x2 || e1 != e2 {
			t.Fatalf("step %d: SliceSample %v (%d evaluations), SliceSampleAbove %v (%d)", it, x1, e1, x2, e2)
		}
		evals += e1 - 1
	}
	if calls >= evals*len(s) {
		t.Errorf("Above summed %d terms of %d evaluations' %d: no early stop", calls, evals, evals*len(s))
	}
}

// TestLiveRhatBounded checks that the live R-hat of the progress reports
// is computed at most about liveRhatTimes times however often it is asked
// for (a report every half second on a loaded machine), that it is the R-hat
// of the draws kept at its last computation, and that the last report has
// that of all the draws.
func TestLiveRhatBounded(t *testing.T) {
	const nc, np, n = 4, 3, 2000
	rng := rand.New(rand.NewPCG(5, 6))
	mon := make([][][]float64, nc)
	for c := range mon {
		mon[c] = make([][]float64, np)
		for p := range mon[c] {
			mon[c][p] = make([]float64, n)
			for i := range mon[c][p] {
				mon[c][p][i] = rng.NormFloat64() + 0.05*float64(c*p)
			}
		}
	}
	l := liveRhat{every: max(8, int64(n/liveRhatTimes))}
	computed := 0
	var want float64
	for k := int64(0); k <= n; k++ {
		for range 3 { // several reports per kept draw
			before := l.kept
			r := l.at(mon, k)
			if l.kept != before {
				computed++
				want = liveMaxRhat(mon, int(l.kept))
			}
			if k < 8 && (r != 0 || l.kept != 0) {
				t.Fatalf("%d draws: live R-hat %g computed at %d draws, before 8", k, r, l.kept)
			}
			if k >= 8 && r != want {
				t.Fatalf("%d draws: live R-hat %g is not that of the %d draws of its computation", k, r, l.kept)
			}
		}
	}
	if computed > liveRhatTimes+2 || computed < liveRhatTimes/2 {
		t.Errorf("computed %d times for %d draws, want about %d", computed, n, liveRhatTimes)
	}
	if l.kept != n {
		t.Errorf("last computation at %d draws, want all %d", l.kept, n)
	}
}
