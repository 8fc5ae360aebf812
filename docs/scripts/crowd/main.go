// Command crowd is the rerunnable crowd benchmark (issues 18 and 29): on the
// eight public crowdsourcing datasets of issue 18 (../shared/data) and on
// the synthetic test beds of docs/scripts/crowd/gen it fits the labels as a
// new user would,
//
//	concord fit --labels ratings.csv --duplicates keep --model confusion --out doc.json
//
// (default settings; no --items and no --gold, so no gold label reaches the
// fit), and prints per dataset the consensus accuracy against the gold
// labels of items.csv, the fit's wall and CPU time, the rater model the fit
// chose (read from the fit document: a rater-model choice when the document
// has one, else the confusion prior's hierarchy and number of communities),
// concord's own baselines (package raters: majority vote, Dawid-Skene,
// one-coin Dawid-Skene, Wawa, GLAD, MACE; default options, seed 1, every
// label kept) and crowd-kit 1.4.1's seven aggregators (MV, DS, one-coin DS,
// GLAD, Wawa, ZBS, MACE with default settings), read from a table that
// crowdkit_bench.py wrote (crowdkit.tsv next to this file: measured once on
// the same files, see README.md). It flags issue 29's acceptance checks:
// the fit's accuracy >= crowd-kit's MV, within 0.01 of crowd-kit's best,
// >= crowd-kit's best.
//
// Accuracy = items whose consensus equals the gold label / items with a
// gold label; an item without a consensus counts as wrong. Majority-vote
// ties in concord's baseline are broken as raters.MajorityVote breaks them
// (overall frequency, then lowest level); crowd-kit's go to the first label
// in sorted order.
//
// With -rte it also runs the RTE subsample check of issue 29:
// ../shared/data/snow2008_rte subsampled to k = 1, 2, 3 labels per item
// (4 seeded subsamples each: math/rand/v2 PCG(seed, k), seeds 1-4), the
// confusion fit against majority vote on the same labels, ties counted 1/2.
//
// Run from the repository root (the concord binary is built from it unless
// -concord names one):
//
//	go run ./docs/scripts/crowd/gen -out /tmp/crowdbed
//	go run ./docs/scripts/crowd -data /work/shared/data -beds /tmp/crowdbed [-rte] [-only a,b] [-fit-args "--engine gibbs"] [-tsv out.tsv]
package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"concord/annotations"
	"concord/raters"
)

// public are the eight public datasets of issue 18, in ../shared/data.
var public = []string{
	"snow2008_rte",
	"snow2008_temporal",
	"snow2008_wsd",
	"face_sentiment_4class",
	"welinder2010_duck_identification",
	"zhou2012_dog_breeds",
	"wang2012_product_matching",
	"ipeirotis2010_adultcontent2",
}

// ckMethods are crowd-kit's seven aggregators as crowdkit_bench.py names
// them, in its order (ties for the best go to the first).
var ckMethods = []string{"MV", "DS", "OneCoinDS", "GLAD", "Wawa", "ZBS", "MACE"}

// baselineNames are the raters aggregators, in the reports' order.
var baselineNames = []string{"majority", "dawid_skene", "one_coin", "wawa", "glad", "mace"}

// tol absorbs the rounding of crowd-kit's accuracies (six decimals): two
// accuracies on the same gold items differ by at least 1/items.
const tol = 1e-6

type config struct {
	concord  string
	fitArgs  []string
	timeout  time.Duration
	tsv      *bufio.Writer
	baseline bool
}

// fitOutcome is one concord fit.
type fitOutcome struct {
	acc       float64
	wall, cpu time.Duration
	model     string
	converged string
	err       error
}

