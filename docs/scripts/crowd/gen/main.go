// Command gen writes the synthetic crowd test beds of the crowd benchmark
// (issue 29 item 6): seeded crowds that cover the failure modes of crowd
// consensus on real crowdsourcing data (many spammers, adversarial raters,
// 10 and 12 classes, one or two labels per item, imbalanced classes,
// repeated labels, a long tail of raters with few labels, graded relevance
// with off-by-one confusions, and a large set of 20,000 items and 100,000
// labels), in the layout of the public datasets that docs/scripts/crowd
// reads:
//
//	<out>/<bed>/ratings.csv  item_id,rater_id,label   (one row per label)
//	<out>/<bed>/items.csv    item_id,gold             (gold empty: unknown)
//	<out>/<bed>/raters.csv   rater_id,kind,accuracy,labels (the simulated truth about each rater)
//	<out>/<bed>/README.md    what the bed is and how it was made
//
// Every bed has its own generator (math/rand/v2 PCG seeded by -seed and the
// bed's name), so a bed is the same whether written alone or with the
// others, and the same on every machine:
//
//	go run ./docs/scripts/crowd/gen -out /tmp/crowdbed [-seed 1] [-beds name,name] [-list]
//
// The data are simulated, not measured: a label is drawn from its rater's
// confusion row of the item's true class. Raters are of five kinds:
//
//   - good: accuracy a drawn per rater from [AccLo, AccHi] (and per class
//     around it); a wrong label goes to the other classes by the rater's own
//     Dirichlet(1) error profile, mixed with the bed's confusable pairs;
//   - spam: every label uniform over the classes (Raykar's and Hovy's
//     "spammer");
//   - biased: a spammer with a favourite class (90% of its labels);
//   - flip: adversarial, a systematic confusion: class c is labelled as its
//     image under a fixed permutation (binary: the other class) with
//     probability FlipRate, else correctly;
//   - grader: for graded (ordinal) beds, label = round(true + bias + N(0,
//     sd^2)) clipped to the scale, so errors are mostly off by one.
//
// Hard items (share Hard) move every rater's label halfway or more towards
// a uniform draw. Raters are chosen for an item by activity weights
// 1/rank^Zipf (a long tail of raters with few labels when Zipf >= 1),
// without repeating a rater on an item, except that with probability
// Repeat a rater labels the item again (independent draws).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// kind is a simulated rater's behaviour.
type kind string

const (
	good   kind = "good"
	spam   kind = "spam"
	biased kind = "biased"
	flip   kind = "flip"
	grader kind = "grader"
)

// share is the proportion of raters of one kind.
type share struct {
	Kind  kind
	Share float64
}

// bed describes one synthetic crowd.
type bed struct {
	Name, Doc string
	Items     int
	// Classes are the label codes (in the ordinal order for Graded beds).
	Classes []string
	// Prior is the class proportions (nil: uniform).
	Prior []float64
	// KLo..KHi labels per item (distinct raters), uniform.
	KLo, KHi int
	Raters   int
	// Zipf is the exponent of the raters' activity weights (0: uniform).
	Zipf float64
	Mix  []share
	// AccLo, AccHi bound the good raters' accuracy; PerClass the sd of the
	// per-class deviation from it.
	AccLo, AccHi, PerClass float64
	// Pairs are confusable class pairs (by index): a good rater's wrong
	// label goes to the partner with probability PairWeight.
	Pairs      [][2]int
	PairWeight float64
	// FlipRate is a flip rater's probability of the permuted class.
	FlipRate float64
	// Graded: the classes are grades; graders' noise sd in [SDLo, SDHi] and
	// bias in [-Bias, Bias].
	Graded     bool
	SDLo, SDHi float64
	Bias       float64
	// Hard is the share of hard items.
	Hard float64
	// Repeat is the probability that a rater labels an item again (each
	// extra label; at most 3 per rater and item).
	Repeat float64
	// Gold is the share of items with a gold label (0 means all).
	Gold float64
	// RareMiss lowers a good rater's accuracy on every class but the most
	// common one by RareMiss, and raises it on the most common by half
	// that (raters miss the rare class).
	RareMiss float64
}

