package classify

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"concord/internal/testutil"
	"concord/multirater"
	"concord/multirater/kernel"
	"concord/multirater/mcmc"
	"concord/multirater/mcmc/mcmctest"
)

// classFit runs FitClassification and fails the test on error.
func classFit(t *testing.T, d *Data, opts Options) *multirater.FitResult {
	t.Helper()
	res, err := Fit(context.Background(), d, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func raterByID(res *multirater.FitResult, id string) *multirater.RaterResult {
	for i := range res.Raters {
		if res.Raters[i].ID == id {
			return &res.Raters[i]
		}
	}
	return nil
}

// TestClassToyPaper reproduces the classification toy of Rogers et al.
// sec. 3.2 (fig. 6) on 20 random data sets: three Gaussian classes of 30
// points, expert 1 gives the true labels, experts 2 and 3 the true label
// with probability 0.5 and otherwise a random one; kernel.RBF kernel, gamma = 1;
// v = lambda = 1. In every data set the inferred precision of expert 1 must
// exceed both others', and the held-out predictive log likelihood (a fresh
// test set of 30 points per class with their true classes, the consensus
// predictive distribution of eq. 18) with inferred precisions must beat
// precisions fixed at 1 (appendix B, the paper's "All Fixed") in most data
// sets. (The paper reports medians -65 inferred and -73 fixed on its test
// sets; here they are logged.)
func TestClassToyPaper(t *testing.T) {
	const datasets = 20
	mc := mcmc.Settings{Chains: 2, Samples: 1000, Burnin: 500, Seed: 3}
	keep := 200
	if testing.Short() {
		mc.Samples, mc.Burnin, keep = 300, 200, 50
	}
	var llInf, llFix, llFull []float64
	wins, winsFull := 0, 0
	for s := 1; s <= datasets; s++ {
		toy := newClassToy(uint64(s))
		inf := classFit(t, toy.data, Options{Common: mcmc.Common{Settings: mc, KeepDraws: keep}})
		a1 := inf.Raters[0].Precision.Mean
		a2 := inf.Raters[1].Precision.Mean
		a3 := inf.Raters[2].Precision.Mean
		if !(a1 > a2 && a1 > a3) {
			t.Errorf("data set %d: expert 1's precision %.3f does not exceed the noisy experts' %.3f and %.3f", s, a1, a2, a3)
		}
		fix := classFit(t, toy.data, Options{Common: mcmc.Common{Settings: mc, KeepDraws: keep}, Precisions: FixedPrecisions})
		li, err := toy.heldOutLogLik(inf)
		if err != nil {
			t.Fatal(err)
		}
		lf, err := toy.heldOutLogLik(fix)
		if err != nil {
			t.Fatal(err)
		}
		llInf = append(llInf, li)
		llFix = append(llFix, lf)
		if li > lf {
			wins++
		}
		msg := fmt.Sprintf("data set %2d: alpha %.2f %.2f %.2f; held-out log lik inferred %.1f, fixed %.1f", s, a1, a2, a3, li, lf)
		if !testing.Short() {
			full := classFit(t, toy.data, Options{Common: mcmc.Common{Settings: mc, KeepDraws: keep}, Precisions: FixedFullPrecisions})
			lff, err := toy.heldOutLogLik(full)
			if err != nil {
				t.Fatal(err)
			}
			llFull = append(llFull, lff)
			if li > lff {
				winsFull++
			}
			msg += fmt.Sprintf(", fixed-full %.1f", lff)
		}
		t.Log(msg)
	}
	med := func(x []float64) float64 {
		y := slices.Clone(x)
		sort.Float64s(y)
		return stat.Quantile(0.5, stat.Empirical, y, nil)
	}
	t.Logf("held-out log likelihood medians: inferred %.1f, fixed (appendix B) %.1f; inferred wins in %d of %d data sets", med(llInf), med(llFix), wins, datasets)
	if len(llFull) > 0 {
		t.Logf("fixed-full median %.1f; inferred wins in %d of %d", med(llFull), winsFull, datasets)
	}
	if 2*wins <= datasets {
		t.Errorf("inferred precisions beat fixed ones in only %d of %d data sets", wins, datasets)
	}
}

// TestClassBinary fits two classes with raters of known reliability: the
// consensus recovers the truth and the precisions order the raters by
// reliability.
func TestClassBinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 150
	acc := []float64{0.95, 0.85, 0.7, 0.55}
	d := &Data{Classes: []string{"no", "yes"}}
	for l := range acc {
		d.RaterIDs = append(d.RaterIDs, fmt.Sprint("r", l))
	}
	truth := make([]int, n)
	for i := range truth {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprint("i", i))
		truth[i] = rng.IntN(2)
		for l, a := range acc {
			lab := truth[i]
			if rng.Float64() > a {
				lab = 1 - lab
			}
			d.Labels = append(d.Labels, multirater.Rating{Item: i, Rater: l, Level: lab})
		}
	}
	res := classFit(t, d, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 1000, Burnin: 500, Seed: 1}}})
	hits := 0
	for i, it := range res.Items {
		if it.Class == d.Classes[truth[i]] {
			hits++
		}
		if s := it.ClassProbs["no"] + it.ClassProbs["yes"]; math.Abs(s-1) > 1e-5 {
			t.Errorf("item %s: class probabilities sum to %v", it.ID, s)
		}
	}
	if hits < n*93/100 {
		t.Errorf("consensus matches the truth on %d of %d items", hits, n)
	}
	for l := 1; l < len(acc); l++ {
		if !(res.Raters[l-1].Precision.Mean > res.Raters[l].Precision.Mean) {
			t.Errorf("precision of r%d (%.3f) not above r%d (%.3f)", l-1, res.Raters[l-1].Precision.Mean, l, res.Raters[l].Precision.Mean)
		}
	}
	if !res.Diagnostics.Converged {
		t.Errorf("not converged: %s", res.Diagnostics.Verdict)
	}
	// Agreement and confusion tables are consistent with the labels.
	for l, r := range res.Raters {
		tot, diag := 0, 0
		for c, row := range r.Confusion {
			for j, v := range row {
				tot += v
				if c == j {
					diag += v
				}
			}
		}
		if tot != r.NLabels || math.Abs(float64(diag)/float64(tot)-*r.ConsensusAgreement) > 1e-6 {
			t.Errorf("rater %d: confusion %v does not match %d labels and agreement %v", l, r.Confusion, r.NLabels, *r.ConsensusAgreement)
		}
	}
}

