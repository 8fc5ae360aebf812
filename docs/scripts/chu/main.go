// Command chu runs Chu & Ghahramani's (2005) ordinal-regression benchmark
// protocol (sec. 6.2, Tables 2-3) with concord's EP engine: for each data
// set and number of bins, on each of Chu's 20 train/test partitions with his
// labels (chu_partitions.csv, column chu_label), the inputs are z-scored
// with the training part's means and sds (constant columns left at 0), the
// single-rater ordinal GP with an RBF kernel is fitted by EP with the kernel
// width, thresholds and noise learnt by maximising the EP evidence (3
// starting points), and each test item gets the most probable level of its
// predictive distribution (Chu eq. 18). It prints the mean zero-one error
// and mean absolute error over the partitions (with their sds, as in Chu's
// tables) and the run time.
//
//	go run ./docs/scripts/chu -data ../shared/data -sets pyrimidines,machinecpu -bins 5,10
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"concord/internal/testutil"
	"concord/multirater"
	"concord/multirater/kernel"
	"concord/multirater/ordinal"
)

func main() {
	dataDir := flag.String("data", "../shared/data", "folder holding the chu_ordinal_* data sets")
	sets := flag.String("sets", "pyrimidines,machinecpu,autompg,boston,stocks,abalone", "data sets (chu_ordinal_NAME)")
	binsFlag := flag.String("bins", "5,10", "numbers of bins")
	parts := flag.Int("partitions", 20, "partitions to run (Chu: 20)")
	restarts := flag.Int("restarts", 3, "starting points of the evidence maximisation")
	verbose := flag.Bool("v", false, "print each partition's fit to stderr")
	engine := flag.String("engine", "ep", "ep (Chu's EP rows) or laplace (Chu's MAP rows)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	fmt.Printf("%-12s %4s %6s %22s %22s %10s %14s\n", "data", "bins", "parts", "zero-one error", "mean absolute error", "seconds", "fit s (mean)")
	for _, set := range strings.Split(*sets, ",") {
		for _, b := range strings.Split(*binsFlag, ",") {
			bins, err := strconv.Atoi(b)
			if err != nil {
				fail(err)
			}
			t0 := time.Now()
			zo, mae, fits, err := run(filepath.Join(*dataDir, "chu_ordinal_"+set), bins, *parts, *restarts, *engine, *verbose)
			if err != nil {
				fail(fmt.Errorf("%s, %d bins: %w", set, bins, err))
			}
			fmt.Printf("%-12s %4d %6d %12.2f±%6.2f%% %12.2f±%6.2f%% %10.1f %14.2f\n", set, bins, len(zo),
				100*stat.Mean(zo, nil), 100*stat.StdDev(zo, nil), 100*stat.Mean(mae, nil), 100*stat.StdDev(mae, nil), time.Since(t0).Seconds(), stat.Mean(fits, nil))
		}
	}
	fmt.Printf("total %.1f s\n", time.Since(start).Seconds())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "chu:", err)
	os.Exit(1)
}

