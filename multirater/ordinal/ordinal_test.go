package ordinal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
	"concord/multirater"
	"concord/multirater/kernel"
	"concord/multirater/mcmc"
	"concord/multirater/mcmc/mcmctest"
)

// readCSVFile reads a CSV file with a header row.
func readCSVFile(t testing.TB, path string) ([]string, [][]string) {
	t.Helper()
	all := testutil.ReadCommentedCSV(t, path)
	if len(all) < 2 {
		t.Fatalf("%s: no data", path)
	}
	header := all[0]
	for i, row := range all[1:] {
		// An unquoted first field with commas (e.g. "b[1,2]") spills into
		// the next fields: join them back.
		if extra := len(row) - len(header); extra > 0 {
			row = append([]string{strings.Join(row[:extra+1], ",")}, row[extra+1:]...)
			all[i+1] = row
		}
		if len(row) != len(header) {
			t.Fatalf("%s: record %d has %d fields, want %d", path, i+2, len(row), len(header))
		}
	}
	return header, all[1:]
}

// loadOrdinalCSV builds OrdinalData from a ratings file (item_id,
// rater_id, label) with the given level codes; items are in order of first
// appearance, raters sorted.
func loadOrdinalCSV(t testing.TB, path string, levels []string) *Data {
	t.Helper()
	_, rows := readCSVFile(t, path)
	d := &Data{Levels: levels}
	items := map[string]int{}
	raterSet := map[string]bool{}
	for _, r := range rows {
		if _, ok := items[r[0]]; !ok {
			items[r[0]] = len(d.ItemIDs)
			d.ItemIDs = append(d.ItemIDs, r[0])
		}
		raterSet[r[1]] = true
	}
	for r := range raterSet {
		d.RaterIDs = append(d.RaterIDs, r)
	}
	sort.Strings(d.RaterIDs)
	raters := map[string]int{}
	for i, r := range d.RaterIDs {
		raters[r] = i
	}
	lev := map[string]int{}
	for i, c := range levels {
		lev[c] = i
	}
	for i, r := range rows {
		l, ok := lev[r[2]]
		if !ok {
			t.Fatalf("%s row %d: unknown level %q", path, i+2, r[2])
		}
		d.Ratings = append(d.Ratings, multirater.Rating{Item: items[r[0]], Rater: raters[r[1]], Level: l})
	}
	return d
}

// toyData is the paper's synthetic data set (Rogers et al. sec. 3.1).
type toyData struct {
	data  *Data
	x     *mat.Dense // the covariate, one row per item
	truth []float64  // true consensus 1 - 2x per item
	alpha []float64  // true precisions per rater
}

// makeToy simulates the paper's toy data set in Go with the given seed:
// N items with x ~ N(0, 1), L = 4 raters with precisions 1, 0.5, 2, 4,
// y = 1 - 2x + N(0, 1/alpha_l), K = 5 with each rater's thresholds sorted
// N(0, 1) draws; prior covariance kernel.RBF gamma = 1 (eq. 20).
func makeToy(seed uint64, n int) toyData {
	rng := rand.New(rand.NewPCG(seed, 99))
	alpha := []float64{1, 0.5, 2, 4}
	const l, k = 4, 5
	x := mat.NewDense(n, 1, nil)
	d := &Data{Levels: []string{"1", "2", "3", "4", "5"}, Kernel: "rbf:gamma=1"}
	truth := make([]float64, n)
	for i := 0; i < n; i++ {
		x.Set(i, 0, rng.NormFloat64())
		truth[i] = 1 - 2*x.At(i, 0)
		d.ItemIDs = append(d.ItemIDs, fmt.Sprintf("i%03d", i))
	}
	for r := 0; r < l; r++ {
		d.RaterIDs = append(d.RaterIDs, fmt.Sprint("r", r+1))
		b := make([]float64, k-1)
		for j := range b {
			b[j] = rng.NormFloat64()
		}
		sort.Float64s(b)
		for i := 0; i < n; i++ {
			y := truth[i] + rng.NormFloat64()/math.Sqrt(alpha[r])
			lev := 0
			for lev < k-1 && y > b[lev] {
				lev++
			}
			d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: r, Level: lev})
		}
	}
	var c mat.SymDense
	kernel.RBF{Gamma: 1}.GramTo(&c, kernel.Inputs{N: n, X: x})
	d.Cov = &c
	return toyData{data: d, x: x, truth: truth, alpha: alpha}
}