// TestClassUnusedClassAndUnlabelled: a class that no rater uses gets small
// probabilities everywhere and empty counts; items nobody labelled are
// predicted from the kernel (near a labelled cluster they take its class)
// and reported with n_labels 0.
func TestClassUnusedClassAndUnlabelled(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	const per = 20
	centres := [][2]float64{{0, 0}, {3, 0}, {0, 3}}
	d := &Data{Classes: []string{"a", "b", "c", "never"}, RaterIDs: []string{"r0", "r1", "r2"}}
	var xs [][2]float64
	for c := 0; c < 3; c++ {
		for i := 0; i < per; i++ {
			id := len(d.ItemIDs)
			d.ItemIDs = append(d.ItemIDs, fmt.Sprint("x", id))
			xs = append(xs, [2]float64{centres[c][0] + 0.6*rng.NormFloat64(), centres[c][1] + 0.6*rng.NormFloat64()})
			for l := 0; l < 3; l++ {
				lab := c
				if rng.Float64() < 0.15 {
					lab = rng.IntN(3)
				}
				d.Labels = append(d.Labels, multirater.Rating{Item: id, Rater: l, Level: lab})
			}
		}
	}
	// Unlabelled items at the three centres.
	for c := 0; c < 3; c++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprint("new", c))
		xs = append(xs, centres[c])
	}
	x := mat.NewDense(len(xs), 2, nil)
	for i, p := range xs {
		x.Set(i, 0, p[0])
		x.Set(i, 1, p[1])
	}
	var c mat.SymDense
	kernel.RBF{Gamma: 0.5}.GramTo(&c, kernel.Inputs{N: len(xs), X: x})
	d.Cov = &c
	d.Kernel = "rbf:gamma=0.5"
	res := classFit(t, d, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 600, Burnin: 400, Seed: 2}}})
	for _, it := range res.Items {
		if p := it.ClassProbs["never"]; p > 0.1 {
			t.Errorf("item %s: unused class has probability %.3f", it.ID, p)
		}
	}
	for c := 0; c < 3; c++ {
		it := res.Items[3*per+c]
		if it.NLabels != 0 || it.Labels != nil {
			t.Errorf("unlabelled item %s has n_labels %d, labels %v", it.ID, it.NLabels, it.Labels)
		}
		if it.Class != d.Classes[c] || it.ClassProbs[d.Classes[c]] < 0.6 {
			t.Errorf("unlabelled item at centre %d predicted %s with %v", c, it.Class, it.ClassProbs)
		}
		if len(it.RaterClassProbs) != 3 {
			t.Errorf("unlabelled item %s: %d rater distributions, want 3", it.ID, len(it.RaterClassProbs))
		}
	}
	for _, r := range res.Raters {
		if r.LevelCounts[3] != 0 {
			t.Errorf("rater %s: level counts %v", r.ID, r.LevelCounts)
		}
		for k := range r.Confusion {
			if r.Confusion[k][3] != 0 || r.Confusion[3][k] != 0 {
				t.Errorf("rater %s: confusion %v counts the unused class", r.ID, r.Confusion)
			}
		}
	}
}

