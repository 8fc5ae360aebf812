// Command jensen re-simulates the claim of Table 1 of Jensen, Nielsen &
// Larsen (2013), "Bounded Gaussian process regression": for a latent
// function drawn once from a GP prior (squared-exponential or periodic
// kernel) and ten realisations of each of three noise types (WA: probit
// warped Gaussian noise, TG: truncated Gaussian with mode Phi(f), BE: beta
// with mean Phi(f)), the model whose likelihood matches the noise type
// (GP-WA, GP-TG, GP-BE, fitted with concord/multirater/bounded) has the
// lowest mean negative log predictive density (NLPD) on held-out points.
//
//	go run ./docs/scripts/jensen -reps 10
//
// See README.md in this folder for the choices the paper leaves open.
package main

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"concord/multirater"
	"concord/multirater/bounded"
	"concord/multirater/infer"
	"concord/multirater/kernel"
	"concord/multirater/lik"
	"concord/multirater/numeric"
)

// genKernel is a covariance function of the data generation (1-D inputs).
type genKernel struct {
	name  string
	label string
	k     func(a, b float64) float64
}

var genKernels = []genKernel{
	{name: "SE", label: "Squared exponential (sigma_f^2 = 2, l = 1)", k: func(a, b float64) float64 {
		d := a - b
		return 2 * math.Exp(-0.5*d*d) // sigma_f^2 exp(-d^2 / (2 l^2)), l = 1
	}},
	{name: "PER", label: "Periodic (sigma_f^2 = 3, l = 0.8, period 5)", k: func(a, b float64) float64 {
		// gpml covPeriodic: sigma_f^2 exp(-2 sin^2(pi |a - b| / p) / l^2).
		s := math.Sin(math.Pi * math.Abs(a-b) / 5)
		return 3 * math.Exp(-2*s*s/(0.8*0.8))
	}},
}

// Noise types (columns) and models (rows), in the same order: model m
// matches noise m.
var (
	noises = []string{"WA", "TG", "BE"}
	models = []string{"GP-WA", "GP-TG", "GP-BE"}
	liks   = []string{bounded.Warped, bounded.TruncNorm, bounded.Beta}
)

type config struct {
	reps, n, nTest, workers, restarts int
	seed                              uint64
	engine, fit                       string
	verbose                           bool
	xMax, sigmaWA, nuTG, nuBE, clip   float64
}

// dataset is one realisation of the noise of one cell.
type dataset struct {
	yTrain, yTest []float64
}

// job is one fit: kernel c, noise t, realisation r, model m.
type job struct {
	c, t, r, m int
}

// outcome of one job.
type outcome struct {
	nlpd     float64
	gamma    float64 // learnt RBF gamma (NaN with the true kernel)
	nu       float64 // learnt dispersion (warped: 1/sigma)
	clamped  bool    // some EP runs fell back to clamped sites
	nonConv  int     // evidence-maximisation starts that did not converge
	err      error
	seconds  float64
	badTests int      // test points whose log density was not finite
	fallback bool     // bounded.NewPredictor refused the fit (negative site precisions): own predictive used
	maxDiff  float64  // largest |difference| of the own predictive's log density and the package's
	status   []string // what went wrong: starts that did not converge, predictor refusals, crashes
}

