// Command ordinal measures the ordinal model's noise-model choice (EP,
// noise auto: per-rater, shared-thresholds or shared by the log evidence
// less 1/2 ln(n) per learnt parameter) on real ordinal ratings of
// ../shared/data, beside each candidate forced and the raters' mean:
//
//   - the three multi-reader ROC studies (mrmc_*: 4-5 readers rate every
//     case on a 5-point confidence scale, per modality, the truth known):
//     Spearman and Pearson r with the truth and the AUC of each consensus;
//
//   - the sirt writing ratings (sirt_writing_ratings1-3: 7, 16 and 52
//     raters, 4-5 criteria): each of the -holdout raters with the most
//     ratings held out in turn, the consensus of the others' ratings
//     against the held-out rater's (Spearman and Pearson r over the items
//     the held-out rater rated that someone else rated too, averaged over
//     the held-out raters).
//
// With -gibbs the sirt table also has the Gibbs sampler's consensus
// (ordinal.Fit with its default options, seed 1: the ordinal default before
// issue 29 item 4) and the CPU seconds (user + system of this process,
// summed over the held-out raters) of the default (EP, noise auto) and of
// the Gibbs fits.
//
//	go run ./docs/scripts/ordinal -data ../shared/data [-holdout 4] [-engine ep] [-only mrmc,sirt] [-gibbs]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/gonum/stat"

	"concord/internal/testutil"
	"concord/multirater"
	"concord/multirater/mcmc"
	"concord/multirater/mcmc/mcmctest"
	"concord/multirater/ordinal"
)

var methods = []string{ordinal.Auto, ordinal.PerRater, ordinal.SharedThresholds, ordinal.Shared}

func main() {
	data := flag.String("data", "../shared/data", "the folder holding the data sets")
	holdout := flag.Int("holdout", 4, "sirt: the raters held out in turn (those with the most ratings)")
	engine := flag.String("engine", multirater.EngineEP, "ep or laplace")
	only := flag.String("only", "mrmc,sirt", "which parts to run")
	gibbs := flag.Bool("gibbs", false, "sirt: the Gibbs sampler's consensus too, and the CPU seconds of auto and Gibbs")
	flag.Parse()
	start := time.Now()
	if strings.Contains(*only, "mrmc") {
		fmt.Printf("Multi-reader ROC studies: r with the truth (Spearman/Pearson) and AUC of each consensus; chosen = auto's choice\n")
		fmt.Printf("%-44s %5s %6s | %-22s | %-22s | %-22s | %-22s | %-22s | %s\n", "dataset/modality", "items", "labels", "mean", "auto", "per-rater", "shared-thresholds", "shared", "chosen")
		for _, ds := range []string{"mrmc_franken_1992_neonatal_workstation", "mrmc_kundel_1997_chest_radiographs", "mrmc_vandyke_1993_aortic_dissection"} {
			rows, err := readCSV(filepath.Join(*data, ds, "ratings.csv"))
			check(err)
			for _, mod := range distinct(rows, "modality") {
				d, truth := mrmcData(rows, mod)
				line := fmt.Sprintf("%-44s %5d %6d | %s", ds+"/"+mod, len(d.ItemIDs), len(d.Ratings), metrics(raterMean(d), truth))
				chosen := ""
				for _, m := range methods {
					res, err := ordinal.FitDeterministic(context.Background(), d, ordinal.DetOptions{Engine: *engine, Noise: m, Priors: true, Seed: 1})
					if err != nil {
						line += fmt.Sprintf(" | %-22s", "failed: "+err.Error())
						continue
					}
					line += " | " + metrics(scores(res), truth)
					if m == ordinal.Auto {
						chosen = res.Model.Noise
					}
				}
				fmt.Printf("%s | %s\n", line, chosen)
			}
		}
	}
	if strings.Contains(*only, "sirt") {
		fmt.Printf("\nsirt writing ratings: each of the %d raters with the most ratings held out in turn; r of each consensus of the others' ratings with the held-out rater's (Spearman/Pearson, mean over the held-out raters); chosen: auto's choices\n", *holdout)
		head := fmt.Sprintf("%-32s %5s %6s %6s | %-15s | %-15s | %-15s | %-15s | %-15s", "dataset/criterion", "items", "labels", "raters", "mean", "auto", "per-rater", "shared-thresholds", "shared")
		if *gibbs {
			head += fmt.Sprintf(" | %-15s | %9s %9s", "gibbs", "auto cpu", "gibbs cpu")
		}
		fmt.Printf("%s | chosen\n", head)
		for _, ds := range []string{"sirt_writing_ratings1", "sirt_writing_ratings2", "sirt_writing_ratings3"} {
			rows, err := readCSV(filepath.Join(*data, ds, "ratings.csv"))
			check(err)
			for _, crit := range distinct(rows, "criterion") {
				sirt(ds, crit, rows, *holdout, *engine, *gibbs)
			}
		}
	}
	fmt.Printf("\n%.0f s\n", time.Since(start).Seconds())
}