func main() {
	data := flag.String("data", "/work/shared/data", "folder of the public datasets (empty: skip them)")
	bedsDir := flag.String("beds", "/tmp/crowdbed", "folder of the synthetic beds written by ./docs/scripts/crowd/gen (empty: skip them)")
	extra := flag.String("extra", "", "comma-separated folders of further datasets laid out as the beds (a subfolder with ratings.csv and items.csv each), e.g. the real held-out sets that heldout_convert.py writes")
	ckPath := flag.String("crowdkit", "docs/scripts/crowd/crowdkit.tsv", "crowd-kit's table (dataset, method, accuracy, seconds) written by crowdkit_bench.py")
	concord := flag.String("concord", "", "concord binary (default: built from this repository with go build)")
	fitArgs := flag.String("fit-args", "", "extra arguments of concord fit, space-separated (default: none, the defaults)")
	only := flag.String("only", "", "comma-separated dataset names to run (default: all)")
	withBaselines := flag.Bool("baselines", true, "also run raters' MV, DS, one-coin DS, Wawa, GLAD and MACE")
	rte := flag.Bool("rte", true, "also run the RTE subsample check (k = 1, 2, 3 labels per item, 4 subsamples each)")
	rteOut := flag.String("rte-out", "", "keep the RTE subsamples in this folder (one subfolder k<k>_s<seed> with ratings.csv and items.csv)")
	timeout := flag.Duration("timeout", 10*time.Minute, "limit of one fit")
	tsvPath := flag.String("tsv", "", "also write every result as TSV rows (dataset, method, accuracy, wall_s, cpu_s) to this file")
	candDirs := flag.String("candidates", "", "comma-separated folders of beds (one per generator seed): print only the candidate table (every rater model forced, the default, MV with ties split, DS, one-coin DS, MACE) over them")
	flag.Parse()

	cfg := config{concord: *concord, fitArgs: strings.Fields(*fitArgs), timeout: *timeout, baseline: *withBaselines}
	if cfg.concord == "" {
		dir, err := os.MkdirTemp("", "crowdbench")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
		cfg.concord = filepath.Join(dir, "concord")
		if out, err := exec.Command("go", "build", "-o", cfg.concord, "./cmd/concord").CombinedOutput(); err != nil {
			fail(fmt.Errorf("go build ./cmd/concord (run from the repository root): %v\n%s", err, out))
		}
	}
	if *tsvPath != "" {
		f, err := os.Create(*tsvPath)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		cfg.tsv = bufio.NewWriter(f)
		defer cfg.tsv.Flush()
		fmt.Fprintln(cfg.tsv, "dataset\tmethod\taccuracy\twall_s\tcpu_s")
	}
	ck, err := readCrowdKit(*ckPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "crowd: no crowd-kit figures (%v); their columns stay empty\n", err)
	}
	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	if *candDirs != "" {
		candidateRun(cfg, strings.Split(*candDirs, ","), want)
		return
	}
	fmt.Printf("concord %s, %s\n", describeBuild(), strings.Join(append([]string{"concord fit --duplicates keep --model confusion"}, cfg.fitArgs...), " "))
	fmt.Printf("crowd-kit: %s\n\n", *ckPath)
	fmt.Printf("%-34s %6s %6s %7s %6s  %-7s %7s %7s  %-22s %-9s | %7s %7s %-9s %4s %5s %4s\n",
		"dataset", "items", "raters", "labels", "gold", "fit", "wall s", "cpu s", "rater model", "converged", "ck MV", "ck best", "(method)", ">=MV", "-.01", ">=best")
	var rows []row
	var t tally
	for _, d := range datasets(*data, append([]string{*bedsDir}, strings.Split(*extra, ",")...)...) {
		if len(want) > 0 && !want[d.name] {
			continue
		}
		rows = append(rows, runDataset(cfg, d, ck, &t))
	}
	fmt.Printf("\nconcord fit: no failure on %d of %d; on the %d with crowd-kit figures: >= crowd-kit MV on %d, within 0.01 of crowd-kit's best on %d, >= best on %d\n",
		len(rows)-t.fail, len(rows), t.ck, t.mv, t.near, t.best)
	fmt.Printf("wall s, cpu s: the concord fit process (load + fit + document), CPU = user + system\n")
	names := append([]string{"fit"}, baselineNames...)
	for _, m := range ckMethods {
		names = append(names, "ck "+m)
	}
	printAccuracies(rows, names, ck)
	printSeconds(rows, names, ck)

	if *rte && *data != "" && (len(want) == 0 || want["rte_subsamples"]) {
		if err := rteCheck(cfg, filepath.Join(*data, "snow2008_rte"), *rteOut); err != nil {
			fail(err)
		}
	}
}

