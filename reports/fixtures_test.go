package reports

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
	"concord/multirater/bounded"
	"concord/multirater/mcmc"
	"concord/multirater/ordinal"
	"concord/raters"
)

// A case is one report the tests build: from a real fit result, a live fit
// or a synthetic classification fixture.
type reportCase struct {
	name string
	rep  *Report
	fit  *Fit
}

// testdataFit reads the real fit result testdata/name (see
// testdata/README.md for how each was made).
func testdataFit(t testing.TB, name string) *Fit {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fit, err := ReadFit(f)
	if err != nil {
		t.Fatal(err)
	}
	return fit
}

// ordinalFit reads the real fit of testdata/fit_sirt_k1.json.
func ordinalFit(t testing.TB) *Fit { return testdataFit(t, "fit_sirt_k1.json") }

// fileCase is the report of the real fit testdata/fitFile of project
// (scheme), built with the labels and items files it was made from
// (testdata/labels, testdata/items: gold labels and item texts) and, when
// boot > 0, their agreement analysis with boot bootstrap replicates
// (seed 1).
func fileCase(t testing.TB, name, fitFile, project, scheme, labels, items string, boot int) reportCase {
	t.Helper()
	fit := testdataFit(t, fitFile)
	s := annotations.MustParseScheme(scheme)
	ld, err := annotations.LoadFiles(filepath.Join("testdata", labels),
		annotations.LoadOptions{Scheme: &s, ItemsPath: filepath.Join("testdata", items)})
	if err != nil {
		t.Fatal(err)
	}
	return builtCase(t, name, annotations.Project{Name: project, Scheme: s}, fit, ld.Dataset, boot)
}

// builtCase is the report of fit in project with the dataset ds (nil:
// none) and, when boot is not 0 and there is a dataset, the agreement
// analysis of its labels with boot bootstrap replicates (seed 1; -1: none).
func builtCase(t testing.TB, name string, project annotations.Project, fit *Fit, ds *annotations.Dataset, boot int) reportCase {
	t.Helper()
	var ag *raters.Report
	if boot != 0 && ds != nil {
		a, err := analysis.Agreement(context.Background(), ds, raters.Options{Bootstrap: boot, Seed: 1})
		if err != nil {
			t.Fatalf("agreement: %v", err)
		}
		ag = a.Report
	}
	rep, err := BuildFit(project, fit, ag, ds)
	if err != nil {
		t.Fatal(err)
	}
	return reportCase{name, rep, fit}
}

// recordedCase is the report of fit in project (scheme), with the
// agreement analysis of the labels the fit records (200 bootstrap
// replicates).
func recordedCase(t testing.TB, name, project, scheme string, fit *Fit) reportCase {
	t.Helper()
	s := annotations.MustParseScheme(scheme)
	return builtCase(t, name, annotations.Project{Name: project, Scheme: s}, fit, fit.Dataset(s), 200)
}

func ordinalCase(t testing.TB) reportCase {
	return recordedCase(t, "ordinal", "sirt-writing-k1", "ordinal:0..3", ordinalFit(t))
}

// liveOrdinalCase fits the ordinal model to a small synthetic data set
// with few draws (fixed seed): a FitResult as analysis.Fit returns it.
func liveOrdinalCase(t testing.TB) reportCase {
	t.Helper()
	data := &ordinal.Data{
		ItemIDs:  []string{"a", "b", "c", "d", "e", "f", "g", "unrated"},
		RaterIDs: []string{"r1", "r2", "r3"},
		Levels:   []string{"1", "2", "3"},
	}
	grades := [][]int{{0, 0, 1}, {0, 1, 0}, {1, 1, 1}, {1, 2, 1}, {2, 2, 2}, {2, 1, 2}, {0, 2, 0}}
	for n, g := range grades {
		for l, v := range g {
			data.Ratings = append(data.Ratings, multirater.Rating{Item: n, Rater: l, Level: v})
		}
	}
	res, err := ordinal.Fit(context.Background(), data, ordinal.Options{Common: mcmc.Common{
		Settings: mcmc.Settings{Chains: 2, Samples: 100, Burnin: 50, Seed: 3}, FlagThreshold: 0.2, KeepDraws: 50,
	}})
	return liveCase(t, "live-ordinal", "live", "ordinal:1..3", res, err)
}

