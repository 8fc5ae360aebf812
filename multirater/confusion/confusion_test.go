package confusion

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"concord/internal/testutil"
	"concord/multirater"
	"concord/multirater/mcmc/mcmctest"
)

func fit(t testing.TB, d *Data, o Options) *multirater.FitResult {
	t.Helper()
	res, err := Fit(context.Background(), d, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func ids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// TestVBHandChecked: a perfect rater, two raters who are right 80% of the
// time (never wrong on the same item) and a spammer who always says "a". The consensus recovers the true
// classes, the perfect rater's confusion matrix is near the identity with
// accuracy near 1, and the spammer's rows come out alike: spam score near
// 0 (its rows shrink a little towards the community's), flagged.
func TestVBHandChecked(t *testing.T) {
	const n = 60
	classes := []string{"a", "b", "c"}
	truth := make([]int, n)
	var labels []multirater.Rating
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range truth {
		truth[i] = i % 3
		labels = append(labels, multirater.Rating{Item: i, Rater: 0, Level: truth[i]})
		// good1 errs on every fifth item, good2 on others: never both.
		for r, at := range []int{1, 3} {
			y := truth[i]
			if i%5 == at {
				y = (y + 1 + rng.IntN(2)) % 3
			}
			labels = append(labels, multirater.Rating{Item: i, Rater: 1 + r, Level: y})
		}
		labels = append(labels, multirater.Rating{Item: i, Rater: 3, Level: 0})
	}
	d := &Data{ItemIDs: ids("i", n), RaterIDs: []string{"perfect", "good1", "good2", "spammer"}, Classes: classes, Labels: labels}
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"vb default", Options{}},
		{"vb pooled", Options{Hierarchy: Pooled}},
		{"vb two communities", Options{Communities: 2}},
		{"vb none", Options{Hierarchy: None}},
		{"gibbs", Options{Engine: multirater.EngineGibbs, Settings: mcmcSettings(2, 400, 100, 3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := fit(t, d, tc.o)
			for i, it := range res.Items {
				if it.Class != classes[truth[i]] {
					t.Errorf("item %d: class %s, want %s (%v)", i, it.Class, classes[truth[i]], it.ClassProbs)
				}
			}
			p, s := res.Raters[0], res.Raters[3]
			for k := range classes {
				if got := p.ConfusionProbs[k][k].Mean; got < 0.85 {
					t.Errorf("perfect rater: pi[%d,%d] = %v, want near 1", k, k, got)
				}
			}
			if p.Accuracy.Mean < 0.85 || p.Spammer {
				t.Errorf("perfect rater: accuracy %v, spammer %v", p.Accuracy.Mean, p.Spammer)
			}
			if !s.Spammer || *s.SpamScore > 0.12 {
				t.Errorf("spammer: score %v, flagged %v; want near 0 and flagged", *s.SpamScore, s.Spammer)
			}
			for k := range classes {
				if got := s.ConfusionProbs[k][0].Mean; got < 0.8 {
					t.Errorf("spammer: pi[%d,a] = %v, want near 1 (every row alike)", k, got)
				}
				e := s.ConfusionProbs[k][0]
				if !(e.Q025 <= e.Mean && e.Mean <= e.Q975) {
					t.Errorf("spammer: interval %+v does not hold the mean", e)
				}
			}
			if s.MostConfused == nil || s.MostConfused.Label != "a" {
				t.Errorf("spammer: most confused %+v, want a label a", s.MostConfused)
			}
			if tc.o.Engine == "" && (res.Diagnostics.Engine.LogEvidence == nil || !res.Diagnostics.Converged) {
				t.Errorf("vb: no ELBO or not converged: %+v", res.Diagnostics)
			}
		})
	}
}

// TestDawidSkene: with a flat prior (every Dirichlet pseudo-count 1), no
// hierarchy and EM-MAP, the fit is Dawid & Skene's maximum-likelihood EM:
// its confusion matrices, class proportions and item class probabilities
// equal those of an independent numpy implementation (testdata/ds_em.py)
// from the same start.
func TestDawidSkene(t *testing.T) {
	rows := testutil.ReadCSV(t, "testdata/ds_labels.csv")
	var labels []multirater.Rating
	n, l, k := 0, 0, 0
	for _, r := range rows[1:] {
		v := [3]int{}
		for j := range v {
			v[j], _ = strconv.Atoi(r[j])
		}
		labels = append(labels, multirater.Rating{Item: v[0], Rater: v[1], Level: v[2]})
		n, l, k = max(n, v[0]+1), max(l, v[1]+1), max(k, v[2]+1)
	}
	var want struct {
		Pi  [][][]float64
		Rho []float64
		Q   [][]float64
	}
	testutil.ReadJSON(t, "testdata/ds_expected.json", &want)
	d := &Data{ItemIDs: ids("i", n), RaterIDs: ids("r", l), Classes: ids("c", k), Labels: labels, Repeats: true}
	res := fit(t, d, Options{MAP: true, Hierarchy: None, Diagonal: 1 / float64(k), Concentration: float64(k), ClassPrior: 1, Tol: 1e-12, MaxIter: 100000})
	const tol = 2e-6 // the result rounds to 6 significant digits
	for r := range want.Pi {
		for a := range want.Pi[r] {
			for j, w := range want.Pi[r][a] {
				if got := res.Raters[r].ConfusionProbs[a][j].Mean; math.Abs(got-w) > tol {
					t.Errorf("pi[%d][%d,%d] = %v, numpy DS %v", r, a, j, got, w)
				}
			}
		}
	}
	for c, w := range want.Rho {
		if got := res.ClassProportions[c].Mean; math.Abs(got-w) > tol {
			t.Errorf("rho[%d] = %v, numpy DS %v", c, got, w)
		}
	}
	for i, qi := range want.Q {
		for c, w := range qi {
			if got := res.Items[i].ClassProbs[d.Classes[c]]; math.Abs(got-w) > tol {
				t.Errorf("q[%d][%d] = %v, numpy DS %v", i, c, got, w)
			}
		}
	}
}

// loadDuck reads the duck subset (testdata/README.md).
func loadDuck(t testing.TB) *Data {
	rows := testutil.ReadCSV(t, "testdata/duck_subset.csv")
	d := &Data{Classes: []string{"0", "1"}}
	item, rater := map[string]int{}, map[string]int{}
	idx := func(m map[string]int, ids *[]string, id string) int {
		if i, ok := m[id]; ok {
			return i
		}
		m[id] = len(*ids)
		*ids = append(*ids, id)
		return m[id]
	}
	for _, r := range rows[1:] {
		y, _ := strconv.Atoi(r[2])
		d.Labels = append(d.Labels, multirater.Rating{Item: idx(item, &d.ItemIDs, r[0]), Rater: idx(rater, &d.RaterIDs, r[1]), Level: y})
	}
	return d
}

// TestVBMatchesGibbs: on a piece of the duck data, the Gibbs sampler
// (converged) confirms the variational fit: the same consensus classes
// (up to items the posterior leaves near 1/2), class probabilities,
// confusion cells and accuracies close.
func TestVBMatchesGibbs(t *testing.T) {
	d := loadDuck(t)
	vb := fit(t, d, Options{})
	gb := fit(t, d, Options{Engine: multirater.EngineGibbs, Settings: mcmcSettings(4, 1500, 300, 11)})
	if !gb.Diagnostics.Converged {
		t.Fatalf("gibbs: %s", gb.Diagnostics.Verdict)
	}
	differ := 0
	for i := range vb.Items {
		pv, pg := vb.Items[i].ClassProbs["1"], gb.Items[i].ClassProbs["1"]
		if math.Abs(pv-pg) > 0.15 {
			t.Errorf("item %s: P(1) vb %.3f, gibbs %.3f", vb.Items[i].ID, pv, pg)
		}
		if vb.Items[i].Class != gb.Items[i].Class && math.Abs(pg-0.5) > 0.1 {
			differ++
		}
	}
	if differ > 0 {
		t.Errorf("%d items with a clear Gibbs class differ from VB's", differ)
	}
	for l := range vb.Raters {
		for a := 0; a < 2; a++ {
			for j := 0; j < 2; j++ {
				v, g := vb.Raters[l].ConfusionProbs[a][j], gb.Raters[l].ConfusionProbs[a][j]
				if math.Abs(v.Mean-g.Mean) > 0.05 {
					t.Errorf("rater %s pi[%d,%d]: vb %.3f, gibbs %.3f", vb.Raters[l].ID, a, j, v.Mean, g.Mean)
				}
			}
		}
		if v, g := vb.Raters[l].Accuracy.Mean, gb.Raters[l].Accuracy.Mean; math.Abs(v-g) > 0.04 {
			t.Errorf("rater %s accuracy: vb %.3f, gibbs %.3f", vb.Raters[l].ID, v, g)
		}
	}
}

// TestRepeatedLabels: a repeated label is refused without Repeats and is
// one more observation with it: rater x's two labels b outweigh rater y's
// one a when both are equally reliable.
func TestRepeatedLabels(t *testing.T) {
	base := []multirater.Rating{}
	// Calibration items where x and y agree.
	for i := 0; i < 10; i++ {
		base = append(base, multirater.Rating{Item: i, Rater: 0, Level: i % 2}, multirater.Rating{Item: i, Rater: 1, Level: i % 2})
	}
	labels := append(base, multirater.Rating{Item: 10, Rater: 0, Level: 1}, multirater.Rating{Item: 10, Rater: 0, Level: 1}, multirater.Rating{Item: 10, Rater: 1, Level: 0})
	d := &Data{ItemIDs: ids("i", 11), RaterIDs: []string{"x", "y"}, Classes: []string{"a", "b"}, Labels: labels}
	_, err := Fit(context.Background(), d, Options{})
	var de *multirater.DataError
	if !errors.As(err, &de) {
		t.Fatalf("repeated label without Repeats: err %v, want a DataError", err)
	}
	d.Repeats = true
	res := fit(t, d, Options{})
	if it := res.Items[10]; it.Class != "b" || it.NLabels != 3 {
		t.Errorf("item with two b's of x and one a of y: class %s, %d labels (want b, 3)", it.Class, it.NLabels)
	}
	if r := res.Raters[0]; r.NLabels != 12 || r.LevelCounts[1] != 7 {
		t.Errorf("rater x: %d labels, counts %v (want 12, [5 7])", r.NLabels, r.LevelCounts)
	}
}

// TestGoldFixesClasses: items with gold labels keep them whatever the
// raters say (Dawid-Skene with true labels).
func TestGoldFixesClasses(t *testing.T) {
	d := &Data{ItemIDs: ids("i", 3), RaterIDs: []string{"x"}, Classes: []string{"a", "b"},
		Labels: []multirater.Rating{{Item: 0, Rater: 0, Level: 0}, {Item: 1, Rater: 0, Level: 0}, {Item: 2, Rater: 0, Level: 1}},
		Gold:   []int{1, -1, -1}}
	for _, eng := range []string{multirater.EngineVB, multirater.EngineGibbs} {
		res := fit(t, d, Options{Engine: eng, Settings: mcmcSettings(2, 200, 50, 1)})
		if res.Items[0].Class != "b" || res.Items[0].ClassProbs["b"] != 1 || res.Model.Confusion.Gold != 1 {
			t.Errorf("%s: gold item %+v, gold count %d", eng, res.Items[0], res.Model.Confusion.Gold)
		}
	}
}

// TestDataErrors: the data errors name the problem.
func TestDataErrors(t *testing.T) {
	good := func() *Data {
		return &Data{ItemIDs: ids("i", 2), RaterIDs: []string{"x"}, Classes: []string{"a", "b"},
			Labels: []multirater.Rating{{Item: 0, Rater: 0, Level: 0}}}
	}
	for _, tc := range []struct {
		name string
		mod  func(*Data)
	}{
		{"one class", func(d *Data) { d.Classes = d.Classes[:1] }},
		{"no labels", func(d *Data) { d.Labels = nil }},
		{"kernel", func(d *Data) { d.Kernel = "text" }},
		{"class out of range", func(d *Data) { d.Labels[0].Level = 5 }},
		{"gold length", func(d *Data) { d.Gold = []int{0} }},
	} {
		d := good()
		tc.mod(d)
		_, err := Fit(context.Background(), d, Options{})
		var de *multirater.DataError
		if !errors.As(err, &de) {
			t.Errorf("%s: err %v, want a DataError", tc.name, err)
		}
	}
}

// TestPredictor: with the identity kernel a new item gets the class
// proportions.
func TestPredictor(t *testing.T) {
	d := loadDuck(t)
	res := fit(t, d, Options{})
	p, err := NewPredictor(res, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := p.Predict([]string{"new"}, nil, nil)
	for c, e := range res.ClassProportions {
		if got := out[0].ClassProbs[res.Levels[c]]; math.Abs(got-e.Mean) > 1e-5 {
			t.Errorf("class %s: %v, want %v", res.Levels[c], got, e.Mean)
		}
	}
}

// TestReproducible: the same seed gives the same Gibbs fit.
func TestReproducible(t *testing.T) {
	d := loadDuck(t)
	o := Options{Engine: multirater.EngineGibbs, Settings: mcmcSettings(2, 100, 20, 5)}
	a, _ := json.Marshal(fit(t, d, o).Items)
	b, _ := json.Marshal(fit(t, d, o).Items)
	if string(a) != string(b) {
		t.Error("same seed, different fits")
	}
}

// TestCommunities: 24 reliable raters (right 85% of the time), 12
// spammers who say "a" 90% of the time whatever the item, and 8 more
// spammers of the same kind with only 3 labels each. Chosen by the
// evidence lower bound, the fit finds more than one community, puts the
// reliable raters and the spammers in different ones, and the spammers
// with 3 labels borrow the spammers' confusions: flagged as spammers, with
// a lower spam score than under the pooled prior (where they borrow the
// reliable majority's).
func TestCommunities(t *testing.T) {
	const n, k = 300, 3
	rng := rand.New(rand.NewPCG(7, 8))
	truth := make([]int, n)
	for i := range truth {
		truth[i] = rng.IntN(k)
	}
	var labels []multirater.Rating
	var raters []string
	label := func(r, i int, spam bool) {
		y := truth[i]
		switch {
		case spam && rng.Float64() < 0.9:
			y = 0
		case spam:
			y = rng.IntN(k)
		case rng.Float64() > 0.85:
			y = (y + 1 + rng.IntN(k-1)) % k
		}
		labels = append(labels, multirater.Rating{Item: i, Rater: r, Level: y})
	}
	for r := 0; r < 44; r++ {
		spam := r >= 24
		per := 60
		if r >= 36 {
			per = 3
		}
		raters = append(raters, "r"+strconv.Itoa(r))
		for _, i := range rng.Perm(n)[:per] {
			label(r, i, spam)
		}
	}
	d := &Data{ItemIDs: ids("i", n), RaterIDs: raters, Classes: []string{"a", "b", "c"}, Labels: labels}
	comm := fit(t, d, Options{RaterModel: RaterCommunities})
	pooled := fit(t, d, Options{RaterModel: RaterConfusion, Hierarchy: Pooled})
	cp := comm.Model.Confusion
	if len(cp.Communities) < 2 || len(cp.Candidates) < 2 || len(cp.Candidates) > 4 {
		t.Fatalf("communities %d, candidates %+v: want more than one chosen from 2 to 4", len(cp.Communities), cp.Candidates)
	}
	if n := len(cp.Candidates); n < 4 {
		// The search stops at a count that leaves a community empty or
		// does not raise the bound by CommunityTolerance over fewer.
		last, prev := cp.Candidates[n-1], math.Inf(-1)
		for _, c := range cp.Candidates[:n-1] {
			if !c.Degenerate {
				prev = math.Max(prev, c.ELBO)
			}
		}
		if !last.Degenerate && last.ELBO > prev+CommunityTolerance {
			t.Errorf("candidates %+v: the search stopped after %d communities, which raised the bound by %.2f nats", cp.Candidates, n, last.ELBO-prev)
		}
	}
	for _, c := range cp.Candidates {
		if c.Chosen != (c.Communities == len(cp.Communities)) {
			t.Errorf("candidate %+v: chosen flag does not match %d communities", c, len(cp.Communities))
		}
	}
	good, spam := comm.Raters[0].Community, comm.Raters[24].Community
	if good == spam || good == 0 {
		t.Fatalf("reliable rater in community %d, spammer in %d: want different", good, spam)
	}
	for l, r := range comm.Raters {
		want := good
		if l >= 24 {
			want = spam
		}
		if r.Community != want {
			t.Errorf("rater %s (spammer %v, %d labels): community %d, want %d", r.ID, l >= 24, r.NLabels, r.Community, want)
		}
	}
	for l := 36; l < 44; l++ {
		c, p := comm.Raters[l], pooled.Raters[l]
		if !c.Spammer || !(*c.SpamScore < *p.SpamScore) {
			t.Errorf("sparse spammer %s: communities spam score %.3f (flagged %v), pooled %.3f: want flagged and lower", c.ID, *c.SpamScore, c.Spammer, *p.SpamScore)
		}
	}
	hits := 0
	for i, it := range comm.Items {
		if it.Class == d.Classes[truth[i]] {
			hits++
		}
	}
	if acc := float64(hits) / n; acc < 0.95 {
		t.Errorf("consensus accuracy %.3f, want at least 0.95", acc)
	}
}

// TestSplitItemUpdate: with enough labels the item update runs in two
// halves concurrently; it gives the class probabilities and counts of the
// update in one pass (to rounding), and the fit converges as before.
func TestSplitItemUpdate(t *testing.T) {
	d := benchData(4000, 300, 3, 8, 5)
	if len(d.Labels) < parallelLabels {
		t.Fatalf("%d labels: the test needs at least %d", len(d.Labels), parallelLabels)
	}
	md, err := newModel(d)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{}.WithDefaults()
	split, one := newVB(md, o, 2), newVB(md, o, 2)
	defer split.stop()
	for _, v := range []*vb{split, one} {
		v.countsFromQ()
		v.dirichlets()
	}
	for it := 0; it < 3; it++ {
		ws := split.updateQ()
		wo := one.updateItems(0, md.n, one.lq, one.counts, one.classCount)
		if math.Abs(ws-wo) > 1e-12 {
			t.Fatalf("iteration %d: largest change %v split, %v in one pass", it, ws, wo)
		}
		for i := range split.q {
			if math.Abs(split.q[i]-one.q[i]) > 1e-12 {
				t.Fatalf("iteration %d: q[%d] %v split, %v in one pass", it, i, split.q[i], one.q[i])
			}
		}
		for i := range split.counts {
			if math.Abs(split.counts[i]-one.counts[i]) > 1e-9 {
				t.Fatalf("iteration %d: counts[%d] %v split, %v in one pass", it, i, split.counts[i], one.counts[i])
			}
		}
		for _, v := range []*vb{split, one} {
			v.dirichlets()
		}
	}
	res := fit(t, d, Options{})
	if !res.Diagnostics.Converged {
		t.Errorf("not converged: %s", res.Diagnostics.Verdict)
	}
}

// TestGibbsExactPosterior: on four items, two raters (one of them labelling
// two items several times) and a fixed prior, the Gibbs sampler's class
// probabilities equal the exact posterior marginals, computed by summing
// the Dirichlet-multinomial marginal likelihood over all 2^4 class
// assignments (pi and rho integrated out in closed form), within 0.01
// (about 6 Monte Carlo standard errors at 4 x 20000 draws).
func TestGibbsExactPosterior(t *testing.T) {
	labels := []multirater.Rating{
		{Item: 0, Rater: 0, Level: 0}, {Item: 0, Rater: 1, Level: 0},
		{Item: 1, Rater: 0, Level: 1}, {Item: 1, Rater: 1, Level: 0},
		{Item: 2, Rater: 0, Level: 1}, {Item: 2, Rater: 1, Level: 1}, {Item: 2, Rater: 1, Level: 1}, {Item: 2, Rater: 1, Level: 1}, {Item: 2, Rater: 1, Level: 0},
		{Item: 3, Rater: 1, Level: 1}, {Item: 3, Rater: 1, Level: 1},
	}
	d := &Data{ItemIDs: ids("i", 4), RaterIDs: []string{"a", "b"}, Classes: []string{"x", "y"}, Labels: labels, Repeats: true}
	const diag, conc, c0 = 0.7, 4.0, 1.0
	a0 := [2][2]float64{{diag * conc, (1 - diag) * conc}, {(1 - diag) * conc, diag * conc}}
	lnB := func(a []float64) float64 { return lnB(a) }
	exact := make([]float64, 4)
	total := 0.0
	for zs := 0; zs < 16; zs++ {
		z := func(n int) int { return zs >> n & 1 }
		var cls [2]float64
		var cnt [2][2][2]float64 // rater, class, label
		for n := 0; n < 4; n++ {
			cls[z(n)]++
		}
		for _, r := range labels {
			cnt[r.Rater][z(r.Item)][r.Level]++
		}
		lp := lnB([]float64{c0 + cls[0], c0 + cls[1]}) - lnB([]float64{c0, c0})
		for l := 0; l < 2; l++ {
			for k := 0; k < 2; k++ {
				lp += lnB([]float64{a0[k][0] + cnt[l][k][0], a0[k][1] + cnt[l][k][1]}) - lnB(a0[k][:])
			}
		}
		w := math.Exp(lp)
		total += w
		for n := 0; n < 4; n++ {
			if z(n) == 1 {
				exact[n] += w
			}
		}
	}
	res := fit(t, d, Options{Engine: multirater.EngineGibbs, Hierarchy: None, Diagonal: diag, Concentration: conc, ClassPrior: c0,
		Settings: mcmcSettings(4, 20000, 1000, 3)})
	for n, it := range res.Items {
		want := exact[n] / total
		if got := it.ClassProbs["y"]; math.Abs(got-want) > 0.01 {
			t.Errorf("item %d: P(y) gibbs %.4f, exact %.4f", n, got, want)
		}
	}
}

// TestGibbsChainsApart runs a Gibbs fit's chains in parts (as worker
// processes do when a fit fans out) and checks that the summary of their
// outputs is the fit in one call, bit for bit (the note with the
// variational fit's time aside), with and without a kernel prior.
func TestGibbsChainsApart(t *testing.T) {
	d, x, _ := covData(50, 6, 3, 0.7, true, 4, 11)
	dk := *d
	dk.Cov, dk.Kernel = rbfCov(x, 2), "rbf:gamma=2"
	clean := func(res *multirater.FitResult) {
		notes := res.Diagnostics.Notes[:0]
		for _, n := range res.Diagnostics.Notes {
			if !strings.Contains(n, "variational fit's empirical Bayes") {
				notes = append(notes, n)
			}
		}
		res.Diagnostics.Notes = notes
	}
	for _, tc := range []struct {
		name  string
		data  *Data
		parts [][2]int
	}{
		{"no kernel", d, [][2]int{{0, 1}, {1, 3}}},
		{"rbf kernel", &dk, [][2]int{{2, 3}, {0, 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Engine: multirater.EngineGibbs, Settings: mcmcSettings(3, 80, 40, 5)}
			mcmctest.CheckParts(t, func(ctx context.Context) (*multirater.FitResult, error) { return Fit(ctx, tc.data, o) }, 3, tc.parts, clean)
		})
	}
}
