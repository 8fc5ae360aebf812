package ordinal

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"concord/multirater"
	"concord/multirater/mcmc"
	"concord/multirater/numeric"
)

// fitStride is Fit with the latent scores recorded every every-th draw,
// and the chains it summarised.
func fitStride(t *testing.T, data *Data, opts Options, every int) (*multirater.FitResult, []*ordChain) {
	t.Helper()
	opts = opts.WithDefaults()
	md, err := newOrdModel(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	md.mEvery = every
	mc := opts.Settings
	var kept []*ordChain
	res, err := mcmc.Fit(context.Background(), mc, nil, time.Now(), 0.95,
		func(c int) *ordChain { return newOrdChain(md, mc.Seed, c, mc.Samples) },
		func(chains []*ordChain) *multirater.FitResult {
			kept = chains
			return summariseOrdinal(data, md, opts, chains)
		})
	if err != nil {
		t.Fatal(err)
	}
	return res, kept
}

// TestStoredMStride checks the fit that records the latent scores of every
// 4th draw (as one of very many items does) against the same chains
// recording every draw: the rater parameters' summaries equal, the item
// scores within Monte Carlo error, and every kept joint draw in the
// document the chains' state at one draw (the precisions and the scores
// of the same sweep).
func TestStoredMStride(t *testing.T) {
	if got := mEveryFor(64000, 2000, 4); got != 16 {
		t.Errorf("mEveryFor(64000, 2000, 4) = %d, want 16 (at most %d stored)", got, maxStoredM)
	}
	if got := mEveryFor(4000, 2000, 4); got != 1 {
		t.Errorf("mEveryFor(4000, 2000, 4) = %d, want 1", got)
	}
	data := loadSirtK1(t)
	var opts Options
	opts.Settings = mcmc.Settings{Chains: 2, Samples: 400, Burnin: 200, Seed: 3}
	full, fullChains := fitStride(t, data, opts, 1)
	thin, _ := fitStride(t, data, opts, 4)
	for l, r := range full.Raters {
		if r.Precision != thin.Raters[l].Precision {
			t.Errorf("rater %s: precision %+v, every draw %+v", r.ID, thin.Raters[l].Precision, r.Precision)
		}
	}
	var notes string
	for _, s := range thin.Diagnostics.Notes {
		notes += s
	}
	if !strings.Contains(notes, "recorded every 4 draws") {
		t.Errorf("notes %q do not say the scores were recorded every 4 draws", thin.Diagnostics.Notes)
	}
	for n, it := range full.Items {
		a, b := it.Score, thin.Items[n].Score
		// 800 draws against 200 of them: the means differ by well
		// under half a posterior SD.
		if math.Abs(a.Mean-b.Mean) > 0.5*a.SD || math.Abs(a.SD-b.SD) > 0.5*a.SD {
			t.Errorf("item %s: score %.3f (sd %.3f) from every 4th draw, %.3f (%.3f) from all", it.ID, b.Mean, b.SD, a.Mean, a.SD)
		}
	}
	d := thin.Draws
	if d == nil || d.N == 0 || len(d.M) != d.N {
		t.Fatalf("no kept draws: %+v", d)
	}
	for s := range d.N {
		// Find the chain state with these precisions.
		found := false
		for _, ch := range fullChains {
			for i := range ch.drawAlpha[0] {
				same := true
				for l := range d.Alpha[s] {
					if numeric.Round7(ch.drawAlpha[l][i]) != d.Alpha[s][l] {
						same = false
						break
					}
				}
				if !same {
					continue
				}
				found = true
				if i%4 != 0 {
					t.Errorf("kept draw %d is draw %d, whose scores were not recorded", s, i)
				}
				for n := range d.M[s] {
					if want := numeric.Round7(float64(ch.drawM[n][i])); d.M[s][n] != want {
						t.Fatalf("kept draw %d (draw %d): item %d's score %v, the chain's %v", s, i, n, d.M[s][n], want)
					}
				}
			}
		}
		if !found {
			t.Errorf("kept draw %d: precisions %v are no draw of the chains", s, d.Alpha[s])
		}
	}
}
