package raters

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
)

// Level is the level of measurement of the ratings. It decides which
// coefficients apply.
type Level int

// The levels of measurement.
const (
	// Nominal: unordered classes (nominal and binary schemes).
	Nominal Level = iota
	// Ordinal: ordered levels.
	Ordinal
	// Interval: real values (bounded schemes).
	Interval
	// Ratio: real values with a natural zero.
	Ratio
)

var levelNames = [...]string{"nominal", "ordinal", "interval", "ratio"}

func (l Level) String() string { return enumName(levelNames[:], l, "Level") }

// Options control Analyze. The zero value analyses nominal data with 1000
// bootstrap replicates, seed 0 and 95% intervals.
type Options struct {
	// Level of measurement of the ratings.
	Level Level
	// Bootstrap is the number of bootstrap replicates (resampling items
	// with replacement) for the percentile intervals; 0 means 1000, a
	// negative value none (the intervals are then the analytic ones).
	Bootstrap int
	// Seed seeds the bootstrap and the random starts of Dawid-Skene,
	// MACE, M-MSR and KOS.
	Seed uint64
	// RandomStart says how M-MSR and KOS draw their starts from Seed:
	// StartConcord (the zero value) or StartCrowdKit (crowd-kit's numpy
	// draws; Seed must then be below 2^32).
	RandomStart RandomStart
	// DataOrder, when not nil, gives each label's position in the user's
	// data (the file's rows; crowd-kit's DataFrame order): the label added
	// x-th is row DataOrder[x], a permutation of 0..r.Len()-1; nil means
	// the order added. StartCrowdKit's draws follow it.
	DataOrder []int32
	// ConfLevel of every interval; 0 means 0.95.
	ConfLevel float64
	// ObservedCategoriesOnly: see CoefOptions.
	ObservedCategoriesOnly bool
	// ICC, DS, GLAD and MACE pass options to ICC, the Dawid-Skene
	// aggregators, GLAD and MACE (their ConfLevel, Seed and Values are set
	// by Analyze).
	ICC  ICCOptions
	DS   DSOptions
	GLAD GLADOptions
	MACE MACEOptions
	// RaterNames, ItemNames and CategoryNames label the report; nil
	// means the indices.
	RaterNames, ItemNames, CategoryNames []string
	// ScaleMin and ScaleMax are the ends of the rating scale of continuous
	// data (a bounded scheme's [lo, hi]), the range of the per-item and
	// per-rater agreement scores (see AgreementTables); equal values mean
	// the observed range. Categorical data use the first and last
	// category's values.
	ScaleMin, ScaleMax float64
	// Pairs chooses the rater pairs of the pairwise statistics (Cohen's
	// kappa per pair, the profiles' pairwise rows, the pairwise matrix);
	// the zero value is PairOptions' default, which keeps them bounded.
	Pairs PairOptions
	// Only computes one part of the report: "" (everything),
	// OnlyCoefficients, OnlyAggregators, OnlyItems or OnlyRaters.
	Only string
	// Ties breaks majority-vote and Wawa ties (TieFrequent, the zero
	// value, or TieFirst); TieOrder is the order of the categories for
	// TieFirst (see MVOptions).
	Ties     TieRule
	TieOrder []int
	// Gold holds each item's known class (-1: unknown; nil: none): the
	// gold majority vote runs on it, and with DSGold Dawid-Skene fixes
	// those items' classes (DSOptions.TrueClasses).
	Gold   []int
	DSGold bool
	// LabelProbs holds each label's probability in the order the labels
	// were added (0: none, a hard label; nil: no label has one): the
	// probability-weighted majority vote (ProbMajorityVote) runs when
	// some label has one.
	LabelProbs []float64
	// CI chooses the analytic intervals and the tests: CIT (the zero
	// value, irrCAC's t intervals and tests) or CINormal (statsmodels'
	// and SAS's normal ones). Bootstrap intervals replace the analytic
	// ones whatever CI says; the tests are always analytic.
	CI CIKind
	// Population is the size N of the population of subjects the items
	// are a sample of, for irrCAC's finite-population correction: every
	// analytic variance (SE², SENull²) of the coefficients with t
	// intervals is multiplied by 1 - n/N, n the items it counts, and the
	// t or normal intervals and the tests use the corrected SE (ICC's
	// F intervals and bootstrap intervals are not corrected). 0 means an
	// infinite population, no correction; otherwise it must be at least
	// the number of items (Analyze returns an error).
	Population int
	// Null is the value every coefficient is tested against besides 0
	// (Estimate.ZNull, PNull); 0 means no second test.
	Null float64
	// Weights are the weightings of the weighted coefficients
	// (Report.Weighted); nil means DefaultWeights of the level.
	Weights []Weights
	// WeightMatrix, if not nil, is a K × K matrix of agreement weights on
	// the categories of a categorical Ratings (w_kk = 1, symmetric; see
	// TableOptions.WeightMatrix) whose weighted coefficients (percent
	// agreement, Fleiss', Conger's, Gwet's AC2, Brennan-Prediger,
	// Krippendorff's alpha; irrCAC's raw-data functions take any weight
	// matrix, agree.coeff3.raw.r) are added to Report.Weighted as
	// "custom" (CustomWeightsName), beside Weights. With
	// ObservedCategoriesOnly, the rows and columns of the categories
	// that occur are used.
	WeightMatrix [][]float64
	// MaxItemRows bounds the document: with more items than this, and
	// Only empty, the aggregators' per-item rows (Consensus.Items) are
	// left out of the report, with a note (Only = OnlyAggregators lists
	// them); 0 means no bound. The rater rows, profiles and per-item
	// agreement are computed as usual. DefaultMaxItemRows is the bound
	// of concord agreement and the API.
	MaxItemRows int
	// Progress, when not nil, is called with the bootstrap replicates
	// done and their number as they complete (from any goroutine; it
	// must be safe for concurrent use and return quickly).
	Progress func(done, total int)
	// Replicates, when not nil, are the values of every bootstrap
	// replicate [0, Bootstrap) of this analysis computed apart
	// (AnalyzeReplicates over ranges, joined by MergeReplicates): the
	// analysis takes its percentile intervals from them instead of
	// running the bootstrap, and they are those of the bootstrap run here,
	// bit for bit.
	Replicates *Replicates
}