// storedToy reads the paper's toy data made with R (testdata/toy, see its
// README), or returns false when the files are missing.
func storedToy(t testing.TB) (toyData, bool) {
	t.Helper()
	if _, err := os.Stat("testdata/toy/ratings.csv"); err != nil {
		return toyData{}, false
	}
	d := loadOrdinalCSV(t, "testdata/toy/ratings.csv", []string{"1", "2", "3", "4", "5"})
	_, items := readCSVFile(t, "testdata/toy/items.csv")
	xs := map[string]float64{}
	for _, r := range items {
		v, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		xs[r[0]] = v
	}
	_, truthRows := readCSVFile(t, "testdata/toy/truth.csv")
	truthM := map[string]float64{}
	truthA := map[string]float64{}
	for _, r := range truthRows {
		v, err := strconv.ParseFloat(r[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		switch r[0] {
		case "m":
			truthM[r[1]] = v
		case "alpha":
			truthA[r[1]] = v
		}
	}
	n := len(d.ItemIDs)
	x := mat.NewDense(n, 1, nil)
	td := toyData{data: d, x: x, truth: make([]float64, n)}
	for i, id := range d.ItemIDs {
		x.Set(i, 0, xs[id])
		td.truth[i] = truthM[id]
	}
	for _, r := range d.RaterIDs {
		td.alpha = append(td.alpha, truthA[r])
	}
	var c mat.SymDense
	kernel.RBF{Gamma: 1}.GramTo(&c, kernel.Inputs{N: n, X: x})
	d.Cov = &c
	d.Kernel = "rbf:gamma=1"
	return td, true
}

func loadSirtK1(t testing.TB) *Data {
	d := loadOrdinalCSV(t, "testdata/ordinal/sirt_k1.csv", []string{"0", "1", "2", "3"})
	d.Kernel = "identity"
	return d
}

func fit(t testing.TB, d *Data, opts Options) *multirater.FitResult {
	t.Helper()
	res, err := Fit(context.Background(), d, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestOrdinalToyRecovery fits the paper's toy data (sec. 3.1) made with
// several seeds and checks that the posterior mean precisions are ordered as
// the true ones (0.5 < 1 < 2 < 4) and that the consensus scores rank the
// items as the true latent trait does (Spearman > 0.9).
func TestOrdinalToyRecovery(t *testing.T) {
	var toys []toyData
	var names []string
	if td, ok := storedToy(t); ok {
		toys = append(toys, td)
		names = append(names, "testdata/toy")
	}
	seeds := []uint64{1, 2, 3}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, s := range seeds {
		toys = append(toys, makeToy(s, 200))
		names = append(names, fmt.Sprint("seed ", s))
	}
	for i, td := range toys {
		res := fit(t, td.data, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 1000, Burnin: 500, Seed: 11}}})
		order := func(v []float64) []int {
			idx := make([]int, len(v))
			for j := range idx {
				idx[j] = j
			}
			sort.Slice(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
			return idx
		}
		est := make([]float64, len(res.Raters))
		for l, r := range res.Raters {
			est[l] = r.Precision.Mean
		}
		got, want := order(est), order(td.alpha)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: precision order %v (means %.2f), true order %v (%v)", names[i], got, est, want, td.alpha)
		}
		rho := mcmctest.Spearman(scores(res), td.truth)
		if rho < 0.9 {
			t.Errorf("%s: Spearman(consensus, truth) = %.3f, want > 0.9", names[i], rho)
		}
		t.Logf("%s: precisions %.2f, Spearman %.4f, %s", names[i], est, rho, res.Diagnostics.Verdict)
	}
}

// TestOrdinalBookkeeping checks the empty-ratings bookkeeping (sec. 2.5): an
// item nobody rated is predicted, a rater with a single label is fitted, and
// counts, levels and distributions are consistent.
func TestOrdinalBookkeeping(t *testing.T) {
	d := loadSirtK1(t)
	// An unrated item and a rater with one label.
	d.ItemIDs = append(d.ItemIDs, "unrated")
	d.RaterIDs = append(d.RaterIDs, "once")
	d.Ratings = append(d.Ratings, multirater.Rating{Item: 0, Rater: len(d.RaterIDs) - 1, Level: 2})
	res := fit(t, d, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 500, Burnin: 300, Seed: 3}}})
	if len(res.Items) != len(d.ItemIDs) || len(res.Raters) != len(d.RaterIDs) {
		t.Fatalf("result has %d items and %d raters, want %d and %d", len(res.Items), len(res.Raters), len(d.ItemIDs), len(d.RaterIDs))
	}
	perItem := make([]int, len(d.ItemIDs))
	perRater := make([]int, len(d.RaterIDs))
	for _, r := range d.Ratings {
		perItem[r.Item]++
		perRater[r.Rater]++
	}
	for i, it := range res.Items {
		if it.ID != d.ItemIDs[i] || it.NLabels != perItem[i] || len(it.Labels) != perItem[i] {
			t.Errorf("item %d: id %q n_labels %d labels %d, want %q %d", i, it.ID, it.NLabels, len(it.Labels), d.ItemIDs[i], perItem[i])
		}
		checkDist(t, "item "+it.ID, it.GradeProbs, d.Levels)
		if it.Score == nil || it.Rank == nil || it.Grade == "" {
			t.Fatalf("item %s: missing score, rank or grade", it.ID)
		}
		if !(it.Score.Q025 <= it.Score.Q50 && it.Score.Q50 <= it.Score.Q975) {
			t.Errorf("item %s: quantiles out of order %+v", it.ID, *it.Score)
		}
		if it.Rank.Q025 < 1 || it.Rank.Q975 > float64(len(d.ItemIDs)) || it.Rank.Q025 > it.Rank.Q975 {
			t.Errorf("item %s: rank interval %+v", it.ID, *it.Rank)
		}
		// One distribution per rater who labelled the item.
		if len(it.RaterGradeProbs) != len(it.Labels) {
			t.Errorf("item %s: %d rater distributions for %d labelling raters", it.ID, len(it.RaterGradeProbs), len(it.Labels))
		}
		for r := range it.Labels {
			checkLevels(t, "item "+it.ID+" rater "+r, it.RaterGradeProbs[r], len(d.Levels))
		}
	}
	un := res.Items[len(res.Items)-1]
	if un.NLabels != 0 || un.Labels != nil {
		t.Errorf("unrated item: %+v", un)
	}
	// With the identity kernel an unrated item's consensus is its prior
	// N(0, 1).
	if math.Abs(un.Score.Mean) > 0.1 || math.Abs(un.Score.SD-1) > 0.1 {
		t.Errorf("unrated item score %+v, want about N(0, 1)", *un.Score)
	}
	for l, r := range res.Raters {
		if r.NLabels != perRater[l] {
			t.Errorf("rater %s: n_labels %d, want %d", r.ID, r.NLabels, perRater[l])
		}
		sum := 0
		for _, c := range r.LevelCounts {
			sum += c
		}
		if sum != perRater[l] || len(r.LevelCounts) != len(d.Levels) {
			t.Errorf("rater %s: level counts %v", r.ID, r.LevelCounts)
		}
		if len(r.Thresholds) != len(d.Levels)-1 {
			t.Fatalf("rater %s: %d thresholds", r.ID, len(r.Thresholds))
		}
		for j := 1; j < len(r.Thresholds); j++ {
			if !(r.Thresholds[j].Mean > r.Thresholds[j-1].Mean) {
				t.Errorf("rater %s: threshold means not increasing: %+v", r.ID, r.Thresholds)
			}
		}
		if math.IsNaN(r.MeanLogPred) || r.MeanLogPred > 0 {
			t.Errorf("rater %s: mean log predictive %v", r.ID, r.MeanLogPred)
		}
	}
	// The rater with one label is barely identified: its precision stays
	// close to the Gamma(1, 1) prior (mean 1).
	once := res.Raters[len(res.Raters)-1]
	if once.Precision.Mean < 0.5 || once.Precision.Mean > 2 {
		t.Errorf("rater with one label: precision %+v, want about the prior mean 1", once.Precision)
	}
	for _, f := range res.Flags {
		if f.Prob >= res.Model.FlagThreshold {
			t.Errorf("flag %+v is not below the threshold", f)
		}
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatal(err)
	}
}