func main() {
	var cfg config
	flag.IntVar(&cfg.reps, "reps", 10, "noise realisations per (kernel, noise) cell")
	flag.IntVar(&cfg.n, "n", 100, "training inputs (uniform on [0, xmax])")
	flag.IntVar(&cfg.nTest, "ntest", 100, "test inputs (uniform on [0, xmax])")
	flag.Uint64Var(&cfg.seed, "seed", 1, "random seed")
	flag.StringVar(&cfg.engine, "engine", "ep", "inference engine: ep or laplace")
	flag.StringVar(&cfg.fit, "fit", "rbf", "fitting kernel: rbf (unit-amplitude RBF, gamma learnt by evidence) or true (the generating kernel, fixed)")
	flag.Float64Var(&cfg.xMax, "xmax", 10, "inputs lie on [0, xmax]")
	flag.Float64Var(&cfg.sigmaWA, "sigma-wa", 0.3, "WA noise: sd of the Gaussian noise on the probit scale")
	flag.Float64Var(&cfg.nuTG, "nu-tg", 10, "TG noise: inverse sd 1/nu of the truncated Gaussian")
	flag.Float64Var(&cfg.nuBE, "nu-be", 20, "BE noise: precision nu of the beta")
	flag.Float64Var(&cfg.clip, "clip", 1e-12, "clip the noisy values to [clip, 1 - clip] (0: only move values that are 0 or 1 in floating point to the nearest float inside)")
	flag.IntVar(&cfg.workers, "workers", 2, "fits run concurrently")
	flag.BoolVar(&cfg.verbose, "v", false, "log the start of every fit to stderr")
	flag.IntVar(&cfg.restarts, "restarts", 2, "starting points of the evidence maximisation")
	jobFlag := flag.String("job", "", "internal: run the one fit c,t,r,m and write its outcome to stdout (gob)")
	flag.Parse()
	if cfg.engine != "ep" && cfg.engine != "laplace" {
		fmt.Fprintln(os.Stderr, "jensen: -engine must be ep or laplace")
		os.Exit(2)
	}
	if cfg.fit != "rbf" && cfg.fit != "true" {
		fmt.Fprintln(os.Stderr, "jensen: -fit must be rbf or true")
		os.Exit(2)
	}
	if cfg.reps < 1 || cfg.n < 2 || cfg.nTest < 1 || cfg.workers < 1 {
		fmt.Fprintln(os.Stderr, "jensen: -reps, -n, -ntest and -workers must be positive (n >= 2)")
		os.Exit(2)
	}
	if *jobFlag != "" {
		var j job
		if _, err := fmt.Sscanf(*jobFlag, "%d,%d,%d,%d", &j.c, &j.t, &j.r, &j.m); err != nil {
			fmt.Fprintln(os.Stderr, "jensen: -job:", err)
			os.Exit(2)
		}
		o := newSetup(cfg).fitJob(cfg, j)
		if err := gob.NewEncoder(os.Stdout).Encode(o.wire()); err != nil {
			fmt.Fprintln(os.Stderr, "jensen:", err)
			os.Exit(1)
		}
		return
	}
	run(cfg)
}