// dataset is a folder of ratings.csv and items.csv (with a gold column).
type dataset struct{ name, dir string }

// datasets lists the public datasets under data, then every dataset
// folder (a subfolder with ratings.csv) of each folder in dirs: the
// synthetic beds, the held-out real sets (data or a folder empty: none of
// them).
func datasets(data string, dirs ...string) []dataset {
	var sets []dataset
	if data != "" {
		for _, n := range public {
			sets = append(sets, dataset{n, filepath.Join(data, n)})
		}
	}
	for _, beds := range dirs {
		if beds = strings.TrimSpace(beds); beds == "" {
			continue
		}
		entries, err := os.ReadDir(beds)
		if err != nil {
			fmt.Fprintf(os.Stderr, "crowd: no datasets in %s: %v (beds: go run ./docs/scripts/crowd/gen -out %s)\n", beds, err, beds)
		}
		for _, e := range entries {
			dir := filepath.Join(beds, e.Name())
			if _, err := os.Stat(filepath.Join(dir, "ratings.csv")); e.IsDir() && err == nil {
				sets = append(sets, dataset{e.Name(), dir})
			}
		}
	}
	return sets
}

// row is a dataset's results: concord fit's and the baselines'.
type row struct {
	name                        string
	items, raters, labels, gold int
	fit                         fitOutcome
	base                        map[string]fitOutcome
}

// tally counts the datasets that meet each check against crowd-kit.
type tally struct{ mv, near, best, ck, fail int }

// runDataset fits a dataset (and its baselines), prints its line of the
// first table and counts its checks.
func runDataset(cfg config, d dataset, ck map[string]map[string]ckResult, t *tally) row {
	gold, err := readGold(filepath.Join(d.dir, "items.csv"))
	if err != nil {
		fail(fmt.Errorf("%s: %v", d.name, err))
	}
	ld, err := annotations.LoadFiles(filepath.Join(d.dir, "ratings.csv"), annotations.LoadOptions{
		ReadOptions: annotations.ReadOptions{Duplicates: annotations.DuplicatesKeep}})
	if err != nil {
		fail(fmt.Errorf("%s: %v", d.name, err))
	}
	ds := ld.Dataset
	r := row{name: d.name, items: len(ds.ItemIDs()), raters: len(ds.RaterIDs()), labels: len(ds.Labels), gold: len(gold)}
	r.fit = fitConcord(cfg, filepath.Join(d.dir, "ratings.csv"), gold)
	emit(cfg, d.name, "concord_fit", r.fit)
	acc := fmt.Sprintf("%.4f", r.fit.acc)
	if r.fit.err != nil {
		acc = "FAIL"
		t.fail++
		fmt.Fprintf(os.Stderr, "%s: concord fit: %v\n", d.name, r.fit.err)
	}
	checks := ""
	ckMV, ckBest, ckWho := "", "", ""
	if m, ok := ck[d.name]; ok && len(m) > 0 {
		best, who := bestOf(m)
		ckBest, ckWho = fmt.Sprintf("%.4f", best), "("+who+")"
		mv, hasMV := m["MV"]
		if hasMV {
			ckMV = fmt.Sprintf("%.4f", mv.acc)
		}
		t.ck++
		ok := r.fit.err == nil
		c1 := ok && hasMV && r.fit.acc >= mv.acc-tol
		c2 := ok && r.fit.acc >= best-0.01-tol
		c3 := ok && r.fit.acc >= best-tol
		t.mv += b2i(c1)
		t.near += b2i(c2)
		t.best += b2i(c3)
		checks = fmt.Sprintf("%4s %5s %4s", yes(c1), yes(c2), yes(c3))
	}
	fmt.Printf("%-34s %6d %6d %7d %6d  %-7s %7.2f %7.2f  %-22s %-9s | %7s %7s %-9s %s\n", d.name, r.items, r.raters, r.labels, r.gold,
		acc, r.fit.wall.Seconds(), r.fit.cpu.Seconds(), trunc(r.fit.model, 22), r.fit.converged, ckMV, ckBest, ckWho, checks)
	if cfg.baseline {
		r.base = map[string]fitOutcome{}
		for _, a := range baselineNames {
			acc, secs, err := baseline(ds, gold, a)
			o := fitOutcome{acc: acc, wall: secs, cpu: secs, err: err}
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %s: %v\n", d.name, a, err)
			}
			r.base[a] = o
			emit(cfg, d.name, "raters_"+a, o)
		}
	}
	return r
}