// liveCase is the report of a live fit's result (res, or the fit's error
// err) of project, its scheme set to scheme when not empty, built
// without labels or the agreement analysis.
func liveCase(t testing.TB, name, project, scheme string, res *multirater.FitResult, err error) reportCase {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if scheme != "" {
		res.Model.Scheme = scheme
	}
	rep, err := Build(annotations.Project{Name: project}, res, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reportCase{name, rep, FitFromResult(res)}
}

// degenerateOrdinalCase fits one rater's one label of one item, K = 2.
func degenerateOrdinalCase(t testing.TB) reportCase {
	t.Helper()
	data := &ordinal.Data{ItemIDs: []string{"only"}, RaterIDs: []string{"solo"}, Levels: []string{"no", "yes"},
		Ratings: []multirater.Rating{{Item: 0, Rater: 0, Level: 1}}}
	res, err := ordinal.Fit(context.Background(), data, ordinal.Options{Common: mcmc.Common{Settings: mcmc.Settings{Chains: 2, Samples: 40, Burnin: 10, Seed: 1}}})
	return liveCase(t, "degenerate-ordinal", "degenerate", "", res, err)
}

// binaryFixture is a SYNTHETIC classification fit result, written by hand
// because the classification model (issue 4) is not implemented yet: the
// shape follows issue 4 (per item class_probs and class; per rater
// precision; flags; diagnostics), the numbers are made up. 8 items, 3
// raters, binary scheme with gold labels on 6 items.
func binaryFixture() (*Fit, *annotations.Dataset) {
	levels := []string{"0", "1"}
	items := []struct {
		id     string
		p1     float64
		labels map[string]string
		gold   string
	}{
		{"t1", 0.95, map[string]string{"ann": "1", "bob": "1", "cat": "1"}, "1"},
		{"t2", 0.80, map[string]string{"ann": "1", "bob": "0", "cat": "1"}, "1"},
		{"t3", 0.62, map[string]string{"ann": "1", "bob": "0"}, "0"},
		{"t4", 0.30, map[string]string{"ann": "0", "bob": "1", "cat": "0"}, "0"},
		{"t5", 0.10, map[string]string{"ann": "0", "bob": "0", "cat": "0"}, "0"},
		{"t6", 0.55, map[string]string{"bob": "1", "cat": "0"}, "1"},
		{"t7", 0.05, map[string]string{"ann": "0", "cat": "0"}, ""},
		{"t8", 0.50, nil, ""},
	}
	fit := &Fit{
		Schema: multirater.FitSchema,
		Model: multirater.ModelSettings{Model: "classification", Scheme: "binary:0,1,pos=1", Kernel: "identity", Identifiability: "weak",
			Sampler: "default", Chains: 2, Samples: 6, Burnin: 10, Thin: 1, Seed: 42, V: 1, Lambda: 1, FlagThreshold: 0.05,
			MaxRhat: 1.01, MinESS: 400, KeepDraws: 4, Backend: "gonum"},
		Diagnostics: multirater.Diagnostics{MaxRhat: 1.02, MinESSBulk: 350, MinESSTail: 300, WorstRhat: "alpha[bob]", WorstESS: "M[t6,1]",
			Converged: false, Verdict: "NOT converged: max R-hat 1.0200 (alpha[bob]) is not below 1.01", Seconds: 1.5, SamplingSeconds: 1.2,
			Draws: 12, SweepsPerSecond: 1000,
			Parameters: []multirater.ParamDiag{
				{Name: "alpha[ann]", Mean: 3, SD: 1, Rhat: 1.001, ESSBulk: 900, ESSTail: 800},
				{Name: "alpha[bob]", Mean: 0.8, SD: 0.5, Rhat: 1.02, ESSBulk: 500, ESSTail: 450},
				{Name: "alpha[cat]", Mean: 2, SD: 0.9, Rhat: 1.004, ESSBulk: 700, ESSTail: 600},
				{Name: "M[t6,1]", Mean: 0.1, SD: 1, Rhat: 1.003, ESSBulk: 350, ESSTail: 300},
			},
			Autocorrelation: map[string][]float64{"ann": {1, 0.5, 0.2}, "bob": {1, 0.7, 0.4}, "cat": {1, 0.4, 0.1}},
		},
		Levels: levels,
		Raters: []multirater.RaterResult{
			{ID: "ann", NLabels: 6, Precision: multirater.Estimate{Mean: 3, SD: 1, Q025: 1.4, Q50: 2.9, Q975: 5.2}, Variance: multirater.Estimate{Mean: 0.37, SD: 0.12, Q025: 0.19, Q50: 0.34, Q975: 0.71}, MeanLogPred: -0.3},
			{ID: "bob", NLabels: 7, Precision: multirater.Estimate{Mean: 0.8, SD: 0.5, Q025: 0.2, Q50: 0.7, Q975: 2}, Variance: multirater.Estimate{Mean: 1.8, SD: 1.2, Q025: 0.5, Q50: 1.4, Q975: 5}, MeanLogPred: -0.7},
			{ID: "cat", NLabels: 6, Precision: multirater.Estimate{Mean: 2, SD: 0.9, Q025: 0.8, Q50: 1.9, Q975: 4}, Variance: multirater.Estimate{Mean: 0.6, SD: 0.3, Q025: 0.25, Q50: 0.53, Q975: 1.25}, MeanLogPred: -0.4},
		},
		Flags: []multirater.Flag{
			{Item: "t4", Rater: "bob", Label: "1", Prob: 0.03, Expected: "0"},
			{Item: "t2", Rater: "bob", Label: "0", Prob: 0.045, Expected: "1"},
		},
		Traces: &multirater.Traces{Every: 1, Alpha: map[string][][]float64{
			"ann": {{2.5, 3.1, 3.4, 2.8, 3.0, 2.7, 3.3, 3.2}, {2.9, 3.6, 2.6, 3.1, 2.8, 3.0, 3.5, 2.9}},
			"bob": {{0.5, 0.9, 1.1, 0.7, 0.6, 0.8, 0.9, 1.0}, {0.7, 0.6, 0.9, 1.2, 0.8, 0.5, 0.7, 0.9}},
			"cat": {{1.8, 2.2, 2.0, 1.6, 2.5, 2.1, 1.9, 2.3}, {2.1, 1.7, 2.4, 2.0, 1.8, 2.2, 2.6, 1.9}},
		}},
		Draws: &multirater.Draws{N: 4, Alpha: [][]float64{{2.5, 0.5, 1.8}, {3.4, 1.1, 2.0}, {2.9, 0.6, 2.4}, {3.1, 0.9, 2.6}}},
	}
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("binary:0,1,pos=1")}
	for _, it := range items {
		fi := FitItem{ItemResult: multirater.ItemResult{ID: it.id, NLabels: len(it.labels), Labels: it.labels}, ClassProbs: []float64{1 - it.p1, it.p1}}
		fi.Class = levels[0]
		if it.p1 > 0.5 {
			fi.Class = levels[1]
		}
		fit.Items = append(fit.Items, fi)
		ds.Items = append(ds.Items, annotations.Item{ID: it.id, Gold: it.gold})
	}
	for _, it := range items {
		for _, r := range []string{"ann", "bob", "cat"} {
			if v, ok := it.labels[r]; ok {
				ds.Labels = append(ds.Labels, annotations.Label{Item: it.id, Rater: r, Value: v})
			}
		}
	}
	return fit, ds
}