// runChild runs job j in a child process (this program with the same flags
// and -job): a panic inside the fitting packages that happens in a
// goroutine of theirs (gonum/optimize evaluates the objective in one)
// cannot be recovered here and would end the whole run; in a child it
// ends only that fit, which is then counted as failed.
func runChild(j job) outcome {
	self, err := os.Executable()
	if err != nil {
		return outcome{err: err, nlpd: math.NaN(), gamma: math.NaN(), nu: math.NaN()}
	}
	args := append(append([]string(nil), os.Args[1:]...), "-job", fmt.Sprintf("%d,%d,%d,%d", j.c, j.t, j.r, j.m))
	cmd := exec.Command(self, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	runErr := cmd.Run()
	var w wireOutcome
	if runErr == nil {
		runErr = gob.NewDecoder(&stdout).Decode(&w)
	}
	if runErr != nil {
		o := outcome{nlpd: math.NaN(), gamma: math.NaN(), nu: math.NaN(), seconds: time.Since(t0).Seconds()}
		msg := firstLine(stderr.String(), "panic:")
		if msg == "" {
			msg = strings.TrimSpace(stderr.String())
		}
		if where := firstLine(stderr.String(), "concord/multirater/"); where != "" {
			// Drop the argument words of the stack frame.
			if i := strings.LastIndex(where, "("); i > 0 && strings.HasSuffix(where, ")") {
				where = where[:i]
			}
			msg += " (in " + where + ")"
		}
		o.err = fmt.Errorf("fit process failed: %v: %s", runErr, msg)
		o.status = append(o.status, "crashed: "+msg)
		return o
	}
	return w.outcome()
}

// firstLine returns the first line of s that contains sub, trimmed.
func firstLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// wireOutcome is an outcome as the child sends it (gob keeps NaN).
type wireOutcome struct {
	NLPD, Gamma, Nu, Seconds, MaxDiff float64
	Clamped, Fallback                 bool
	NonConv, BadTests                 int
	Err                               string
	Status                            []string
}

func (o outcome) wire() wireOutcome {
	w := wireOutcome{NLPD: o.nlpd, Gamma: o.gamma, Nu: o.nu, Seconds: o.seconds, MaxDiff: o.maxDiff,
		Clamped: o.clamped, Fallback: o.fallback, NonConv: o.nonConv, BadTests: o.badTests, Status: o.status}
	if o.err != nil {
		w.Err = o.err.Error()
	}
	return w
}

func (w wireOutcome) outcome() outcome {
	o := outcome{nlpd: w.NLPD, gamma: w.Gamma, nu: w.Nu, seconds: w.Seconds, maxDiff: w.MaxDiff,
		clamped: w.Clamped, fallback: w.Fallback, nonConv: w.NonConv, badTests: w.BadTests, status: w.Status}
	if w.Err != "" {
		o.err = errors.New(w.Err)
	}
	return o
}

// setup is everything a fit needs, drawn deterministically from the seed:
// the parent and every child process compute the same.
type setup struct {
	xTrain, xTest []float64
	fs            [][]float64     // latent function per kernel at xTrain then xTest
	data          [][][]dataset   // [kernel][noise][realisation]
	moved         [][]int         // clipped values per [kernel][noise]
	trueTrain     []*mat.SymDense // -fit true: the generating kernel's covariances
	trueCross     [][][]float64
}

func newSetup(cfg config) *setup {
	// Independent random streams: the inputs, each kernel's latent
	// function and each (kernel, noise, realisation)'s noise, so that a
	// run with fewer realisations sees the same first ones.
	stream := func(a, b, c int) *rand.Rand {
		return rand.New(rand.NewPCG(cfg.seed, 0x6a656e73656e^uint64(a<<40|b<<20|c)))
	}

	// Inputs: drawn once, shared by both kernels and every realisation.
	rng := stream(0, 0, 0)
	xTrain := uniformSorted(rng, cfg.n, cfg.xMax)
	xTest := uniformSorted(rng, cfg.nTest, cfg.xMax)
	all := append(append([]float64(nil), xTrain...), xTest...)

	// One latent function per kernel, drawn jointly at the training and
	// test inputs; then every realisation of every noise type (training
	// and test values alike).
	fs := make([][]float64, len(genKernels))
	data := make([][][]dataset, len(genKernels))
	moved := make([][]int, len(genKernels))
	for c, gk := range genKernels {
		fs[c] = drawGP(stream(1, c, 0), gk.k, all)
		data[c] = make([][]dataset, len(noises))
		moved[c] = make([]int, len(noises))
		for t := range noises {
			data[c][t] = make([]dataset, cfg.reps)
			for r := range cfg.reps {
				rng := stream(2+c, t, r)
				y := make([]float64, len(all))
				for i, f := range fs[c] {
					var k int
					y[i], k = noisy(rng, t, f, cfg)
					moved[c][t] += k
				}
				data[c][t][r] = dataset{yTrain: y[:cfg.n], yTest: y[cfg.n:]}
			}
		}
	}
	st := &setup{xTrain: xTrain, xTest: xTest, fs: fs, data: data, moved: moved}
	if cfg.fit == "true" {
		for _, gk := range genKernels {
			st.trueTrain = append(st.trueTrain, gram(gk.k, xTrain))
			st.trueCross = append(st.trueCross, cross(gk.k, xTest, xTrain))
		}
	}
	return st
}

// fitJob runs job j in this process.
func (st *setup) fitJob(cfg config, j job) outcome {
	var cov *mat.SymDense
	var cr [][]float64
	var prior float64
	if cfg.fit == "true" {
		cov, cr, prior = st.trueTrain[j.c], st.trueCross[j.c], genKernels[j.c].k(0, 0)
	}
	return fitOne(cfg, j, st.xTrain, st.xTest, st.data[j.c][j.t][j.r], cov, cr, prior)
}

func run(cfg config) {
	start := time.Now()
	st := newSetup(cfg)
	fs, moved := st.fs, st.moved

	fmt.Printf("Jensen, Nielsen & Larsen (2013) Table 1 re-simulation\n")
	fmt.Printf("n = %d training and %d test inputs, uniform on [0, %g], drawn once (seed %d)\n", cfg.n, cfg.nTest, cfg.xMax, cfg.seed)
	fmt.Printf("noise: WA y = Phi(f + N(0, %g^2)); TG y ~ N(Phi(f), (1/%g)^2) truncated to (0, 1); BE y ~ Beta(%g Phi(f), %g (1 - Phi(f)))\n",
		cfg.sigmaWA, cfg.nuTG, cfg.nuBE, cfg.nuBE)
	fmt.Printf("noisy values clipped to [%g, 1 - %g]\n", cfg.clip, cfg.clip)
	fmt.Printf("%d realisations per cell; engine %s, %d evidence starts; fitting kernel: %s\n", cfg.reps, cfg.engine, cfg.restarts, fitKernelText(cfg.fit))
	for c, gk := range genKernels {
		lo, hi := minMax(fs[c])
		fmt.Printf("latent f (%s): range [%.2f, %.2f], Phi(f) in [%.3f, %.3f]\n", gk.name, lo, hi, numeric.NormCDF(lo), numeric.NormCDF(hi))
	}
	for c, gk := range genKernels {
		for t, k := range moved[c] {
			if k == 0 {
				continue
			}
			what := fmt.Sprintf("clipped to [%g, 1 - %g]", cfg.clip, cfg.clip)
			if cfg.clip == 0 {
				what = "0 or 1 in floating point, moved to the nearest float inside"
			}
			fmt.Printf("note: %s %s noise: %d of %d values (training and test) %s\n", gk.name, noises[t], k, cfg.reps*(cfg.n+cfg.nTest), what)
		}
	}
	fmt.Println()

	jobs := make(chan job)
	results := make([][][][]outcome, len(genKernels))
	for c := range results {
		results[c] = make([][][]outcome, len(noises))
		for t := range results[c] {
			results[c][t] = make([][]outcome, len(models))
			for m := range results[c][t] {
				results[c][t][m] = make([]outcome, cfg.reps)
			}
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, total := 0, len(genKernels)*len(noises)*cfg.reps*len(models)
	for range cfg.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if cfg.verbose {
					mu.Lock()
					fmt.Fprintf(os.Stderr, "start: %s %s noise, realisation %d, %s\n", genKernels[j.c].name, noises[j.t], j.r+1, models[j.m])
					mu.Unlock()
				}
				o := runChild(j)
				results[j.c][j.t][j.m][j.r] = o
				mu.Lock()
				done++
				if o.err != nil {
					fmt.Fprintf(os.Stderr, "fit failed: %s %s noise, realisation %d, %s: %v\n", genKernels[j.c].name, noises[j.t], j.r+1, models[j.m], o.err)
				}
				if done%18 == 0 || done == total {
					fmt.Fprintf(os.Stderr, "%d/%d fits done (%.0f s)\n", done, total, time.Since(start).Seconds())
				}
				mu.Unlock()
			}
		}()
	}
	for c := range genKernels {
		for t := range noises {
			for r := range cfg.reps {
				for m := range models {
					jobs <- job{c, t, r, m}
				}
			}
		}
	}
	close(jobs)
	wg.Wait()

	report(cfg, results)
	fmt.Printf("\ntotal run time: %.1f s\n", time.Since(start).Seconds())
}

