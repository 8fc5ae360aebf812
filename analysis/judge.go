package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"concord/annotations"
	"concord/multirater"
	"concord/raters"
)

// Can a model rater (an LLM judge, a classifier) replace a human rater?
//
// JudgeReport answers with the alternative annotator test of Calderon,
// Reichart & Dror (ACL 2025, "The Alternative Annotator Test for
// LLM-as-a-Judge"), leaving one human out at a time: on the items that
// human labelled (and at least MinHumans humans and the judge did), the
// judge's label and the left-out human's are each scored against the
// other humans' labels of the item (nominal: the share of them equal to
// it; ordinal and bounded: minus the root mean squared difference of the
// values). W_i = 1 when the judge scores at least as well as the human on
// item i, V_i = 1 when the human scores at least as well as the judge;
// the one-sided one-sample t-test of H0: mean(V - W) >= epsilon against
// mean(V - W) < epsilon gives the human's p-value (epsilon, the cost-benefit
// allowance, is the penalty on the human: 0.2 for experts, 0.15 for
// skilled raters, 0.1 for crowd workers). The p-values of all the humans
// are corrected by the Benjamini-Yekutieli procedure at level Q; the
// winning rate omega is the share of humans whose null hypothesis is
// rejected, and the judge passes (can replace a human) when omega >= 0.5.
// The average advantage probability rho, the mean over humans of mean(W),
// compares judges (higher is better).
//
// Beside the test, each rater's agreement with the consensus of the others:
// for the judge, the share of the items whose humans' majority label it
// gives; for each human, the same against the majority of the other humans
// (a tie of m labels credits each of them 1/m); with 95% Wilson intervals.

// Default settings of JudgeReport.
const (
	DefaultJudgeEpsilon      = 0.15
	DefaultJudgeQ            = 0.05
	DefaultJudgeMinHumans    = 2
	DefaultJudgeMinInstances = 30
)

// JudgeOptions control JudgeReport; the zero value means the defaults.
type JudgeOptions struct {
	// Judges are the ids of the model raters to test; nil means the
	// dataset's model raters (Dataset.ModelRaters).
	Judges []string
	// Epsilon is the cost-benefit allowance (0: DefaultJudgeEpsilon).
	Epsilon float64
	// Q is the false discovery rate of the Benjamini-Yekutieli correction
	// (0: DefaultJudgeQ).
	Q float64
	// MinHumans is the fewest human labels an item needs (0:
	// DefaultJudgeMinHumans); MinInstances the fewest such items a human
	// needs to be tested (0: DefaultJudgeMinInstances; the t-test's
	// normal approximation).
	MinHumans, MinInstances int
}

// JudgeHuman is one left-out human of a judge's test.
type JudgeHuman struct {
	Rater string `json:"rater"`
	// Items are the items of the comparison; JudgeAdvantage the share
	// where the judge aligns at least as well with the other humans (W),
	// HumanAdvantage the share where the human does (V).
	Items          int     `json:"items"`
	JudgeAdvantage float64 `json:"judge_advantage"`
	HumanAdvantage float64 `json:"human_advantage"`
	// T and PValue are the one-sided t-test of mean(V - W) < epsilon;
	// Rejected says whether the Benjamini-Yekutieli correction rejects
	// its null hypothesis (the judge wins against this human). Without
	// spread (every item's difference the same) T is ±Inf or NaN and
	// PValue the limit, 0 below epsilon and 1 otherwise; TNote says so
	// and the JSON's t is null.
	T        float64 `json:"t"`
	TNote    string  `json:"t_note,omitempty"`
	PValue   float64 `json:"p_value"`
	Rejected bool    `json:"rejected"`
}