func binaryCase(t testing.TB) reportCase {
	fit, ds := binaryFixture()
	return builtCase(t, "binary", annotations.Project{Name: "synthetic-binary", Scheme: ds.Scheme}, fit, ds, 100)
}

// nominalFixture is a SYNTHETIC three-class classification result (see
// binaryFixture), without traces or draws and with class_probs given in
// the JSON form of issue 4 (an object keyed by class), read through
// ReadFit.
const nominalFixture = `{"schema":"concord.fit/v1",
"model":{"model":"classification","scheme":"nominal:cat,dog,fox","kernel":"identity","identifiability":"weak","sampler":"default","chains":2,"samples":10,"burnin":5,"thin":1,"seed":9,"v":1,"lambda":1,"sigma_b":0,"flag_threshold":0.05,"max_rhat":1.01,"min_ess":400,"keep_draws":0,"backend":"gonum"},
"diagnostics":{"max_rhat":1.003,"min_ess_bulk":420,"min_ess_tail":400,"worst_rhat":"alpha[x]","worst_ess":"alpha[y]","converged":true,"verdict":"converged","seconds":0.2,"sampling_seconds":0.1,"draws":20,"sweeps_per_second":100,
 "parameters":[{"name":"alpha[x]","mean":1,"sd":0.3,"rhat":1.003,"ess_bulk":500,"ess_tail":450},{"name":"alpha[y]","mean":2,"sd":0.5,"rhat":1.001,"ess_bulk":420,"ess_tail":400}],"autocorrelation":{}},
"levels":["cat","dog","fox"],
"items":[
 {"id":"p1","n_labels":2,"labels":{"x":"cat","y":"cat"},"class_probs":{"cat":0.9,"dog":0.05,"fox":0.05},"class":"cat","rater_class_probs":{"x":[0.8,0.1,0.1],"y":[0.9,0.05,0.05]}},
 {"id":"p2","n_labels":2,"labels":{"x":"dog","y":"fox"},"class_probs":{"cat":0.1,"dog":0.5,"fox":0.4},"class":"dog","rater_class_probs":{"x":[0.1,0.6,0.3],"y":[0.1,0.86,0.04]}},
 {"id":"p3","n_labels":1,"labels":{"y":"fox"},"class_probs":{"cat":0.2,"dog":0.2,"fox":0.6},"class":"fox","rater_class_probs":{"y":[0.2,0.2,0.6]}},
 {"id":"p4","n_labels":0,"class_probs":{"cat":0.34,"dog":0.33,"fox":0.33},"class":"cat"}],
"raters":[
 {"id":"x","n_labels":2,"level_counts":[1,1,0],"precision":{"mean":1,"sd":0.3,"q025":0.5,"q50":1,"q975":1.6},"variance":{"mean":1.1,"sd":0.4,"q025":0.6,"q50":1,"q975":2},"severity":0,"severity_q025":0,"severity_q975":0,"mean_log_pred":-0.5},
 {"id":"y","n_labels":3,"level_counts":[1,0,2],"precision":{"mean":2,"sd":0.5,"q025":1.1,"q50":2,"q975":3},"variance":{"mean":0.55,"sd":0.2,"q025":0.33,"q50":0.5,"q975":0.9},"severity":0,"severity_q025":0,"severity_q975":0,"mean_log_pred":-0.3}],
"flags":[{"item":"p2","rater":"y","label":"fox","prob":0.04,"expected":"dog"}]}`

