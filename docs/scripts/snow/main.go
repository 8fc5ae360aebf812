// Command snow fits the bounded model to each of the seven dimensions of
// Snow et al.'s (2008) affect ratings (../shared/data/snow2008_affect: 100
// headlines, 10 AMT ratings each per dimension, expert scores) and prints,
// per dimension, the Pearson and Spearman correlations with the expert
// scores of the model's consensus value, of the raters' mean and of their
// median, and the fit time: the comparison of the bounded-ratings issue's
// acceptance line.
//
//	go run ./docs/scripts/snow -data ../shared/data [-likelihood beta] [-bounds squeeze] [-engine ep] [-dispersion NU] [-bias]
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"concord/internal/testutil"
	"concord/multirater"
	"concord/multirater/bounded"
	"concord/multirater/infer"
	"concord/multirater/kernel"
	"concord/multirater/mcmc/mcmctest"
)

func main() {
	data := flag.String("data", "../shared/data", "folder holding snow2008_affect")
	likelihood := flag.String("likelihood", bounded.Auto, "auto (the CLI's default: beta or normal, chosen), beta, truncnorm, warped or normal")
	dispersions := flag.String("dispersions", bounded.Auto, "auto (the CLI's default: per-rater or shared, chosen), per-rater or shared")
	bounds := flag.String("bounds", bounded.BoundsSqueeze, "squeeze or censor")
	engine := flag.String("engine", "ep", "ep or laplace")
	dispersion := flag.Float64("dispersion", 0, "fix every rater's nu (0: learnt)")
	bias := flag.Bool("bias", false, "fit a bias per rater")
	priorSD := flag.Float64("prior-sd", 0, "sd of the log-normal prior on each rater's nu (0: the package default)")
	kern := flag.String("kernel", "identity", "the items' prior covariance: terms without covariates (identity, const, white; const and white without a value are learnt)")
	dump := flag.String("dump", "", "folder to write, per dimension, a CSV of each item's gold score, raters' mean and median, consensus value and latent score")
	flag.Parse()
	dir := filepath.Join(*data, "snow2008_affect")
	items, err := testutil.Records(filepath.Join(dir, "items.csv"))
	check(err)
	ratings, err := testutil.Records(filepath.Join(dir, "ratings.csv"))
	check(err)
	fmt.Printf("likelihood %s, dispersions %s, bounds %s, engine %s, dispersion %v, bias %v\n", *likelihood, *dispersions, *bounds, *engine, *dispersion, *bias)
	fmt.Printf("%-9s %28s %28s %28s %8s\n", "dimension", "Pearson: consensus mean median", "Spearman: consensus mean median", "consensus >= mean, median", "seconds")
	start := time.Now()
	for _, dim := range []string{"anger", "disgust", "fear", "joy", "sadness", "surprise", "valence"} {
		d, gold := dimension(items, ratings, dim)
		check(setKernel(d, *kern))
		t0 := time.Now()
		res, err := bounded.Fit(context.Background(), d, bounded.Options{Likelihood: *likelihood, Dispersions: *dispersions, Bounds: *bounds, Engine: *engine,
			Dispersion: *dispersion, Bias: *bias, Priors: true, PriorSD: *priorSD})
		if err != nil {
			fmt.Printf("%-9s fit failed: %v\n", dim, err)
			continue
		}
		secs := time.Since(t0).Seconds()
		cons := make([]float64, len(res.Items))
		for i, it := range res.Items {
			cons[i] = it.Value.Mean
		}
		mean, median := meanMedian(d)
		if *dump != "" {
			check(writeDump(filepath.Join(*dump, dim+".csv"), res, gold, mean, median))
		}
		pc, pm, pd := stat.Correlation(cons, gold, nil), stat.Correlation(mean, gold, nil), stat.Correlation(median, gold, nil)
		sc, sm, sd := mcmctest.Spearman(cons, gold), mcmctest.Spearman(mean, gold), mcmctest.Spearman(median, gold)
		verdict := fmt.Sprintf("Pearson %s, Spearman %s", yes(pc >= pm && pc >= pd), yes(sc >= sm && sc >= sd))
		fmt.Printf("%-9s %8.4f %8.4f %8.4f    %8.4f %8.4f %8.4f    %-28s %8.2f\n", dim, pc, pm, pd, sc, sm, sd, verdict, secs)
		for _, c := range res.Diagnostics.ModelCandidates {
			if c.LOO == nil {
				fmt.Printf("    %-28s failed: %s\n", c.Name, c.Error)
				continue
			}
			fmt.Printf("    %-28s loo %8.4f (own rater %8.4f)  %6.2f s  chosen %v\n", c.Name, *c.LOO, *c.LOOOwn, c.Seconds, c.Chosen)
		}
	}
	fmt.Printf("total %.1f s\n", time.Since(start).Seconds())
}