func genres() []string {
	return []string{"blues", "classical", "country", "disco", "hiphop", "jazz", "metal", "pop", "reggae", "rock"}
}

func twelve() []string {
	return []string{"animal", "building", "food", "furniture", "instrument", "landscape", "person", "plant", "sport", "text", "tool", "vehicle"}
}

// beds are the named test beds, each a failure mode of crowd consensus.
func beds() []bed {
	gm := []share{{good, 1}}
	return []bed{
		{Name: "binary_easy", Doc: "control: binary, balanced, 7 labels per item from 60 good raters of accuracy .65-.95",
			Items: 1000, Classes: []string{"0", "1"}, KLo: 7, KHi: 7, Raters: 60, Zipf: 0.5, Mix: gm,
			AccLo: 0.65, AccHi: 0.95, PerClass: 0.05, Hard: 0.1},
		{Name: "spammers_binary", Doc: "many spammers: binary, 5 labels per item, 60% of 120 raters answer uniformly at random",
			Items: 1500, Classes: []string{"0", "1"}, KLo: 5, KHi: 5, Raters: 120, Zipf: 0.8,
			Mix: []share{{good, 0.4}, {spam, 0.6}}, AccLo: 0.7, AccHi: 0.95, PerClass: 0.05, Hard: 0.1},
		{Name: "spammers_entity", Doc: "entity linking with many spammers: 6 candidates, 4-8 labels per item, 35% uniform and 10% biased spammers among 300 raters with a long tail",
			Items: 2500, Classes: []string{"c1", "c2", "c3", "c4", "c5", "nil"}, Prior: []float64{0.35, 0.2, 0.15, 0.1, 0.05, 0.15},
			KLo: 4, KHi: 8, Raters: 300, Zipf: 1.0, Mix: []share{{good, 0.55}, {spam, 0.35}, {biased, 0.1}},
			AccLo: 0.7, AccHi: 0.97, PerClass: 0.05, Hard: 0.15},
		{Name: "adversarial_binary", Doc: "adversarial raters: binary, 5 labels per item, 15% of raters flip 80% of labels, 15% spammers",
			Items: 800, Classes: []string{"0", "1"}, KLo: 5, KHi: 5, Raters: 60, Zipf: 0.6,
			Mix: []share{{good, 0.7}, {flip, 0.15}, {spam, 0.15}}, AccLo: 0.65, AccHi: 0.9, PerClass: 0.05, FlipRate: 0.8, Hard: 0.1},
		{Name: "adversarial_4class", Doc: "systematic confusions: 4 classes, 5 labels per item, 25% of raters label class c as c+1 (mod 4) 70% of the time",
			Items: 1000, Classes: []string{"0", "1", "2", "3"}, KLo: 5, KHi: 5, Raters: 80, Zipf: 0.6,
			Mix: []share{{good, 0.65}, {flip, 0.25}, {spam, 0.1}}, AccLo: 0.55, AccHi: 0.9, PerClass: 0.08, FlipRate: 0.7, Hard: 0.1},
		{Name: "genre_10class", Doc: "10 classes (music genres), 700 items, 3-5 labels per item from 44 raters of accuracy .35-.9, similar genres confused",
			Items: 700, Classes: genres(), KLo: 3, KHi: 5, Raters: 44, Zipf: 0.8,
			Mix: []share{{good, 0.9}, {spam, 0.1}}, AccLo: 0.35, AccHi: 0.9, PerClass: 0.1,
			Pairs: [][2]int{{0, 5}, {6, 9}, {3, 7}, {4, 8}, {1, 5}, {2, 9}}, PairWeight: 0.6, Hard: 0.15},
		{Name: "objects_12class", Doc: "12 classes, 1200 items, 5 labels per item from 150 raters with a long tail, 10% spammers",
			Items: 1200, Classes: twelve(), KLo: 5, KHi: 5, Raters: 150, Zipf: 1.0,
			Mix: []share{{good, 0.9}, {spam, 0.1}}, AccLo: 0.45, AccHi: 0.95, PerClass: 0.08,
			Pairs: [][2]int{{0, 7}, {1, 5}, {3, 10}, {4, 10}, {6, 8}, {2, 7}}, PairWeight: 0.5, Hard: 0.1},
		{Name: "k1_binary", Doc: "one label per item: binary, 2000 items, 100 raters (long tail), 10% spammers",
			Items: 2000, Classes: []string{"0", "1"}, KLo: 1, KHi: 1, Raters: 100, Zipf: 1.0,
			Mix: []share{{good, 0.9}, {spam, 0.1}}, AccLo: 0.6, AccHi: 0.95, PerClass: 0.05, Hard: 0.1},
		{Name: "k1_4class", Doc: "one label per item: 4 classes, 1500 items, 60 raters, 10% spammers",
			Items: 1500, Classes: []string{"a", "b", "c", "d"}, KLo: 1, KHi: 1, Raters: 60, Zipf: 0.8,
			Mix: []share{{good, 0.9}, {spam, 0.1}}, AccLo: 0.55, AccHi: 0.95, PerClass: 0.08, Hard: 0.1},
		{Name: "k2_binary", Doc: "two labels per item: binary, 2000 items, 100 raters (long tail), 10% spammers",
			Items: 2000, Classes: []string{"0", "1"}, KLo: 2, KHi: 2, Raters: 100, Zipf: 1.0,
			Mix: []share{{good, 0.9}, {spam, 0.1}}, AccLo: 0.6, AccHi: 0.95, PerClass: 0.05, Hard: 0.1},
		{Name: "k2_5class", Doc: "two labels per item: 5 classes, 1500 items, 80 raters, 15% spammers",
			Items: 1500, Classes: []string{"0", "1", "2", "3", "4"}, KLo: 2, KHi: 2, Raters: 80, Zipf: 0.8,
			Mix: []share{{good, 0.85}, {spam, 0.15}}, AccLo: 0.55, AccHi: 0.95, PerClass: 0.08, Hard: 0.1},
		{Name: "imbalanced_90_10", Doc: "imbalanced classes: binary 90/10, 5 labels per item, raters miss the rare class more often than the common one",
			Items: 2000, Classes: []string{"0", "1"}, Prior: []float64{0.9, 0.1}, KLo: 5, KHi: 5, Raters: 120, Zipf: 0.8,
			Mix: []share{{good, 0.8}, {spam, 0.1}, {biased, 0.1}}, AccLo: 0.6, AccHi: 0.95, PerClass: 0.05, RareMiss: 0.15, Hard: 0.1},
		{Name: "imbalanced_5class", Doc: "imbalanced classes: 5 classes in proportions .6/.2/.1/.07/.03, 3-5 labels per item",
			Items: 2000, Classes: []string{"none", "low", "mid", "high", "severe"}, Prior: []float64{0.6, 0.2, 0.1, 0.07, 0.03},
			KLo: 3, KHi: 5, Raters: 150, Zipf: 1.0, Mix: []share{{good, 0.85}, {spam, 0.1}, {biased, 0.05}},
			AccLo: 0.55, AccHi: 0.95, PerClass: 0.1, Hard: 0.1},
		{Name: "repeated_labels", Doc: "repeated labels: 3 sentiment classes, 600 items, 5 raters per item, a rater labels the item again with probability .4 (up to 3 times)",
			Items: 600, Classes: []string{"negative", "neutral", "positive"}, KLo: 5, KHi: 5, Raters: 50, Zipf: 0.5,
			Mix: []share{{good, 0.85}, {spam, 0.15}}, AccLo: 0.5, AccHi: 0.9, PerClass: 0.08, Pairs: [][2]int{{0, 1}, {1, 2}}, PairWeight: 0.5,
			Hard: 0.15, Repeat: 0.4},
		{Name: "long_tail", Doc: "raters with few labels: binary, 3000 items, 3 labels per item from 1500 raters, most with 1-5 labels (Zipf 1.2)",
			Items: 3000, Classes: []string{"0", "1"}, KLo: 3, KHi: 3, Raters: 1500, Zipf: 1.2,
			Mix: []share{{good, 0.8}, {spam, 0.2}}, AccLo: 0.55, AccHi: 0.95, PerClass: 0.05, Hard: 0.1},
		{Name: "easy_all_good", Doc: "easy data where every rater is good: 3 classes, 1000 items, 5 labels per item from 40 raters of accuracy .85-.98, few hard items",
			Items: 1000, Classes: []string{"a", "b", "c"}, KLo: 5, KHi: 5, Raters: 40, Zipf: 0.3, Mix: gm,
			AccLo: 0.85, AccHi: 0.98, PerClass: 0.02, Hard: 0.03},
		{Name: "platform_mix", Doc: "a crowdsourcing platform's mix: 4 classes, 3000 items, 3-5 labels per item from 2000 raters, most with a few labels (Zipf 1.1), 65% good, 20% spammers, 10% biased, 5% adversarial",
			Items: 3000, Classes: []string{"0", "1", "2", "3"}, Prior: []float64{0.4, 0.3, 0.2, 0.1}, KLo: 3, KHi: 5, Raters: 2000, Zipf: 1.1,
			Mix: []share{{good, 0.65}, {spam, 0.2}, {biased, 0.1}, {flip, 0.05}}, AccLo: 0.55, AccHi: 0.95, PerClass: 0.08, FlipRate: 0.7, Hard: 0.1},
		{Name: "graded_relevance3", Doc: "graded relevance 0-2: 4000 items, 2-4 labels per item from 400 raters with a long tail, off-by-one confusions, 10% spammers",
			Items: 4000, Classes: []string{"0", "1", "2"}, Prior: []float64{0.5, 0.3, 0.2}, KLo: 2, KHi: 4, Raters: 400, Zipf: 1.0,
			Mix: []share{{grader, 0.9}, {spam, 0.1}}, Graded: true, SDLo: 0.3, SDHi: 0.8, Bias: 0.3, Hard: 0.1},
		{Name: "graded_sentiment5", Doc: "graded sentiment 1-5: 1000 items, 10 labels per item from 100 raters, off-by-one confusions and rater bias, 10% spammers",
			Items: 1000, Classes: []string{"1", "2", "3", "4", "5"}, Prior: []float64{0.15, 0.2, 0.3, 0.2, 0.15}, KLo: 10, KHi: 10, Raters: 100, Zipf: 0.6,
			Mix: []share{{grader, 0.9}, {spam, 0.1}}, Graded: true, SDLo: 0.4, SDHi: 1.0, Bias: 0.4, Hard: 0.1},
		{Name: "large_relevance4", Doc: "large: 4 relevance grades, 20,000 items, ~100,000 labels (4-6 per item) from 800 raters with a long tail, 15% spammers, gold on 25% of the items",
			Items: 20000, Classes: []string{"0", "1", "2", "3"}, Prior: []float64{0.4, 0.3, 0.2, 0.1}, KLo: 4, KHi: 6, Raters: 800, Zipf: 1.0,
			Mix: []share{{grader, 0.8}, {spam, 0.15}, {biased, 0.05}}, Graded: true, SDLo: 0.3, SDHi: 0.9, Bias: 0.3, Hard: 0.1, Gold: 0.25},
	}
}