func nominalCase(t testing.TB) reportCase {
	fit, err := ReadFit(strings.NewReader(nominalFixture))
	if err != nil {
		t.Fatal(err)
	}
	return recordedCase(t, "nominal", "synthetic-nominal", "nominal:cat,dog,fox", fit)
}

// degenerateClassCase is a SYNTHETIC classification result with one rater,
// one item and two classes, no traces, no draws and no diagnostics.
func degenerateClassCase(t testing.TB) reportCase {
	fit := &Fit{
		Schema: multirater.FitSchema,
		Model:  multirater.ModelSettings{Model: "classification", Chains: 1, Samples: 1, Thin: 1},
		Levels: []string{"a", "b"},
		Items:  []FitItem{{ItemResult: multirater.ItemResult{ID: "i", NLabels: 1, Labels: map[string]string{"r": "b"}}, ClassProbs: []float64{0.4, 0.6}, Class: "b"}},
		Raters: []multirater.RaterResult{{ID: "r", NLabels: 1, Precision: multirater.Estimate{Mean: 1, Q025: 1, Q50: 1, Q975: 1}, Variance: multirater.Estimate{Mean: 1, Q025: 1, Q50: 1, Q975: 1}}},
	}
	return builtCase(t, "degenerate-classification", annotations.Project{Name: "degenerate-class"}, fit, nil, 0)
}