func fitKernelText(fit string) string {
	if fit == "true" {
		return "the generating kernel, fixed (only the dispersion is learnt)"
	}
	return "RBF exp(-gamma (x - x')^2), unit amplitude, gamma learnt by evidence maximisation"
}

// fitOne fits model j.m to one realisation and returns the test NLPD.
func fitOne(cfg config, j job, xTrain, xTest []float64, ds dataset, trueCov *mat.SymDense, trueCross [][]float64, truePrior float64) (o outcome) {
	t0 := time.Now()
	o.gamma, o.nu, o.nlpd = math.NaN(), math.NaN(), math.NaN()
	defer func() {
		if p := recover(); p != nil {
			o.err = fmt.Errorf("panic: %v", p)
		}
		o.seconds = time.Since(t0).Seconds()
	}()
	n := len(xTrain)
	d := bounded.Data{RaterIDs: []string{"r"}, Lo: 0, Hi: 1}
	d.ItemIDs = make([]string, n)
	d.Ratings = make([]bounded.Rating, n)
	for i := range n {
		d.ItemIDs[i] = fmt.Sprintf("x%d", i)
		d.Ratings[i] = bounded.Rating{Item: i, Rater: 0, Value: ds.yTrain[i]}
	}
	xIn := kernel.Inputs{N: n, X: mat.NewDense(n, 1, append([]float64(nil), xTrain...))}
	if trueCov != nil {
		d.Cov, d.Kernel = trueCov, genKernels[j.c].name+" (true, fixed)"
	} else {
		// The starting gamma: infer ignores it (its first start is
		// gamma = 1/(2D) = 0.5, later ones jitter that).
		d.Learn = &infer.LearnKernel{Terms: []kernel.Hyper{kernel.RBF{Gamma: 0.5}}, Inputs: xIn}
		d.Kernel = "rbf (learnt)"
	}
	seed := cfg.seed*1_000_003 + (uint64(j.c)<<40 | uint64(j.t)<<32 | uint64(j.r)<<8 | uint64(j.m)) // independent of -reps
	opts := bounded.Options{Likelihood: liks[j.m], Engine: cfg.engine, Restarts: cfg.restarts, Seed: seed, RankDraws: 1}
	res, err := bounded.Fit(context.Background(), &d, opts)
	if err != nil {
		o.err = err
		return o
	}
	o.nu = res.Raters[0].Dispersion.Mean
	for _, note := range res.Diagnostics.Notes {
		if strings.Contains(note, "clamped at 0") {
			o.clamped = true
		}
		if strings.HasPrefix(note, "evidence maximisation start") && !strings.HasSuffix(note, "(converged)") {
			o.nonConv++
			if i := strings.LastIndex(note, "("); i >= 0 {
				o.status = append(o.status, strings.TrimSuffix(note[i+1:], ")"))
			}
		}
	}

	// Covariances at the learnt (or true) kernel.
	var cov mat.Symmetric
	crossRows := trueCross
	prior := truePrior
	if trueCov != nil {
		cov = trueCov
	} else {
		if res.Model.Learnt == nil || len(res.Model.Learnt.Terms) != 1 {
			o.err = fmt.Errorf("fit result has no learnt kernel term")
			return o
		}
		kl, err := kernel.ParseKernel(res.Model.Learnt.Terms[0])
		if err != nil {
			o.err = fmt.Errorf("learnt kernel %q: %v", res.Model.Learnt.Terms[0], err)
			return o
		}
		if rbf, ok := kl.(kernel.RBF); ok {
			o.gamma = rbf.Gamma
		}
		var g mat.SymDense
		kl.GramTo(&g, xIn)
		cov = &g
		tIn := kernel.Inputs{N: len(xTest), X: mat.NewDense(len(xTest), 1, append([]float64(nil), xTest...))}
		var cd mat.Dense
		kl.CrossTo(&cd, tIn, xIn)
		crossRows = make([][]float64, len(xTest))
		for i := range crossRows {
			crossRows[i] = mat.Row(nil, i, &cd)
		}
		prior = kl.DiagTo(nil, kernel.Inputs{N: 1, X: mat.NewDense(1, 1, []float64{0})})[0]
	}
	// The package's predictor, and our own one, which also works with
	// negative site precisions (EP keeps them): with S the site
	// precisions and V the precision-weighted means, the posterior is
	// N(C (I + S C)^-1 V, C (I + S C)^-1) and a new point has
	// mu = k'(I + S C)^-1 V, var = k** - k'(I + S C)^-1 S k.
	own, err := newOwnPredictor(res, cov)
	if err != nil {
		o.err = fmt.Errorf("own predictor: %v", err)
		return o
	}
	p, perr := bounded.NewPredictor(res, cov)
	if perr != nil {
		o.fallback = true
		msg := perr.Error()
		if strings.Contains(msg, "invalid site precision") {
			msg = "a negative site precision"
		}
		o.status = append(o.status, "bounded.NewPredictor refused the fit: "+msg)
	}
	sum, cnt := 0.0, 0
	for i, y := range ds.yTest {
		m, v := own.latent(crossRows[i], prior)
		lp := own.logDensity(y, m, v)
		if p != nil {
			pm, pv := p.Latent(crossRows[i], prior)
			plp := p.LogDensity(y, pm, pv)
			if d := math.Abs(plp - lp); d > o.maxDiff || math.IsNaN(d) {
				o.maxDiff = d
			}
			lp = plp // the package's value when it has one
		}
		if math.IsNaN(lp) || math.IsInf(lp, 0) {
			o.badTests++
			continue
		}
		sum += lp
		cnt++
	}
	if o.badTests > 0 {
		o.err = fmt.Errorf("%d of %d test log densities are not finite", o.badTests, len(ds.yTest))
		return o
	}
	o.nlpd = -sum / float64(cnt)
	return o
}

