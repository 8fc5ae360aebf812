// Command kim runs Kim & Ghahramani's Table 2 protocol (sec. 6) with
// concord's robust classifier on a UCI data set in ../shared/data: 10
// random halves into training and test sets, the labels of 0, 5, 10 and 15%
// of the training points flipped, the plain GP classifier (epsilon 0), the
// robust one (epsilon learnt by EM) and model selection between them by
// the EP evidence (eq. 21, the robust evidence with its error rate
// integrated out, as robust.Options.Select does); it prints the mean test error and log evidence
// of each with the standard error of the mean over the splits, and, per
// flip rate, the area under the ROC curve of the label-error probabilities
// for "this label was flipped". The kernel is the paper's (v0 = 1,
// v1 = 1e-8, every inverse length-scale l): exp(-l |x - x'|^2) + 1e-8 on
// z-scored inputs; the latent noise (v2) is learnt by the evidence.
//
//	go run ./docs/scripts/kim -data ../shared/data/bench_ionosphere/data.csv -class Class -pos good [-drop V2] [-l 0.05] [-splits 10] [-paper-em]
//
// README.md here has the results on the paper's own data (New Thyroid, from R's
// mclust::thyroid), breast cancer, ionosphere and sonar.
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"concord/multirater/gp"
	"concord/multirater/infer"
	"concord/multirater/kernel"
	"concord/multirater/robust"
)

var verbose *bool

func main() {
	path := flag.String("data", "../shared/data/bench_ionosphere/data.csv", "CSV with numeric feature columns and a class column")
	classCol := flag.String("class", "Class", "class column")
	pos := flag.String("pos", "1", "the positive class's value")
	drop := flag.String("drop", "", "columns to leave out, comma-separated (ids, constants)")
	l := flag.Float64("l", 0.05, "inverse length-scale of every input (the paper's l)")
	splits := flag.Int("splits", 10, "random halves")
	seed := flag.Uint64("seed", 1, "seed of the splits and flips")
	learn := flag.Bool("learn", false, "learn the RBF's inverse length-scale by the evidence (starting at -l) instead of fixing it")
	verbose = flag.Bool("v", false, "print each fit's error rate, latent noise and evidence to stderr")
	paperEM := flag.Bool("paper-em", false, "learn the robust model's error rate by eq. 20 as printed instead of the tilted responsibilities")
	flag.Parse()
	x, y, err := read(*path, *classCol, *pos, strings.Split(*drop, ","))
	check(err)
	zscore(x)
	fmt.Printf("%s: %d points, %d inputs, %d positive; kernel exp(-%g |x - x'|^2) + 1e-8, z-scored inputs, latent noise learnt; %d random halves\n",
		*path, len(x), len(x[0]), count(y), *l, *splits)
	rates := []float64{0, 0.05, 0.10, 0.15}
	type cell struct{ errP, errR, errS, evP, evR, evS, aucR, aucP []float64 }
	cells := make([]cell, len(rates))
	picks := make([]int, len(rates))
	rng := rand.New(rand.NewPCG(*seed, 2))
	start := time.Now()
	for s := 0; s < *splits; s++ {
		perm := rng.Perm(len(x))
		train, test := perm[:len(x)/2], perm[len(x)/2:]
		for r, rate := range rates {
			flips := map[int]bool{}
			for _, i := range rng.Perm(len(train))[:int(math.Round(rate*float64(len(train))))] {
				flips[i] = true
			}
			ep, lp, _, perrP := fit(x, y, train, test, flips, *l, *learn, robust.Options{FixEpsilon: true, Seed: 1})
			er, lr, lint, perrR := fit(x, y, train, test, flips, *l, *learn, robust.Options{Seed: 1, PaperEM: *paperEM})
			if *verbose {
				fmt.Fprintf(os.Stderr, "split %d, %g%% flipped: test error plain %.4f robust %.4f; log evidence plain %.3f robust %.3f (integrated %.3f)\n", s+1, 100*rate, ep, er, lp, lr, lint)
			}
			c := &cells[r]
			c.errP, c.errR, c.evP, c.evR = append(c.errP, ep), append(c.errR, er), append(c.evP, lp), append(c.evR, lr)
			if lp >= lint {
				c.errS, c.evS = append(c.errS, ep), append(c.evS, lp)
				picks[r]++
			} else {
				c.errS, c.evS = append(c.errS, er), append(c.evS, lr)
			}
			if len(flips) > 0 {
				c.aucR = append(c.aucR, auc(perrR, flips))
				c.aucP = append(c.aucP, auc(perrP, flips))
			}
		}
		fmt.Fprintf(os.Stderr, "split %d done (%.0f s)\n", s+1, time.Since(start).Seconds())
	}
	ms := func(v []float64) string {
		if len(v) == 0 {
			return "-"
		}
		m, sd := stat.MeanStdDev(v, nil)
		return fmt.Sprintf("%.2f±%.2f", m, sd/math.Sqrt(float64(len(v))))
	}
	pct := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, e := range v {
			out[i] = 100 * e
		}
		return out
	}
	fmt.Printf("\n%-22s", "label-change rate (%)")
	for _, r := range rates {
		fmt.Printf(" %14.0f", 100*r)
	}
	fmt.Println()
	row := func(name string, f func(c cell) string) {
		fmt.Printf("%-22s", name)
		for _, c := range cells {
			fmt.Printf(" %14s", f(c))
		}
		fmt.Println()
	}
	row("GPC log-ev", func(c cell) string { return ms(c.evP) })
	row("GPC error (%)", func(c cell) string { return ms(pct(c.errP)) })
	row("robust log-ev", func(c cell) string { return ms(c.evR) })
	row("robust error (%)", func(c cell) string { return ms(pct(c.errR)) })
	row("MS log-ev", func(c cell) string { return ms(c.evS) })
	row("MS error (%)", func(c cell) string { return ms(pct(c.errS)) })
	fmt.Printf("%-22s", "MS picks plain")
	for _, p := range picks {
		fmt.Printf(" %11d/%d", p, *splits)
	}
	fmt.Println()
	row("AUC p_error (robust)", func(c cell) string { return ms(c.aucR) })
	row("AUC p_error (plain)", func(c cell) string { return ms(c.aucP) })
	fmt.Printf("total %.0f s\n", time.Since(start).Seconds())
}