// DefaultMaxItemRows is the bound on items above which the agreement
// document of the CLI and the API leaves out the aggregators' per-item rows
// (six aggregators × items rows; 1M labels on 200,000 items would give 160
// MB of them).
const DefaultMaxItemRows = 50_000

// The parts of the report Options.Only can ask for.
const (
	// OnlyCoefficients: the agreement coefficients, Cohen's kappa per
	// pair, the pairwise matrix and the strongest and weakest pairs.
	OnlyCoefficients = "coefficients"
	// OnlyAggregators: the baseline aggregators.
	OnlyAggregators = "aggregators"
	// OnlyItems: the per-item agreement scores.
	OnlyItems = "items"
	// OnlyRaters: the rater profiles (without agreement with the
	// aggregators, which are not computed) and the per-rater agreement
	// rows.
	OnlyRaters = "raters"
)

// Coefficients lists the report's unweighted coefficients of all raters
// under their JSON names (a nil Estimate where the report has none):
// Fleiss', Randolph's and Conger's kappa, Scott's pi, Gwet's AC1,
// Brennan-Prediger and percent agreement. Krippendorff's alpha (by metric),
// Cohen's kappa (by pair), the weighted sets and the ICCs are apart.
func (r *Report) Coefficients() []NamedEstimate {
	return []NamedEstimate{{"fleiss_kappa", r.FleissKappa}, {"randolph_kappa", r.RandolphKappa}, {"conger_kappa", r.CongerKappa},
		{"scott_pi", r.ScottPi}, {"gwet_ac1", r.GwetAC1}, {"brennan_prediger", r.BrennanPrediger}, {"percent_agreement", r.PercentAgreement}}
}

// OnlyParts lists the values of Options.Only besides "".
var OnlyParts = []string{OnlyCoefficients, OnlyAggregators, OnlyItems, OnlyRaters}

func (o Options) want(part string) bool {
	switch o.Only {
	case "":
		return true
	case OnlyCoefficients, OnlyAggregators, OnlyItems, OnlyRaters:
		return o.Only == part
	}
	panic(fmt.Sprintf("raters: unknown Options.Only %q", o.Only))
}

// orDefault is the value of an option v whose zero value is the default
// def and a negative value none (0).
func orDefault[T int | float64](v, def T) T {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return def
	}
	return v
}