// MarshalJSON writes h with a non-finite t or p-value as null (JSON has
// no Inf or NaN); TNote says why.
func (h JudgeHuman) MarshalJSON() ([]byte, error) {
	type plain JudgeHuman
	out := struct {
		plain
		T      *float64 `json:"t"`
		PValue *float64 `json:"p_value"`
	}{plain: plain(h)}
	if !math.IsNaN(h.T) && !math.IsInf(h.T, 0) {
		out.T = &h.T
	}
	if !math.IsNaN(h.PValue) && !math.IsInf(h.PValue, 0) {
		out.PValue = &h.PValue
	}
	return json.Marshal(out)
}

// JudgeAgreement is a rater's agreement with the consensus of the others.
type JudgeAgreement struct {
	Rater string `json:"rater"`
	Judge bool   `json:"judge"`
	// Items with a consensus of the others; Agreement the (tie-credited)
	// share of them where the rater's label is the others' majority, with
	// its 95% Wilson interval.
	Items     int     `json:"items"`
	Agreement float64 `json:"agreement"`
	Q025      float64 `json:"q025"`
	Q975      float64 `json:"q975"`
}

// JudgeResult is one judge's test.
type JudgeResult struct {
	Judge string `json:"judge"`
	// Items the judge labelled that have at least MinHumans human labels.
	Items int `json:"items"`
	// Humans are the left-out humans tested; Skipped those with fewer
	// than MinInstances items.
	Humans  []JudgeHuman `json:"humans"`
	Skipped []string     `json:"skipped,omitempty"`
	// WinningRate omega, AdvantageProb rho, and the verdict (Passed:
	// omega >= 0.5).
	WinningRate   float64 `json:"winning_rate"`
	AdvantageProb float64 `json:"advantage_prob"`
	Passed        bool    `json:"passed"`
	Verdict       string  `json:"verdict"`
	// Agreement is the judge's agreement with the humans' consensus.
	Agreement JudgeAgreement `json:"agreement"`
}

// JudgeReportDoc is the judge report of a dataset.
type JudgeReportDoc struct {
	Schema  string  `json:"schema"`
	Scheme  string  `json:"scheme"`
	Score   string  `json:"score"`
	Epsilon float64 `json:"epsilon"`
	Q       float64 `json:"q"`
	// Judges are the tests, one per judge; Humans every human's
	// agreement with the consensus of the other humans.
	Judges []JudgeResult    `json:"judges"`
	Humans []JudgeAgreement `json:"humans"`
	Notes  []string         `json:"notes,omitempty"`
}

// JudgeSchema names the document.
const JudgeSchema = "concord.judges/v1"

// judgeKey is an (item, rater) pair.
type judgeKey struct{ item, rater string }

// judgeLabels are the labels of a judge test: each rater's first label of
// an item as a number, each item's human raters in label order, and the
// human raters (neither judges nor model raters) in order of first label.
type judgeLabels struct {
	first      map[judgeKey]float64
	humansOf   map[string][]string
	humanOrder []string
}

// indexJudgeLabels indexes the labels of ds (isJudge: the model raters;
// value: a label as a number); repeats counts the labels after a rater's
// first of an item, judgeSeen the model raters with labels.
func indexJudgeLabels(ds *annotations.Dataset, isJudge map[string]bool, value func(annotations.Label) (float64, error)) (jl judgeLabels, repeats int, judgeSeen map[string]bool, err error) {
	jl = judgeLabels{first: map[judgeKey]float64{}, humansOf: map[string][]string{}}
	judgeSeen = map[string]bool{}
	humanSeen := map[string]bool{}
	for _, l := range ds.Labels {
		k := judgeKey{l.Item, l.Rater}
		if _, dup := jl.first[k]; dup {
			repeats++
			continue
		}
		v, err := value(l)
		if err != nil {
			return jl, 0, nil, err
		}
		jl.first[k] = v
		if isJudge[l.Rater] {
			judgeSeen[l.Rater] = true
			continue
		}
		if ds.IsModel(l.Rater) {
			continue // another model: neither judged nor a human
		}
		jl.humansOf[l.Item] = append(jl.humansOf[l.Item], l.Rater)
		if !humanSeen[l.Rater] {
			humanSeen[l.Rater] = true
			jl.humanOrder = append(jl.humanOrder, l.Rater)
		}
	}
	return jl, repeats, judgeSeen, nil
}

