// Command cost compares analysis.ExpectedCost with the CPU seconds that the
// shared ladder measured, and fits ExpectedCost's rates to them: it reads
// the ladder's results.jsonl files (the arguments) and prints, for each
// run, the estimate (at the rank the fit kept, from its notes), the
// measured CPU seconds, their ratio and whether they are within a factor
// of two.
//
//	go run ./docs/scripts/cost /tmp/cost-ladder/a/results.jsonl ...
//	go run ./docs/scripts/cost -fit /tmp/cost-ladder/a/results.jsonl ...
//	go run ./docs/scripts/cost -csv 'cost35e, main 95eb31e' /tmp/cost-ladder/a/results.jsonl ...
//
// With -fit it fits, per costTable row (model/engine), the per-label (or
// per-pair) rate and its growth exponent in the raters from the labels-only
// runs (the line of ln((CPU s - fixed) / labels) on ln(R/10) with the least
// largest distance), then the kernel rate and its growth from the kernel
// runs less their labels' part (ln of the rest over N r² on ln(R/10)), prints the rows as Go for
// analysis/cost.go and the table at the fitted rates. With -csv SOURCE it
// prints the runs as rows of analysis/testdata/cost_ladder.csv, the
// table that TestExpectedCostLadder pins the estimate against. See
// README.md for the ladder commands and the calibration tables.
package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"

	"concord/analysis"
)

// family is the spec that the ladder's family fits (its flags, and the
// kernel its data's defaults give). The ladder's "ordinal-gibbs" rows fit
// the ordinal model's default, whose engine is now EP.
var family = map[string]analysis.FitSpec{
	"ordinal-gibbs":             {Model: "ordinal", Engine: "ep", Kernel: "identity"},
	"ordinal-gibbs-text":        {Model: "ordinal", Engine: "ep", Kernel: "text"},
	"ordinal-gibbs-rbf":         {Model: "ordinal", Engine: "ep", Kernel: "rbf:gamma=0.125"},
	"ordinal-ep":                {Model: "ordinal", Engine: "ep", Kernel: "identity"},
	"ordinal-ep-text":           {Model: "ordinal", Engine: "ep", Kernel: "text"},
	"ordinal-laplace-text":      {Model: "ordinal", Engine: "laplace", Kernel: "text"},
	"classification-gibbs":      {Model: "classification", Engine: "gibbs", Kernel: "identity"},
	"classification-gibbs-text": {Model: "classification", Engine: "gibbs", Kernel: "text"},
	"confusion-vb":              {Model: "confusion", Engine: "vb", Kernel: "identity"},
	"confusion-vb-text":         {Model: "confusion", Engine: "vb", Kernel: "text"},
	"bounded-ep":                {Model: "bounded", Engine: "ep", Kernel: "identity"},
	"bounded-ep-text":           {Model: "bounded", Engine: "ep", Kernel: "text"},
	"robust-ep":                 {Model: "robust", Engine: "ep", Kernel: "identity"},
	"robust-ep-rbf":             {Model: "robust", Engine: "ep", Kernel: "rbf"},
	"auc-ep":                    {Model: "auc", Engine: "ep"},
	"auc-ep-gp":                 {Model: "auc", Engine: "ep", Scores: "gp"},
}

// run is one line of the ladder's results.jsonl.
type run struct {
	Family string   `json:"family"`
	N      int      `json:"n"`
	Labels int      `json:"labels"`
	Raters int      `json:"raters"`
	CPU    float64  `json:"cpu"`
	Status string   `json:"status"`
	Notes  []string `json:"notes"`
	spec   analysis.FitSpec
	// curvature is the share of the fit's seconds outside its model
	// candidates' evidence maximisations (the ordinal model's curvature
	// of the rater parameters), from the run's result.json; 0 unknown.
	curvature float64
}

// fitSeconds are the parts of a result document's diagnostics that say
// where a deterministic fit's time went.
type fitSeconds struct {
	Diagnostics struct {
		Seconds    float64 `json:"seconds"`
		Candidates []struct {
			Seconds float64 `json:"seconds"`
		} `json:"model_candidates"`
	} `json:"diagnostics"`
}

// curvatureShare reads the run's result.json (beside results.jsonl, in
// runs/FAMILY/NN) and returns the share of its seconds outside the model
// candidates, 0 where it cannot tell.
func curvatureShare(dir string, r run) float64 {
	b, err := os.ReadFile(filepath.Join(dir, "runs", r.Family, fmt.Sprintf("N%d", r.N), "result.json"))
	if err != nil {
		return 0
	}
	var fs fitSeconds
	if json.Unmarshal(b, &fs) != nil || fs.Diagnostics.Seconds <= 0 || len(fs.Diagnostics.Candidates) == 0 {
		return 0
	}
	var c float64
	for _, cd := range fs.Diagnostics.Candidates {
		c += cd.Seconds
	}
	return max(0, 1-c/fs.Diagnostics.Seconds)
}

// rankNote finds the rank that the default rank rule kept in a fit's notes.
var rankNote = regexp.MustCompile(`default rank (\d+)`)