// TestClassOneRater fits a single rater under weak and strong
// identifiability (the latter fixes the only precision: only the latent
// values are free).
func TestClassOneRater(t *testing.T) {
	toy := newClassToy(11)
	d := *toy.data
	d.RaterIDs = d.RaterIDs[:1]
	d.Labels = nil
	for _, r := range toy.data.Labels {
		if r.Rater == 0 {
			d.Labels = append(d.Labels, r)
		}
	}
	for _, id := range []multirater.Identifiability{multirater.Weak, multirater.Strong} {
		res := classFit(t, &d, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 500, Burnin: 300, Seed: 4}, Identifiability: id}})
		hits := 0
		for i, it := range res.Items {
			if it.Class == d.Classes[toy.truth[i]] {
				hits++
			}
		}
		if hits < 80 {
			t.Errorf("%v: consensus matches the only rater on %d of 90 items", id, hits)
		}
		r := res.Raters[0]
		switch id {
		case multirater.Weak:
			if r.Reference || r.Precision.SD == 0 || !strings.HasPrefix(res.Diagnostics.Parameters[0].Name, "alpha[") {
				t.Errorf("weak: precision %+v, first diagnosed parameter %s", r.Precision, res.Diagnostics.Parameters[0].Name)
			}
		case multirater.Strong:
			if !r.Reference || r.Precision.Mean != 1 || r.Precision.SD != 0 || res.Model.RefRater != "e1" {
				t.Errorf("strong: precision %+v, reference %v %q", r.Precision, r.Reference, res.Model.RefRater)
			}
			for _, p := range res.Diagnostics.Parameters {
				if strings.HasPrefix(p.Name, "alpha[") {
					t.Errorf("strong: fixed precision %s diagnosed", p.Name)
				}
			}
		}
	}
}