// duel compares judge j with human h on the kept items both labelled:
// each item's score of either label against the other humans' labels
// (score), d the human's win less the judge's (ties count for both), and
// the wins of each.
func (jl judgeLabels) duel(items []string, kept map[string]bool, j, h string, score func(float64, []float64) float64) (d []float64, wins, hwins int) {
	for _, item := range items {
		hv, ok := jl.first[judgeKey{item, h}]
		if !ok || !kept[item] {
			continue
		}
		var others []float64
		for _, o := range jl.humansOf[item] {
			if o != h {
				others = append(others, jl.first[judgeKey{item, o}])
			}
		}
		sj, sh := score(jl.first[judgeKey{item, j}], others), score(hv, others)
		w, v := 0.0, 0.0
		if sj >= sh {
			w = 1
			wins++
		}
		if sh >= sj {
			v = 1
			hwins++
		}
		d = append(d, v-w)
	}
	return d, wins, hwins
}

// JudgeReport runs the alternative annotator test for every judge of o on
// ds (see above). The humans are the raters that are neither judges nor
// marked as models. No judge, a judge with no labels, or no human left is
// EINVALID.
func JudgeReport(ds *annotations.Dataset, o JudgeOptions) (*JudgeReportDoc, error) {
	if len(o.Judges) == 0 {
		o.Judges = ds.ModelRaters
	}
	if len(o.Judges) == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "no model raters: mark them in the labels (an is_model or rater_kind column, or %s R1,R2) or name the raters to test (--judges R1,R2)", annotations.ModelsFlag)
	}
	o, err := o.resolved()
	if err != nil {
		return nil, err
	}
	s := ds.Scheme
	doc := &JudgeReportDoc{Schema: JudgeSchema, Scheme: s.String(), Epsilon: o.Epsilon, Q: o.Q}
	sc := newJudgeScorer(s)
	doc.Score = sc.doc
	isJudge := map[string]bool{}
	for _, j := range o.Judges {
		isJudge[j] = true
	}
	// The first label of each (item, rater).
	jl, repeats, judgeSeen, err := indexJudgeLabels(ds, isJudge, sc.value)
	if err != nil {
		return nil, err
	}
	if repeats > 0 {
		doc.Notes = append(doc.Notes, fmt.Sprintf("%d repeated labels: each rater's first label of an item is used", repeats))
	}
	for _, j := range o.Judges {
		if !judgeSeen[j] {
			return nil, annotations.Errorf(annotations.EINVALID, "model rater %q has no labels (raters: %s)", j, strings.Join(firstN(jl.humanOrder, 10), ", "))
		}
	}
	if len(jl.humanOrder) < 2 {
		return nil, annotations.Errorf(annotations.EINVALID, "the test needs at least 2 human raters besides the model raters, found %d", len(jl.humanOrder))
	}
	items := ds.ItemIDs()
	// Each human's agreement with the majority of the other humans.
	for _, h := range jl.humanOrder {
		a := agreementWith(items, func(item string) (float64, bool) { v, ok := jl.first[judgeKey{item, h}]; return v, ok },
			func(item string) []float64 {
				var out []float64
				for _, o := range jl.humansOf[item] {
					if o != h {
						out = append(out, jl.first[judgeKey{item, o}])
					}
				}
				return out
			}, o.MinHumans-1)
		a.Rater = h
		doc.Humans = append(doc.Humans, a)
	}
	for _, j := range o.Judges {
		doc.Judges = append(doc.Judges, jl.test(items, j, o, sc.score))
	}
	return doc, nil
}

