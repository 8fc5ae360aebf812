// Command ratermodels measures the confusion model's rater-model choice
// (issue 29 items 1-3): for every dataset folder (ratings.csv and
// items.csv with a gold column) it fits `--model confusion --duplicates
// keep` with defaults (rater model auto) and with each rater model forced,
// and prints the consensus accuracy (items whose consensus equals gold /
// items with gold; an item without labels counts as wrong), majority
// vote's accuracy on the same labels (ties counted as the share of the
// tied classes that are right, 1/2 for a two-way tie), crowd-kit's best
// from a crowd-kit table when one is given (dataset, method, accuracy,
// seconds; e.g. /tmp/crowdbed/crowdkit.tsv), the chosen rater model, and
// the fit's wall and CPU time.
//
// With -rte it also draws RTE (snow2008_rte under -data) subsampled to k =
// 1, 2, 3 labels per item, four seeds each (each item keeps k of its
// labels drawn without replacement by a PCG generator seeded (seed, k)),
// and checks that the default fit is at least as accurate as majority
// vote on every subsample.
//
//	go run ./docs/scripts/ratermodels -data /work/shared/data [-beds /tmp/crowdbed] [-crowdkit /tmp/crowdbed/crowdkit.tsv] [-rte] [-models auto,one-coin,confusion,communities,spammer] [-times]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"concord/analysis"
	"concord/annotations"
)

// publicEight are the datasets of issue 18 (docs/scripts/crowd).
var publicEight = []string{"snow2008_rte", "snow2008_temporal", "snow2008_wsd", "face_sentiment_4class",
	"welinder2010_duck_identification", "zhou2012_dog_breeds", "wang2012_product_matching", "ipeirotis2010_adultcontent2"}

func main() {
	data := flag.String("data", "/work/shared/data", "folder of the public datasets")
	public := flag.Bool("public", true, "run the public eight under -data")
	beds := flag.String("beds", "", "folder of synthetic test beds (each a folder with ratings.csv and items.csv)")
	ckPath := flag.String("crowdkit", "", "crowd-kit accuracy table (dataset, method, accuracy, seconds)")
	models := flag.String("models", "auto,one-coin,confusion,communities,spammer", "rater models to fit (auto is the default fit)")
	rte := flag.Bool("rte", false, "check RTE subsampled to 1, 2, 3 labels per item (4 seeds each) against majority vote")
	only := flag.String("only", "", "comma-separated dataset names to run (default: all)")
	times := flag.Bool("times", false, "print each model's CPU seconds after its accuracy")
	flag.Parse()
	ck := map[string]float64{}
	if *ckPath != "" {
		ck = readCrowdKit(*ckPath)
	}
	var dirs []string
	if *public {
		for _, n := range publicEight {
			dirs = append(dirs, filepath.Join(*data, n))
		}
	}
	if *beds != "" {
		ents, err := os.ReadDir(*beds)
		if err != nil {
			fail(err)
		}
		for _, e := range ents {
			if _, err := os.Stat(filepath.Join(*beds, e.Name(), "ratings.csv")); err == nil && e.IsDir() {
				dirs = append(dirs, filepath.Join(*beds, e.Name()))
			}
		}
	}
	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	ms := strings.Split(*models, ",")
	fmt.Printf("%-34s %6s %6s %5s %6s %6s", "dataset", "items", "labels", "K", "MV", "ck-best")
	for _, m := range ms {
		fmt.Printf(" %11s", m)
	}
	fmt.Printf("  %-12s %7s %7s\n", "chosen", "wall s", "cpu s")
	var geMV, within, geBest, withCK, n int
	for _, dir := range dirs {
		name := filepath.Base(dir)
		if len(want) > 0 && !want[name] {
			continue
		}
		ds, err := load(dir)
		if err != nil {
			fmt.Printf("%-34s load: %v\n", name, err)
			continue
		}
		row := runDataset(ds, ms, *times)
		best, ok := ck[name]
		bs := "     -"
		if ok {
			bs = fmt.Sprintf("%6.3f", best)
		}
		fmt.Printf("%-34s %6d %6d %5d %6.3f %s", name, len(ds.ItemIDs()), len(ds.Labels), ds.Scheme.K(), row.mv, bs)
		for _, a := range row.acc {
			fmt.Printf(" %11s", a)
		}
		fmt.Printf("  %-12s %7.2f %7.2f\n", row.chosen, row.wall, row.cpu)
		if row.auto < 0 {
			continue
		}
		n++
		if row.auto >= row.mv-1e-9 {
			geMV++
		}
		if ok {
			withCK++
			if row.auto >= best-0.01 {
				within++
			}
			if round3(row.auto) >= round3(best) {
				geBest++
			}
		}
	}
	fmt.Printf("\nauto: >= majority vote on %d of %d; with a crowd-kit figure: >= best on %d of %d, within 0.01 on %d of %d\n", geMV, n, geBest, withCK, within, withCK)
	if *rte {
		checkRTE(filepath.Join(*data, "snow2008_rte"))
	}
}

func round3(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }

type result struct {
	mv, auto  float64
	acc       []string
	chosen    string
	wall, cpu float64
}