// report prints Table 1 and the verdicts.
func report(cfg config, res [][][][]outcome) {
	won, undecided, failures := 0, 0, 0
	var verdicts []string
	for c, gk := range genKernels {
		means, failed := printTable(cfg, gk, res[c])
		failures += failed
		for t := range noises {
			v, w, u := cellVerdict(cfg, gk, t, res[c][t], means)
			verdicts = append(verdicts, v)
			won += b2i(w)
			undecided += b2i(u)
		}
		fmt.Println()
	}
	for _, v := range verdicts {
		fmt.Println(v)
	}
	fmt.Printf("matching model won %d of 6 cells", won)
	if undecided > 0 {
		fmt.Printf(" (%d undecided)", undecided)
	}
	fmt.Printf(" (claim accepted if >= 5): %s\n", map[bool]string{true: "ACCEPTED", false: "NOT ACCEPTED"}[won >= 5])
	reportLearnt(cfg, res)
	fmt.Printf("failed fits: %d of %d\n", failures, len(genKernels)*len(noises)*len(models)*cfg.reps)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// printTable prints one generating kernel's part of Table 1 (res by noise,
// model, realisation) and returns the mean NLPD by model and noise, and
// the number of failed fits.
func printTable(cfg config, gk genKernel, res [][][]outcome) (means [][]float64, failures int) {
	fmt.Printf("%s: mean NLPD per test point (sd over realisations); lower is better\n", gk.label)
	fmt.Printf("%-8s", "model")
	for _, nz := range noises {
		fmt.Printf(" %22s", nz)
	}
	fmt.Println()
	means = make([][]float64, len(models)) // [m][t]
	for m := range models {
		means[m] = make([]float64, len(noises))
		fmt.Printf("%-8s", models[m])
		for t := range noises {
			var v []float64
			for _, o := range res[t][m] {
				if o.err == nil {
					v = append(v, o.nlpd)
				} else {
					failures++
				}
			}
			mean, sd := meanSD(v)
			means[m][t] = mean
			cell := fmt.Sprintf("%.3f (%.3f)", mean, sd)
			if len(v) < cfg.reps {
				cell += fmt.Sprintf(" [%d ok]", len(v))
			}
			fmt.Printf(" %22s", cell)
		}
		fmt.Println()
	}
	fmt.Printf("(x %d test points for the paper's scale of summed NLPD)\n", cfg.nTest)
	return means, failures
}

// cellVerdict says whether, for noise t (cell res by model and
// realisation), the matching model has the lowest mean NLPD: the verdict
// line, whether it won, and whether the cell is undecided (a model with
// fewer than half its fits).
func cellVerdict(cfg config, gk genKernel, t int, res [][]outcome, means [][]float64) (verdict string, won, undecided bool) {
	best := 0
	for m := range models {
		if !math.IsNaN(means[m][t]) && (math.IsNaN(means[best][t]) || means[m][t] < means[best][t]) {
			best = m
		}
	}
	perRep, paired := bestPerRealisation(cfg, t, res)
	margin := pairedMargin(cfg, t, res, means)
	decided := true
	for m := range models {
		ok := 0
		for _, o := range res[m] {
			if o.err == nil {
				ok++
			}
		}
		decided = decided && 2*ok >= cfg.reps
	}
	won = best == t && decided
	mark := "NO "
	switch {
	case !decided:
		mark = "undecided (a model has fewer than half its fits)"
	case won:
		mark = "yes"
	}
	return fmt.Sprintf("%-3s %s noise: matching model %s has the lowest mean NLPD: %s (lowest: %s; best in %d of %d realisations; paired %s)",
		gk.name, noises[t], models[t], mark, models[best], perRep, paired, margin), won, !decided
}

// bestPerRealisation counts the realisations in which the matching model
// (t) was best, among those where every fit succeeded (paired).
func bestPerRealisation(cfg config, t int, res [][]outcome) (perRep, paired int) {
	for r := range cfg.reps {
		ok := true
		bm := 0
		for m := range models {
			o := res[m][r]
			if o.err != nil {
				ok = false
				break
			}
			if o.nlpd < res[bm][r].nlpd {
				bm = m
			}
		}
		if ok {
			paired++
			if bm == t {
				perRep++
			}
		}
	}
	return perRep, paired
}

// pairedMargin is the matching model's paired margin over the best other
// model (by mean): mean and standard error of the per-realisation
// differences, negative when the matching model is better.
func pairedMargin(cfg config, t int, res [][]outcome, means [][]float64) string {
	other := -1
	for m := range models {
		if m != t && !math.IsNaN(means[m][t]) && (other < 0 || means[m][t] < means[other][t]) {
			other = m
		}
	}
	if other < 0 {
		return "no other model"
	}
	var dv []float64
	for r := range cfg.reps {
		a, b := res[t][r], res[other][r]
		if a.err == nil && b.err == nil {
			dv = append(dv, a.nlpd-b.nlpd)
		}
	}
	dm, dsd := meanSD(dv)
	return fmt.Sprintf("%s - %s = %.3f (se %.3f)", models[t], models[other], dm, dsd/math.Sqrt(float64(len(dv))))
}

// reportLearnt prints the learnt parameters and the fits' diagnostics.
func reportLearnt(cfg config, res [][][][]outcome) {
	fmt.Printf("\nlearnt parameters, median over realisations: gamma of the RBF (true SE: 0.5) / dispersion nu (GP-WA: 1/sigma; true: WA %.3g, TG %g, BE %g)\n",
		1/cfg.sigmaWA, cfg.nuTG, cfg.nuBE)
	statuses := map[string]int{}
	maxDiff := 0.0
	for c, gk := range genKernels {
		for t := range noises {
			parts := make([]string, 0, len(models))
			for m := range models {
				var g, nu []float64
				clamped, nonConv, fallback, secs := 0, 0, 0, 0.0
				for _, o := range res[c][t][m] {
					secs += o.seconds
					for _, st := range o.status {
						statuses[st]++
					}
					if o.err != nil {
						continue
					}
					g, nu = append(g, o.gamma), append(nu, o.nu)
					if o.clamped {
						clamped++
					}
					if o.fallback {
						fallback++
					} else {
						maxDiff = math.Max(maxDiff, o.maxDiff)
					}
					nonConv += o.nonConv
				}
				s := fmt.Sprintf("%s gamma %.3g nu %.3g", models[m], median(g), median(nu))
				if clamped > 0 {
					s += fmt.Sprintf(" clampedEP %d", clamped)
				}
				if nonConv > 0 {
					s += fmt.Sprintf(" unconvStarts %d", nonConv)
				}
				if fallback > 0 {
					s += fmt.Sprintf(" negSites %d", fallback)
				}
				s += fmt.Sprintf(" %.1fs/fit", secs/float64(len(res[c][t][m])))
				parts = append(parts, s)
			}
			fmt.Printf("%-3s %s: %s\n", gk.name, noises[t], strings.Join(parts, "; "))
		}
	}
	fmt.Println("(clampedEP: fits in which some EP runs fell back to clamped, damped sites; unconvStarts: evidence starts")
	fmt.Println(" that ended other than converged; negSites: fits with negative site precisions, which bounded.NewPredictor")
	fmt.Println(" refuses: their NLPD comes from this script's own predictive, see README)")
	fmt.Printf("own predictive vs bounded.Predictor where both apply: largest |difference| in log density %.2g\n", maxDiff)
	keys := make([]string, 0, len(statuses))
	for k := range statuses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %3d x %s\n", statuses[k], k)
	}
}