// TestClassStrongWeak: strong and both identifiability (expert with the
// most labels, or a chosen one, fixed at 1) agree with weak identifiability
// on the consensus classes and on the order of the raters' precisions.
func TestClassStrongWeak(t *testing.T) {
	toy := newClassToy(12)
	mc := mcmc.Settings{Chains: 2, Samples: 800, Burnin: 400, Seed: 5}
	weak := classFit(t, toy.data, Options{Common: mcmc.Common{Settings: mc}})
	order := func(res *multirater.FitResult) []string {
		ids := []string{"e1", "e2", "e3"}
		sort.SliceStable(ids, func(i, j int) bool {
			return raterByID(res, ids[i]).Precision.Mean/raterByID(res, "e1").Precision.Mean >
				raterByID(res, ids[j]).Precision.Mean/raterByID(res, "e1").Precision.Mean
		})
		return ids
	}
	for _, o := range []Options{
		{Common: mcmc.Common{Settings: mc, Identifiability: multirater.Strong}},
		{Common: mcmc.Common{Settings: mc, Identifiability: multirater.Both}, RefRater: "e2"},
	} {
		res := classFit(t, toy.data, o)
		same := 0
		for i := range res.Items {
			if res.Items[i].Class == weak.Items[i].Class {
				same++
			}
		}
		if same < 86 {
			t.Errorf("%v: consensus agrees with weak identifiability on %d of 90 items", o.Identifiability, same)
		}
		// Precisions are on another scale; their order is the same.
		if got, want := order(res), order(weak); got[0] != want[0] {
			t.Errorf("%v: precision order %v, weak %v", o.Identifiability, got, want)
		}
		ref := o.RefRater
		if ref == "" {
			ref = "e1" // all raters have 90 labels: the first
		}
		if r := raterByID(res, ref); !r.Reference || r.Precision.Mean != 1 {
			t.Errorf("%v: reference rater %s not fixed at 1: %+v", o.Identifiability, ref, r)
		}
		if res.Model.RefRater != ref || res.Model.Identifiability != o.Identifiability.String() {
			t.Errorf("%v: model settings %+v", o.Identifiability, res.Model)
		}
	}
	if _, err := Fit(context.Background(), toy.data, Options{Common: mcmc.Common{Settings: mc, Identifiability: multirater.Strong}, RefRater: "nobody"}); err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("unknown reference rater: %v", err)
	}
}

// TestClassReproducible: the same seed, chain count and sampler give the
// same result document, bit for bit (apart from timings); another seed
// gives other draws.
func TestClassReproducible(t *testing.T) {
	toy := newClassToy(13)
	opts := Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 3, Samples: 200, Burnin: 100, Seed: 77}, KeepDraws: 60}}
	doc := func(o Options) []byte {
		res := classFit(t, toy.data, o)
		res.Diagnostics.Seconds, res.Diagnostics.SamplingSeconds, res.Diagnostics.SweepsPerSecond, res.Diagnostics.ESSPerCPUSecond = 0, 0, 0, 0
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := doc(opts), doc(opts)
	if string(a) != string(b) {
		t.Error("two fits with the same seed differ")
	}
	opts.Seed = 78
	if string(doc(opts)) == string(a) {
		t.Error("fits with different seeds are identical")
	}
	var res multirater.FitResult
	if err := json.Unmarshal(a, &res); err != nil {
		t.Fatal(err)
	}
	if res.Schema != multirater.FitSchema || res.Model.Model != "classification" || res.Model.Precisions != "inferred" || res.Model.Seed != 77 ||
		res.Model.Quadrature != DefaultQuadrature || res.Draws == nil || len(res.Draws.MClass) != res.Draws.N || res.Draws.N != 60 {
		t.Errorf("document settings: %+v, draws %v", res.Model, res.Draws != nil)
	}
}