func checkDist(t *testing.T, what string, p map[string]float64, levels []string) {
	t.Helper()
	var s float64
	for _, c := range levels {
		v, ok := p[c]
		if !ok || v < 0 || v > 1 {
			t.Errorf("%s: probability of level %q is %v", what, c, v)
		}
		s += v
	}
	if math.Abs(s-1) > 1e-4 {
		t.Errorf("%s: probabilities sum to %v", what, s)
	}
}

// TestOrdinalEdgeCases fits small data sets with K = 2, a rater who uses only
// some levels, and raters who all agree exactly.
func TestOrdinalEdgeCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	n := 40
	ids := make([]string, n)
	truth := make([]float64, n)
	for i := range ids {
		ids[i] = fmt.Sprint("item", i)
		truth[i] = rng.NormFloat64()
	}
	opts := Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 1000, Burnin: 500, Seed: 9}}}

	t.Run("K=2", func(t *testing.T) {
		d := &Data{ItemIDs: ids, RaterIDs: []string{"a", "b", "c"}, Levels: []string{"no", "yes"}}
		for i, m := range truth {
			for l, cut := range []float64{-0.3, 0, 0.4} {
				lev := 0
				if m+0.5*rng.NormFloat64() > cut {
					lev = 1
				}
				d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: l, Level: lev})
			}
		}
		res := fit(t, d, opts)
		if len(res.Raters[0].Thresholds) != 1 {
			t.Fatalf("K = 2: %d thresholds", len(res.Raters[0].Thresholds))
		}
		if rho := mcmctest.Spearman(scores(res), truth); rho < 0.7 {
			t.Errorf("K = 2: Spearman %.3f", rho)
		}
		checkNumbers(t, res)
	})

	t.Run("some levels unused", func(t *testing.T) {
		// Rater "mid" never uses levels 1 and 5 (and labels every item).
		d := &Data{ItemIDs: ids, RaterIDs: []string{"full", "mid"}, Levels: []string{"1", "2", "3", "4", "5"}}
		for i, m := range truth {
			d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: 0, Level: cut(m, -1, -0.3, 0.3, 1)})
			d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: 1, Level: 1 + cut(m, -0.4, 0.4)})
		}
		res := fit(t, d, opts)
		mid := res.Raters[1]
		if mid.LevelCounts[0] != 0 || mid.LevelCounts[4] != 0 {
			t.Fatalf("level counts %v", mid.LevelCounts)
		}
		for i, it := range res.Items {
			p := it.RaterGradeProbs["mid"]
			if p[0] > 0.3 || p[4] > 0.3 {
				t.Errorf("item %d: rater mid's probabilities of unused levels %v", i, p)
				break
			}
		}
		if rho := mcmctest.Spearman(scores(res), truth); rho < 0.8 {
			t.Errorf("Spearman %.3f", rho)
		}
		checkNumbers(t, res)
	})

	t.Run("all agree", func(t *testing.T) {
		d := &Data{ItemIDs: ids, RaterIDs: []string{"a", "b", "c", "d"}, Levels: []string{"1", "2", "3", "4"}}
		for i, m := range truth {
			lev := cut(m, -0.6, 0, 0.6)
			for l := range d.RaterIDs {
				d.Ratings = append(d.Ratings, multirater.Rating{Item: i, Rater: l, Level: lev})
			}
		}
		res := fit(t, d, opts)
		// Scores increase with the common label.
		for i := range res.Items {
			for j := range res.Items {
				li, lj := d.Ratings[i*4].Level, d.Ratings[j*4].Level
				if li < lj && !(res.Items[i].Score.Mean < res.Items[j].Score.Mean) {
					t.Fatalf("items %d (label %d) and %d (label %d): scores %.3f, %.3f", i, li, j, lj, res.Items[i].Score.Mean, res.Items[j].Score.Mean)
				}
			}
		}
		// Agreeing raters are precise: above the prior mean 1.
		for _, r := range res.Raters {
			if r.Precision.Mean <= 1 {
				t.Errorf("rater %s: precision %.2f, want > 1", r.ID, r.Precision.Mean)
			}
		}
		if len(res.Flags) != 0 {
			t.Errorf("%d flags when everyone agrees", len(res.Flags))
		}
		checkNumbers(t, res)
	})
}