func main() {
	out := flag.String("out", "/tmp/crowdbed", "folder to write the beds into (one subfolder per bed)")
	seed := flag.Uint64("seed", 1, "seed of every bed's generator (with the bed's name)")
	only := flag.String("beds", "", "comma-separated bed names to write (default: all)")
	list := flag.Bool("list", false, "list the beds and exit")
	flag.Parse()
	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	all := beds()
	known := map[string]bool{}
	for _, b := range all {
		known[b.Name] = true
	}
	for n := range want {
		if !known[n] {
			fmt.Fprintf(os.Stderr, "gen: no bed %q (see -list)\n", n)
			os.Exit(2)
		}
	}
	for _, b := range all {
		if *list {
			fmt.Printf("%-20s %s\n", b.Name, b.Doc)
			continue
		}
		if len(want) > 0 && !want[b.Name] {
			continue
		}
		st, err := write(filepath.Join(*out, b.Name), b, *seed)
		if err != nil {
			fmt.Fprintf(os.Stderr, "gen: %s: %v\n", b.Name, err)
			os.Exit(1)
		}
		fmt.Printf("%-20s %6d items %7d labels %5d raters %2d classes  majority vote %.3f\n", b.Name, st.items, st.labels, st.raters, len(b.Classes), st.mv)
	}
}