// printHeader prints the dataset column's header and the methods'.
func printHeader(names []string) {
	fmt.Printf("%-34s", "dataset")
	for _, n := range names {
		fmt.Printf(" %11s", trunc(n, 11))
	}
	fmt.Printf("\n")
}

// printAccuracies prints every method's accuracy, a row a dataset, the
// best of each row starred.
func printAccuracies(rows []row, names []string, ck map[string]map[string]ckResult) {
	fmt.Printf("\nAccuracy of every method (concord: fit and package raters' baselines; ck: crowd-kit 1.4.1); * = the best of the row\n")
	printHeader(names)
	for _, r := range rows {
		vals := make([]float64, len(names))
		ok := make([]bool, len(names))
		vals[0], ok[0] = r.fit.acc, r.fit.err == nil
		for x, a := range baselineNames {
			if o, has := r.base[a]; has && o.err == nil {
				vals[1+x], ok[1+x] = o.acc, true
			}
		}
		for x, m := range ckMethods {
			if o, has := ck[r.name][m]; has {
				vals[1+len(baselineNames)+x], ok[1+len(baselineNames)+x] = o.acc, true
			}
		}
		best := math.Inf(-1)
		for x := range vals {
			if ok[x] {
				best = math.Max(best, vals[x])
			}
		}
		fmt.Printf("%-34s", r.name)
		for x := range vals {
			switch {
			case !ok[x]:
				fmt.Printf(" %11s", "-")
			case vals[x] >= best-tol:
				fmt.Printf(" %10.4f*", vals[x])
			default:
				fmt.Printf(" %10.4f ", vals[x])
			}
		}
		fmt.Printf("\n")
	}
}

// printSeconds prints every method's seconds, a row a dataset.
func printSeconds(rows []row, names []string, ck map[string]map[string]ckResult) {
	fmt.Printf("\nSeconds of every method (fit: the process's wall time; baselines: the aggregator alone; crowd-kit: fit_predict, from its table)\n")
	printHeader(names)
	for _, r := range rows {
		fmt.Printf("%-34s %11.3f", r.name, r.fit.wall.Seconds())
		for _, a := range baselineNames {
			if o, has := r.base[a]; has && o.err == nil {
				fmt.Printf(" %11.3f", o.wall.Seconds())
			} else {
				fmt.Printf(" %11s", "-")
			}
		}
		for _, m := range ckMethods {
			if o, has := ck[r.name][m]; has {
				fmt.Printf(" %11.3f", o.secs)
			} else {
				fmt.Printf(" %11s", "-")
			}
		}
		fmt.Printf("\n")
	}
}