// fit fits the training points (labels in flips flipped) and returns the
// test error, the log evidence, the log evidence with the error rate
// integrated out (robust fits with a learnt error rate; what model
// selection compares with the plain evidence) and every training label's
// p_error.
func fit(x [][]float64, y []float64, train, test []int, flips map[int]bool, l float64, learn bool, opts robust.Options) (float64, float64, float64, []float64) {
	k := kernel.RBF{Gamma: l}
	rows := func(idx []int) *mat.Dense {
		m := mat.NewDense(len(idx), len(x[0]), nil)
		for r, i := range idx {
			m.SetRow(r, x[i])
		}
		return m
	}
	xtr, xte := rows(train), rows(test)
	cov := mat.NewSymDense(len(train), nil)
	k.GramTo(cov, kernel.Inputs{N: len(train), X: xtr})
	for i := 0; i < len(train); i++ {
		for j := i; j < len(train); j++ {
			cov.SetSym(i, j, cov.At(i, j)+1e-8)
		}
	}
	d := &robust.Data{Classes: [2]string{"-1", "1"}, RaterIDs: []string{"labels"}, Cov: cov, Kernel: fmt.Sprintf("rbf:gamma=%g", l)}
	for r, i := range train {
		d.ItemIDs = append(d.ItemIDs, strconv.Itoa(r))
		lab := y[i]
		if flips[r] {
			lab = -lab
		}
		d.Labels = append(d.Labels, robust.Label{Item: r, Rater: 0, Y: lab})
	}
	if learn {
		// The RBF term is learnt; the fixed part is the 1e-8 constant.
		d.Learn = &infer.LearnKernel{Terms: []kernel.Hyper{k}, Inputs: kernel.Inputs{N: len(train), X: xtr}}
		fixed := mat.NewSymDense(len(train), nil)
		for i := 0; i < len(train); i++ {
			for j := i; j < len(train); j++ {
				fixed.SetSym(i, j, 1e-8)
			}
		}
		d.Cov, d.Kernel = fixed, "rbf"
	}
	res, err := robust.Fit(context.Background(), d, opts)
	check(err)
	defer func() {
		if *verbose {
			r := res.Raters[0]
			fmt.Fprintf(os.Stderr, "  %d flips, eps fixed %v: eps %.4g, s %.4g, log evidence %.3f %v\n", len(flips), opts.FixEpsilon, r.Epsilon.Value, math.Sqrt(r.Variance.Mean), *res.Diagnostics.LogEvidence, res.Diagnostics.Evidence)
		}
	}()
	if learn {
		ks, err := kernel.ParseSpec(res.Model.Learnt.Terms[0])
		check(err)
		k = ks[0].Cov.(kernel.RBF)
		k.GramTo(cov, kernel.Inputs{N: len(train), X: xtr})
		for i := 0; i < len(train); i++ {
			for j := i; j < len(train); j++ {
				cov.SetSym(i, j, cov.At(i, j)+1e-8)
			}
		}
	}
	pred, err := gp.NewSitePredictor(res.Gaussian.Precision, res.Gaussian.Shift, cov)
	check(err)
	cross := mat.NewDense(len(test), len(train), nil)
	k.CrossTo(cross, kernel.Inputs{N: len(test), X: xte}, kernel.Inputs{N: len(train), X: xtr})
	wrong := 0
	kv := make([]float64, len(train))
	for r, i := range test {
		mat.Row(kv, r, cross)
		for j := range kv {
			kv[j] += 1e-8
		}
		mu, _ := pred.Latent(kv, 1+1e-8)
		if (mu > 0) != (y[i] > 0) {
			wrong++
		}
	}
	perr := make([]float64, len(train))
	for _, le := range res.LabelErrors {
		r, _ := strconv.Atoi(le.Item)
		perr[r] = le.PError
	}
	return float64(wrong) / float64(len(test)), *res.Diagnostics.LogEvidence, res.Diagnostics.Evidence[robust.RobustIntegrated], perr
}