// cut returns the number of cut points below m.
func cut(m float64, cuts ...float64) int {
	k := 0
	for _, c := range cuts {
		if m > c {
			k++
		}
	}
	return k
}

// checkNumbers checks that a result has no NaN or infinity and encodes.
func checkNumbers(t *testing.T, res *multirater.FitResult) {
	t.Helper()
	if _, err := json.Marshal(res); err != nil {
		t.Fatalf("encoding: %v", err)
	}
	for _, r := range res.Raters {
		for _, v := range []float64{r.Precision.Mean, r.Precision.SD, r.Variance.Mean, r.Severity, r.MeanLogPred} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("rater %s: non-finite summary %+v", r.ID, r)
			}
		}
	}
}

// TestOrdinalStrongWeak checks that the identifiability modes agree on the
// ranking of the items (the paper's advice: compare strong with weak).
func TestOrdinalStrongWeak(t *testing.T) {
	d := loadSirtK1(t)
	base := Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 1000, Burnin: 500, Seed: 4}}}
	weak := fit(t, d, base)
	for _, mode := range []multirater.Identifiability{multirater.Strong, multirater.Both} {
		o := base
		o.Identifiability = mode
		res := fit(t, d, o)
		if rho := mcmctest.Spearman(scores(weak), scores(res)); rho < 0.98 {
			t.Errorf("%v vs weak: Spearman %.4f, want > 0.98", mode, rho)
		}
		ref := -1
		for l, r := range res.Raters {
			if r.Reference {
				ref = l
			}
		}
		if ref < 0 || res.Model.RefRater != res.Raters[ref].ID {
			t.Fatalf("%v: no reference rater (model ref %q)", mode, res.Model.RefRater)
		}
		r := res.Raters[ref]
		if r.Precision.Mean != 1 || r.Precision.SD != 0 || !r.Thresholds[0].Fixed || r.Thresholds[0].Mean != 0 {
			t.Errorf("%v: reference rater %s not fixed: %+v", mode, r.ID, r)
		}
		// The reference is the rater with the most labels.
		for _, o := range res.Raters {
			if o.NLabels > r.NLabels {
				t.Errorf("%v: reference %s has %d labels, %s has %d", mode, r.ID, r.NLabels, o.ID, o.NLabels)
			}
		}
		for _, p := range res.Diagnostics.Parameters {
			if p.Name == "alpha["+r.ID+"]" || p.Name == "b["+r.ID+",1]" {
				t.Errorf("%v: fixed parameter %s in the diagnostics", mode, p.Name)
			}
		}
	}
	// A chosen reference rater.
	o := base
	o.Identifiability = multirater.Strong
	o.RefRater = "db08"
	res := fit(t, d, o)
	if res.Model.RefRater != "db08" {
		t.Errorf("reference %q, want db08", res.Model.RefRater)
	}
	o.RefRater = "nobody"
	if _, err := Fit(context.Background(), d, o); err == nil {
		t.Error("unknown reference rater accepted")
	}
}