// fitConcord runs concord fit on a label file and scores its consensus
// classes against gold.
func fitConcord(cfg config, ratings string, gold map[string]string) fitOutcome {
	dir, err := os.MkdirTemp("", "crowdfit")
	if err != nil {
		return fitOutcome{err: err}
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "fit.json")
	args := append([]string{"fit", "--labels", ratings, "--duplicates", "keep", "--model", "confusion", "--out", out}, cfg.fitArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cfg.concord, args...)
	var stderr strings.Builder
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	t := time.Now()
	err = cmd.Run()
	o := fitOutcome{wall: time.Since(t), model: "-", converged: "-"}
	if cmd.ProcessState != nil {
		o.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "\n"); i >= 0 {
			msg = msg[i+1:]
		}
		if ctx.Err() != nil {
			msg = fmt.Sprintf("no result within %v", cfg.timeout)
		}
		o.err = fmt.Errorf("%v: %s", err, msg)
		return o
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		o.err = err
		return o
	}
	if strings.Contains(string(raw), "NaN") {
		o.err = errors.New("the fit document contains NaN")
	}
	var doc struct {
		Items []struct {
			ID    string `json:"id"`
			Class string `json:"class"`
		} `json:"items"`
		Diagnostics struct {
			Converged *bool `json:"converged"`
			Engine    struct {
				Iterations int `json:"iterations"`
			} `json:"engine"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		o.err = fmt.Errorf("fit document: %v", err)
		return o
	}
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err == nil {
		o.model = raterModel(generic)
	}
	if c := doc.Diagnostics.Converged; c != nil {
		o.converged = fmt.Sprintf("%s %d", yes(*c), doc.Diagnostics.Engine.Iterations)
	}
	class := make(map[string]string, len(doc.Items))
	for _, it := range doc.Items {
		class[it.ID] = it.Class
	}
	o.acc = score(class, gold)
	return o
}

// choiceKeys are the names under which a fit document may state the rater
// model it chose (the candidate-model choice of issue 29, not yet written
// at 829c88a).
var choiceKeys = []string{"rater_model", "chosen_model", "selected_model", "choice", "chosen"}

// raterModel says which rater model a confusion fit document used: a
// string (or an object's name) under one of choiceKeys anywhere in the
// document; else the chosen element of a "candidates" list; else the
// confusion prior's hierarchy and, with communities, their number.
func raterModel(doc map[string]any) string {
	if s := findChoice(doc, 0); s != "" {
		return s
	}
	model, _ := doc["model"].(map[string]any)
	conf, _ := model["confusion"].(map[string]any)
	if conf == nil {
		return "-"
	}
	h, _ := conf["hierarchy"].(string)
	if cs, ok := conf["communities"].([]any); ok && len(cs) > 0 {
		return fmt.Sprintf("%s:%d", h, len(cs))
	}
	return h
}

func findChoice(v any, depth int) string {
	if depth > 6 {
		return ""
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range choiceKeys {
			switch c := x[k].(type) {
			case string:
				if c != "" {
					return c
				}
			case map[string]any:
				if s := nameOf(c); s != "" {
					return s
				}
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if k == "items" || k == "raters" || k == "flags" || k == "community_candidates" {
				continue
			}
			if arr, ok := x[k].([]any); ok && strings.Contains(k, "candidates") {
				for _, e := range arr {
					if m, ok := e.(map[string]any); ok && m["chosen"] == true {
						if s := nameOf(m); s != "" {
							return s
						}
					}
				}
			}
			if s := findChoice(x[k], depth+1); s != "" {
				return s
			}
		}
	}
	return ""
}

func nameOf(m map[string]any) string {
	for _, k := range []string{"name", "model", "rater_model"} {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// score is the share of gold items whose class equals the gold label (an
// item without a class counts as wrong).
func score(class, gold map[string]string) float64 {
	if len(gold) == 0 {
		return math.NaN()
	}
	hit := 0
	for id, g := range gold {
		if c, ok := class[id]; ok && c == g {
			hit++
		}
	}
	return float64(hit) / float64(len(gold))
}

// readGold reads items.csv's gold column (gold, gold_label, truth or
// true_label; as annotations reads it): item id -> gold label, for the
// items that have one.
func readGold(path string) (map[string]string, error) {
	idCol, goldCol := -1, -1
	gold := map[string]string{}
	err := eachRecord(path, func(head []string) error {
		for i, h := range head {
			switch strings.ToLower(strings.TrimSpace(h)) {
			case "item_id":
				idCol = i
			case "gold", "gold_label", "truth", "true_label":
				if goldCol < 0 {
					goldCol = i
				}
			}
		}
		if idCol < 0 || goldCol < 0 {
			return fmt.Errorf("%s: needs an item_id and a gold column", path)
		}
		return nil
	}, func(rec []string) {
		if g := strings.TrimSpace(rec[goldCol]); g != "" {
			gold[strings.TrimSpace(rec[idCol])] = g
		}
	})
	if err != nil {
		return nil, err
	}
	return gold, nil
}

// eachRecord reads the CSV file at path: its header to head, which may
// refuse it, then every record to row.
func eachRecord(path string, head func([]string) error, row func([]string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := csv.NewReader(f)
	h, err := rd.Read()
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if err := head(h); err != nil {
		return err
	}
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		row(rec)
	}
}

// ckResult is one crowd-kit aggregator's figure.
type ckResult struct{ acc, secs float64 }

// readCrowdKit reads crowdkit_bench.py's table: dataset -> method -> figure
// (the header and lines starting with # are skipped).
func readCrowdKit(path string) (map[string]map[string]ckResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]map[string]ckResult{}
	sc := bufio.NewScanner(f)
	for line := 0; sc.Scan(); line++ {
		t := sc.Text()
		if strings.HasPrefix(t, "dataset\t") || strings.HasPrefix(t, "#") || strings.TrimSpace(t) == "" {
			continue
		}
		fs := strings.Split(t, "\t")
		if len(fs) < 4 {
			return nil, fmt.Errorf("%s:%d: want dataset, method, accuracy, seconds", path, line+1)
		}
		acc, err1 := strconv.ParseFloat(fs[2], 64)
		secs, err2 := strconv.ParseFloat(fs[3], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: accuracy and seconds must be numbers", path, line+1)
		}
		if out[fs[0]] == nil {
			out[fs[0]] = map[string]ckResult{}
		}
		out[fs[0]][fs[1]] = ckResult{acc, secs}
	}
	return out, sc.Err()
}

// bestOf is crowd-kit's best accuracy on a dataset and the method (the
// first in ckMethods order on ties).
func bestOf(m map[string]ckResult) (float64, string) {
	best, who := math.Inf(-1), ""
	for _, name := range ckMethods {
		if r, ok := m[name]; ok && r.acc > best+tol {
			best, who = r.acc, name
		}
	}
	return best, who
}

// baseline runs one raters aggregator on the dataset's labels (every
// label, repeats kept; classes in the scheme's level order) and returns its
// accuracy on the gold items (an item without a consensus counts as wrong)
// and its run time.
func baseline(ds *annotations.Dataset, gold map[string]string, name string) (float64, time.Duration, error) {
	ids := ds.ItemIDs()
	itemIx := make(map[string]int, len(ids))
	for i, id := range ids {
		itemIx[id] = i
	}
	raterIx := map[string]int{}
	for j, id := range ds.RaterIDs() {
		raterIx[id] = j
	}
	k := ds.Scheme.K()
	labels := make([]raters.Label, 0, len(ds.Labels))
	for _, l := range ds.Labels {
		c, ok := ds.Scheme.Index(l.Value)
		if !ok {
			return 0, 0, fmt.Errorf("label %q is not a level", l.Value)
		}
		labels = append(labels, raters.Label{Item: itemIx[l.Item], Rater: raterIx[l.Rater], Class: c})
	}
	n, r := len(ids), len(raterIx)
	t := time.Now()
	var c *raters.Consensus
	var err error
	switch name {
	case "majority":
		c = majorityVote(labels, n, k)
	case "dawid_skene":
		c, err = raters.DawidSkene(labels, n, r, k, raters.DSOptions{Seed: 1})
	case "one_coin":
		c, err = raters.OneCoinDawidSkene(labels, n, r, k, raters.DSOptions{Seed: 1})
	case "wawa":
		c, err = raters.Wawa(labels, n, r, k, raters.WawaOptions{})
	case "glad":
		c, err = raters.GLAD(labels, n, r, k, raters.GLADOptions{})
	case "mace":
		c, err = raters.MACE(labels, n, r, k, raters.MACEOptions{Seed: 1})
	}
	secs := time.Since(t)
	if err != nil {
		return 0, secs, err
	}
	class := make(map[string]string, n)
	for i, id := range ids {
		if cl := c.Items[i].Class; c.Items[i].N > 0 && cl >= 0 {
			class[id] = ds.Scheme.Levels[cl].Code
		}
	}
	return score(class, gold), secs, nil
}

// majorityVote is the majority vote of every label (repeats count), ties
// broken as raters.MajorityVote breaks them: the class with the most labels
// overall, then the lowest level. Only Items[i].Class and N are set.
func majorityVote(labels []raters.Label, n, k int) *raters.Consensus {
	total := make([]int, k)
	counts := make([][]int, n)
	for _, l := range labels {
		if counts[l.Item] == nil {
			counts[l.Item] = make([]int, k)
		}
		counts[l.Item][l.Class]++
		total[l.Class]++
	}
	c := &raters.Consensus{Method: "majority", Items: make([]raters.ItemConsensus, n)}
	for i, cnt := range counts {
		c.Items[i].Class = -1
		if cnt == nil {
			continue
		}
		tied := raters.Modes(cnt)
		win := tied[0]
		for _, x := range tied[1:] {
			if total[x] > total[win] {
				win = x
			}
		}
		c.Items[i].Class = win
		for _, x := range cnt {
			c.Items[i].N += x
		}
	}
	return c
}

// rteCheck is issue 29's RTE subsample check: every item's labels
// subsampled to k = 1, 2, 3 (seeds 1-4), the confusion fit's accuracy
// against the majority vote of the same labels with ties counted 1/2.
func rteCheck(cfg config, dir, keep string) error {
	gold, err := readGold(filepath.Join(dir, "items.csv"))
	if err != nil {
		return err
	}
	rows, err := readRatings(filepath.Join(dir, "ratings.csv"))
	if err != nil {
		return err
	}
	// The labels of each item, in file order.
	var order []string
	byItem := map[string][][3]string{}
	for _, r := range rows {
		if _, ok := byItem[r[0]]; !ok {
			order = append(order, r[0])
		}
		byItem[r[0]] = append(byItem[r[0]], r)
	}
	work := keep
	if work == "" {
		if work, err = os.MkdirTemp("", "crowdrte"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	fmt.Printf("\nRTE subsamples (%s: %d items, %d labels): k labels per item drawn without replacement (math/rand/v2 PCG(seed, k)); majority vote ties counted 1/2\n", dir, len(order), len(rows))
	fmt.Printf("%2s %4s %7s %7s %7s %7s %-22s %s\n", "k", "seed", "fit", "MV", "wall s", "cpu s", "rater model", ">=MV")
	pass, total := 0, 0
	for k := 1; k <= 3; k++ {
		for seed := uint64(1); seed <= 4; seed++ {
			rng := rand.New(rand.NewPCG(seed, uint64(k)))
			sub := filepath.Join(work, fmt.Sprintf("k%d_s%d", k, seed))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
			var picked [][3]string
			for _, id := range order {
				ls := byItem[id]
				ix := rng.Perm(len(ls))
				if len(ix) > k {
					ix = ix[:k]
				}
				sort.Ints(ix)
				for _, x := range ix {
					picked = append(picked, ls[x])
				}
			}
			if err := writeSubsample(sub, picked, order, gold); err != nil {
				return err
			}
			o := fitConcord(cfg, filepath.Join(sub, "ratings.csv"), gold)
			mv := tiedMajority(picked, gold)
			total++
			ok := o.err == nil && o.acc >= mv-tol
			pass += b2i(ok)
			acc := fmt.Sprintf("%.4f", o.acc)
			if o.err != nil {
				acc = "FAIL"
				fmt.Fprintf(os.Stderr, "rte k=%d seed=%d: concord fit: %v\n", k, seed, o.err)
			}
			fmt.Printf("%2d %4d %7s %7.4f %7.2f %7.2f %-22s %s\n", k, seed, acc, mv, o.wall.Seconds(), o.cpu.Seconds(), trunc(o.model, 22), yes(ok))
			emit(cfg, fmt.Sprintf("rte_k%d_s%d", k, seed), "concord_fit", o)
			emit(cfg, fmt.Sprintf("rte_k%d_s%d", k, seed), "majority_ties_half", fitOutcome{acc: mv})
		}
	}
	fmt.Printf("RTE subsamples: the fit at least majority vote on %d of %d\n", pass, total)
	return nil
}

// readRatings reads item_id, rater_id, label rows.
func readRatings(path string) ([][3]string, error) {
	var out [][3]string
	err := eachRecord(path, func(head []string) error {
		if len(head) < 3 || head[0] != "item_id" || head[1] != "rater_id" || head[2] != "label" {
			return fmt.Errorf("%s: want the columns item_id, rater_id, label", path)
		}
		return nil
	}, func(rec []string) { out = append(out, [3]string{rec[0], rec[1], rec[2]}) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

func writeSubsample(dir string, rows [][3]string, order []string, gold map[string]string) error {
	var b strings.Builder
	b.WriteString("item_id,rater_id,label\n")
	w := csv.NewWriter(&b)
	for _, r := range rows {
		w.Write(r[:])
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(dir, "ratings.csv"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	b.Reset()
	b.WriteString("item_id,gold\n")
	w = csv.NewWriter(&b)
	for _, id := range order {
		w.Write([]string{id, gold[id]})
	}
	w.Flush()
	return os.WriteFile(filepath.Join(dir, "items.csv"), []byte(b.String()), 0o644)
}

// tiedMajority is the accuracy of the majority vote of rows against gold,
// an item whose top count is shared by t labels scoring 1/t when gold is
// among them (a gold item without labels scores 0).
func tiedMajority(rows [][3]string, gold map[string]string) float64 {
	counts := map[string]map[string]int{}
	for _, r := range rows {
		if counts[r[0]] == nil {
			counts[r[0]] = map[string]int{}
		}
		counts[r[0]][r[2]]++
	}
	s := 0.0
	for id, g := range gold {
		c := counts[id]
		top, nTop := 0, 0
		for _, n := range c {
			switch {
			case n > top:
				top, nTop = n, 1
			case n == top:
				nTop++
			}
		}
		if top > 0 && c[g] == top {
			s += 1 / float64(nTop)
		}
	}
	return s / float64(len(gold))
}

// describeBuild names the commit measured (git describe of the working
// tree, "-dirty" when it has changes) and the last commit that changed
// anything outside docs/ (the code under test).
func describeBuild() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=7").Output()
	if err != nil {
		return "(commit unknown)"
	}
	s := "at " + strings.TrimSpace(string(out))
	if code, err := exec.Command("git", "log", "-1", "--format=%h", "--abbrev=7", "--", ".", ":!docs").Output(); err == nil {
		s += " (code outside docs/ as at " + strings.TrimSpace(string(code)) + ")"
	}
	return s
}

func emit(cfg config, dataset, method string, o fitOutcome) {
	if cfg.tsv == nil {
		return
	}
	acc := strconv.FormatFloat(o.acc, 'f', 6, 64)
	if o.err != nil {
		acc = "FAIL"
	}
	fmt.Fprintf(cfg.tsv, "%s\t%s\t%s\t%.3f\t%.3f\n", dataset, method, acc, o.wall.Seconds(), o.cpu.Seconds())
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "crowd: %v\n", err)
	os.Exit(1)
}
