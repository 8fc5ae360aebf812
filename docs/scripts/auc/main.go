// Command auc runs the acceptance checks of issue 17 (Ridgway et al.'s
// PAC-Bayesian AUC scoring, multirater/auc) on MASS's Pima split
// (multirater/auc/testdata, Pima.tr 200 rows / Pima.te 332 rows):
//
//	(a) test AUC of the linear EP-AUC and the GP EP-AUC fitted on Pima.tr with
//	    gamma chosen by 5-fold cross-validation, against Ridgway et al.'s
//	    Table 1 (0.8617 and 0.8557);
//	(b) at fixed gamma in {10, 50, 200, 1000}, on z-scored Pima.tr with prior
//	    scale 1: EP log Z against tempering SMC's (target within 0.3 nats),
//	    the coefficients' EP means minus SMC means in SMC sds (target 0.05 for
//	    gamma <= 50, 0.12 above) and the EP/SMC sd ratios (within 7% / 25%);
//	    The same comparisons against the exact pseudo-posterior of
//	    testdata/pima_is_reference.csv (importance sampling on theta's
//	    direction, testdata/auc_reference.py; Monte Carlo errors below
//	    0.002 nats and 0.001 in the moments), which also checks the SMC;
//	(c) run times of the linear EP fit on Pima.tr, the GP fit and SMC.
//
//	go run ./docs/scripts/auc [-data multirater/auc/testdata] [-kernels 0.005,0.01] [-learn 0.05] [-particles 20000] [-repeats 4] [-moves 30]
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/auc"
	"concord/multirater/kernel"
)