// setKernel sets d's prior covariance from a kernel specification whose
// terms read no covariates: the fixed terms' sum (nil for the identity alone)
// and the terms to learn.
func setKernel(d *bounded.Data, spec string) error {
	ks, err := kernel.ParseSpec(spec)
	if err != nil {
		return err
	}
	d.Kernel = ks.String()
	if ks.Identity() {
		return nil
	}
	in := kernel.Inputs{N: len(d.ItemIDs)}
	var fixed kernel.Sum
	var learn []kernel.Hyper
	for _, t := range ks {
		if t.Kind != kernel.CovTerm || t.Cov.Covariates() {
			return fmt.Errorf("kernel %q: only terms without covariates", spec)
		}
		if t.Learn {
			learn = append(learn, t.Cov.(kernel.Hyper))
		} else {
			fixed = append(fixed, t.Cov)
		}
	}
	if len(fixed) > 0 {
		var c mat.SymDense
		fixed.GramTo(&c, in)
		d.Cov = &c
	}
	if len(learn) > 0 {
		d.Learn = &infer.LearnKernel{Terms: learn, Inputs: in}
	}
	return nil
}

// writeDump writes one dimension's per-item comparison as CSV.
func writeDump(name string, res *multirater.FitResult, gold, mean, median []float64) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"item", "gold", "mean", "median", "value", "score", "score_sd"})
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	for i, it := range res.Items {
		w.Write([]string{it.ID, g(gold[i]), g(mean[i]), g(median[i]), g(it.Value.Mean), g(it.Score.Mean), g(it.Score.SD)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "snow:", err)
		os.Exit(1)
	}
}

// dimension returns one dimension's ratings as bounded data ([0, 100],
// valence [-100, 100]) and the expert scores in item order.
func dimension(items, ratings [][]string, dim string) (*bounded.Data, []float64) {
	col := -1
	for k, h := range items[0] {
		if h == "gold_"+dim {
			col = k
		}
	}
	d := &bounded.Data{Lo: 0, Hi: 100}
	if dim == "valence" {
		d.Lo = -100
	}
	idx := map[string]int{}
	var gold []float64
	for _, r := range items[1:] {
		idx[r[0]] = len(d.ItemIDs)
		d.ItemIDs = append(d.ItemIDs, r[0])
		g, err := strconv.ParseFloat(r[col], 64)
		check(err)
		gold = append(gold, g)
	}
	raters := map[string]int{}
	for _, r := range ratings[1:] {
		if r[3] != dim {
			continue
		}
		l := testutil.IndexOf(raters, &d.RaterIDs, r[1])
		v, err := strconv.ParseFloat(r[2], 64)
		check(err)
		d.Ratings = append(d.Ratings, bounded.Rating{Item: idx[r[0]], Rater: l, Value: v})
	}
	return d, gold
}

// meanMedian returns each item's mean and median rating.
func meanMedian(d *bounded.Data) (mean, median []float64) {
	by := make([][]float64, len(d.ItemIDs))
	for _, r := range d.Ratings {
		by[r.Item] = append(by[r.Item], r.Value)
	}
	for _, v := range by {
		sort.Float64s(v)
		mean = append(mean, stat.Mean(v, nil))
		// The usual median: the middle value, or the mean of the two middle
		// values of an even count (R's and numpy's median; stat.Quantile's
		// Empirical rule would return the lower of the two).
		m := len(v) / 2
		med := v[m]
		if len(v)%2 == 0 {
			med = (v[m-1] + v[m]) / 2
		}
		median = append(median, med)
	}
	return mean, median
}