// compareMeans checks that two fits agree on the posterior means of every
// free parameter within Monte Carlo error: |difference| <= 4.5 combined
// MCSE (MCSE = sd / sqrt(bulk ESS)). With a few hundred parameters a
// correct sampler exceeds 4.5 standard errors with probability below 0.2%.
func compareMeans(t *testing.T, what string, a, b *multirater.FitResult) (maxZ float64) {
	t.Helper()
	bp := map[string]multirater.ParamDiag{}
	for _, p := range b.Diagnostics.Parameters {
		bp[p.Name] = p
	}
	for _, p := range a.Diagnostics.Parameters {
		q, ok := bp[p.Name]
		if !ok {
			t.Errorf("%s: %s missing from the second fit", what, p.Name)
			continue
		}
		se := math.Hypot(p.SD/math.Sqrt(p.ESSBulk), q.SD/math.Sqrt(q.ESSBulk))
		z := math.Abs(p.Mean-q.Mean) / se
		maxZ = math.Max(maxZ, z)
		if z > 4.5 {
			t.Errorf("%s: %s means %.4f and %.4f differ by %.1f standard errors", what, p.Name, p.Mean, q.Mean, z)
		}
	}
	return maxZ
}

// TestOrdinalSamplersAgree checks that the default and the paper's samplers
// target the same posterior: their posterior means of every precision,
// threshold and consensus score agree within Monte Carlo error, on the real
// sirt data (identity kernel, incomplete design) and on the paper's toy (kernel.RBF
// kernel, complete design).
func TestOrdinalSamplersAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("long chains of the paper's sampler")
	}
	t.Run("sirt", func(t *testing.T) {
		d := loadSirtK1(t)
		def := fit(t, d, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 4, Samples: 2000, Seed: 21}}})
		pap := fit(t, d, Options{Common: mcmc.Common{Sampler: mcmc.PaperSampler, Settings: mcmc.Settings{Chains: 4, Samples: 6000, Burnin: 2000, Seed: 22}}})
		z := compareMeans(t, "sirt default vs paper", def, pap)
		t.Logf("max |z| %.2f; min ESS default %.0f, paper %.0f", z, def.Diagnostics.MinESSBulk, pap.Diagnostics.MinESSBulk)
	})
	t.Run("toy", func(t *testing.T) {
		td := makeToy(7, 60)
		def := fit(t, td.data, Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 4, Samples: 2000, Seed: 23}}})
		pap := fit(t, td.data, Options{Common: mcmc.Common{Sampler: mcmc.PaperSampler, Settings: mcmc.Settings{Chains: 4, Samples: 12000, Burnin: 3000, Seed: 24}}})
		z := compareMeans(t, "toy default vs paper", def, pap)
		t.Logf("max |z| %.2f; min ESS default %.0f, paper %.0f", z, def.Diagnostics.MinESSBulk, pap.Diagnostics.MinESSBulk)
	})
}