// run returns the zero-one errors and mean absolute errors of the
// partitions of one data set and number of bins.
func run(dir string, bins, parts, restarts int, engine string, verbose bool) (zo, mae, fitSecs []float64, err error) {
	data, err := testutil.Records(filepath.Join(dir, "data.csv"))
	if err != nil {
		return nil, nil, nil, err
	}
	// Inputs: every column but row_id and the last three (target, y_bin5,
	// y_bin10).
	header := data[0]
	d := len(header) - 4
	x := map[string][]float64{}
	for _, r := range data[1:] {
		v := make([]float64, d)
		for j := 0; j < d; j++ {
			if v[j], err = strconv.ParseFloat(r[1+j], 64); err != nil {
				return nil, nil, nil, fmt.Errorf("data.csv row %s column %s: %w", r[0], header[1+j], err)
			}
		}
		x[r[0]] = v
	}
	split, err := testutil.Records(filepath.Join(dir, "chu_partitions.csv"))
	if err != nil {
		return nil, nil, nil, err
	}
	type row struct {
		id    string
		label int
	}
	train := map[int][]row{}
	test := map[int][]row{}
	for _, r := range split[1:] {
		if r[0] != strconv.Itoa(bins) {
			continue
		}
		p, _ := strconv.Atoi(r[1])
		l, _ := strconv.Atoi(r[4])
		if r[2] == "train" {
			train[p] = append(train[p], row{r[3], l - 1})
		} else {
			test[p] = append(test[p], row{r[3], l - 1})
		}
	}
	levels := make([]string, bins)
	for k := range levels {
		levels[k] = strconv.Itoa(k + 1)
	}
	for p := 1; p <= parts; p++ {
		tr, te := train[p], test[p]
		if len(tr) == 0 {
			return nil, nil, nil, fmt.Errorf("no partition %d", p)
		}
		// z-scores with the training part's statistics.
		mean, sd := make([]float64, d), make([]float64, d)
		col := make([]float64, len(tr))
		for j := 0; j < d; j++ {
			for i, r := range tr {
				col[i] = x[r.id][j]
			}
			mean[j], sd[j] = stat.MeanStdDev(col, nil)
		}
		z := func(rows []row) *mat.Dense {
			m := mat.NewDense(len(rows), d, nil)
			for i, r := range rows {
				for j := 0; j < d; j++ {
					if sd[j] > 0 {
						m.Set(i, j, (x[r.id][j]-mean[j])/sd[j])
					}
				}
			}
			return m
		}
		xtr, xte := z(tr), z(te)
		od := &ordinal.Data{Levels: levels, RaterIDs: []string{"chu"}, Kernel: "rbf"}
		for i, r := range tr {
			od.ItemIDs = append(od.ItemIDs, r.id)
			od.Ratings = append(od.Ratings, multirater.Rating{Item: i, Rater: 0, Level: r.label})
		}
		in := kernel.Inputs{N: len(tr), X: xtr}
		od.Learn = &ordinal.LearnKernel{Terms: []kernel.Hyper{kernel.RBF{Gamma: 1}}, Inputs: in}
		t0 := time.Now()
		res, err := ordinal.FitDeterministic(context.Background(), od, ordinal.DetOptions{Engine: engine, Restarts: restarts, Seed: uint64(p)})
		fitSecs = append(fitSecs, time.Since(t0).Seconds())
		if verbose && err == nil {
			fmt.Fprintf(os.Stderr, "partition %d: fit %.1f s, %s, sigma %.4f, log evidence %.4f\n", p, fitSecs[len(fitSecs)-1],
				res.Model.Learnt.Terms[0], 1/math.Sqrt(res.Raters[0].Precision.Mean), *res.Diagnostics.Engine.LogEvidence)
			for _, n := range res.Diagnostics.Notes {
				fmt.Fprintln(os.Stderr, "  ", n)
			}
		}
		if err != nil {
			return nil, nil, nil, fmt.Errorf("partition %d: %w", p, err)
		}
		ks, err := kernel.ParseSpec(res.Model.Learnt.Terms[0])
		if err != nil {
			return nil, nil, nil, err
		}
		k := ks[0].Cov
		var c mat.SymDense
		k.GramTo(&c, in)
		pred, err := ordinal.NewPredictor(res, &c)
		if err != nil {
			return nil, nil, nil, err
		}
		tin := kernel.Inputs{N: len(te), X: xte}
		var cross mat.Dense
		k.CrossTo(&cross, tin, in)
		ids := make([]string, len(te))
		for i, r := range te {
			ids[i] = r.id
		}
		items := pred.Predict(ids, &cross, k.DiagTo(nil, tin))
		wrong, abs := 0.0, 0.0
		for i, it := range items {
			probs := it.RaterGradeProbs["chu"]
			best := 0
			for kk := range probs {
				if probs[kk] > probs[best] {
					best = kk
				}
			}
			if best != te[i].label {
				wrong++
			}
			abs += math.Abs(float64(best - te[i].label))
		}
		zo = append(zo, wrong/float64(len(te)))
		mae = append(mae, abs/float64(len(te)))
	}
	return zo, mae, fitSecs, nil
}