// noisy returns a noisy observation of type t at latent f, strictly inside
// (0, 1), and 1 if it was moved: values outside [clip, 1 - clip] are
// clipped there, and with clip = 0 a value that is 0 or 1 in floating
// point (beta draws with tiny shape parameters) becomes the nearest float
// inside.
func noisy(rng *rand.Rand, t int, f float64, cfg config) (float64, int) {
	var y float64
	switch t {
	case 0: // WA
		y = numeric.NormCDF(f + cfg.sigmaWA*rng.NormFloat64())
	case 1: // TG: mode Phi(f), sd 1/nu, truncated to (0, 1)
		y = numeric.TruncNormal(rng, numeric.NormCDF(f), 1/cfg.nuTG, 0, 1)
	case 2: // BE: mean Phi(f), precision nu
		m := numeric.NormCDF(f)
		y = distuv.Beta{Alpha: cfg.nuBE * m, Beta: cfg.nuBE * (1 - m), Src: rng}.Rand()
	}
	lo, hi := math.Nextafter(0, 1), math.Nextafter(1, 0)
	if cfg.clip > 0 {
		lo, hi = cfg.clip, 1-cfg.clip
	}
	switch {
	case y < lo:
		return lo, 1
	case y > hi:
		return hi, 1
	}
	return y, 0
}