// rater is one simulated rater.
type rater struct {
	id   string
	kind kind
	// conf[c] is the distribution of the label given true class c.
	conf [][]float64
	// acc is the rater's mean probability of a correct label.
	acc    float64
	n      int
	weight float64
}

type stats struct {
	items, labels, raters int
	mv                    float64
}

func newRNG(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// write generates bed b and writes its files into dir.
func write(dir string, b bed, seed uint64) (stats, error) {
	rng := newRNG(seed, b.Name)
	k := len(b.Classes)
	prior := b.Prior
	if prior == nil {
		prior = make([]float64, k)
		for c := range prior {
			prior[c] = 1 / float64(k)
		}
	}
	rs := makeRaters(rng, b)
	// Activity weights: 1/rank^Zipf over a random order of the raters, so
	// that kind and activity are independent.
	order := rng.Perm(len(rs))
	cum := make([]float64, len(rs))
	tot := 0.0
	for rank, j := range order {
		rs[j].weight = 1 / math.Pow(float64(rank+1), b.Zipf)
	}
	for j := range rs {
		tot += rs[j].weight
		cum[j] = tot
	}
	pick := func() int {
		u := rng.Float64() * tot
		return sort.SearchFloat64s(cum, u)
	}
	type row struct {
		item, rater int
		label       int
	}
	var rows []row
	truth := make([]int, b.Items)
	mvHit := 0.0
	for i := 0; i < b.Items; i++ {
		truth[i] = draw(rng, prior)
		hard := 0.0
		if rng.Float64() < b.Hard {
			hard = 0.5 + 0.4*rng.Float64()
		}
		kk := b.KLo + rng.IntN(b.KHi-b.KLo+1)
		if kk > len(rs) {
			kk = len(rs)
		}
		chosen := map[int]bool{}
		var who []int
		for len(who) < kk {
			j := pick()
			if chosen[j] {
				continue
			}
			chosen[j] = true
			who = append(who, j)
		}
		counts := make([]int, k)
		for _, j := range who {
			for rep := 0; rep < 3; rep++ {
				var l int
				if hard > 0 && rng.Float64() < hard {
					l = rng.IntN(k)
				} else {
					l = draw(rng, rs[j].conf[truth[i]])
				}
				rows = append(rows, row{i, j, l})
				rs[j].n++
				counts[l]++
				if rng.Float64() >= b.Repeat {
					break
				}
			}
		}
		// Majority vote with ties split evenly, for the summary line.
		best, nb := -1, 0
		for c, n := range counts {
			switch {
			case best < 0 || n > counts[best]:
				best, nb = c, 1
			case n == counts[best]:
				nb++
			}
		}
		if counts[truth[i]] == counts[best] {
			mvHit += 1 / float64(nb)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return stats{}, err
	}
	itemID := func(i int) string { return fmt.Sprintf("i%05d", i+1) }
	err := writeFile(filepath.Join(dir, "ratings.csv"), func(w *bufio.Writer) {
		fmt.Fprintln(w, "item_id,rater_id,label")
		for _, r := range rows {
			fmt.Fprintf(w, "%s,%s,%s\n", itemID(r.item), rs[r.rater].id, b.Classes[r.label])
		}
	})
	if err != nil {
		return stats{}, err
	}
	nGold := 0
	err = writeFile(filepath.Join(dir, "items.csv"), func(w *bufio.Writer) {
		fmt.Fprintln(w, "item_id,gold")
		for i, t := range truth {
			g := ""
			if b.Gold == 0 || rng.Float64() < b.Gold {
				g = b.Classes[t]
				nGold++
			}
			fmt.Fprintf(w, "%s,%s\n", itemID(i), g)
		}
	})
	if err != nil {
		return stats{}, err
	}
	active := 0
	err = writeFile(filepath.Join(dir, "raters.csv"), func(w *bufio.Writer) {
		fmt.Fprintln(w, "rater_id,kind,accuracy,labels")
		for _, r := range rs {
			if r.n == 0 {
				continue
			}
			active++
			fmt.Fprintf(w, "%s,%s,%.3f,%d\n", r.id, r.kind, r.acc, r.n)
		}
	})
	if err != nil {
		return stats{}, err
	}
	st := stats{items: b.Items, labels: len(rows), raters: active, mv: mvHit / float64(b.Items)}
	err = writeFile(filepath.Join(dir, "README.md"), func(w *bufio.Writer) {
		fmt.Fprintf(w, "# %s (synthetic)\n\n%s.\n\n", b.Name, b.Doc)
		fmt.Fprintf(w, "- Simulated by docs/scripts/crowd/gen (concord), seed %d: `go run ./docs/scripts/crowd/gen -out DIR -seed %d -beds %s`. Not real data.\n", seed, seed, b.Name)
		fmt.Fprintf(w, "- %d items (%d with a gold label), %d labels, %d raters who labelled, %d classes: %s.\n", st.items, nGold, st.labels, st.raters, k, strings.Join(b.Classes, ", "))
		fmt.Fprintf(w, "- Class proportions %v; labels per item %d-%d; rater activity 1/rank^%.1f; rater kinds %v; hard items %.0f%%; repeat probability %.2f.\n",
			prior, b.KLo, b.KHi, b.Zipf, b.Mix, 100*b.Hard, b.Repeat)
		fmt.Fprintf(w, "- Majority vote of all labels (ties split evenly) against the simulated truth: %.3f.\n", st.mv)
		fmt.Fprintf(w, "\n## Files\n- `ratings.csv`: item_id, rater_id, label.\n- `items.csv`: item_id, gold (the simulated true class; empty where the bed hides it).\n- `raters.csv`: rater_id, kind (good, spam, biased, flip, grader), accuracy (mean probability of a correct label over the classes, before hard items), labels.\n")
	})
	return st, err
}

// makeRaters draws the bed's raters: kinds by their shares (rounded, the
// remainder to the first kind), then each rater's confusion rows.
func makeRaters(rng *rand.Rand, b bed) []*rater {
	k := len(b.Classes)
	kinds := raterKinds(rng, b)
	partner := pairPartners(b)
	common := 0
	for c, p := range b.Prior {
		if p > b.Prior[common] {
			common = c
		}
	}
	rs := make([]*rater, len(kinds))
	for j, kd := range kinds {
		r := &rater{id: fmt.Sprintf("w%04d", j+1), kind: kd, conf: make([][]float64, k)}
		for c := range r.conf {
			r.conf[c] = make([]float64, k)
		}
		switch kd {
		case good:
			goodRows(rng, b, r.conf, partner, common)
		case spam:
			for c := range r.conf {
				for x := range r.conf[c] {
					r.conf[c][x] = 1 / float64(k)
				}
			}
		case biased:
			fav := rng.IntN(k)
			for c := range r.conf {
				for x := range r.conf[c] {
					r.conf[c][x] = 0.1 / float64(k)
				}
				r.conf[c][fav] += 0.9
			}
		case flip:
			// The permutation c -> c+1 mod K (binary: the other class).
			for c := range r.conf {
				r.conf[c][c] = 1 - b.FlipRate
				r.conf[c][(c+1)%k] += b.FlipRate
			}
		case grader:
			graderRows(rng, b, r.conf)
		}
		for c := range r.conf {
			r.acc += r.conf[c][c] / float64(k)
		}
		rs[j] = r
	}
	return rs
}

// raterKinds returns the kinds of the bed's raters, in a random order.
func raterKinds(rng *rand.Rand, b bed) []kind {
	kinds := make([]kind, 0, b.Raters)
	for x, s := range b.Mix {
		n := int(math.Round(s.Share * float64(b.Raters)))
		if x == 0 {
			n = b.Raters
			for _, o := range b.Mix[1:] {
				n -= int(math.Round(o.Share * float64(b.Raters)))
			}
		}
		for ; n > 0; n-- {
			kinds = append(kinds, s.Kind)
		}
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	return kinds
}

// pairPartners returns, for each class, the class a good rater confuses
// it with most (the bed's first pair that has it), or -1.
func pairPartners(b bed) []int {
	partner := make([]int, len(b.Classes))
	for c := range partner {
		partner[c] = -1
	}
	for _, p := range b.Pairs {
		if partner[p[0]] < 0 {
			partner[p[0]] = p[1]
		}
		if partner[p[1]] < 0 {
			partner[p[1]] = p[0]
		}
	}
	return partner
}

// goodRows fills the confusion rows of a good rater: an accuracy per
// class around the rater's (lower on the rare classes with RareMiss), the
// errors spread by a flat Dirichlet draw and drawn towards the class's
// partner.
func goodRows(rng *rand.Rand, b bed, conf [][]float64, partner []int, common int) {
	k := len(conf)
	a := b.AccLo + (b.AccHi-b.AccLo)*rng.Float64()
	for c := 0; c < k; c++ {
		ac := a + b.PerClass*rng.NormFloat64()
		if b.RareMiss > 0 {
			if c == common {
				ac += b.RareMiss / 2
			} else {
				ac -= b.RareMiss
			}
		}
		ac = clamp(ac, 1/float64(k)+0.02, 0.99)
		prof := dirichlet1(rng, k)
		prof[c] = 0
		normalize(prof)
		if p := partner[c]; p >= 0 {
			for x := range prof {
				prof[x] *= 1 - b.PairWeight
			}
			prof[p] += b.PairWeight
		}
		for x := range prof {
			conf[c][x] = (1 - ac) * prof[x]
		}
		conf[c][c] = ac
	}
}

// graderRows fills the confusion rows of a grader (ordered classes):
// P(round(c + bias + e) = x), e ~ N(0, sd^2), clipped to the scale.
func graderRows(rng *rand.Rand, b bed, conf [][]float64) {
	k := len(conf)
	sd := b.SDLo + (b.SDHi-b.SDLo)*rng.Float64()
	bias := b.Bias * (2*rng.Float64() - 1)
	for c := range conf {
		for x := 0; x < k; x++ {
			lo, hi := float64(x)-0.5, float64(x)+0.5
			if x == 0 {
				lo = math.Inf(-1)
			}
			if x == k-1 {
				hi = math.Inf(1)
			}
			m := float64(c) + bias
			conf[c][x] = phi((hi-m)/sd) - phi((lo-m)/sd)
		}
		normalize(conf[c])
	}
}

func phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func clamp(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }

// dirichlet1 is a draw from the flat Dirichlet on k classes.
func dirichlet1(rng *rand.Rand, k int) []float64 {
	p := make([]float64, k)
	for x := range p {
		p[x] = rng.ExpFloat64()
	}
	normalize(p)
	return p
}

func normalize(p []float64) {
	s := 0.0
	for _, v := range p {
		s += v
	}
	if s == 0 {
		return
	}
	for x := range p {
		p[x] /= s
	}
}

// draw is a class drawn from the distribution p.
func draw(rng *rand.Rand, p []float64) int {
	u := rng.Float64()
	for c, v := range p {
		if u < v {
			return c
		}
		u -= v
	}
	return len(p) - 1
}

func writeFile(path string, fill func(*bufio.Writer)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fill(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