func main() {
	fit := flag.Bool("fit", false, "fit the rates to the runs and print them as Go, with the table at the fitted rates")
	csvSource := flag.String("csv", "", "print the runs as rows of analysis/testdata/cost_ladder.csv with this source")
	flag.Parse()
	runs, err := readRuns(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *csvSource != "" {
		printCSV(runs, *csvSource)
		return
	}
	printTable(runs, nil)
	if *fit {
		rates := fitRates(runs)
		fmt.Println()
		printRates(rates)
		fmt.Println()
		printTable(runs, rates)
	}
}

// readRuns reads the ladder's results of the families in family, with the
// rank each fit kept set in its spec (Rank 0 where its notes name none).
func readRuns(paths []string) ([]run, error) {
	var runs []run
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var r run
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				continue
			}
			spec, ok := family[r.Family]
			if !ok {
				continue
			}
			r.spec = spec.WithDefaults()
			// The ladder's data: its raters, and ordinal:1..5.
			r.spec.Raters, r.spec.Levels = r.Raters, 5
			if u := analysis.CostUnitsOf(r.spec, r.Labels, r.N); u.CurvatureRuns > 0 {
				r.curvature = curvatureShare(filepath.Dir(path), r)
			}
			for _, n := range r.Notes {
				if m := rankNote.FindStringSubmatch(n); m != nil {
					r.spec.Rank, _ = strconv.Atoi(m[1])
				}
			}
			runs = append(runs, r)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
	}
	return runs, nil
}

// estimate is the run's estimate: ExpectedCost, or with rates (by
// costTable key) where they have the run's key.
func estimate(r run, rates map[string]analysis.CostRates) float64 {
	u := analysis.CostUnitsOf(r.spec, r.Labels, r.N)
	if rt, ok := rates[u.Key]; ok {
		s, _ := u.Estimate(rt)
		return s
	}
	return analysis.ExpectedCost(r.spec, r.Labels, r.N).CPU.Seconds()
}

// printTable prints each run's estimate against its CPU seconds.
func printTable(runs []run, rates map[string]analysis.CostRates) {
	fmt.Printf("%-26s %6s %6s %7s %5s %9s %9s %6s %s\n", "family", "items", "raters", "labels", "rank", "est CPU s", "CPU s", "ratio", "within 2x")
	for _, r := range runs {
		est := estimate(r, rates)
		ratio := est / r.CPU
		within := "yes"
		if ratio > 2 || ratio < 0.5 {
			within = "no"
		}
		status := ""
		if r.Status != "ok" {
			// Stopped at a limit: the CPU seconds are a lower bound,
			// the ratio an upper one.
			status = " (" + r.Status + ": CPU s at least)"
			if ratio >= 0.5 {
				within = "unknown"
			}
		}
		rank := "-"
		if u := analysis.CostUnitsOf(r.spec, r.Labels, r.N); u.Rank > 0 {
			rank = strconv.Itoa(u.Rank)
		}
		fmt.Printf("%-26s %6d %6d %7d %5s %9.2f %9.2f %6.2f %s%s\n", r.Family, r.N, r.Raters, r.Labels, rank, est, r.CPU, ratio, within, status)
	}
}

// printCSV prints the finished runs as rows of the test's table.
func printCSV(runs []run, source string) {
	w := csv.NewWriter(os.Stdout)
	for _, r := range runs {
		if r.Status != "ok" {
			continue
		}
		s := r.spec
		w.Write([]string{r.Family, s.Model, s.Engine, s.Kernel, s.Scores, strconv.Itoa(r.N), strconv.Itoa(r.Raters), strconv.Itoa(r.Labels),
			strconv.Itoa(s.Rank), strconv.FormatFloat(r.CPU, 'f', 2, 64), source})
	}
	w.Flush()
}

// point is one run's x = ln(N/1000) and y = ln(rate).
type point struct{ x, y float64 }

// lineFit is the line y = a + g x through points whose largest distance
// from them (in y) is least, with 0 <= g <= 3 (the evaluations do not
// fall with the raters): the rates whose worst ratio of estimated to
// measured CPU s is closest to 1, which is what the factor-of-two line
// asks. The slope is searched on a grid of 0.01, the intercept is the
// middle of the residuals' range.
func lineFit(ps []point) (a, g float64) {
	best := math.Inf(1)
	for i := 0; i <= 300; i++ {
		s := float64(i) / 100
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range ps {
			r := p.y - s*p.x
			lo, hi = min(lo, r), max(hi, r)
		}
		if hi-lo < best-1e-12 {
			best, a, g = hi-lo, (hi+lo)/2, s
		}
	}
	return a, g
}