// auc is the area under the ROC curve of score for the positives in pos
// (ties counted as half).
func auc(score []float64, pos map[int]bool) float64 {
	type pt struct {
		s float64
		p bool
	}
	pts := make([]pt, len(score))
	for i, s := range score {
		pts[i] = pt{s, pos[i]}
	}
	sort.Slice(pts, func(a, b int) bool { return pts[a].s < pts[b].s })
	var np, nn, sum float64
	for i := 0; i < len(pts); {
		j := i
		var tp, tn float64
		for j < len(pts) && pts[j].s == pts[i].s {
			if pts[j].p {
				tp++
			} else {
				tn++
			}
			j++
		}
		sum += tp * (nn + tn/2)
		np += tp
		nn += tn
		i = j
	}
	return sum / (np * nn)
}

func read(path, classCol, pos string, drop []string) ([][]float64, []float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, nil, err
	}
	cls := -1
	var cols []int
	for j, h := range recs[0] {
		switch {
		case h == classCol:
			cls = j
		case contains(drop, h):
		default:
			cols = append(cols, j)
		}
	}
	if cls < 0 {
		return nil, nil, fmt.Errorf("%s: no column %q", path, classCol)
	}
	var x [][]float64
	var y []float64
rows:
	for _, r := range recs[1:] {
		v := make([]float64, len(cols))
		for k, j := range cols {
			if v[k], err = strconv.ParseFloat(r[j], 64); err != nil {
				continue rows // a missing value: the row is left out
			}
		}
		x = append(x, v)
		if r[cls] == pos {
			y = append(y, 1)
		} else {
			y = append(y, -1)
		}
	}
	return x, y, nil
}

// zscore standardises every column (a constant column becomes 0).
func zscore(x [][]float64) {
	col := make([]float64, len(x))
	for j := range x[0] {
		for i := range x {
			col[i] = x[i][j]
		}
		m, sd := stat.MeanStdDev(col, nil)
		for i := range x {
			x[i][j] -= m
			if sd > 0 {
				x[i][j] /= sd
			}
		}
	}
}

func count(y []float64) int {
	n := 0
	for _, v := range y {
		if v > 0 {
			n++
		}
	}
	return n
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if strings.TrimSpace(x) == v && v != "" {
			return true
		}
	}
	return false
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "kim:", err)
		os.Exit(1)
	}
}
