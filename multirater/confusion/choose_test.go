package confusion

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"concord/internal/testutil"
	"concord/multirater"
)

// loadRTE reads testdata/rte_subset.csv: the 800 RTE items, 10 labels each,
// with their gold classes.
func loadRTE(t testing.TB) (items []string, byItem map[string][][2]string, gold map[string]string) {
	t.Helper()
	rows := testutil.ReadCSV(t, "testdata/rte_subset.csv")
	byItem, gold = map[string][][2]string{}, map[string]string{}
	for _, r := range rows[1:] {
		if _, ok := byItem[r[0]]; !ok {
			items = append(items, r[0])
		}
		byItem[r[0]] = append(byItem[r[0]], [2]string{r[1], r[2]})
		gold[r[0]] = r[3]
	}
	return items, byItem, gold
}

// subsample keeps k labels of every item, drawn without replacement.
func subsample(items []string, byItem map[string][][2]string, k int, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, uint64(k)))
	d := &Data{ItemIDs: items, Classes: []string{"0", "1"}}
	raterIx := map[string]int{}
	for i, id := range items {
		ls := append([][2]string(nil), byItem[id]...)
		rng.Shuffle(len(ls), func(a, b int) { ls[a], ls[b] = ls[b], ls[a] })
		for _, l := range ls[:k] {
			r := testutil.IndexOf(raterIx, &d.RaterIDs, l[0])
			y := 0
			if l[1] == "1" {
				y = 1
			}
			d.Labels = append(d.Labels, multirater.Rating{Item: i, Rater: r, Level: y})
		}
	}
	return d
}

// TestSparseLabels: RTE (testdata/rte_subset.csv) subsampled to k = 1, 2, 3
// labels per item, two seeds each (one with -short), default options: the
// consensus is at least as accurate as majority vote on the same labels
// (ties counted 1/2); at k = 1 it is the raw label on at least 99% of the
// items. Before the sparse-label class prior and the rater-model choice the
// fit at k = 1 made every item class "1" (accuracy .500, the raw labels
// .72-.74; issue 29). Measured here: k = 1 .709 and .731 (majority vote the
// same), k = 2 .744 and .805 against .723 and .733, k = 3 .860 and .844
// against .804 and .811.
func TestSparseLabels(t *testing.T) {
	items, byItem, gold := loadRTE(t)
	truth := make([]int, len(items))
	for i, id := range items {
		if gold[id] == "1" {
			truth[i] = 1
		}
	}
	seeds := []uint64{1, 2}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, k := range []int{1, 2, 3} {
		for _, seed := range seeds {
			d := subsample(items, byItem, k, seed)
			res := fit(t, d, Options{})
			acc, mv := consensusAccuracy(res, d, truth), majorityAccuracy(d, truth)
			t.Logf("k %d seed %d: accuracy %.3f, majority vote %.3f, rater model %s", k, seed, acc, mv, res.Model.Confusion.RaterModel)
			if acc < mv-1e-9 {
				t.Errorf("k %d seed %d: accuracy %.3f below majority vote %.3f", k, seed, acc, mv)
			}
			if k == 1 {
				same := 0
				for _, l := range d.Labels {
					if res.Items[l.Item].Class == d.Classes[l.Level] {
						same++
					}
				}
				if share := float64(same) / float64(len(d.Labels)); share < 0.99 {
					t.Errorf("k 1 seed %d: the consensus is the raw label on %.3f of the items, want >= 0.99", seed, share)
				}
			}
		}
	}
}