// sirt prints one criterion's held-out-rater comparison.
func sirt(ds, crit string, rows []map[string]string, holdout int, engine string, gibbs bool) {
	var sel []map[string]string
	for _, r := range rows {
		if r["criterion"] == crit {
			sel = append(sel, r)
		}
	}
	all := ordinalData(sel, "item_id", func(map[string]string) bool { return true })
	count := map[string]int{}
	for _, r := range sel {
		count[r["rater_id"]]++
	}
	raters := append([]string(nil), all.RaterIDs...)
	sort.SliceStable(raters, func(a, b int) bool { return count[raters[a]] > count[raters[b]] })
	raters = raters[:min(holdout, len(raters))]
	sums := make([][2]float64, len(methods)+2)
	var cpuAuto, cpuGibbs float64
	chosen := map[string]int{}
	for _, h := range raters {
		d := ordinalData(sel, "item_id", func(r map[string]string) bool { return r["rater_id"] != h })
		// The held-out rater's levels on the items someone else rated.
		index := map[string]int{}
		for i, id := range d.ItemIDs {
			index[id] = i
		}
		var items []int
		var held []float64
		for _, r := range sel {
			if r["rater_id"] != h {
				continue
			}
			if i, ok := index[r["item_id"]]; ok {
				items = append(items, i)
				held = append(held, levelOf(all.Levels, r["label"]))
			}
		}
		add := func(k int, s []float64) {
			x := make([]float64, len(items))
			for j, i := range items {
				x[j] = s[i]
			}
			sums[k][0] += mcmctest.Spearman(x, held) / float64(len(raters))
			sums[k][1] += stat.Correlation(x, held, nil) / float64(len(raters))
		}
		add(0, raterMean(d))
		for k, m := range methods {
			c0 := cpuSeconds()
			res, err := ordinal.FitDeterministic(context.Background(), d, ordinal.DetOptions{Engine: engine, Noise: m, Priors: true, Seed: 1})
			check(err)
			add(k+1, scores(res))
			if m == ordinal.Auto {
				cpuAuto += cpuSeconds() - c0
				chosen[res.Model.Noise]++
			}
		}
		if gibbs {
			c0 := cpuSeconds()
			res, err := ordinal.Fit(context.Background(), d, ordinal.Options{Common: mcmc.Common{Settings: mcmc.Settings{Seed: 1}}})
			check(err)
			cpuGibbs += cpuSeconds() - c0
			add(len(methods)+1, scores(res))
		}
	}
	if !gibbs {
		sums = sums[:len(methods)+1]
	}
	line := fmt.Sprintf("%-32s %5d %6d %6d", ds+"/"+crit, len(all.ItemIDs), len(all.Ratings), len(all.RaterIDs))
	for _, s := range sums {
		line += fmt.Sprintf(" | %.4f/%.4f  ", s[0], s[1])
	}
	if gibbs {
		line += fmt.Sprintf(" | %9.2f %9.2f", cpuAuto, cpuGibbs)
	}
	var ch []string
	for _, m := range methods[1:] {
		if chosen[m] > 0 {
			ch = append(ch, fmt.Sprintf("%s x%d", m, chosen[m]))
		}
	}
	fmt.Printf("%s | %s\n", line, strings.Join(ch, ", "))
}

// cpuSeconds returns the user + system CPU seconds of this process (every
// thread: the Gibbs chains run in parallel).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// mrmcData returns one modality's ratings and each item's truth.
func mrmcData(rows []map[string]string, mod string) (*ordinal.Data, []float64) {
	d := ordinalData(rows, "item_id", func(r map[string]string) bool { return r["modality"] == mod })
	truth := make([]float64, len(d.ItemIDs))
	index := map[string]int{}
	for i, id := range d.ItemIDs {
		index[id] = i
	}
	for _, r := range rows {
		if r["modality"] == mod {
			t, err := strconv.ParseFloat(r["truth"], 64)
			check(err)
			truth[index[r["item_id"]]] = t
		}
	}
	return d, truth
}

// ordinalData builds the ordinal data of the rows keep accepts, with the
// levels the distinct labels of every row (numeric order).
func ordinalData(rows []map[string]string, itemCol string, keep func(map[string]string) bool) *ordinal.Data {
	levels := distinct(rows, "label")
	sort.Slice(levels, func(a, b int) bool { return num(levels[a]) < num(levels[b]) })
	d := &ordinal.Data{Levels: levels}
	items, raters := map[string]int{}, map[string]int{}
	for _, r := range rows {
		if !keep(r) {
			continue
		}
		i := testutil.IndexOf(items, &d.ItemIDs, r[itemCol])
		l := testutil.IndexOf(raters, &d.RaterIDs, r["rater_id"])
		d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: l, Level: int(levelOf(levels, r["label"]))})
	}
	return d
}

func levelOf(levels []string, label string) float64 {
	for k, l := range levels {
		if l == label {
			return float64(k)
		}
	}
	panic("unknown label " + label)
}

func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	check(err)
	return v
}

// metrics formats Spearman/Pearson r with the truth and the AUC.
func metrics(s, truth []float64) string {
	return fmt.Sprintf("%.4f/%.4f %.4f", mcmctest.Spearman(s, truth), stat.Correlation(s, truth, nil), auc(s, truth))
}

// auc is the probability that a positive item (truth 1) scores above a
// negative one (truth 0), ties counting one half.
func auc(s, truth []float64) float64 {
	y := make([]bool, len(truth))
	for i, t := range truth {
		y[i] = t == 1
	}
	return testutil.MannWhitney(s, y)
}

// raterMean is each item's mean level (0 for an item without ratings).
func raterMean(d *ordinal.Data) []float64 { return mcmctest.MeanLevels(len(d.ItemIDs), d.Ratings) }

func scores(res *multirater.FitResult) []float64 {
	out := make([]float64, len(res.Items))
	for i, it := range res.Items {
		out[i] = it.Score.Mean
	}
	return out
}

func distinct(rows []map[string]string, col string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		if v := r[col]; !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// readCSV reads a CSV file with a header into one map a row.
func readCSV(path string) ([]map[string]string, error) {
	recs, err := testutil.Records(path)
	if err != nil {
		return nil, err
	}
	return testutil.Keyed(recs), nil
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