// resolved returns o with its defaults set, or EINVALID for a setting out
// of its range.
func (o JudgeOptions) resolved() (JudgeOptions, error) {
	r := o
	if r.Epsilon == 0 {
		r.Epsilon = DefaultJudgeEpsilon
	}
	if r.Q == 0 {
		r.Q = DefaultJudgeQ
	}
	if !(r.Epsilon >= 0 && r.Epsilon < 1) {
		return r, annotations.Errorf(annotations.EINVALID, "--epsilon %v: expected a number in [0, 1) (0.2 experts, 0.15 skilled raters, 0.1 crowd workers)", o.Epsilon)
	}
	if !(r.Q > 0 && r.Q < 1) {
		return r, annotations.Errorf(annotations.EINVALID, "--q %v: expected a false discovery rate in (0, 1)", o.Q)
	}
	if r.MinHumans <= 0 {
		r.MinHumans = DefaultJudgeMinHumans
	}
	if r.MinInstances <= 0 {
		r.MinInstances = DefaultJudgeMinInstances
	}
	return r, nil
}

// judgeScorer reads labels of a scheme as numbers and scores a label
// against the other humans' labels of its item.
type judgeScorer struct {
	scheme  annotations.Scheme
	vals    []float64 // the levels' values (categorical schemes)
	nominal bool
	doc     string
}

func newJudgeScorer(s annotations.Scheme) *judgeScorer {
	sc := &judgeScorer{scheme: s, nominal: s.Kind == annotations.Nominal || s.Kind == annotations.Binary}
	if s.Categorical() {
		sc.vals = CategoryValues(s)
	}
	if sc.nominal {
		sc.doc = "accuracy: the share of the other humans' labels equal to the label"
	} else {
		sc.doc = "minus the root mean squared difference from the other humans' labels (level values)"
	}
	return sc
}

// value is a label as a number: its level's index, or the bounded value.
func (sc *judgeScorer) value(l annotations.Label) (float64, error) {
	s := sc.scheme
	if s.Categorical() {
		c, ok := s.Index(l.Value)
		if !ok {
			return 0, annotations.Errorf(annotations.EINVALID, "item %q, rater %q: label %q is not a level of %s", l.Item, l.Rater, l.Value, s)
		}
		return float64(c), nil
	}
	return s.Value(l.Value)
}

// score is x's accuracy against others (nominal) or minus its root mean
// squared difference from them.
func (sc *judgeScorer) score(x float64, others []float64) float64 {
	acc := 0.0
	for _, y := range others {
		if sc.nominal {
			if x == y {
				acc++
			}
		} else {
			d := num(x, sc.vals) - num(y, sc.vals)
			acc += d * d
		}
	}
	if sc.nominal {
		return acc / float64(len(others))
	}
	return -math.Sqrt(acc / float64(len(others)))
}