// fitRates fits the deterministic rows' rates to the finished runs: the
// curvature run's share (the geometric mean over the runs that form it of
// their time outside the candidates, per run, against the time in them),
// then the per-label (or per-pair) rate and its growth in the raters from
// the labels-only runs, then the kernel's from the kernel runs less their
// labels' part. Gibbs rows and one-run rows are left as they are: the
// ladder runs neither with a deterministic engine's evaluations.
func fitRates(runs []run) map[string]analysis.CostRates {
	var keys []string
	byKey := map[string][]run{}
	for _, r := range runs {
		u := analysis.CostUnitsOf(r.spec, r.Labels, r.N)
		if _, ok := analysis.CostRatesOf(u.Key); !ok || r.Status != "ok" || u.Sweeps > 0 {
			continue
		}
		if byKey[u.Key] == nil {
			keys = append(keys, u.Key)
		}
		byKey[u.Key] = append(byKey[u.Key], r)
	}
	// Borrowers come after the rows they borrow from.
	sort.SliceStable(keys, func(i, j int) bool { return borrow[keys[i]] == "" && borrow[keys[j]] != "" })
	fitted := map[string]analysis.CostRates{}
	for _, key := range keys {
		rt, _ := analysis.CostRatesOf(key)
		if from, ok := fitted[borrow[key]]; ok {
			rt.PerLabel, rt.LabelGrowth = from.PerLabel, from.LabelGrowth
		}
		if c := curvatureRun(byKey[key]); c > 0 {
			rt.CurvatureRun = c
		}
		// search is a run's CPU s less the fixed part and the curvature.
		search := func(r run, u analysis.CostUnits) float64 {
			return (r.CPU - rt.Fixed) / (1 + rt.CurvatureRun*float64(u.CurvatureRuns))
		}
		var sites []point
		for _, r := range byKey[key] {
			if u := analysis.CostUnitsOf(r.spec, r.Labels, r.N); u.Class == analysis.CostLabelsOnly && search(r, u) > 0 {
				sites = append(sites, point{math.Log(u.Scale), math.Log(search(r, u) / u.Sites)})
			}
		}
		if len(sites) > 0 {
			a, g := lineFit(sites)
			if rt.PerPair > 0 {
				rt.PerPair = math.Exp(a)
			} else {
				rt.PerLabel = math.Exp(a)
			}
			rt.LabelGrowth = g
		}
		var kernel []point
		learnt := false
		for _, r := range byKey[key] {
			u := analysis.CostUnitsOf(r.spec, r.Labels, r.N)
			if u.Class != analysis.CostLowRank && u.Class != analysis.CostLearnt {
				continue
			}
			site := rt.PerLabel
			if u.Pairs {
				site = rt.PerPair
			}
			rest := search(r, u) - site*u.Sites*math.Pow(u.Scale, rt.LabelGrowth)
			if rest <= 0 {
				fmt.Fprintf(os.Stderr, "cost: %s at %d items: %.2f CPU s, not above its labels' part; left out of the kernel fit\n", r.Family, r.N, r.CPU)
				continue
			}
			learnt = learnt || u.Class == analysis.CostLearnt
			kernel = append(kernel, point{math.Log(u.Scale), math.Log(rest / u.Kernel)})
		}
		if len(kernel) > 0 {
			a, g := lineFit(kernel)
			if learnt {
				rt.PerLearnt = math.Exp(a)
			} else {
				rt.PerLowRank = math.Exp(a)
			}
			rt.KernelGrowth = g
		}
		fitted[key] = rt
	}
	for to, from := range borrow {
		if _, ok := fitted[to]; !ok {
			if rt, ok := fitted[from]; ok {
				fitted[to] = rt
			}
		}
	}
	return fitted
}

// curvatureRun is the geometric mean over runs that form the ordinal
// curvature of one curvature run's share of the evidence maximisation:
// their time outside the model candidates against the time in them, per
// run; 0 without such runs.
func curvatureRun(runs []run) float64 {
	var sum float64
	n := 0
	for _, r := range runs {
		if u := analysis.CostUnitsOf(r.spec, r.Labels, r.N); u.CurvatureRuns > 0 && r.curvature > 0 && r.curvature < 1 {
			sum += math.Log(r.curvature / (1 - r.curvature) / float64(u.CurvatureRuns))
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Exp(sum / float64(n))
}

// borrow names the row whose labels-only rates a row without labels-only
// ladder runs takes (the ordinal Laplace fit's identity candidates; the
// bounded model's Laplace engine, which no ladder family runs, takes
// every rate).
var borrow = map[string]string{
	"ordinal/laplace": "ordinal/ep",
	"bounded/laplace": "bounded/ep",
}

// printRates prints the fitted rows as costTable's Go.
func printRates(rates map[string]analysis.CostRates) {
	keys := make([]string, 0, len(rates))
	for k := range rates {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r := rates[k]
		fmt.Printf("%q: {Fixed: %.2g, PerLabel: %.3g, PerPair: %.3g, PerLowRank: %.3g, PerDense: %.3g, PerLearnt: %.3g, LabelGrowth: %.2f, KernelGrowth: %.2f, CurvatureRun: %.2g},\n",
			k, r.Fixed, r.PerLabel, r.PerPair, r.PerLowRank, r.PerDense, r.PerLearnt, r.LabelGrowth, r.KernelGrowth, r.CurvatureRun)
	}
}