// TestClassFixedExact checks both fixed-precision representations against
// the exact posterior of a single item with two classes (identity kernel),
// three labels of class 0 and one of class 1: with d = m_0 - m_1 ~ N(0, 2)
// a priori, the general model (eq. 43 at alpha = 1) has
//
//	p(d | T) ∝ N(d; 0, 2) Phi(d/sqrt2)^3 Phi(-d/sqrt2)
//
// and appendix B (eq. 45: the three agreeing labels share one vector of
// precision 3) has p(d | T) ∝ N(d; 0, 2) Phi(sqrt(3/2) d) Phi(-d/sqrt2).
// The posterior means of d by quadrature are compared with the samplers'
// within 4.5 Monte Carlo standard errors.
func TestClassFixedExact(t *testing.T) {
	d := &Data{ItemIDs: []string{"x"}, RaterIDs: []string{"a", "b", "c", "d"}, Classes: []string{"0", "1"},
		Labels: []multirater.Rating{{Item: 0, Rater: 0, Level: 0}, {Item: 0, Rater: 1, Level: 0}, {Item: 0, Rater: 2, Level: 0}, {Item: 0, Rater: 3, Level: 1}}}
	exactMean := func(lik func(d float64) float64) float64 {
		f := func(x float64) float64 { return math.Exp(-x*x/4) * lik(x) }
		z := quad.Fixed(f, -20, 20, 2000, nil, 0)
		m := quad.Fixed(func(x float64) float64 { return x * f(x) }, -20, 20, 2000, nil, 0)
		return m / z
	}
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, tc := range []struct {
		prec Precisions
		lik  func(x float64) float64
	}{
		{FixedFullPrecisions, func(x float64) float64 { return math.Pow(phi(x/math.Sqrt2), 3) * phi(-x/math.Sqrt2) }},
		{FixedPrecisions, func(x float64) float64 { return phi(math.Sqrt(1.5)*x) * phi(-x/math.Sqrt2) }},
	} {
		want := exactMean(tc.lik)
		for _, smp := range []mcmc.Sampler{mcmc.DefaultSampler, mcmc.PaperSampler} {
			res := classFit(t, d, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 4, Samples: 5000, Burnin: 500, Seed: 9}, Sampler: smp}, Precisions: tc.prec})
			// The monitored parameter is m_1 - mean = -d/2.
			p := res.Diagnostics.Parameters[0]
			if p.Name != "m[x,1]" {
				t.Fatalf("monitored %s", p.Name)
			}
			got := -2 * p.Mean
			mcse := 2 * p.SD / math.Sqrt(p.ESSBulk)
			if math.Abs(got-want) > 4.5*mcse {
				t.Errorf("%v/%v: posterior mean of d %.4f, exact %.4f (MCSE %.4f)", tc.prec, smp, got, want, mcse)
			}
		}
	}
}

// TestClassIncompleteKernel exercises the conjugate-gradient path (an
// incomplete design with a non-diagonal kernel) against the eigen path: the
// consensus of a design with 30% of the labels removed stays close to that
// of the complete design.
func TestClassIncompleteKernel(t *testing.T) {
	toy := newClassToy(14)
	rng := rand.New(rand.NewPCG(1, 1))
	d := *toy.data
	d.Labels = nil
	for _, r := range toy.data.Labels {
		if r.Rater == 0 || rng.Float64() < 0.7 {
			d.Labels = append(d.Labels, r)
		}
	}
	mc := mcmc.Settings{Chains: 2, Samples: 500, Burnin: 300, Seed: 6}
	full := classFit(t, toy.data, Options{Common: mcmc.Common{Settings: mc}})
	part := classFit(t, &d, Options{Common: mcmc.Common{Settings: mc}})
	same := 0
	for i := range part.Items {
		if part.Items[i].Class == full.Items[i].Class {
			same++
		}
	}
	if same < 85 {
		t.Errorf("incomplete design: consensus agrees with the complete one on %d of 90 items", same)
	}
	if part.Diagnostics.Moves["cg_iterations_per_sweep"] == 0 {
		t.Errorf("incomplete design did not use conjugate gradients: %v", part.Diagnostics.Moves)
	}
}