// test is the alternative annotator test of judge j against every human
// (o resolved): its agreement with the humans' majority, one duel per
// human with enough shared items, the Benjamini-Yekutieli rejections and
// the verdict.
func (jl judgeLabels) test(items []string, j string, o JudgeOptions, score func(float64, []float64) float64) JudgeResult {
	minH, minI, eps, q := o.MinHumans, o.MinInstances, o.Epsilon, o.Q
	res := JudgeResult{Judge: j}
	kept := map[string]bool{}
	for _, item := range items {
		if _, ok := jl.first[judgeKey{item, j}]; ok && len(jl.humansOf[item]) >= minH {
			kept[item] = true
			res.Items++
		}
	}
	res.Agreement = agreementWith(items, func(item string) (float64, bool) {
		v, ok := jl.first[judgeKey{item, j}]
		return v, ok && kept[item]
	}, func(item string) []float64 {
		var out []float64
		for _, o := range jl.humansOf[item] {
			out = append(out, jl.first[judgeKey{item, o}])
		}
		return out
	}, minH)
	res.Agreement.Rater, res.Agreement.Judge = j, true
	var pvals []float64
	for _, h := range jl.humanOrder {
		d, wins, hwins := jl.duel(items, kept, j, h, score)
		if len(d) < minI {
			res.Skipped = append(res.Skipped, h)
			continue
		}
		t, p := tTestLess(d, eps)
		n := float64(len(d))
		jh := JudgeHuman{Rater: h, Items: len(d), JudgeAdvantage: float64(wins) / n, HumanAdvantage: float64(hwins) / n, T: t, PValue: p}
		if math.IsNaN(t) || math.IsInf(t, 0) {
			side := "at or above"
			if p == 0 {
				side = "below"
			}
			jh.TNote = fmt.Sprintf("no spread: the human's advantage over %s is %g on every item, %s epsilon; the p-value is the limit, %g", j, d[0], side, p)
		}
		res.Humans = append(res.Humans, jh)
		pvals = append(pvals, p)
	}
	if len(res.Humans) == 0 {
		res.Verdict = fmt.Sprintf("no test: no human shares %d or more items (with %d or more human labels) with %s; lower --min-instances (the t-test wants 30) or label more items", minI, minH, j)
		res.WinningRate, res.AdvantageProb = math.NaN(), math.NaN()
		return res
	}
	rejected := benjaminiYekutieli(pvals, q)
	won, rho := 0, 0.0
	for i := range res.Humans {
		res.Humans[i].Rejected = rejected[i]
		if rejected[i] {
			won++
		}
		rho += res.Humans[i].JudgeAdvantage
	}
	res.WinningRate = float64(won) / float64(len(res.Humans))
	res.AdvantageProb = rho / float64(len(res.Humans))
	res.Passed = res.WinningRate >= 0.5
	if res.Passed {
		res.Verdict = fmt.Sprintf("passes: %s can replace a human rater (it wins against %d of %d humans at epsilon %g, FDR %g)", j, won, len(res.Humans), eps, q)
	} else {
		res.Verdict = fmt.Sprintf("fails: %s wins against %d of %d humans at epsilon %g (FDR %g); it needs half", j, won, len(res.Humans), eps, q)
	}
	return res
}

// num is a label's value: its level's numeric value (categorical) or the
// value itself.
func num(x float64, vals []float64) float64 {
	if vals == nil {
		return x
	}
	return vals[int(x)]
}

// agreementWith is a rater's agreement with the majority of the reference
// labels of each item (ties of m labels credit each 1/m), over the items
// where the rater has a label and there are at least minRef references.
func agreementWith(items []string, label func(item string) (float64, bool), refs func(item string) []float64, minRef int) JudgeAgreement {
	var credit float64
	n := 0
	for _, item := range items {
		x, ok := label(item)
		if !ok {
			continue
		}
		r := refs(item)
		if len(r) < max(minRef, 1) {
			continue
		}
		counts := map[float64]int{}
		best := 0
		for _, y := range r {
			counts[y]++
			best = max(best, counts[y])
		}
		tied := 0
		for _, c := range counts {
			if c == best {
				tied++
			}
		}
		n++
		if counts[x] == best {
			credit += 1 / float64(tied)
		}
	}
	a := JudgeAgreement{Items: n, Agreement: math.NaN(), Q025: math.NaN(), Q975: math.NaN()}
	if n > 0 {
		a.Agreement, a.Q025, a.Q975 = raters.WilsonInterval(credit, float64(n), 0.95)
	}
	return a
}

// tTestLess is the one-sample t-test of mean(d) = mu against mean(d) < mu:
// t = (mean - mu) / (sd / sqrt(n)) and its p-value P(T_{n-1} <= t) (as
// scipy.stats.ttest_1samp(d, mu, alternative="less")). Without spread the
// p-value is the limit of a vanishing spread, 0 below mu and 1 otherwise,
// with t = -Inf below mu, +Inf above and NaN at mu (where scipy gives NaN
// for both).
func tTestLess(d []float64, mu float64) (t, p float64) {
	n := float64(len(d))
	mean, sd := stat.MeanStdDev(d, nil)
	if len(d) < 2 || !(sd > 0) {
		switch {
		case mean < mu:
			return math.Inf(-1), 0
		case mean > mu:
			return math.Inf(1), 1
		default:
			return math.NaN(), 1
		}
	}
	t = (mean - mu) / (sd / math.Sqrt(n))
	return t, distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.CDF(t)
}