// TestOrdinalStan compares posterior means with an independent Stan fit of
// the same model (testdata/stan: identity kernel, weak identifiability,
// v = lambda = 1, sigma_b = 1, y integrated out, NUTS) on the sirt data,
// within Monte Carlo error of both.
func TestOrdinalStan(t *testing.T) {
	const ref = "testdata/stan/sirt_k1_reference.csv"
	if _, err := os.Stat(ref); err != nil {
		t.Skip("Stan reference not available: " + ref)
	}
	header, rows := readCSVFile(t, ref)
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, c := range []string{"kind", "rater_id", "item_id", "k", "mean", "mcse_mean"} {
		if _, ok := col[c]; !ok {
			t.Fatalf("%s: no column %q", ref, c)
		}
	}
	d := loadOrdinalCSV(t, "testdata/stan/sirt_k1.csv", []string{"0", "1", "2", "3"})
	samples := 4000
	if testing.Short() {
		samples = 1500
	}
	for _, smp := range []mcmc.Sampler{mcmc.DefaultSampler, mcmc.PaperSampler} {
		if smp == mcmc.PaperSampler && testing.Short() {
			continue
		}
		o := Options{Common: mcmc.Common{Sampler: smp, Settings: mcmc.Settings{Chains: 4, Samples: samples, Seed: 31}}}
		if smp == mcmc.PaperSampler {
			o.Samples, o.Burnin = 8000, 2000
		}
		res := fit(t, d, o)
		ours := map[string]multirater.ParamDiag{}
		for _, p := range res.Diagnostics.Parameters {
			ours[p.Name] = p
		}
		compared, maxZ := map[string]int{}, 0.0
		for _, r := range rows {
			var name string
			switch r[col["kind"]] {
			case "alpha":
				name = "alpha[" + r[col["rater_id"]] + "]"
			case "b":
				name = "b[" + r[col["rater_id"]] + "," + r[col["k"]] + "]"
			case "m":
				name = "m[" + r[col["item_id"]] + "]"
			default:
				continue
			}
			p, ok := ours[name]
			if !ok {
				t.Errorf("%s: parameter %s not in our fit", ref, name)
				continue
			}
			mean, err1 := strconv.ParseFloat(r[col["mean"]], 64)
			mcse, err2 := strconv.ParseFloat(r[col["mcse_mean"]], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: bad row %v", ref, r)
			}
			se := math.Hypot(mcse, p.SD/math.Sqrt(p.ESSBulk))
			z := math.Abs(p.Mean-mean) / se
			maxZ = math.Max(maxZ, z)
			compared[r[col["kind"]]]++
			if z > 4.5 {
				t.Errorf("%v: %s mean %.4f, Stan %.4f (MCSE %.4f): %.1f standard errors", smp, name, p.Mean, mean, mcse, z)
			}
		}
		// 7 raters' precisions, 7 x 3 thresholds, 135 items.
		if compared["alpha"] != 7 || compared["b"] != 21 || compared["m"] != 135 {
			t.Fatalf("compared %v, want 7 alpha, 21 b, 135 m", compared)
		}
		t.Logf("%v sampler: %v parameters, max |z| = %.2f", smp, compared, maxZ)
	}
}

