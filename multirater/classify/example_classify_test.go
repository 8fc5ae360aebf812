package classify_test

import (
	"context"
	"fmt"
	"log"

	"concord/multirater"
	"concord/multirater/classify"
	"concord/multirater/mcmc"
)

func ExampleFit() {
	// Four annotators label ten sentences as positive, negative or neutral
	// ("-": not labelled). a and b are careful, c often disagrees with
	// everyone, and d labelled only three sentences; s10 has no labels yet
	// and, with the identity kernel (no covariates), is predicted from the
	// prior alone.
	data := &classify.Data{
		ItemIDs:  []string{"s01", "s02", "s03", "s04", "s05", "s06", "s07", "s08", "s09", "s10"},
		RaterIDs: []string{"a", "b", "c", "d"},
		Classes:  []string{"pos", "neg", "neu"},
	}
	labels := []string{ // one column per rater: p(os), n(eg), u (neutral)
		"ppnp", "ppu-", "nnpn", "nnu-", "uup-",
		"uunu", "ppp-", "nnn-", "uun-", "----",
	}
	code := map[rune]int{'p': 0, 'n': 1, 'u': 2}
	for i, row := range labels {
		for r, c := range row {
			if c != '-' {
				data.Labels = append(data.Labels, multirater.Rating{Item: i, Rater: r, Level: code[c]})
			}
		}
	}
	res, err := classify.Fit(context.Background(), data, classify.Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 4, Samples: 2000, Seed: 1}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("converged:", res.Diagnostics.Converged)
	var mean float64
	for _, it := range res.Items[:9] {
		fmt.Printf("%s: %s (%d labels)\n", it.ID, it.Class, it.NLabels)
		mean += it.ClassProbs[it.Class] / 9
	}
	fmt.Printf("mean probability of the consensus class: %.1f\n", mean)
	s10 := res.Items[9]
	fmt.Printf("%s: %d labels, entropy %.2f bits (uniform: log2 3 = 1.58)\n", s10.ID, s10.NLabels, *s10.Entropy)
	for _, r := range res.Raters {
		fmt.Printf("rater %s: agrees with the consensus on %.0f%% of %d labels\n", r.ID, 100**r.ConsensusAgreement, r.NLabels)
	}
	least := res.Raters[0]
	for _, r := range res.Raters {
		if r.Precision.Mean < least.Precision.Mean {
			least = r
		}
	}
	fmt.Printf("least precise: rater %s (precision %.1f)\n", least.ID, least.Precision.Mean)
	// Output:
	// converged: true
	// s01: pos (4 labels)
	// s02: pos (3 labels)
	// s03: neg (4 labels)
	// s04: neg (3 labels)
	// s05: neu (3 labels)
	// s06: neu (4 labels)
	// s07: pos (3 labels)
	// s08: neg (3 labels)
	// s09: neu (3 labels)
	// mean probability of the consensus class: 0.8
	// s10: 0 labels, entropy 1.58 bits (uniform: log2 3 = 1.58)
	// rater a: agrees with the consensus on 100% of 9 labels
	// rater b: agrees with the consensus on 100% of 9 labels
	// rater c: agrees with the consensus on 22% of 9 labels
	// rater d: agrees with the consensus on 100% of 3 labels
	// least precise: rater c (precision 0.2)
}
