// Command next replays a crowd dataset's labels in the order concord next
// asks for them, against spreading the same number of labels evenly over
// the items (issue 32's acceptance): the labels of every item are put in a
// random order (seeded); the run starts from each item's first label, and
// each round fits the model (analysis.Fit, as concord fit does), ranks the
// items with analysis.NextItems (as concord next --json does) and adds the
// next unused label of the best -round items that still have one, until
// -budget labels; the even run takes the first budget/items labels of
// every item. -trace prints every round's fit, -dump writes the final
// label sets. Both final fits are scored against the items' gold labels
// (accuracy: items whose consensus equals gold / items with gold).
//
//	go run ./docs/scripts/next -data ../shared/data/snow2008_rte [-model confusion] [-round 100] [-budget 2400] [-orders 5] [-by information]
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

func main() {
	data := flag.String("data", "../shared/data/snow2008_rte", "dataset folder with ratings.csv and items.csv (gold)")
	model := flag.String("model", analysis.ModelConfusion, "model to fit")
	round := flag.Int("round", 100, "labels added per round")
	budget := flag.Int("budget", 2400, "labels in all")
	orders := flag.Int("orders", 5, "random label orders (seeds from..orders)")
	from := flag.Int("from", 1, "first label order (seed)")
	by := flag.String("by", analysis.NextByInformation, "concord next's score: information or accuracy")
	trace := flag.Bool("trace", false, "print every round's fit: its accuracy, majority vote's, the rater model chosen and the class proportions")
	dump := flag.String("dump", "", "folder to write each order's final label sets to (asked-<order>.csv, even-<order>.csv)")
	flag.Parse()
	ld, err := annotations.LoadFiles(filepath.Join(*data, "ratings.csv"), annotations.LoadOptions{ItemsPath: filepath.Join(*data, "items.csv"),
		ReadOptions: annotations.ReadOptions{Duplicates: annotations.DuplicatesKeep}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ds := ld.Dataset
	gold := map[string]string{}
	for _, it := range ds.Items {
		if it.Gold != "" {
			if g, err := ds.Scheme.Normalize(it.Gold); err == nil {
				gold[it.ID] = g
			}
		}
	}
	byItem := map[string][]annotations.Label{}
	ids := ds.ItemIDs()
	for _, l := range ds.Labels {
		byItem[l.Item] = append(byItem[l.Item], l)
	}
	fmt.Printf("%s: %d items, %d labels, %d gold; model %s, %d labels per round up to %d, score %s\n", *data, len(ids), len(ds.Labels), len(gold), *model, *round, *budget, *by)
	fmt.Printf("%6s %10s %10s %8s %8s   %s\n", "order", "asked", "even", "diff", "seconds", "rater models (asked, even; /communities), majority vote's accuracy (asked, even)")
	var sumDiff float64
	for seed := *from; seed <= *orders; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 0x6e657874))
		order := map[string][]annotations.Label{}
		for _, id := range ids {
			ls := append([]annotations.Label(nil), byItem[id]...)
			rng.Shuffle(len(ls), func(i, j int) { ls[i], ls[j] = ls[j], ls[i] })
			order[id] = ls
		}
		t0 := time.Now()
		used := map[string]int{}
		for _, id := range ids {
			if len(order[id]) > 0 {
				used[id] = 1
			}
		}
		total := func() int {
			n := 0
			for _, u := range used {
				n += u
			}
			return n
		}
		for total() < *budget {
			res := fit(ds, order, used, *model)
			if *trace {
				fmt.Printf("  %d labels: accuracy %.4f mv %.4f %s %v\n", total(), accuracy(res, gold), majority(order, used, gold), raterModel(res), res.ClassProportions)
			}
			next, err := analysis.NextItems(res, analysis.NextOptions{N: -1, By: *by})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			added := 0
			for _, it := range next.Items {
				if added == *round || total() >= *budget {
					break
				}
				if used[it.ID] < len(order[it.ID]) {
					used[it.ID]++
					added++
				}
			}
			if added == 0 {
				break
			}
		}
		ra := fit(ds, order, used, *model)
		asked := accuracy(ra, gold)
		even := map[string]int{}
		per := *budget / len(ids)
		for _, id := range ids {
			even[id] = min(per, len(order[id]))
		}
		re := fit(ds, order, even, *model)
		if *dump != "" {
			write(filepath.Join(*dump, fmt.Sprintf("asked-%d.csv", seed)), ds, order, used)
			write(filepath.Join(*dump, fmt.Sprintf("even-%d.csv", seed)), ds, order, even)
		}
		ev := accuracy(re, gold)
		sumDiff += asked - ev
		fmt.Printf("%6d %10.4f %10.4f %+8.4f %8.1f   %s %s mv %.4f %.4f\n", seed, asked, ev, asked-ev, time.Since(t0).Seconds(), raterModel(ra), raterModel(re), majority(order, used, gold), majority(order, even, gold))
	}
	fmt.Printf("mean difference (asked - even): %+.4f\n", sumDiff/float64(*orders-*from+1))
}

// fit fits the model to the first used[id] labels of each item in order.
func fit(ds *annotations.Dataset, order map[string][]annotations.Label, used map[string]int, model string) *multirater.FitResult {
	sub := &annotations.Dataset{Scheme: ds.Scheme, Items: ds.Items}
	for _, id := range ds.ItemIDs() {
		sub.Labels = append(sub.Labels, order[id][:used[id]]...)
	}
	res, err := analysis.Fit(context.Background(), sub, analysis.FitSpec{Model: model, Kernel: "identity", Seed: 1}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return res
}

// accuracy is the share of the gold items whose consensus class equals
// gold.
func accuracy(res *multirater.FitResult, gold map[string]string) float64 {
	hit := 0
	for _, it := range res.Items {
		c := it.Class
		if c == "" {
			c = it.Grade
		}
		if g, ok := gold[it.ID]; ok && c == g {
			hit++
		}
	}
	return float64(hit) / float64(len(gold))
}

// raterModel is the confusion model's rater model and its number of
// communities.
func raterModel(res *multirater.FitResult) string {
	if res.Model.Confusion == nil {
		return ""
	}
	return fmt.Sprintf("%s/%d", res.Model.Confusion.RaterModel, len(res.Model.Confusion.Communities))
}

// majority is the majority vote's accuracy over the gold items on the
// first used[id] labels of each (a tie counts one half).
func majority(order map[string][]annotations.Label, used map[string]int, gold map[string]string) float64 {
	hit := 0.0
	for id, g := range gold {
		n, m := 0, 0
		for _, l := range order[id][:used[id]] {
			n++
			if l.Value == g {
				m++
			}
		}
		switch {
		case 2*m > n:
			hit++
		case 2*m == n:
			hit += 0.5
		}
	}
	return hit / float64(len(gold))
}

// write writes the first used[id] labels of each item in order as a
// concord label file (item_id,rater_id,label).
func write(path string, ds *annotations.Dataset, order map[string][]annotations.Label, used map[string]int) {
	var b strings.Builder
	b.WriteString("item_id,rater_id,label\n")
	for _, id := range ds.ItemIDs() {
		for _, l := range order[id][:used[id]] {
			fmt.Fprintf(&b, "%s,%s,%s\n", l.Item, l.Rater, l.Value)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