// boundedFit reads the real fit of bounded ratings in
// testdata/fit_snow_valence.json.
func boundedFit(t testing.TB) *Fit { return testdataFit(t, "fit_snow_valence.json") }

// boundedCase is the report of the real bounded fit, with the agreement
// analysis of the ratings it records.
func boundedCase(t testing.TB) reportCase {
	return recordedCase(t, "bounded", "snow-valence", "bounded:-100..100", boundedFit(t))
}

// liveBoundedCase fits the bounded model (beta likelihood, no bias) to a
// small synthetic data set on 0..100, with one item nobody rated: a
// FitResult as analysis.Fit returns it, reported without the agreement
// analysis.
func liveBoundedCase(t testing.TB) reportCase {
	t.Helper()
	data := &bounded.Data{
		ItemIDs:  []string{"a", "b", "c", "d", "e", "unrated"},
		RaterIDs: []string{"r1", "r2", "r3"},
		Lo:       0, Hi: 100,
	}
	vals := [][]float64{{10, 15, 30}, {25, 20, 60}, {50, 45, 55}, {70, 80, 40}, {90, 100, 85}}
	for n, row := range vals {
		for l, v := range row {
			data.Ratings = append(data.Ratings, bounded.Rating{Item: n, Rater: l, Value: v})
		}
	}
	res, err := bounded.Fit(context.Background(), data, bounded.Options{Seed: 3, FlagThreshold: 0.2, RankDraws: 100})
	return liveCase(t, "live-bounded", "live-bounded", "bounded:0..100", res, err)
}

// robustFit reads the real fit of the robust model in
// testdata/fit_snow_rte40_robust.json.
func robustFit(t testing.TB) *Fit { return testdataFit(t, "fit_snow_rte40_robust.json") }

// robustCase is the report of the real robust fit (error rates learnt by
// EM, model selection by the evidence), with the agreement analysis of its
// labels.
func robustCase(t testing.TB) reportCase {
	return fileCase(t, "robust", "fit_snow_rte40_robust.json", "snow-rte40", "binary:0,1,pos=1", "snow_rte40.csv", "snow_rte40_items.csv", 100)
}

// confusionCase is the report of the real fit of the confusion model in
// testdata/fit_snow_rte40_confusion.json (a confusion matrix per rater,
// variational Bayes), with the agreement analysis of its labels.
func confusionCase(t testing.TB) reportCase {
	return fileCase(t, "confusion", "fit_snow_rte40_confusion.json", "snow-rte40", "binary:0,1,pos=1", "snow_rte40.csv", "snow_rte40_items.csv", 100)
}

// aucCase is the report of the real fit of the AUC scoring model in
// testdata/fit_pima80_auc.json (80 women of Pima.tr, linear scores),
// without the agreement analysis.
func aucCase(t testing.TB) reportCase {
	return fileCase(t, "auc", "fit_pima80_auc.json", "pima80", "binary:No,Yes,pos=Yes", "pima80_labels.csv", "pima80_items.csv", 0)
}

// allCases returns every report the tests check.
func allCases(t testing.TB) []reportCase {
	return []reportCase{ordinalCase(t), liveOrdinalCase(t), degenerateOrdinalCase(t), binaryCase(t), nominalCase(t), degenerateClassCase(t),
		boundedCase(t), liveBoundedCase(t), robustCase(t), confusionCase(t), aucCase(t)}
}

