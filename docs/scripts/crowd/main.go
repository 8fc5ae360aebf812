// Command crowd compares concord's confusion model with crowd-kit's
// aggregators on the eight crowdsourcing datasets of issue 18: for every
// dataset it fits the labels as a new user would (`concord fit --labels
// ratings.csv --duplicates keep --model confusion`, default settings) with
// each engine, and prints the consensus accuracy against the gold labels of
// items.csv (labelled items with a gold label) and the run time, next to
// the best of crowd-kit's MV, DS, one-coin DS, GLAD, Wawa and ZBS measured
// on the same files.
//
//	go run ./docs/scripts/crowd -data /work/shared/data [-engines vb,gibbs] [-classification]
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
)

// crowdKit is the best accuracy of crowd-kit's MV, DS, one-coin DS, GLAD,
// Wawa and ZBS on each dataset (issue 18).
var datasets = []struct {
	name     string
	crowdKit float64
}{
	{"snow2008_rte", 0.927},
	{"snow2008_temporal", 0.944},
	{"snow2008_wsd", 0.994},
	{"face_sentiment_4class", 0.640},
	{"welinder2010_duck_identification", 0.889},
	{"zhou2012_dog_breeds", 0.843},
	{"wang2012_product_matching", 0.940},
	{"ipeirotis2010_adultcontent2", 0.766},
}

func main() {
	data := flag.String("data", "/work/shared/data", "folder of the datasets")
	engines := flag.String("engines", "vb,gibbs", "engines of the confusion model to run")
	classification := flag.Bool("classification", false, "also fit the classification model (Gibbs; minutes)")
	hierarchy := flag.String("hierarchy", "", "confusion: prior hierarchy (default: the model's)")
	concentration := flag.Float64("concentration", 0, "confusion: fixed concentration (default: learnt)")
	flag.Parse()
	type run struct{ model, engine string }
	var runs []run
	for _, e := range strings.Split(*engines, ",") {
		if e = strings.TrimSpace(e); e != "" {
			runs = append(runs, run{analysis.ModelConfusion, e})
		}
	}
	if *classification {
		runs = append(runs, run{analysis.ModelClassification, multirater.EngineGibbs})
	}
	fmt.Printf("%-34s %6s %6s %6s %5s %9s", "dataset", "items", "raters", "labels", "gold", "crowd-kit")
	for _, r := range runs {
		fmt.Printf(" %22s", r.model+"/"+r.engine)
	}
	fmt.Printf("\n")
	wins := make([]int, len(runs))
	for _, d := range datasets {
		dir := filepath.Join(*data, d.name)
		t0 := time.Now()
		ld, err := annotations.LoadFiles(filepath.Join(dir, "ratings.csv"), annotations.LoadOptions{ItemsPath: filepath.Join(dir, "items.csv"),
			ReadOptions: annotations.ReadOptions{Duplicates: annotations.DuplicatesKeep}})
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", d.name, err)
			os.Exit(1)
		}
		load := time.Since(t0)
		ds := ld.Dataset
		gold := map[string]string{}
		for _, it := range ds.Items {
			if it.Gold != "" {
				if g, err := ds.Scheme.Normalize(it.Gold); err == nil {
					gold[it.ID] = g
				}
			}
		}
		var cells []string
		nGold := 0
		for i, r := range runs {
			spec := analysis.FitSpec{Model: r.model, Engine: r.engine, Kernel: "identity"}
			if r.model == analysis.ModelConfusion {
				spec.Hierarchy, spec.Concentration = *hierarchy, *concentration
			}
			t1 := time.Now()
			res, err := analysis.Fit(context.Background(), ds, spec, nil)
			if err != nil {
				fmt.Fprintf(os.Stderr, "\n%s %s/%s: %v\n", d.name, r.model, r.engine, err)
				os.Exit(1)
			}
			secs := time.Since(t1) + load
			hit, n := 0, 0
			for _, it := range res.Items {
				if g, ok := gold[it.ID]; ok && it.NLabels > 0 {
					n++
					if it.Class == g {
						hit++
					}
				}
			}
			nGold = n
			acc := float64(hit) / float64(n)
			mark := " "
			// crowd-kit's figures have three decimals: compare at three.
			if math.Round(acc*1000) >= math.Round(d.crowdKit*1000) {
				mark = "*"
				wins[i]++
			}
			extra := ""
			if r.engine == multirater.EngineGibbs {
				extra = fmt.Sprintf(" R%.3f", res.Diagnostics.MaxRhat)
			}
			cells = append(cells, fmt.Sprintf(" %22s", fmt.Sprintf("%.3f%s %5.2fs%s", acc, mark, secs.Seconds(), extra)))
		}
		fmt.Printf("%-34s %6d %6d %6d %5d %9.3f%s\n", d.name, len(ds.ItemIDs()), len(ds.RaterIDs()), len(ds.Labels), nGold, d.crowdKit, strings.Join(cells, ""))
	}
	fmt.Printf("\n* at least crowd-kit's best (to its three decimals); times are load + fit; R = max split R-hat (gibbs)\n")
	for i, r := range runs {
		fmt.Printf("%s/%s: at least crowd-kit's best on %d of %d\n", r.model, r.engine, wins[i], len(datasets))
	}
}