// positiveOr is the value of an option v whose zero value (or any value
// not positive) is the default def.
func positiveOr[T int | float64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (o Options) bootstrap() int { return orDefault(o.Bootstrap, 1000) }

// CohenPair is Cohen's kappa between two raters, under the weights that
// apply to the level of measurement.
type CohenPair struct {
	A string `json:"a"`
	B string `json:"b"`
	// N is the number of items both rated.
	N          int       `json:"n"`
	Unweighted *Estimate `json:"unweighted,omitempty"`
	Linear     *Estimate `json:"linear,omitempty"`
	Quadratic  *Estimate `json:"quadratic,omitempty"`
}

// CategoryKappa is Fleiss' kappa of one category against the others.
type CategoryKappa struct {
	Category string `json:"category"`
	// Estimate's SENull is the standard error under the hypothesis of no
	// agreement (Fleiss, Nee & Landis 1979), defined when every item has
	// the same number of ratings.
	Estimate
}

// MarshalJSON flattens the estimate and adds the category and se_null.
func (c CategoryKappa) MarshalJSON() ([]byte, error) {
	return marshalFlat(c.Estimate, map[string]any{"category": c.Category, "se_null": num(c.SENull)})
}

// UnmarshalJSON reads what MarshalJSON writes (without it the embedded
// Estimate's would read the estimate and drop the category).
func (c *CategoryKappa) UnmarshalJSON(b []byte) error {
	var cat struct {
		Category string `json:"category"`
	}
	if err := json.Unmarshal(b, &cat); err != nil {
		return err
	}
	if err := c.Estimate.UnmarshalJSON(b); err != nil {
		return err
	}
	c.Category = cat.Category
	return nil
}

// WeightedSet holds the weighted coefficients under one kind of weights.
type WeightedSet struct {
	PercentAgreement  Estimate `json:"percent_agreement"`
	FleissKappa       Estimate `json:"fleiss_kappa"`
	CongerKappa       Estimate `json:"conger_kappa"`
	GwetAC2           Estimate `json:"gwet_ac2"`
	BrennanPrediger   Estimate `json:"brennan_prediger"`
	KrippendorffAlpha Estimate `json:"krippendorff_alpha"`
	// CohenKappa and ScottPi are the two-rater coefficients of a
	// contingency table (AnalyzeTable); nil otherwise.
	CohenKappa *Estimate `json:"cohen_kappa,omitempty"`
	ScottPi    *Estimate `json:"scott_pi,omitempty"`
}

// NamedEstimate is a coefficient of a report under its JSON name.
type NamedEstimate struct {
	Key      string
	Estimate *Estimate
}

// Coefficients lists the set's coefficients that every set has, under
// their JSON names, in the order of the document: percent agreement,
// Fleiss', Conger's kappa, Gwet's AC2, Brennan-Prediger and Krippendorff's
// alpha (not the two-rater CohenKappa and ScottPi).
func (s *WeightedSet) Coefficients() []NamedEstimate {
	return []NamedEstimate{{"percent_agreement", &s.PercentAgreement}, {"fleiss_kappa", &s.FleissKappa}, {"conger_kappa", &s.CongerKappa},
		{"gwet_ac2", &s.GwetAC2}, {"brennan_prediger", &s.BrennanPrediger}, {"krippendorff_alpha", &s.KrippendorffAlpha}}
}

// ICCReport holds the intraclass correlations with how they were computed.
type ICCReport struct {
	ICC1   Estimate `json:"ICC1"`
	ICC2   Estimate `json:"ICC2"`
	ICC3   Estimate `json:"ICC3"`
	ICC1k  Estimate `json:"ICC1k"`
	ICC2k  Estimate `json:"ICC2k"`
	ICC3k  Estimate `json:"ICC3k"`
	Method string   `json:"method"`
	N      int      `json:"n"`
	K      int      `json:"k"`
	MSB    num      `json:"msb"`
	MSJ    num      `json:"msj"`
	MSE    num      `json:"mse"`
	MSW    num      `json:"msw"`
	// FTests are the F tests of no agreement of the six ICCs, by name
	// (ICC1, ..., ICC3k), as psych::ICC and pingouin's intraclass_corr
	// report them (ICCResult.FTests).
	FTests map[string]ICCFTest `json:"f_tests"`
}

// ICCFTest is an ICC's F test against 0: the statistic F, its degrees of
// freedom and the p-value P(F(df1, df2) > F).
type ICCFTest struct {
	F   num `json:"f"`
	DF1 num `json:"df1"`
	DF2 num `json:"df2"`
	P   num `json:"p_value"`
}

// PairAgreement is a rater's agreement with one other rater.
type PairAgreement struct {
	Rater string `json:"rater"`
	// N is the number of items both rated.
	N int `json:"n"`
	// PercentAgreement is the share of those items with equal ratings
	// (categorical data).
	PercentAgreement num `json:"percent_agreement"`
	// Kappa is Cohen's kappa: unweighted for categorical data, quadratic
	// for continuous data. KappaQuadratic is the quadratic one for ordinal
	// data.
	Kappa          num `json:"kappa"`
	KappaQuadratic num `json:"kappa_quadratic,omitempty"`
	// MeanAbsDiff is the mean absolute difference of the values (ordinal
	// and continuous data).
	MeanAbsDiff num `json:"mean_abs_diff,omitempty"`
}

// ConsensusAgreement is a rater's agreement with an aggregator's consensus.
type ConsensusAgreement struct {
	// Agreement is the share of the rater's labels equal to the consensus
	// class (categorical data).
	Agreement num `json:"agreement"`
	// MAE is the mean absolute difference from the consensus score.
	MAE num `json:"mae"`
}

// RaterProfile summarises one rater.
type RaterProfile struct {
	Rater string `json:"rater"`
	// Labels is the number of the rater's ratings.
	Labels int `json:"labels"`
	// Distribution counts the rater's labels per category (categorical
	// data).
	Distribution []int `json:"distribution,omitempty"`
	// Mean and SD of the rater's values (ordinal and continuous data).
	Mean num `json:"mean"`
	SD   num `json:"sd"`
	// Pairwise agreement with every other rater.
	Pairwise []PairAgreement `json:"pairwise"`
	// AgreementWith each aggregator's consensus, by aggregator name (up
	// to MaxMatrixRaters raters; above, the aggregators' rater rows hold
	// it).
	AgreementWith map[string]ConsensusAgreement `json:"agreement_with,omitempty"`
	// Confusion is the rater's Dawid-Skene confusion matrix (up to
	// MaxMatrixRaters raters).
	Confusion [][]num `json:"ds_confusion,omitempty"`
}

// Report is every agreement coefficient that applies to the level of
// measurement, the baseline aggregators and the rater profiles. Its JSON
// form is the "agreement" document of concord's reports and API.
type Report struct {
	// Input is "table" (AnalyzeTable) or "counts" (AnalyzeCounts);
	// empty for ratings.
	Input  string `json:"input,omitempty"`
	Level  string `json:"level"`
	Items  int    `json:"items"`
	Raters int    `json:"raters"`
	// Labels counts every label, repeated ones included.
	Labels     int      `json:"labels"`
	Categories []string `json:"categories,omitempty"`
	Bootstrap  int      `json:"bootstrap"`
	Seed       uint64   `json:"seed"`
	ConfLevel  float64  `json:"conf_level"`
	// Only names the one part computed (Options.Only); empty for all.
	Only string `json:"only,omitempty"`
	// CI is the kind of the analytic intervals and tests ("t" or
	// "normal"); NullValue the second test's value (Options.Null), when
	// there is one.
	CI        string `json:"ci"`
	NullValue *num   `json:"null_value,omitempty"`
	// Population is Options.Population, when it is not 0 (infinite).
	Population int `json:"population,omitempty"`
	// PairSelection says which rater pairs the pairwise statistics
	// cover (PairOptions): their number is bounded by its max unless all
	// is set.
	PairSelection *PairSelection `json:"pair_selection,omitempty"`
	// StrongestPairs and WeakestPairs are the pairs of cohen_kappa with
	// the highest and lowest kappa (the pairwise matrix's weights).
	StrongestPairs []PairSummary `json:"strongest_pairs,omitempty"`
	WeakestPairs   []PairSummary `json:"weakest_pairs,omitempty"`

	KrippendorffAlpha map[string]Estimate    `json:"krippendorff_alpha,omitempty"`
	FleissKappa       *Estimate              `json:"fleiss_kappa,omitempty"`
	FleissKappaSENull *num                   `json:"fleiss_kappa_se_null,omitempty"`
	FleissCategories  []CategoryKappa        `json:"fleiss_category_kappas,omitempty"`
	RandolphKappa     *Estimate              `json:"randolph_kappa,omitempty"`
	CohenKappa        []CohenPair            `json:"cohen_kappa,omitempty"`
	ScottPi           *Estimate              `json:"scott_pi,omitempty"`
	GwetAC1           *Estimate              `json:"gwet_ac1,omitempty"`
	GwetAC2           *Estimate              `json:"gwet_ac2,omitempty"`
	GwetAC2Weights    string                 `json:"gwet_ac2_weights,omitempty"`
	BrennanPrediger   *Estimate              `json:"brennan_prediger,omitempty"`
	PercentAgreement  *Estimate              `json:"percent_agreement,omitempty"`
	CongerKappa       *Estimate              `json:"conger_kappa,omitempty"`
	Weighted          map[string]WeightedSet `json:"weighted,omitempty"`
	ICC               *ICCReport             `json:"icc,omitempty"`
	Aggregators       map[string]*Consensus  `json:"aggregators"`
	Profiles          []RaterProfile         `json:"rater_profiles"`
	// PairwiseMatrix is the matrix of CohenKappa's kappas (unweighted for
	// nominal data, quadratic otherwise) with the shared items; left out
	// above MaxMatrixRaters raters.
	PairwiseMatrix *PairMatrix `json:"pairwise_matrix,omitempty"`
	// AgreementScore says how ItemAgreement and RaterAgreement score
	// agreement; ItemAgreement has a row per item with a rating (in item
	// order), RaterAgreement one per rater (see AgreementTables).
	AgreementScore string           `json:"agreement_score,omitempty"`
	ItemAgreement  []ItemAgreement  `json:"item_agreement,omitempty"`
	RaterAgreement []RaterAgreement `json:"rater_agreement,omitempty"`
	Notes          []string         `json:"notes,omitempty"`
}

// Analyze computes every coefficient that applies to the level of
// measurement, with analytic standard errors where the literature has them
// and intervals (bootstrap percentile intervals over items unless
// o.Bootstrap is negative; the ICCs always carry psych's F-based
// intervals), the baseline aggregators and a profile of each rater:
//
//	nominal   Krippendorff's alpha (nominal); Fleiss' kappa with per-category
//	          kappas; Randolph's kappa; Cohen's kappa per pair (unweighted);
//	          Scott's pi; Gwet's AC1; Brennan-Prediger; percent agreement;
//	          Conger's kappa; majority vote, Dawid-Skene, one-coin Dawid-Skene,
//	          Wawa, GLAD, MACE
//	ordinal   all of the above, plus alpha (ordinal, interval, ratio), the
//	          linear and quadratic Cohen's kappas, the weighted coefficients
//	          (linear, quadratic, ordinal and ratio weights; gwet_ac2 is the
//	          quadratic AC2), the ICCs, mean and median
//	interval  alpha (interval, and ratio when no value is negative); Cohen's
//	and ratio kappa (linear, quadratic); the weighted coefficients (linear,
//	          quadratic) with the distinct values as categories; the ICCs;
//	          mean and median
func Analyze(r *Ratings, o Options) (*Report, error) {
	return AnalyzeContext(context.Background(), r, o)
}

// ctxErr is the reason ctx is done (its cause when it has one), or nil.
func ctxErr(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}

func unweighted2() *weightMat {
	w, _ := newWeightMat(Unweighted, []float64{0, 1})
	return w
}

func valuesOf(r *Ratings) []float64 {
	v := make([]float64, r.K)
	for k := range v {
		v[k] = r.Value(k)
	}
	return v
}

func name(names []string, i int) string {
	if i < len(names) {
		return names[i]
	}
	return fmt.Sprint(i)
}

// catName names category c of the prepared table.
func catName(r *Ratings, o Options, t *table, c int) string {
	// Map back from the table's category to the scheme's.
	if r.K > 0 && !o.ObservedCategoriesOnly {
		return name(o.CategoryNames, c)
	}
	for k := 0; k < r.K; k++ {
		if r.Value(k) == t.vals[c] {
			return name(o.CategoryNames, k)
		}
	}
	return fmt.Sprint(t.vals[c])
}

// dichotomize returns the table of category c against all others.
func (t *table) dichotomize(c int) *table {
	d := &table{n: t.n, r: t.r, q: 2, vals: []float64{0, 1}, ri: t.ri, orig: t.orig,
		ls: t.ls, lr: t.lr, lc: make([]int32, len(t.lc)), rs: t.rs, rit: t.rit, rc: make([]int32, len(t.rc)), start: []int{0}}
	for x, v := range t.lc {
		if int(v) == c {
			d.lc[x] = 1
		}
	}
	for x, v := range t.rc {
		if int(v) == c {
			d.rc[x] = 1
		}
	}
	for i := 0; i < t.n; i++ {
		in := 0.0
		for p := t.start[i]; p < t.start[i+1]; p++ {
			if int(t.cat[p]) == c {
				in = t.cnt[p]
			}
		}
		if in > 0 {
			d.cat = append(d.cat, 1)
			d.cnt = append(d.cnt, in)
		}
		if t.ri[i]-in > 0 {
			d.cat = append(d.cat, 0)
			d.cnt = append(d.cnt, t.ri[i]-in)
		}
		d.start = append(d.start, len(d.cat))
	}
	return d
}

// fleissNullSE is the standard error of Fleiss' kappa under the hypothesis
// of no agreement, Fleiss, Nee & Landis (1979):
//
//	se0 = sqrt(2) / (Σ p_j q_j sqrt(N m (m-1))) · sqrt((Σ p_j q_j)² - Σ p_j q_j (q_j - p_j))
//
// defined when every item has the same number m ≥ 2 of ratings.
func (t *table) fleissNullSE() (float64, bool) {
	if t.n == 0 {
		return math.NaN(), false
	}
	m := t.ri[0]
	for _, v := range t.ri {
		if v != m {
			return math.NaN(), false
		}
	}
	if m < 2 {
		return math.NaN(), false
	}
	pi, _ := t.classProps(nil)
	var s, s2 float64
	for _, p := range pi {
		s += p * (1 - p)
		s2 += p * (1 - p) * (1 - 2*p)
	}
	if s == 0 {
		return math.NaN(), false
	}
	n := float64(t.n)
	return math.Sqrt(2) / (s * math.Sqrt(n*m*(m-1))) * math.Sqrt(s*s-s2), true
}

// alphaWeighted is alpha in Gwet's formulation on the items weighted by
// mult (for the bootstrap).
func (t *table) alphaWeighted(w *weightMat, mult []float64) float64 {
	n2, sumR, paPrime := 0.0, 0.0, 0.0
	pi := make([]float64, t.q)
	for i := 0; i < t.n; i++ {
		m := weightOf(mult, i)
		if m == 0 || t.ri[i] < 2 {
			continue
		}
		n2 += m
		sumR += m * t.ri[i]
	}
	if n2 == 0 {
		return math.NaN()
	}
	rbar := sumR / n2
	for i := 0; i < t.n; i++ {
		m := weightOf(mult, i)
		if m == 0 || t.ri[i] < 2 {
			continue
		}
		paPrime += m * t.itemAgreement(w, i) / (rbar * (t.ri[i] - 1))
		for p := t.start[i]; p < t.start[i+1]; p++ {
			pi[t.cat[p]] += m * t.cnt[p] / rbar
		}
	}
	paPrime /= n2
	for k := range pi {
		pi[k] /= n2
	}
	eps := 1 / sumR
	pa := (1-eps)*paPrime + eps
	pe := w.quad(pi)
	if !(pe < 1) {
		return math.NaN()
	}
	return (pa - pe) / (1 - pe)
}

// booter runs the bootstrap over items: each replicate draws n items with
// replacement (as multiplicities) and recomputes every registered
// coefficient; the intervals are the percentile intervals (quantiles by
// linear interpolation, R's type 7) of the replicates that are defined.
type booter struct {
	t     *table
	slots []bootSlot
}

type bootSlot struct {
	// f sets out[x] to the replicate's value of dsts[x].
	dsts []*Estimate
	f    func(mult, out []float64)
}

// maxPairBootCells bounds the shared items of all rater pairs whose
// Cohen's kappas get bootstrap intervals (kept in memory, 12 bytes each,
// and resampled every replicate); past it they keep analytic intervals.
const maxPairBootCells = 20_000_000

// minBootItems is the fewest items a bootstrap interval over items needs.
const minBootItems = 2

// unavailable marks every bootstrapped estimate's interval as not available.
func (b *booter) unavailable() {
	for _, sl := range b.slots {
		for _, d := range sl.dsts {
			d.CILow, d.CIHigh, d.CIMethod = math.NaN(), math.NaN(), ""
		}
	}
}

// run computes B replicates of every slot and sets their percentile
// intervals. It stops early, returning ctx's error, when ctx is done.
func (b *booter) run(ctx context.Context, B int, seed uint64, level float64, progress func(done, total int)) error {
	vals, err := b.values(ctx, B, seed, 0, B, progress)
	if err != nil {
		return err
	}
	b.intervals(vals, B, level)
	return nil
}

// estimates returns the bootstrapped estimates, slot by slot, and where
// each slot's first one is.
func (b *booter) estimates() (dsts []*Estimate, first []int) {
	first = make([]int, len(b.slots))
	for x, sl := range b.slots {
		first[x] = len(dsts)
		dsts = append(dsts, sl.dsts...)
	}
	return dsts, first
}

// replicateSeeds returns the seeds of replicates [0, hi) of a bootstrap
// seeded by seed: the first hi values of one stream, so that replicate
// rep's resample depends on seed and rep only, however the replicates are
// split among processes (BootstrapReplicates).
func replicateSeeds(seed uint64, hi int) []uint64 {
	rnd := rand.New(rand.NewPCG(seed, 0xb0075)) // replicate seeds, drawn in order
	seeds := make([]uint64, hi)
	for x := range seeds {
		seeds[x] = rnd.Uint64()
	}
	return seeds
}

// values computes replicates [lo, hi) of the B of every slot:
// vals[d][rep-lo] is the d-th estimate's value in replicate rep (the
// estimates in the order of estimates). Replicate rep resamples the items
// with its own generator, PCG(seeds[rep], rep), so that its values do not
// depend on lo, hi or the goroutine that computes it. progress (nil: none)
// counts the replicates of [lo, hi) done. It stops early, returning ctx's
// error, when ctx is done.
func (b *booter) values(ctx context.Context, B int, seed uint64, lo, hi int, progress func(done, total int)) ([][]float64, error) {
	if lo < 0 || hi > B || lo > hi {
		panic(fmt.Sprintf("raters: bootstrap replicates [%d, %d) of %d", lo, hi, B))
	}
	seeds := replicateSeeds(seed, hi)
	// vals[d] holds the replicates of the d-th estimate, slot by slot.
	dsts, first := b.estimates()
	n := hi - lo
	vals := make([][]float64, len(dsts))
	for d := range vals {
		vals[d] = make([]float64, n)
	}
	workers := max(min(runtime.GOMAXPROCS(0), n), 1)
	var done atomic.Int64
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mult := make([]float64, b.t.n)
			out := make([]float64, len(dsts))
			for rep := range next {
				if ctx.Err() != nil {
					continue // drain
				}
				for i := range mult {
					mult[i] = 0
				}
				rr := rand.New(rand.NewPCG(seeds[rep], uint64(rep)))
				for x := 0; x < b.t.n; x++ {
					mult[rr.IntN(b.t.n)]++
				}
				for x, sl := range b.slots {
					o := out[first[x] : first[x]+len(sl.dsts)]
					sl.f(mult, o)
					for y, v := range o {
						vals[first[x]+y][rep-lo] = v
					}
				}
				if n := done.Add(1); progress != nil {
					progress(int(n), hi-lo)
				}
			}
		}()
	}
