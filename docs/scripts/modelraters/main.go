// Command modelraters makes model raters' label files for a crowd dataset
// with gold labels (issue 32's acceptance: RTE), and with -fit scores the
// confusion model's consensus with and without them against gold.
//
// For every item of the items file (gold column) it writes one label per
// model rater, seeded (-seed):
//
//   - llm-calibrated: its probability p is uniform on [0.6, 1) (mean 0.8) and
//     its label is the gold label with probability p, else the other class:
//     accuracy about 0.80, probabilities calibrated (P(right | p) = p);
//   - llm-uncalibrated: labels as llm-calibrated's (right with probability
//     about 0.8), probabilities uniform on (0.5, 1) whatever the label;
//   - llm-random: labels uniform at random, probabilities uniform on
//     (0.5, 1): a model that knows nothing and says otherwise.
//
// Each goes to OUT/<rater>.csv as the human labels followed by the model's,
// with the columns item_id,rater_id,label,prob,is_model (prob empty and
// is_model false for the humans), ready for concord fit --labels and
// concord judge. Binary schemes only (two classes; the other class of a
// wrong label is the one that is not gold).
//
//	go run ./docs/scripts/modelraters -data cmd/concord/demodata/snow2008_rte -out /tmp/rte-models [-seed 1] [-fit]
package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// rater is one generated model rater: its id, and how it labels an item of
// gold class g given the generator (returns the label's class and prob).
type rater struct {
	id    string
	label func(r *rand.Rand, g int) (int, float64)
}

var raters = []rater{
	{"llm-calibrated", func(r *rand.Rand, g int) (int, float64) {
		p := 0.6 + 0.4*r.Float64()
		if r.Float64() < p {
			return g, p
		}
		return 1 - g, p
	}},
	{"llm-uncalibrated", func(r *rand.Rand, g int) (int, float64) {
		p := 0.6 + 0.4*r.Float64()
		y := 1 - g
		if r.Float64() < p {
			y = g
		}
		return y, 0.5 + 0.5*r.Float64()
	}},
	{"llm-random", func(r *rand.Rand, g int) (int, float64) {
		return r.IntN(2), 0.5 + 0.5*r.Float64()
	}},
}

func main() {
	data := flag.String("data", "cmd/concord/demodata/snow2008_rte", "dataset folder with ratings.csv and items.csv (gold)")
	out := flag.String("out", "", "folder for the label files (required)")
	seed := flag.Uint64("seed", 1, "seed of the model raters' labels")
	fit := flag.Bool("fit", false, "also fit the confusion model (concord fit --model confusion --seed 1) with and without each model rater and print the consensus accuracy against gold")
	flag.Parse()
	if *out == "" {
		fail(fmt.Errorf("-out is required"))
	}
	ld, err := annotations.LoadFiles(filepath.Join(*data, "ratings.csv"), annotations.LoadOptions{ItemsPath: filepath.Join(*data, "items.csv")})
	if err != nil {
		fail(err)
	}
	ds := ld.Dataset
	if ds.Scheme.K() != 2 {
		fail(fmt.Errorf("%s: %d classes; the generator makes binary model raters only", *data, ds.Scheme.K()))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	gold := map[string]string{}
	for _, it := range ds.Items {
		if it.Gold != "" {
			g, err := ds.Scheme.Normalize(it.Gold)
			if err != nil {
				fail(fmt.Errorf("gold label of item %s: %v", it.ID, err))
			}
			gold[it.ID] = g
		}
	}
	codes := ds.Scheme.Codes()
	sets := map[string]*annotations.Dataset{}
	for i, rt := range raters {
		rng := rand.New(rand.NewPCG(*seed, uint64(i+1)))
		withModel := *ds
		withModel.Labels = append([]annotations.Label(nil), ds.Labels...)
		withModel.ModelRaters = []string{rt.id}
		for _, it := range ds.Items {
			g, ok := gold[it.ID]
			if !ok {
				continue
			}
			gi, _ := ds.Scheme.Index(g)
			y, p := rt.label(rng, gi)
			withModel.Labels = append(withModel.Labels, annotations.Label{Item: it.ID, Rater: rt.id, Value: codes[y], Prob: p})
		}
		if err := write(filepath.Join(*out, rt.id+".csv"), &withModel); err != nil {
			fail(err)
		}
		sets[rt.id] = &withModel
	}
	fmt.Printf("wrote %d model raters' labels for %d gold items to %s\n", len(raters), len(gold), *out)
	if !*fit {
		return
	}
	score := func(d *annotations.Dataset) (float64, string) {
		res, err := analysis.Fit(context.Background(), d, analysis.FitSpec{Model: analysis.ModelConfusion, Seed: 1}, nil)
		if err != nil {
			fail(err)
		}
		return accuracy(res, gold), res.Model.Confusion.RaterModel
	}
	base, brm := score(ds)
	fmt.Printf("%-42s %8s  %s\n", "labels", "accuracy", "rater model")
	fmt.Printf("%-42s %8.4f  %s\n", "humans only", base, brm)
	for _, rt := range raters {
		soft, rm := score(sets[rt.id])
		hard := *sets[rt.id]
		hard.Labels = append([]annotations.Label(nil), hard.Labels...)
		for i := range hard.Labels {
			hard.Labels[i].Prob = 0
		}
		h, hrm := score(&hard)
		fmt.Printf("%-42s %8.4f  %s  (%+.4f)\n", "humans + "+rt.id, soft, rm, soft-base)
		fmt.Printf("%-42s %8.4f  %s  (%+.4f)\n", "humans + "+rt.id+", labels only", h, hrm, h-base)
	}
}

// write writes the dataset's labels as CSV with a prob and an is_model
// column.
func write(path string, ds *annotations.Dataset) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"item_id", "rater_id", "label", "prob", "is_model"})
	for _, l := range ds.Labels {
		p := ""
		if l.Prob != 0 {
			p = strconv.FormatFloat(l.Prob, 'f', 4, 64)
		}
		w.Write([]string{l.Item, l.Rater, l.Value, p, strconv.FormatBool(ds.IsModel(l.Rater))})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// accuracy is the share of the gold items whose consensus class equals
// their gold label.
func accuracy(res *multirater.FitResult, gold map[string]string) float64 {
	hit := 0
	for _, it := range res.Items {
		if g, ok := gold[it.ID]; ok && it.Class == g {
			hit++
		}
	}
	return float64(hit) / float64(len(gold))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "modelraters:", err)
	os.Exit(1)
}