// TestClassDataErrors: data problems are errors, caller mistakes panic.
func TestClassDataErrors(t *testing.T) {
	base := func() *Data {
		return &Data{ItemIDs: []string{"a", "b"}, RaterIDs: []string{"r", "s"}, Classes: []string{"x", "y"},
			Labels: []multirater.Rating{{Item: 0, Rater: 0, Level: 0}, {Item: 1, Rater: 0, Level: 1}, {Item: 0, Rater: 1, Level: 1}}}
	}
	opts := Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 1, Samples: 10, Burnin: 5}}}
	for _, tc := range []struct {
		name string
		edit func(d *Data)
		msg  string
	}{
		{"duplicate", func(d *Data) { d.Labels = append(d.Labels, multirater.Rating{Item: 0, Rater: 0, Level: 1}) }, "more than once"},
		{"rater without labels", func(d *Data) { d.RaterIDs = append(d.RaterIDs, "t") }, `rater "t" has no labels`},
		{"no labels", func(d *Data) { d.Labels = nil }, "no labels"},
		{"not PSD", func(d *Data) { d.Cov = mat.NewSymDense(2, []float64{1, 2, 2, 1}) }, "not positive semidefinite"},
	} {
		d := base()
		tc.edit(d)
		if _, err := Fit(context.Background(), d, opts); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.msg)
		}
	}
	for _, tc := range []struct {
		name string
		edit func(d *Data, o *Options)
	}{
		{"one class", func(d *Data, o *Options) { d.Classes = d.Classes[:1] }},
		{"class out of range", func(d *Data, o *Options) { d.Labels[0].Level = 2 }},
		{"negative lambda", func(d *Data, o *Options) { o.Lambda = -1 }},
		{"bad precisions", func(d *Data, o *Options) { o.Precisions = 7 }},
		{"bad quadrature", func(d *Data, o *Options) { o.Quadrature = 1 }},
	} {
		d, o := base(), opts
		tc.edit(d, &o)
		testutil.Panics(t, tc.name, "multirater: ", func() { Fit(context.Background(), d, o) })
	}
	for _, s := range []string{"", "inferred", "fixed", "fixed-full", " Fixed "} {
		if _, err := ParsePrecisions(s); err != nil {
			t.Errorf("ParsePrecisions(%q): %v", s, err)
		}
	}
	if _, err := ParsePrecisions("sometimes"); err == nil {
		t.Error("ParsePrecisions accepted nonsense")
	}
}

// loadRTE reads the RTE labels and gold of testdata/classify/rte.
func loadRTE(t testing.TB) (*Data, map[string]string) {
	t.Helper()
	read := func(name string) [][]string {
		rows := testutil.ReadCSV(t, "testdata/classify/rte/"+name)
		return rows[1:]
	}
	d := &Data{Classes: []string{"0", "1"}, Kernel: "identity"}
	items, raters := map[string]int{}, map[string]int{}
	for _, r := range read("ratings.csv") {
		i := testutil.IndexOf(items, &d.ItemIDs, r[0])
		l := testutil.IndexOf(raters, &d.RaterIDs, r[1])
		c := 0
		if r[2] == "1" {
			c = 1
		}
		d.Labels = append(d.Labels, multirater.Rating{Item: i, Rater: l, Level: c})
	}
	gold := map[string]string{}
	for _, r := range read("gold.csv") {
		gold[r[0]] = r[1]
	}
	return d, gold
}

// TestClassRTE is the acceptance check on Snow et al.'s (2008)
// recognising-textual-entailment labels (800 items, 164 crowd workers, 10
// labels per item; identity kernel): the consensus class agrees with the
// expert gold on at least as many items as majority vote (ties counted as
// half right), and the raters' inferred precisions rank them as their
// agreement with the gold does (Spearman correlation over all raters, each
// of whom has at least 20 labels, above 0.7; the five least precise raters
// all agree with the gold on at most 60% of their labels).
func TestClassRTE(t *testing.T) {
	if testing.Short() {
		t.Skip("RTE fit skipped in -short mode")
	}
	d, gold := loadRTE(t)
	res := classFit(t, d, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 600, Burnin: 400, Seed: 1}, KeepDraws: 200}})
	hits := 0
	var maj float64
	for _, it := range res.Items {
		if it.Class == gold[it.ID] {
			hits++
		}
		ones := 0
		for _, v := range it.Labels {
			if v == "1" {
				ones++
			}
		}
		switch {
		case 2*ones == len(it.Labels):
			maj += 0.5
		case (2*ones > len(it.Labels)) == (gold[it.ID] == "1"):
			maj++
		}
	}
	t.Logf("consensus agrees with the gold on %d of %d items (%.1f%%); majority vote %.1f (%.1f%%)", hits, len(res.Items), 100*float64(hits)/800, maj, maj/8)
	if float64(hits) < maj {
		t.Errorf("consensus %d below majority vote %.1f", hits, maj)
	}
	agree := make(map[string][2]int)
	for _, it := range res.Items {
		for r, v := range it.Labels {
			a := agree[r]
			a[1]++
			if v == gold[it.ID] {
				a[0]++
			}
			agree[r] = a
		}
	}
	var prec, ga []float64
	type rr struct {
		id   string
		p, g float64
	}
	var rs []rr
	for _, r := range res.Raters {
		a := agree[r.ID]
		g := float64(a[0]) / float64(a[1])
		prec = append(prec, r.Precision.Mean)
		ga = append(ga, g)
		rs = append(rs, rr{r.ID, r.Precision.Mean, g})
	}
	rho := mcmctest.Spearman(prec, ga)
	t.Logf("Spearman correlation of precision and gold agreement over %d raters: %.3f", len(rs), rho)
	if rho < 0.7 {
		t.Errorf("Spearman correlation %.3f of precision and gold agreement", rho)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].p < rs[j].p })
	for _, r := range rs[:5] {
		t.Logf("low precision: %s alpha %.3f, gold agreement %.3f", r.id, r.p, r.g)
		if r.g > 0.6 {
			t.Errorf("rater %s has one of the five lowest precisions (%.3f) but agrees with the gold on %.0f%%", r.id, r.p, 100*r.g)
		}
	}
	if !res.Diagnostics.Converged {
		t.Logf("note: %s", res.Diagnostics.Verdict)
	}
}