feed:
	for rep := lo; rep < hi; rep++ {
		select {
		case next <- rep:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	return vals, nil
}

// intervals sets the percentile intervals of the estimates from all B
// replicates' values (vals as values returns them for [0, B); left as
// they are).
func (b *booter) intervals(vals [][]float64, B int, level float64) {
	dsts, _ := b.estimates()
	alpha := 1 - level
	v := make([]float64, 0, B)
	for d, dst := range dsts {
		v = v[:0]
		for _, x := range vals[d] {
			if !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		if math.IsNaN(dst.Value) || len(v) < B/2 || len(v) < 2 {
			dst.CILow, dst.CIHigh, dst.CIMethod = math.NaN(), math.NaN(), ""
			continue
		}
		sort.Float64s(v)
		dst.CILow = quantile7(v, alpha/2)
		dst.CIHigh = quantile7(v, 1-alpha/2)
		dst.CIMethod = "bootstrap"
	}
}

// quantile7 is R's type-7 quantile of sorted x.
func quantile7(x []float64, p float64) float64 {
	h := float64(len(x)-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(x) {
		return x[len(x)-1]
	}
	return x[i] + (h-lo)*(x[i+1]-x[i])
}

// PairSelection describes the rater pairs the pairwise statistics cover.
type PairSelection struct {
	// MinShared is the fewest items a pair shares; Max the most pairs
	// (-1: no bound); All says every pair sharing an item was asked for.
	MinShared int  `json:"min_shared"`
	Max       int  `json:"max"`
	All       bool `json:"all"`
	// Found is the number of pairs sharing at least MinShared items among
	// the RatersSearched raters; Reported those computed and listed.
	Found          int `json:"found"`
	Reported       int `json:"reported"`
	RatersSearched int `json:"raters_searched"`
}

// PairSummary is one pair's kappa (the pairwise matrix's weights) and
// shared items.
type PairSummary struct {
	A     string `json:"a"`
	B     string `json:"b"`
	N     int    `json:"n"`
	Kappa num    `json:"kappa"`
}

// extremes returns the o.Pairs.Extremes pairs with the highest and the
// lowest defined kappa (ties: more shared items first, then pair order).
func extremes(pairs []PairKappa, w Weights, o Options) (strong, weak []PairSummary) {
	n := o.Pairs.extremes()
	if n == 0 {
		return nil, nil
	}
	type pk struct {
		x int
		v float64
	}
	var def []pk
	for x := range pairs {
		if e, ok := pairs[x].Kappa[w]; ok && !math.IsNaN(e.Value) {
			def = append(def, pk{x, e.Value})
		}
	}
	sum := func(p pk) PairSummary {
		q := pairs[p.x]
		return PairSummary{A: name(o.RaterNames, q.A), B: name(o.RaterNames, q.B), N: q.N, Kappa: num(p.v)}
	}
	less := func(a, b pk) bool { // higher first
		if a.v != b.v {
			return a.v > b.v
		}
		if pairs[a.x].N != pairs[b.x].N {
			return pairs[a.x].N > pairs[b.x].N
		}
		return a.x < b.x
	}
	sort.SliceStable(def, func(x, y int) bool { return less(def[x], def[y]) })
	for _, p := range def[:min(n, len(def))] {
		strong = append(strong, sum(p))
	}
	sort.SliceStable(def, func(x, y int) bool {
		a, b := def[x], def[y]
		if a.v != b.v {
			return a.v < b.v
		}
		if pairs[a.x].N != pairs[b.x].N {
			return pairs[a.x].N > pairs[b.x].N
		}
		return a.x < b.x
	})
	for _, p := range def[:min(n, len(def))] {
		weak = append(weak, sum(p))
	}
	return strong, weak
}

// profiles builds the rater profiles: label counts, distribution, mean and
// SD and the agreement with each aggregator's consensus from every label
// of the rater; the pairwise rows from the pairs computed (one label per
// rater and item). With at most MaxMatrixRaters raters (and the default
// pairs) a profile lists every other rater, those it shares no item with
// included, its agreement with each aggregator and its Dawid-Skene
// confusion matrix; otherwise only the pairs of the pair selection, and
// neither of the others, which repeat the aggregators' own rater rows
// (RaterQuality.Accuracy, Confusion), keeping the document linear.
func profiles(r *Ratings, t *table, o Options, rep *Report, pairs []PairKappa) []RaterProfile {
	out := make([]RaterProfile, r.Raters)
	rows := pairwiseRows(r, t, o, rep, pairs)
	start, order := r.byRater()
	for j := 0; j < r.Raters; j++ {
		mine := order[start[j]:start[j+1]]
		p := labelProfile(r, o, j, mine)
		p.Pairwise = rows[j]
		if r.Raters <= MaxMatrixRaters {
			// Above, the aggregators' own rater rows hold it.
			for nameAgg, c := range rep.Aggregators {
				p.AgreementWith[nameAgg] = consensusAgreement(r, o, c, mine)
			}
			if ds, ok := rep.Aggregators["dawid_skene"]; ok {
				for _, row := range ds.Raters[j].Confusion {
					p.Confusion = append(p.Confusion, nums(row))
				}
			}
		}
		out[j] = p
	}
	return out
}

// valueOf is the numeric value of a stored rating (a category's value for
// categorical data).
func valueOf(r *Ratings, v float64) float64 {
	if r.K > 0 {
		return r.Value(int(v))
	}
	return v
}

// labelProfile is rater j's label count, distribution and (ordinal and
// continuous data) mean and SD, from the rater's labels mine.
func labelProfile(r *Ratings, o Options, j int, mine []int32) RaterProfile {
	p := RaterProfile{Rater: name(o.RaterNames, j), Mean: num(math.NaN()), SD: num(math.NaN()), AgreementWith: map[string]ConsensusAgreement{}}
	if r.K > 0 {
		p.Distribution = make([]int, r.K)
	}
	var s, s2 float64
	for _, x := range mine {
		v := r.val[x]
		p.Labels++
		if r.K > 0 {
			p.Distribution[int(v)]++
		}
		xv := valueOf(r, v)
		s += xv
		s2 += xv * xv
	}
	if o.Level != Nominal && p.Labels > 0 {
		n := float64(p.Labels)
		p.Mean = num(s / n)
		if p.Labels > 1 {
			p.SD = num(math.Sqrt(math.Max(0, (s2-s*s/n)/(n-1))))
		}
	}
	return p
}

// consensusAgreement is a rater's agreement (labels mine) with an
// aggregator's consensus: the share of labels equal to the consensus class
// (categorical data) and the mean absolute difference from its score
// (ordinal and continuous data).
func consensusAgreement(r *Ratings, o Options, c *Consensus, mine []int32) ConsensusAgreement {
	ca := ConsensusAgreement{Agreement: num(math.NaN()), MAE: num(math.NaN())}
	hits, n, ad, nd := 0, 0, 0.0, 0
	for _, x := range mine {
		v := r.val[x]
		it := c.Items[r.item[x]]
		if r.K > 0 && it.Class >= 0 {
			n++
			if int(v) == it.Class {
				hits++
			}
		}
		if !math.IsNaN(it.Score) {
			ad += math.Abs(valueOf(r, v) - it.Score)
			nd++
		}
	}
	if n > 0 {
		ca.Agreement = num(float64(hits) / float64(n))
	}
	if nd > 0 && o.Level != Nominal {
		ca.MAE = num(ad / float64(nd))
	}
	return ca
}

// pairKappas fills a pairwise row's kappas from Cohen's kappa of the pair
// in the report (cohen, by names) or else from the pair's own.
func pairKappas(p *PairKappa, pa *PairAgreement, cohen map[[2]string]*CohenPair, o Options) {
	if cp := cohen[[2]string{name(o.RaterNames, p.A), name(o.RaterNames, p.B)}]; cp != nil {
		if cp.Unweighted != nil {
			pa.Kappa = num(cp.Unweighted.Value)
			if cp.Quadratic != nil {
				pa.KappaQuadratic = num(cp.Quadratic.Value)
			}
		} else if cp.Quadratic != nil {
			pa.Kappa = num(cp.Quadratic.Value)
		}
		return
	}
	if e, ok := p.Kappa[Unweighted]; ok {
		pa.Kappa = num(e.Value)
		if e, ok := p.Kappa[QuadraticWeights]; ok {
			pa.KappaQuadratic = num(e.Value)
		}
	} else if e, ok := p.Kappa[QuadraticWeights]; ok {
		pa.Kappa = num(e.Value)
	}
}

// pairwiseRows builds each rater's pairwise rows from the pairs: percent
// agreement and mean absolute difference over the shared items (first
// labels) and the kappas. With at most MaxMatrixRaters raters and the
// default pairs every other rater has a row (NaN without shared items).
func pairwiseRows(r *Ratings, t *table, o Options, rep *Report, pairs []PairKappa) [][]PairAgreement {
	cohen := make(map[[2]string]*CohenPair, 2*len(rep.CohenKappa))
	for i := range rep.CohenKappa {
		cp := &rep.CohenKappa[i]
		cohen[[2]string{cp.A, cp.B}] = cp
		cohen[[2]string{cp.B, cp.A}] = cp
	}
	nan := num(math.NaN())
	empty := func(j2 int) PairAgreement {
		return PairAgreement{Rater: name(o.RaterNames, j2), PercentAgreement: nan, Kappa: nan, KappaQuadratic: nan, MeanAbsDiff: nan}
	}
	rows := make([][]PairAgreement, r.Raters)
	other := make([][]int, r.Raters) // not dense: the other rater of each row
	dense := r.Raters <= MaxMatrixRaters && !o.Pairs.All && o.Pairs.MinShared <= 1
	var at map[[2]int]int // dense: (rater, other) -> row
	if dense {
		at = map[[2]int]int{}
		for j := 0; j < r.Raters; j++ {
			for j2 := 0; j2 < r.Raters; j2++ {
				if j2 != j {
					at[[2]int{j, j2}] = len(rows[j])
					rows[j] = append(rows[j], empty(j2))
				}
			}
		}
	}
	for x := range pairs {
		p := &pairs[x]
		eq, ad, n := 0, 0.0, 0
		t.coRated(p.A, p.B, func(_ int, cx, cy int32) {
			n++
			if cx == cy {
				eq++
			}
			ad += math.Abs(t.vals[cx] - t.vals[cy])
		})
		for _, side := range [2][2]int{{p.A, p.B}, {p.B, p.A}} {
			j, j2 := side[0], side[1]
			pa := empty(j2)
			pa.N = n
			if n > 0 && r.K > 0 {
				pa.PercentAgreement = num(float64(eq) / float64(n))
			}
			if n > 0 && o.Level != Nominal {
				pa.MeanAbsDiff = num(ad / float64(n))
			}
			pairKappas(p, &pa, cohen, o)
			if dense {
				rows[j][at[[2]int{j, j2}]] = pa
			} else {
				rows[j] = append(rows[j], pa)
				other[j] = append(other[j], j2)
			}
		}
	}
	if !dense {
		for j := range rows {
			sort.Sort(byOther{rows[j], other[j]})
		}
	}
	return rows
}

// byOther sorts a profile's pairwise rows by the other rater's index.
type byOther struct {
	rows  []PairAgreement
	other []int
}

func (b byOther) Len() int           { return len(b.rows) }
func (b byOther) Less(x, y int) bool { return b.other[x] < b.other[y] }
func (b byOther) Swap(x, y int) {
	b.rows[x], b.rows[y] = b.rows[y], b.rows[x]
	b.other[x], b.other[y] = b.other[y], b.other[x]
}