// drawGP draws f ~ N(0, K) at the inputs x, with the smallest jitter that
// makes K numerically positive definite.
func drawGP(rng *rand.Rand, k func(a, b float64) float64, x []float64) []float64 {
	n := len(x)
	for jitter := 1e-10; ; jitter *= 10 {
		a := gram(k, x)
		for i := range n {
			a.SetSym(i, i, a.At(i, i)+jitter*k(x[i], x[i]))
		}
		var ch mat.Cholesky
		if !ch.Factorize(a) {
			if jitter > 1e-2 {
				panic("jensen: covariance not positive definite")
			}
			continue
		}
		var l mat.TriDense
		ch.LTo(&l)
		z := make([]float64, n)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		f := mat.NewVecDense(n, nil)
		f.MulVec(&l, mat.NewVecDense(n, z))
		return f.RawVector().Data
	}
}

func gram(k func(a, b float64) float64, x []float64) *mat.SymDense {
	g := mat.NewSymDense(len(x), nil)
	for i := range x {
		for j := i; j < len(x); j++ {
			g.SetSym(i, j, k(x[i], x[j]))
		}
	}
	return g
}

func cross(k func(a, b float64) float64, a, b []float64) [][]float64 {
	out := make([][]float64, len(a))
	for i := range a {
		out[i] = make([]float64, len(b))
		for j := range b {
			out[i][j] = k(a[i], b[j])
		}
	}
	return out
}