func main() {
	dir := flag.String("data", "multirater/auc/testdata", "folder with pima_tr.csv and pima_te.csv")
	rbf := flag.String("kernels", "0.005,0.01,0.02,0.05,0.1", "RBF gammas (k = exp(-g |x - x'|^2) on z-scored covariates) among which the GP's kernel is chosen by the EP evidence at each gamma")
	particles := flag.Int("particles", 20000, "SMC particles")
	repeats := flag.Int("repeats", 4, "independent SMC repeats")
	moves := flag.Int("moves", 30, "SMC Metropolis moves per particle and temperature")
	seed := flag.Uint64("seed", 1, "seed of the folds and SMC")
	learn := flag.Float64("learn", 0.05, "also fit the GP with the RBF's gamma learnt by the evidence at each gamma, starting here (0: skip)")
	flag.Parse()
	ctx := context.Background()
	xtr, ytr, names := read(filepath.Join(*dir, "pima_tr.csv"))
	xte, yte, _ := read(filepath.Join(*dir, "pima_te.csv"))
	fmt.Printf("Pima.tr: %d items (%d positive), Pima.te: %d items; %d covariates\n", len(ytr), count(ytr), len(yte), len(names))

	fmt.Println("\n(a) test AUC, gamma by 5-fold CV on Pima.tr, z-scored covariates")
	t0 := time.Now()
	lin, err := auc.Fit(ctx, auc.Data{X: xtr, Positive: ytr, Names: names}, auc.Options{Standardize: true, Seed: *seed})
	check(err)
	tLinCV := time.Since(t0)
	printCV("linear", lin)
	aLin := auc.AUC(lin.PredictMeansTo(nil, xte), yte)
	fmt.Printf("linear EP-AUC: gamma %g, test AUC %.4f (paper 0.8617 +- 0.010: %s), train AUC %.4f, %s with CV\n",
		lin.Gamma, aLin, pass(math.Abs(aLin-0.8617) <= 0.010), lin.TrainAUC, tLinCV.Round(time.Millisecond))
	for _, c := range lin.Coefficients {
		fmt.Printf("  %-5s %8.4f (sd %.4f)\n", c.Name, c.Mean, c.SD)
	}
	// GP: the RBF kernel's inverse length-scale by the EP evidence at each
	// gamma (in every fold and in the final fit), gamma by CV.
	var ks []kernel.Kernel
	for _, g := range floatsOf(*rbf) {
		ks = append(ks, kernel.RBF{Gamma: g})
	}
	t0 = time.Now()
	best, err := auc.Fit(ctx, auc.Data{X: xtr, Positive: ytr}, auc.Options{Kernels: ks, Standardize: true, Seed: *seed})
	check(err)
	tGP := time.Since(t0)
	printCV("GP", best)
	for _, k := range best.KernelEvidence {
		fmt.Printf("  %s: log Z_EP %.4f at gamma %g\n", k.Kernel, k.LogEvidence, best.Gamma)
	}
	bestK, err := kernel.ParseKernel(best.Kernel)
	check(err)
	aGP := auc.AUC(best.PredictMeansTo(nil, xte), yte)
	fmt.Printf("GP EP-AUC (%s, largest evidence): gamma %g, test AUC %.4f (paper 0.8557 +- 0.015: %s), train AUC %.4f, %s with CV and kernel choice\n",
		bestK, best.Gamma, aGP, pass(math.Abs(aGP-0.8557) <= 0.015), best.TrainAUC, tGP.Round(time.Millisecond))

	if *learn > 0 {
		t0 = time.Now()
		lr, err := auc.Fit(ctx, auc.Data{X: xtr, Positive: ytr}, auc.Options{Kernel: kernel.RBF{Gamma: *learn}, LearnKernel: true, Standardize: true, Seed: *seed})
		check(err)
		printCV("GP learnt", lr)
		aL := auc.AUC(lr.PredictMeansTo(nil, xte), yte)
		fmt.Printf("GP EP-AUC, RBF learnt by the evidence at each gamma from rbf:gamma=%g: %s, gamma %g, log Z_EP %.4f, test AUC %.4f (paper 0.8557 +- 0.015: %s), %s\n",
			*learn, lr.Kernel, lr.Gamma, lr.LogEvidence, aL, pass(math.Abs(aL-0.8557) <= 0.015), time.Since(t0).Round(time.Millisecond))
	}

	fmt.Println("\n(b) EP against tempering SMC, z-scored Pima.tr, prior scale 1")
	exact := readExact(filepath.Join(*dir, "pima_is_reference.csv"))
	var tEP, tSMC []time.Duration
	for _, gamma := range []float64{10, 50, 200, 1000} {
		t0 := time.Now()
		e, err := auc.Fit(ctx, auc.Data{X: xtr, Positive: ytr, Names: names}, auc.Options{Standardize: true, Gamma: gamma})
		check(err)
		tEP = append(tEP, time.Since(t0))
		t0 = time.Now()
		s, err := auc.Fit(ctx, auc.Data{X: xtr, Positive: ytr, Names: names}, auc.Options{Standardize: true, Gamma: gamma, Engine: auc.SMC, Seed: *seed,
			SMC: auc.SMCOptions{Particles: *particles, Repeats: *repeats, Moves: *moves}})
		check(err)
		tSMC = append(tSMC, time.Since(t0))
		dm, dr := 0.05, 0.07
		if gamma >= 200 {
			dm, dr = 0.12, 0.25
		}
		dz := e.LogEvidence - s.LogEvidence
		fmt.Printf("gamma %5g: log Z EP %.4f, SMC %.4f +- %.4f, diff %+.4f (%s); EP %d sweeps, %d negative sites; SMC %v temperatures, acceptance %.2f\n",
			gamma, e.LogEvidence, s.LogEvidence, s.LogEvidenceSE, dz, pass(math.Abs(dz) <= 0.3), e.Sweeps, e.Negative, s.SMC.Temperatures, s.SMC.Acceptance)
		maxM, maxR := 0.0, 0.0
		for k, c := range e.Coefficients {
			sc := s.Coefficients[k]
			m := (c.Mean - sc.Mean) / sc.SD
			ratio := c.SD / sc.SD
			maxM = math.Max(maxM, math.Abs(m))
			maxR = math.Max(maxR, math.Abs(ratio-1))
			fmt.Printf("  %-5s EP %8.4f (%.4f)  SMC %8.4f (%.4f) +- %.4f  mean diff %+.3f sd, sd ratio %.3f\n",
				c.Name, c.Mean, c.SD, sc.Mean, sc.SD, s.SMC.MeanSE[k], m, ratio)
		}
		fmt.Printf("  max |mean diff| %.3f SMC sd (target %.2f: %s), max |sd ratio - 1| %.3f (target %.2f: %s)\n",
			maxM, dm, pass(maxM <= dm), maxR, dr, pass(maxR <= dr))
		if ex, ok := exact[gamma]; ok {
			z := ex["log_z/"]
			fmt.Printf("  exact (IS) log Z %.4f +- %.4f: EP - exact %+.4f (%s), SMC - exact %+.4f\n",
				z[0], z[1], e.LogEvidence-z[0], pass(math.Abs(e.LogEvidence-z[0]) <= 0.3), s.LogEvidence-z[0])
			maxM, maxR = 0, 0
			worst := ""
			for k, c := range e.Coefficients {
				mu, sd := ex["mean/"+c.Name][0], ex["sd/"+c.Name][0]
				sc := s.Coefficients[k]
				maxM = math.Max(maxM, math.Abs(c.Mean-mu)/sd)
				if r := math.Abs(c.SD/sd - 1); r > maxR {
					maxR, worst = r, c.Name
				}
				fmt.Printf("  %-5s exact %8.4f (%.4f): EP %+.3f sd, sd ratio %.3f; SMC %+.3f sd, sd ratio %.3f\n",
					c.Name, mu, sd, (c.Mean-mu)/sd, c.SD/sd, (sc.Mean-mu)/sd, sc.SD/sd)
			}
			fmt.Printf("  EP vs exact: max |mean diff| %.3f sd (%s), max |sd ratio - 1| %.3f (%s, %s)\n",
				maxM, pass(maxM <= dm), maxR, worst, pass(maxR <= dr))
		}
	}

	fmt.Println("\n(c) run times (this machine, shared)")
	t0 = time.Now()
	e, err := auc.Fit(ctx, auc.Data{X: xtr, Positive: ytr}, auc.Options{Standardize: true, Gamma: lin.Gamma})
	check(err)
	el := time.Since(t0)
	fmt.Printf("linear EP fit on Pima.tr (%d pairs, gamma %g, %d sweeps): %s (target < 2 s: %s)\n", e.Pairs, e.Gamma, e.Sweeps, el.Round(time.Millisecond), pass(el < 2*time.Second))
	t0 = time.Now()
	g, err := auc.Fit(ctx, auc.Data{X: xtr, Positive: ytr}, auc.Options{Standardize: true, Gamma: best.Gamma, Kernel: bestK})
	check(err)
	fmt.Printf("GP EP fit on Pima.tr (%s, gamma %g, %d sweeps): %s; with CV over %d gammas x %d kernels: %s\n", bestK, g.Gamma, g.Sweeps, time.Since(t0).Round(time.Millisecond), len(auc.DefaultGammaGrid), len(ks), tGP.Round(time.Millisecond))
	fmt.Printf("linear EP with CV: %s\n", tLinCV.Round(time.Millisecond))
	for i, gamma := range []float64{10, 50, 200, 1000} {
		fmt.Printf("gamma %5g: EP %s, SMC (%d particles x %d repeats) %s\n", gamma, tEP[i].Round(time.Millisecond), *particles, *repeats, tSMC[i].Round(time.Millisecond))
	}
}