// TestRaterModelChoice: synthetic crowds (synth_test.go) fitted with the
// default rater model auto: no failure, every candidate scored, the
// chosen one marked, accuracy at least majority vote's (less the slack
// of the two known losses), and the model the evidence should favour chosen
// where the crowd makes it plain: one-coin for symmetric good raters with
// few labels each (a long tail of 1,500 raters), a full confusion
// model for raters who confuse one class with the next.
func TestRaterModelChoice(t *testing.T) {
	if testing.Short() {
		t.Skip("seconds")
	}
	for _, c := range []struct {
		name  string
		cr    crowd
		want  []string // acceptable choices ("": any)
		slack float64
	}{
		{"spammers", crowd{N: 1000, L: 100, K: 2, PerItem: 5, Acc: 0.75, Spam: 0.4, Seed: 11}, nil, 0},
		{"constant spammers", crowd{N: 1000, L: 100, K: 3, PerItem: 5, Acc: 0.75, Spam: 0.3, Constant: true, Seed: 12}, nil, 0},
		{"adversaries", crowd{N: 1000, L: 60, K: 2, PerItem: 5, Acc: 0.8, Adversary: 0.15, Seed: 13}, nil, 0},
		{"imbalanced", crowd{N: 1000, L: 60, K: 4, PerItem: 4, Acc: 0.7, Spam: 0.1, Shares: []float64{0.7, 0.2, 0.07, 0.03}, Seed: 14}, nil, 0},
		{"one label per item", crowd{N: 800, L: 164, K: 2, PerItem: 1, Acc: 0.75, Spam: 0.1, Seed: 4}, nil, 0},
		// Known losses (slack): raters alike (every good rater right 75% of
		// the time) with few labels each, where per-rater accuracies
		// learnt from 1-5 labels add noise that a vote of equals does not
		// have: .708 against .722 here, and .853 against .871 in the long
		// tail below. Learning the prior's strength too (how alike the
		// raters are) would remove it, but was measured to hold
		// heterogeneous crowds at majority vote (coin.go).
		{"two labels per item", crowd{N: 800, L: 164, K: 2, PerItem: 2, Acc: 0.75, Spam: 0.1, Seed: 4}, nil, 0.02},
		{"repeats", crowd{N: 500, L: 30, K: 3, PerItem: 3, Acc: 0.7, Spam: 0.2, Repeat: 0.3, Seed: 15}, nil, 0},
		{"10 classes", crowd{N: 700, L: 44, K: 10, PerItem: 4, Acc: 0.7, Spam: 0.2, Seed: 1}, nil, 0},
		{"long tail", crowd{N: 1500, L: 1500, K: 2, PerItem: 3, Acc: 0.75, Seed: 16}, []string{"one-coin"}, 0.02},
		{"long tail with spammers", crowd{N: 1500, L: 1500, K: 2, PerItem: 3, Acc: 0.8, Spam: 0.3, Seed: 17}, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, truth := c.cr.make()
			res, err := Fit(context.Background(), d, Options{})
			if err != nil {
				t.Fatal(err)
			}
			cp := res.Model.Confusion
			var got []string
			chosen := 0
			for _, cd := range cp.RaterModelCandidates {
				got = append(got, cd.Model)
				if cd.Chosen {
					chosen++
				}
				if cd.Failed != "" {
					t.Errorf("candidate %s failed: %s", cd.Model, cd.Failed)
				}
			}
			sort.Strings(got)
			if strings.Join(got, ",") != "communities,one-coin,spammer,subtypes" || chosen != 1 {
				t.Errorf("candidates %v, %d chosen; want communities, one-coin, spammer and subtypes, one chosen", got, chosen)
			}
			if cp.RaterModelChoice == "" || !strings.Contains(strings.Join(res.Diagnostics.Notes, "\n"), cp.RaterModelChoice) {
				t.Errorf("the choice is not explained in the notes: %q", cp.RaterModelChoice)
			}
			acc, mv := consensusAccuracy(res, d, truth), majorityAccuracy(d, truth)
			t.Logf("%s: accuracy %.3f, majority vote %.3f; %s", cp.RaterModel, acc, mv, cp.RaterModelChoice)
			if acc < mv-c.slack-1e-9 {
				t.Errorf("accuracy %.3f below majority vote %.3f", acc, mv)
			}
			if len(c.want) > 0 && !contains(c.want, cp.RaterModel) {
				t.Errorf("rater model %s chosen, want one of %v", cp.RaterModel, c.want)
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestRaterModelForced: each rater model given in the options is the one
// fitted, reported without candidates; one-coin's and spammer's cells are
// rows of probabilities.
func TestRaterModelForced(t *testing.T) {
	d, _ := crowd{N: 300, L: 30, K: 3, PerItem: 4, Acc: 0.75, Spam: 0.2, Seed: 21}.make()
	for _, rm := range []RaterModel{RaterOneCoin, RaterConfusion, RaterCommunities, RaterSpammer, RaterSubtypes} {
		res := fit(t, d, Options{RaterModel: rm})
		cp := res.Model.Confusion
		want := rm.String()
		if rm == RaterCommunities && len(cp.Communities) == 0 {
			want = "confusion" // one community chosen: the pooled model
		}
		if cp.RaterModel != want || len(cp.RaterModelCandidates) != 0 {
			t.Errorf("%s: rater model %q with %d candidates", rm, cp.RaterModel, len(cp.RaterModelCandidates))
		}
		for _, r := range res.Raters {
			for _, row := range r.ConfusionProbs {
				s := 0.0
				for _, e := range row {
					s += e.Mean
				}
				if s < 0.999 || s > 1.001 {
					t.Fatalf("%s: rater %s row sums to %v", rm, r.ID, s)
				}
			}
		}
	}
	for _, s := range []string{"auto", "one-coin", "confusion", "communities", "spammer", "subtypes"} {
		if r, err := ParseRaterModel(s); err != nil || r.String() != s {
			t.Errorf("ParseRaterModel(%q) = %v, %v", s, r, err)
		}
	}
	if _, err := ParseRaterModel("two-coin"); err == nil {
		t.Error("ParseRaterModel(two-coin): no error")
	}
}

// TestChosenRunsToTolerance: the candidates are compared at looser
// tolerances (candidateOptions), and the chosen one then runs on to the
// options' tolerances: the default fit is converged at Options.Tol, its
// chosen candidate's iterations are the fit's, and its classes and bound
// are those of the chosen rater model fitted alone (to 0.5 nats and one
// item in 200: the two runs stop at the same tolerance from different
// points).
func TestChosenRunsToTolerance(t *testing.T) {
	for _, c := range []crowd{
		{N: 600, L: 40, K: 2, PerItem: 5, Acc: 0.75, Spam: 0.4, Seed: 3},
		{N: 500, L: 50, K: 4, PerItem: 4, Acc: 0.7, Spam: 0.2, Adversary: 0.2, Seed: 4},
		{N: 400, L: 30, K: 3, PerItem: 3, Acc: 0.8, Spam: 0.1, Seed: 8},
	} {
		d, _ := c.make()
		res := fit(t, d, Options{})
		var chosen multirater.RaterModelCandidate
		for _, cd := range res.Model.Confusion.RaterModelCandidates {
			if cd.Chosen {
				chosen = cd
			}
		}
		if !res.Diagnostics.Converged || !chosen.Converged || chosen.Iterations != res.Diagnostics.Engine.Iterations ||
			!strings.Contains(res.Diagnostics.Verdict, "1e-06") {
			t.Errorf("seed %d: chosen %+v, iterations %d, verdict %q: want converged at 1e-06 with the chosen candidate's iterations",
				c.Seed, chosen, res.Diagnostics.Engine.Iterations, res.Diagnostics.Verdict)
		}
		rm, err := ParseRaterModel(chosen.Model)
		if err != nil {
			t.Fatal(err)
		}
		alone := fit(t, d, Options{RaterModel: rm})
		if e, a := *res.Diagnostics.LogEvidence, *alone.Diagnostics.LogEvidence; math.Abs(e-a) > 0.5 {
			t.Errorf("seed %d, %s: bound %.3f, fitted alone %.3f", c.Seed, rm, e, a)
		}
		diff := 0
		for i := range res.Items {
			if res.Items[i].Class != alone.Items[i].Class {
				diff++
			}
		}
		if diff*200 > len(res.Items) {
			t.Errorf("seed %d, %s: %d of %d items' classes differ from the model fitted alone", c.Seed, rm, diff, len(res.Items))
		}
	}
}