func uniformSorted(rng *rand.Rand, n int, xMax float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = xMax * rng.Float64()
	}
	sort.Float64s(x)
	return x
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

func meanSD(v []float64) (mean, sd float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, math.NaN()
	}
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)-1))
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return 0.5 * (s[len(s)/2-1] + s[len(s)/2])
}

// ownPredictor is the latent predictive of a Gaussian-site posterior that
// allows negative site precisions (see fitOne), and the predictive density
// of the fitted likelihood.
type ownPredictor struct {
	alpha []float64  // (I + S C)^-1 V
	m     *mat.Dense // (I + S C)^-1 S
	l     lik.Bounded
}

func newOwnPredictor(res *multirater.FitResult, cov mat.Symmetric) (*ownPredictor, error) {
	n := cov.SymmetricDim()
	s, v := res.Gaussian.Precision, res.Gaussian.Shift
	a := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			a.Set(i, j, s[i]*cov.At(i, j))
		}
		a.Set(i, i, a.At(i, i)+1)
	}
	var lu mat.LU
	lu.Factorize(a)
	if c := lu.Cond(); c > 1e14 || math.IsInf(c, 0) {
		return nil, fmt.Errorf("the matrix I + S C is singular (condition %.3g)", c)
	}
	var al mat.VecDense
	if err := lu.SolveVecTo(&al, false, mat.NewVecDense(n, append([]float64(nil), v...))); err != nil {
		return nil, err
	}
	sd := mat.NewDense(n, n, nil)
	for i := range n {
		sd.Set(i, i, s[i])
	}
	var m mat.Dense
	if err := lu.SolveTo(&m, false, sd); err != nil {
		return nil, err
	}
	nu := res.Raters[0].Dispersion.Mean
	var l lik.Bounded
	switch res.Model.Likelihood {
	case bounded.Beta:
		l = &lik.Beta{Nu: nu}
	case bounded.TruncNorm:
		l = &lik.TruncGauss{Nu: nu}
	case bounded.Warped:
		l = &lik.Warped{Sigma: 1 / nu}
	default:
		return nil, fmt.Errorf("likelihood %q", res.Model.Likelihood)
	}
	return &ownPredictor{alpha: al.RawVector().Data, m: &m, l: l}, nil
}

func (p *ownPredictor) latent(k []float64, prior float64) (mu, vr float64) {
	kv := mat.NewVecDense(len(k), k)
	var mk mat.VecDense
	mk.MulVec(p.m, kv)
	return mat.Dot(kv, mat.NewVecDense(len(p.alpha), p.alpha)), prior - mat.Dot(kv, &mk)
}

// logDensity is log ∫ p(y | f) N(f | mu, vr) df (the scale is (0, 1)).
func (p *ownPredictor) logDensity(y, mu, vr float64) float64 {
	if !(vr > 0) {
		return math.NaN()
	}
	lz, _, _ := p.l.Tilted(y, mu, vr)
	return lz
}