func printCV(name string, r *auc.Result) {
	fmt.Printf("%s CV:", name)
	for _, c := range r.CV {
		fmt.Printf(" gamma %g: %.4f (%.4f);", c.Gamma, c.AUC, c.SE)
	}
	fmt.Printf(" chosen %g\n", r.Gamma)
}

func pass(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

func floatsOf(s string) []float64 {
	var out []float64
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			v, err := strconv.ParseFloat(s[start:i], 64)
			check(err)
			out = append(out, v)
			start = i + 1
		}
	}
	return out
}

func count(y []bool) int {
	n := 0
	for _, v := range y {
		if v {
			n++
		}
	}
	return n
}

// read reads a Pima CSV: numeric covariates, then the class column type
// (Yes positive).
func read(path string) (*mat.Dense, []bool, []string) {
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	check(err)
	head := recs[0]
	d := len(head) - 1
	x := mat.NewDense(len(recs)-1, d, nil)
	y := make([]bool, len(recs)-1)
	for i, rec := range recs[1:] {
		for k := 0; k < d; k++ {
			v, err := strconv.ParseFloat(rec[k], 64)
			check(err)
			x.Set(i, k, v)
		}
		y[i] = rec[d] == "Yes"
	}
	return x, y, head[:d]
}

// readExact reads testdata/pima_is_reference.csv: per gamma, "log_z/",
// "mean/NAME" and "sd/NAME" to the exact value and its Monte Carlo error.
func readExact(path string) map[float64]map[string][2]float64 {
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	check(err)
	out := map[float64]map[string][2]float64{}
	for _, rec := range recs[1:] {
		var v [3]float64
		for k, s := range []string{rec[0], rec[4], rec[5]} {
			v[k], err = strconv.ParseFloat(s, 64)
			check(err)
		}
		if out[v[0]] == nil {
			out[v[0]] = map[string][2]float64{}
		}
		out[v[0]][rec[1]+"/"+rec[2]] = [2]float64{v[1], v[2]}
	}
	return out
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