// TestClassPredictorMatchesFit: predicting the fit's own items from the
// kept draws with zero prior variance left reproduces their latent values:
// for a training item, k' C^+ M = M_n and the predictor's distribution
// equals the fit's averaged over the same (JSON) draws.
func TestClassPredictorMatchesFit(t *testing.T) {
	toy := newClassToy(15)
	res := classFit(t, toy.data, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 300, Burnin: 200, Seed: 8}, KeepDraws: 100}})
	p, err := NewPredictor(res, toy.data.Cov)
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.Items)
	ids := []string{"again0", "again1"}
	cross := mat.NewDense(2, n, nil)
	prior := make([]float64, 2)
	for j, i := range []int{0, 45} {
		for c := 0; c < n; c++ {
			cross.Set(j, c, toy.data.Cov.At(i, c))
		}
		prior[j] = toy.data.Cov.At(i, i)
	}
	out := p.Predict(ids, cross, prior)
	for j, i := range []int{0, 45} {
		want := res.Items[i]
		got := out[j]
		for _, c := range res.Levels {
			if math.Abs(got.ClassProbs[c]-want.ClassProbs[c]) > 0.02 {
				t.Errorf("item %d class %s: predicted %.4f, fit %.4f", i, c, got.ClassProbs[c], want.ClassProbs[c])
			}
		}
		if got.Class != want.Class || got.NLabels != 0 || len(got.RaterClassProbs) != 3 || got.Entropy == nil {
			t.Errorf("item %d: predicted %+v", i, got)
		}
	}
	if _, err := NewPredictor(&multirater.FitResult{Model: multirater.ModelSettings{Model: "ordinal"}}, toy.data.Cov); err == nil {
		t.Error("predictor accepted an ordinal fit")
	}
	if !reflect.DeepEqual(res.Levels, toy.data.Classes) {
		t.Errorf("levels %v", res.Levels)
	}
}

// TestClassCancel: a cancelled context stops the fit with its error.
func TestClassCancel(t *testing.T) {
	toy := newClassToy(16)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := Fit(ctx, toy.data, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 1_000_000, Seed: 1}}, Progress: func(p multirater.Progress) {
		calls++
		cancel()
	}})
	if err != context.Canceled || calls == 0 {
		t.Errorf("error %v after %d progress reports", err, calls)
	}
}

// FuzzParsePrecisions: ParsePrecisions accepts exactly the documented
// names (any case, surrounding spaces) and String inverts it.
func FuzzParsePrecisions(f *testing.F) {
	for _, s := range []string{"", "inferred", "fixed", "fixed-full", " FIXED ", "fixed full", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePrecisions(s)
		if err != nil {
			if !strings.Contains(err.Error(), "expected inferred, fixed or fixed-full") {
				t.Errorf("error %q does not say what was expected", err)
			}
			return
		}
		q, err := ParsePrecisions(p.String())
		if err != nil || q != p {
			t.Errorf("%q -> %v -> %v, %v", s, p, q, err)
		}
	})
}