// benjaminiYekutieli returns which of the p-values the Benjamini-Yekutieli
// step-up procedure rejects at false discovery rate q: the k smallest,
// k the largest rank with p_(k) <= k q / (m H_m), H_m = 1 + 1/2 + ... + 1/m.
func benjaminiYekutieli(p []float64, q float64) []bool {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	h := 0.0
	for i := 1; i <= m; i++ {
		h += 1 / float64(i)
	}
	k := -1
	for r, i := range idx {
		if p[i] <= float64(r+1)/float64(m)*q/h {
			k = r
		}
	}
	out := make([]bool, m)
	for r := 0; r <= k; r++ {
		out[idx[r]] = true
	}
	return out
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}

// JSON returns the document for encoding as JSON, its NaNs (no test, no
// agreement) as nulls: what concord judge --json prints and the API's judge
// route answers.
func (d *JudgeReportDoc) JSON() any {
	type agr struct {
		Rater     string   `json:"rater"`
		Judge     bool     `json:"judge"`
		Items     int      `json:"items"`
		Agreement *float64 `json:"agreement"`
		Q025      *float64 `json:"q025"`
		Q975      *float64 `json:"q975"`
	}
	opt := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	conv := func(a JudgeAgreement) agr {
		return agr{a.Rater, a.Judge, a.Items, opt(a.Agreement), opt(a.Q025), opt(a.Q975)}
	}
	type judge struct {
		JudgeResult
		WinningRate   *float64 `json:"winning_rate"`
		AdvantageProb *float64 `json:"advantage_prob"`
		Agreement     agr      `json:"agreement"`
	}
	out := struct {
		*JudgeReportDoc
		Judges []judge `json:"judges"`
		Humans []agr   `json:"humans"`
	}{JudgeReportDoc: d}
	for _, j := range d.Judges {
		out.Judges = append(out.Judges, judge{JudgeResult: j, WinningRate: opt(j.WinningRate), AdvantageProb: opt(j.AdvantageProb), Agreement: conv(j.Agreement)})
	}
	for _, h := range d.Humans {
		out.Humans = append(out.Humans, conv(h))
	}
	return out
}

// JudgeFit is JudgeReport on the labels a fit used (its items' labels, one
// per rater) with the raters the fit marked as models: the judge report of
// a stored fit, which does not change when the project's labels do.
// Repeated labels of a rater on an item are not in a fit's result (its
// last one is), and no label means EINVALID.
func JudgeFit(res *multirater.FitResult, o JudgeOptions) (*JudgeReportDoc, error) {
	s, err := annotations.ParseScheme(res.Model.Scheme)
	if err != nil {
		return nil, annotations.Errorf(annotations.EINVALID, "the fit's scheme %q: %v", res.Model.Scheme, err)
	}
	ds := &annotations.Dataset{Scheme: s}
	for _, it := range res.Items {
		ds.Items = append(ds.Items, annotations.Item{ID: it.ID})
		rs := make([]string, 0, len(it.Labels))
		for r := range it.Labels {
			rs = append(rs, r)
		}
		sort.Strings(rs)
		for _, r := range rs {
			ds.Labels = append(ds.Labels, annotations.Label{Item: it.ID, Rater: r, Value: it.Labels[r]})
		}
	}
	if len(ds.Labels) == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "fit of model %s keeps no labels per item: the judge report needs them", res.Model.Model)
	}
	for _, r := range res.Raters {
		if r.Model {
			ds.ModelRaters = append(ds.ModelRaters, r.ID)
		}
	}
	sort.Strings(ds.ModelRaters)
	return JudgeReport(ds, o)
}
