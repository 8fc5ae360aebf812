// Command next replays a crowd dataset's labels in the order concord next
// asks for them, against spreading the same number of labels evenly over
// the items (issue 32's acceptance): the labels of every item are put in a
// random order (seeded); the run starts from each item's first label, and
// each round fits the model (analysis.Fit, as concord fit does), ranks the
// items with analysis.NextItems (as concord next --json does) and adds the
// next unused label of the best -round items that still have one, until
// -budget labels; the even run takes the first budget/items labels of
// every item. Both final fits are scored against the items' gold labels
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
	orders := flag.Int("orders", 5, "random label orders (seeds 1..orders)")
	by := flag.String("by", analysis.NextByInformation, "concord next's score: information or accuracy")
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
	fmt.Printf("%6s %10s %10s %8s %8s\n", "order", "asked", "even", "diff", "seconds")
	var sumDiff float64
	for seed := 1; seed <= *orders; seed++ {
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
		asked := accuracy(fit(ds, order, used, *model), gold)
		even := map[string]int{}
		per := *budget / len(ids)
		for _, id := range ids {
			even[id] = min(per, len(order[id]))
		}
		ev := accuracy(fit(ds, order, even, *model), gold)
		sumDiff += asked - ev
		fmt.Printf("%6d %10.4f %10.4f %+8.4f %8.1f\n", seed, asked, ev, asked-ev, time.Since(t0).Seconds())
	}
	fmt.Printf("mean difference (asked - even): %+.4f\n", sumDiff/float64(*orders))
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