// TestClassChainsApart runs a fit's chains in parts (as worker processes do
// when a fit fans out) and checks that the summary of their outputs is the
// fit in one call, bit for bit: three classes with a kernel, two classes
// (the collapsed moves), fixed precisions (appendix B).
func TestClassChainsApart(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	bin := &Data{Classes: []string{"no", "yes"}, RaterIDs: []string{"r0", "r1", "r2"}}
	for i := 0; i < 40; i++ {
		bin.ItemIDs = append(bin.ItemIDs, fmt.Sprint("i", i))
		truth := rng.IntN(2)
		for l := range bin.RaterIDs {
			lab := truth
			if rng.Float64() > 0.8 {
				lab = 1 - lab
			}
			bin.Labels = append(bin.Labels, multirater.Rating{Item: i, Rater: l, Level: lab})
		}
	}
	mc := mcmc.Settings{Chains: 3, Samples: 60, Burnin: 40, Seed: 21}
	for _, tc := range []struct {
		name  string
		data  *Data
		prec  Precisions
		parts [][2]int
	}{
		{"three classes, rbf", newClassToy(13).data, InferredPrecisions, [][2]int{{1, 3}, {0, 1}}},
		{"two classes", bin, InferredPrecisions, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{"fixed precisions", newClassToy(13).data, FixedPrecisions, [][2]int{{0, 2}, {2, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Common: mcmc.Common{Settings: mc, KeepDraws: 50}, Precisions: tc.prec}
			mcmctest.CheckParts(t, func(ctx context.Context) (*multirater.FitResult, error) { return Fit(ctx, tc.data, opts) }, 3, tc.parts, nil)
		})
	}
}

// TestClassKernelLengths: with a kernel (Data.Cov) a zero Samples and
// Burnin are the kernel's defaults (KernelSamples, KernelBurnin), recorded
// in the result; without one, and when given, they are not.
func TestClassKernelLengths(t *testing.T) {
	mc0 := mcmc.Settings{}.WithDefaults()
	// The declared defaults (the help of the CLI, API and dashboard) say
	// both lengths.
	want := map[string]string{"samples": fmt.Sprintf("%d (%d with a kernel)", mc0.Samples, KernelSamples),
		"burnin": fmt.Sprintf("%d (%d with a kernel)", mc0.Burnin, KernelBurnin)}
	for _, f := range multirater.Fields(reflect.TypeFor[Settings]()) {
		if w, ok := want[f.Name]; ok && f.Default != w {
			t.Errorf("setting %s: declared default %q, want %q", f.Name, f.Default, w)
		}
	}
	for _, tc := range []struct {
		name                  string
		kernel                bool
		samples, burnin       int
		wantSamples, wantBurn int
	}{
		{"kernel, defaults", true, 0, 0, KernelSamples, KernelBurnin},
		{"no kernel, defaults", false, 0, 0, mc0.Samples, mc0.Burnin},
		{"kernel, given", true, 40, 30, 40, 30},
		{"kernel, no burn-in", true, 40, -1, 40, 0},
	} {
		o := Options{Common: mcmc.Common{Settings: mcmc.Settings{Samples: tc.samples, Burnin: tc.burnin}}}
		got := o.ForKernel(tc.kernel).WithDefaults()
		if got.Samples != tc.wantSamples || got.Burnin != tc.wantBurn {
			t.Errorf("%s: ForKernel(%v).WithDefaults() samples %d, burnin %d; want %d, %d", tc.name, tc.kernel, got.Samples, got.Burnin, tc.wantSamples, tc.wantBurn)
		}
		if !tc.kernel || testing.Short() && tc.samples == 0 {
			continue // the identity's lengths are mcmc's; the analysis tests check them
		}
		d := *newClassToy(14).data
		o.Chains, o.Seed = 1, 3
		res := classFit(t, &d, o)
		if res.Model.Samples != tc.wantSamples || res.Model.Burnin != tc.wantBurn {
			t.Errorf("%s: the fit records samples %d, burnin %d; want %d, %d", tc.name, res.Model.Samples, res.Model.Burnin, tc.wantSamples, tc.wantBurn)
		}
	}
}
