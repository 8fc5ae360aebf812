// Command approx compares an approximate fit (the default low-rank text
// prior or FITC inducing-point prior) with the exact one (the dense prior,
// --rank -1) on the shared ladder's synthetic data (issue 35: "approximate
// vs exact at 4,000 items: consensus Spearman >= 0.99, accuracy against the
// synthetic truth within 0.01"):
//
//	go run ./docs/scripts/approx GOLD.csv APPROX.json EXACT.json
//
// GOLD.csv is the ladder's gold.csv (item_id, gold, latent: the generating
// latent value and its sign); the two fits are concord.fit/v1 documents of
// the same items. It prints the Spearman correlation of the two consensus
// scores, and for each fit the Spearman correlation with the generating
// latent values and the accuracy against gold: an item is called positive
// when its class is the positive one (class outputs) or its latent score
// is above 0 (score outputs; the comparison fixes the thresholds
// symmetric about 0, as the ladder generates them). See README.md for the
// commands and the figures.
package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"concord/multirater"
	"concord/multirater/mcmc/mcmctest"
)

type truth struct {
	gold   string
	latent float64
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: approx GOLD.csv APPROX.json EXACT.json")
		os.Exit(2)
	}
	gold, err := readGold(os.Args[1])
	if err != nil {
		fail(err)
	}
	var fits [2]*multirater.FitResult
	for k, path := range os.Args[2:] {
		if fits[k], err = readFit(path); err != nil {
			fail(err)
		}
	}
	scores, err := consensus(fits, gold)
	if err != nil {
		fail(err)
	}
	latent := make([]float64, 0, len(fits[0].Items))
	for _, it := range fits[0].Items {
		latent = append(latent, gold[it.ID].latent)
	}
	fmt.Printf("items %d; consensus Spearman approximate vs exact %.4f\n", len(latent), mcmctest.Spearman(scores[0], scores[1]))
	acc := [2]float64{}
	for k, name := range []string{"approximate", "exact"} {
		acc[k] = accuracy(fits[k], scores[k], gold)
		fmt.Printf("%-12s Spearman with the latent truth %.4f, accuracy against gold %.4f (%s)\n", name, mcmctest.Spearman(scores[k], latent), acc[k], os.Args[2+k])
	}
	fmt.Printf("accuracy difference %+.4f\n", acc[0]-acc[1])
}

// consensus returns each fit's consensus score per item, in the first
// fit's item order: the latent score's mean (Score), else the positive
// class's probability (the larger class code's).
func consensus(fits [2]*multirater.FitResult, gold map[string]truth) ([2][]float64, error) {
	var out [2][]float64
	idx := map[string]int{}
	for i, it := range fits[1].Items {
		idx[it.ID] = i
	}
	if len(fits[0].Items) != len(fits[1].Items) {
		return out, fmt.Errorf("the fits have %d and %d items", len(fits[0].Items), len(fits[1].Items))
	}
	for _, it := range fits[0].Items {
		j, ok := idx[it.ID]
		if !ok {
			return out, fmt.Errorf("item %s is in the first fit only", it.ID)
		}
		if _, ok := gold[it.ID]; !ok {
			return out, fmt.Errorf("item %s is not in the gold file", it.ID)
		}
		for k, item := range []multirater.ItemResult{it, fits[1].Items[j]} {
			v, err := score(item)
			if err != nil {
				return out, err
			}
			out[k] = append(out[k], v)
		}
	}
	return out, nil
}

func score(it multirater.ItemResult) (float64, error) {
	if it.Score != nil {
		return it.Score.Mean, nil
	}
	if p, ok := it.ClassProbs["1"]; ok {
		return p, nil
	}
	return 0, fmt.Errorf("item %s has neither a latent score nor a class probability of class 1", it.ID)
}

// accuracy is the share of fit's items (in order, with consensus scores
// s) called as gold says.
func accuracy(fit *multirater.FitResult, s []float64, gold map[string]truth) float64 {
	hit := 0
	for i, it := range fit.Items {
		call := "0"
		switch {
		case it.Class != "":
			call = it.Class
		case s[i] > 0:
			call = "1"
		}
		if call == gold[it.ID].gold {
			hit++
		}
	}
	return float64(hit) / float64(len(fit.Items))
}

func readGold(path string) (map[string]truth, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || len(rows[0]) < 3 || rows[0][0] != "item_id" || rows[0][1] != "gold" || rows[0][2] != "latent" {
		return nil, fmt.Errorf("%s: want the header item_id,gold,latent", path)
	}
	out := make(map[string]truth, len(rows)-1)
	for i, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[2], 64)
		if err != nil {
			return nil, fmt.Errorf("%s row %d: latent %q: %w", path, i+2, r[2], err)
		}
		out[r[0]] = truth{gold: r[1], latent: v}
	}
	return out, nil
}

func readFit(path string) (*multirater.FitResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res multirater.FitResult
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &res, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "approx:", err)
	os.Exit(1)
}