// runDataset fits every rater model and returns the row.
func runDataset(ds *annotations.Dataset, models []string, times bool) result {
	r := result{mv: majority(ds), auto: -1}
	gold := goldOf(ds)
	for _, m := range models {
		m = strings.TrimSpace(m)
		spec := analysis.FitSpec{Model: analysis.ModelConfusion, Kernel: "identity", RaterModel: m}
		c0 := cpu()
		t0 := time.Now()
		res, err := analysis.Fit(context.Background(), ds, spec, nil)
		wall, cp := time.Since(t0).Seconds(), cpu()-c0
		if err != nil {
			r.acc = append(r.acc, "error")
			fmt.Fprintf(os.Stderr, "%s: %v\n", m, err)
			continue
		}
		hit := 0
		for _, it := range res.Items {
			if g, ok := gold[it.ID]; ok && it.NLabels > 0 && it.Class == g {
				hit++
			}
		}
		acc := float64(hit) / float64(len(gold))
		if times {
			r.acc = append(r.acc, fmt.Sprintf("%.3f/%.1fs", acc, cp))
		} else {
			r.acc = append(r.acc, fmt.Sprintf("%.3f", acc))
		}
		if m == "auto" {
			r.auto, r.wall, r.cpu = acc, wall, cp
			if cp := res.Model.Confusion; cp != nil {
				r.chosen = cp.RaterModel
			}
		}
	}
	return r
}

func load(dir string) (*annotations.Dataset, error) {
	ld, err := annotations.LoadFiles(filepath.Join(dir, "ratings.csv"), annotations.LoadOptions{ItemsPath: filepath.Join(dir, "items.csv"),
		ReadOptions: annotations.ReadOptions{Duplicates: annotations.DuplicatesKeep}})
	if err != nil {
		return nil, err
	}
	return ld.Dataset, nil
}

// goldOf maps item id to its gold label (scheme code).
func goldOf(ds *annotations.Dataset) map[string]string {
	gold := map[string]string{}
	for _, it := range ds.Items {
		if it.Gold != "" {
			if g, err := ds.Scheme.Normalize(it.Gold); err == nil {
				gold[it.ID] = g
			}
		}
	}
	return gold
}

// majority is majority vote's accuracy over the items with gold, every
// label counted, a tie scoring the share of the tied classes that are
// right.
func majority(ds *annotations.Dataset) float64 {
	gold := goldOf(ds)
	counts := map[string]map[string]int{}
	for _, l := range ds.Labels {
		if counts[l.Item] == nil {
			counts[l.Item] = map[string]int{}
		}
		counts[l.Item][l.Value]++
	}
	tot := 0.0
	for id, g := range gold {
		c := counts[id]
		mx, nt, right := 0, 0, false
		for v, x := range c {
			switch {
			case x > mx:
				mx, nt, right = x, 1, v == g
			case x == mx:
				nt++
				right = right || v == g
			}
		}
		if right {
			tot += 1 / float64(nt)
		}
	}
	return tot / float64(len(gold))
}

// cpu is the process's user+system CPU seconds.
func cpu() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

func readCrowdKit(path string) map[string]float64 {
	f, err := os.Open(path)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	best := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) < 3 || fs[0] == "dataset" {
			continue
		}
		a, err := strconv.ParseFloat(fs[2], 64)
		if err != nil {
			continue
		}
		if a > best[fs[0]] {
			best[fs[0]] = a
		}
	}
	return best
}

// checkRTE subsamples RTE to k labels per item and compares the default
// fit with majority vote on the same labels.
func checkRTE(dir string) {
	ds, err := load(dir)
	if err != nil {
		fail(err)
	}
	byItem := map[string][]annotations.Label{}
	var ids []string
	for _, l := range ds.Labels {
		if byItem[l.Item] == nil {
			ids = append(ids, l.Item)
		}
		byItem[l.Item] = append(byItem[l.Item], l)
	}
	sort.Strings(ids)
	fmt.Printf("\nRTE subsampled (k labels per item, default fit vs majority vote, ties 1/2)\n%-8s %6s %6s %6s %-12s %6s\n", "subset", "MV", "auto", "", "chosen", "wall s")
	ok, all := 0, 0
	for k := 1; k <= 3; k++ {
		for seed := uint64(1); seed <= 4; seed++ {
			rng := rand.New(rand.NewPCG(seed, uint64(k)))
			sub := *ds
			sub.Labels = nil
			for _, id := range ids {
				ls := append([]annotations.Label(nil), byItem[id]...)
				rng.Shuffle(len(ls), func(i, j int) { ls[i], ls[j] = ls[j], ls[i] })
				sub.Labels = append(sub.Labels, ls[:min(k, len(ls))]...)
			}
			r := runDataset(&sub, []string{"auto"}, false)
			mark := "ok"
			all++
			if r.auto >= r.mv-1e-9 {
				ok++
			} else {
				mark = "BELOW"
			}
			fmt.Printf("k%d_s%d   %6.3f %6.3f %6s %-12s %6.2f\n", k, seed, r.mv, r.auto, mark, r.chosen, r.wall)
		}
	}
	fmt.Printf("RTE subsamples: default fit >= majority vote on %d of %d\n", ok, all)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