// TestOrdinalReproducible checks that a fit is bit-for-bit reproducible for
// a seed, chain count and sampler, whatever the scheduling, and that another
// seed gives other draws.
func TestOrdinalReproducible(t *testing.T) {
	td := makeToy(3, 50)
	run := func(seed uint64, smp mcmc.Sampler) []byte {
		res := fit(t, td.data, Options{Common: mcmc.Common{Sampler: smp, Settings: mcmc.Settings{Chains: 3, Samples: 200, Burnin: 100, Seed: seed}}})
		res.Diagnostics.Seconds, res.Diagnostics.SamplingSeconds, res.Diagnostics.SweepsPerSecond, res.Diagnostics.ESSPerCPUSecond = 0, 0, 0, 0
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, smp := range []mcmc.Sampler{mcmc.DefaultSampler, mcmc.PaperSampler} {
		a := run(5, smp)
		b := run(5, smp)
		if string(a) != string(b) {
			t.Errorf("%v: two fits with seed 5 differ", smp)
		}
		if c := run(6, smp); string(a) == string(c) {
			t.Errorf("%v: seeds 5 and 6 give the same result", smp)
		}
	}
}

// TestOrdinalCancelAndProgress checks that progress is reported while the
// chains run and that cancelling the context stops the fit (within a sweep).
func TestOrdinalCancelAndProgress(t *testing.T) {
	d := loadSirtK1(t)
	var mu sync.Mutex
	var reports []multirater.Progress
	var cancelled time.Time
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// About 1e8 sweeps per chain: it only ends by cancellation.
	opts := Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 1000, Thin: 100000, Seed: 1}}, Progress: func(p multirater.Progress) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, p)
		if len(reports) == 3 {
			cancelled = time.Now()
			cancel()
		}
	}}
	_, err := Fit(ctx, d, opts)
	back := time.Now()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The fit would run for hours: the bound catches a cancellation that
	// is not honoured, not a slow machine (it returns within a sweep).
	if lag := back.Sub(cancelled); lag > 60*time.Second {
		t.Errorf("FitOrdinal returned %v after the cancellation", lag)
	}
	if len(reports) < 3 {
		t.Fatalf("%d progress reports", len(reports))
	}
	for i, p := range reports {
		if p.Fraction < 0 || p.Fraction > 1 || (i > 0 && p.Fraction < reports[i-1].Fraction) {
			t.Errorf("report %d: fraction %v after %v", i, p.Fraction, reports[max(i-1, 0)].Fraction)
		}
		if p.Phase != "burn-in" && p.Phase != "sampling" {
			t.Errorf("report %d: phase %q", i, p.Phase)
		}
		if p.Elapsed <= 0 || (p.Fraction > 0.005 && p.ETA <= 0) {
			t.Errorf("report %d: elapsed %v, ETA %v", i, p.Elapsed, p.ETA)
		}
	}
	if gap := reports[2].Elapsed - reports[1].Elapsed; gap > 60*time.Second {
		t.Errorf("%v between progress reports", gap)
	}
}