// manyRatersCase is a SYNTHETIC binary classification of 300 items by 164
// raters, 10 labels per item (the shape of the RTE demo project: many
// raters with few labels each), with kept precision draws and the
// raters' predictive class distributions; the agreement analysis without
// a bootstrap. Raters who labelled few items have wide posteriors.
func manyRatersCase(t testing.TB) reportCase {
	t.Helper()
	const nItems, nRaters, perItem, draws = 300, 164, 10, 60
	rng := rand.New(rand.NewPCG(20, 8))
	levels := []string{"0", "1"}
	fit := &Fit{
		Schema: multirater.FitSchema,
		Model: multirater.ModelSettings{Model: "classification", Scheme: "binary:0,1,pos=1", Kernel: "identity", Identifiability: "weak",
			Sampler: "default", Chains: 2, Samples: 30, Burnin: 10, Thin: 1, Seed: 5, V: 1, Lambda: 1, FlagThreshold: 0.05,
			MaxRhat: 1.01, MinESS: 400, KeepDraws: draws, Backend: "gonum"},
		Diagnostics: multirater.Diagnostics{Converged: true, Verdict: "converged", MaxRhat: 1.004, MinESSBulk: 500, MinESSTail: 450, Draws: draws},
		Levels:      levels,
		Draws:       &multirater.Draws{N: draws},
	}
	skill := make([]float64, nRaters)
	counts := make([]int, nRaters)
	for l := range skill {
		skill[l] = 0.55 + 0.44*rng.Float64()
	}
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("binary:0,1,pos=1")}
	lc := make([][]int, nRaters)
	for l := range lc {
		lc[l] = make([]int, 2)
	}
	for n := 0; n < nItems; n++ {
		truth := rng.IntN(2)
		id := "item" + strconv.Itoa(n)
		fi := FitItem{ItemResult: multirater.ItemResult{ID: id, Labels: map[string]string{}, RaterClassProbs: map[string][]float64{}}}
		// Raters 0..19 label often, the others rarely.
		for len(fi.Labels) < perItem {
			l := rng.IntN(nRaters)
			if rng.Float64() < 0.5 {
				l = rng.IntN(20)
			}
			r := "w" + strconv.Itoa(l)
			if _, dup := fi.Labels[r]; dup {
				continue
			}
			v := truth
			if rng.Float64() > skill[l] {
				v = 1 - truth
			}
			fi.Labels[r] = levels[v]
			p := []float64{skill[l], 1 - skill[l]}
			if truth == 1 {
				p[0], p[1] = p[1], p[0]
			}
			fi.RaterClassProbs[r] = p
			counts[l]++
			lc[l][v]++
			ds.Labels = append(ds.Labels, annotations.Label{Item: id, Rater: r, Value: levels[v]})
		}
		fi.NLabels = perItem
		p1 := 0.1 + 0.8*float64(truth) + 0.1*(rng.Float64()-0.5)
		fi.ClassProbs = []float64{1 - p1, p1}
		fi.Class = levels[truth]
		fit.Items = append(fit.Items, fi)
		ds.Items = append(ds.Items, annotations.Item{ID: id, Text: "pair " + strconv.Itoa(n)})
	}
	for l := 0; l < nRaters; l++ {
		m := 4 * skill[l] * skill[l]
		spread := 1.5 / math.Sqrt(float64(counts[l]+1))
		fit.Raters = append(fit.Raters, multirater.RaterResult{ID: "w" + strconv.Itoa(l), NLabels: counts[l], LevelCounts: lc[l],
			Precision: multirater.Estimate{Mean: m, SD: m * spread, Q025: m * math.Exp(-2*spread), Q50: m, Q975: m * math.Exp(2*spread)},
			Variance:  multirater.Estimate{Mean: 1 / m, SD: spread / m, Q025: math.Exp(-2*spread) / m, Q50: 1 / m, Q975: math.Exp(2*spread) / m}})
	}
	for d := 0; d < draws; d++ {
		row := make([]float64, nRaters)
		for l := range row {
			row[l] = fit.Raters[l].Precision.Mean * math.Exp(1.5/math.Sqrt(float64(counts[l]+1))*rng.NormFloat64())
			if counts[l] < 10 {
				row[l] = rng.ExpFloat64() // few labels: about the Gamma(1, 1) prior
			}
		}
		fit.Draws.Alpha = append(fit.Draws.Alpha, row)
	}
	return builtCase(t, "many-raters", annotations.Project{Name: "many-raters", Scheme: ds.Scheme}, fit, ds, -1)
}

// writtenCSV returns the records of the CSV table that write writes; a
// write or parse error fails the test.
func writtenCSV(t testing.TB, write func(*bytes.Buffer) error) [][]string {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