// checkLevels checks that p is a distribution over k levels (to the
// 6-digit rounding of the result).
func checkLevels(t *testing.T, what string, p []float64, k int) {
	t.Helper()
	if len(p) != k {
		t.Errorf("%s: %d probabilities for %d levels", what, len(p), k)
		return
	}
	sum := 0.0
	for _, v := range p {
		if v < 0 || v > 1 {
			t.Errorf("%s: probability %v", what, v)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-5 {
		t.Errorf("%s: probabilities sum to %v", what, sum)
	}
}

// TestOrdinalChainsApart runs a fit's chains in parts (as worker processes
// do when a fit fans out) and checks that the summary of their outputs is
// the fit in one call, bit for bit, for both samplers and a kernel prior.
func TestOrdinalChainsApart(t *testing.T) {
	td := makeToy(3, 40)
	for _, tc := range []struct {
		name  string
		data  *Data
		smp   mcmc.Sampler
		parts [][2]int
	}{
		{"default sampler, rbf", td.data, mcmc.DefaultSampler, [][2]int{{2, 3}, {0, 2}}},
		{"paper sampler, rbf", td.data, mcmc.PaperSampler, [][2]int{{0, 1}, {1, 2}, {2, 3}}},
		{"sirt k1, identity", loadSirtK1(t), mcmc.DefaultSampler, [][2]int{{0, 1}, {1, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Common: mcmc.Common{Sampler: tc.smp, Settings: mcmc.Settings{Chains: 3, Samples: 60, Burnin: 40, Seed: 11}}}
			mcmctest.CheckParts(t, func(ctx context.Context) (*multirater.FitResult, error) { return Fit(ctx, tc.data, opts) }, 3, tc.parts, nil)
		})
	}
}
