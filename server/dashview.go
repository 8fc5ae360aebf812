package server

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/reports"
)

// Rows the fit page shows; the downloads hold everything.
const (
	maxRankingRows = 5000
	maxFlagRows    = 500
	// maxLabelErrorRows: the labels most probably wrong on a robust fit's
	// page.
	maxLabelErrorRows = 50
	// manyRaters: more raters than this get a compact precision chart in
	// a scroll box.
	manyRaters = 40
)

var templateFuncs = template.FuncMap{
	"pct": func(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) + "%" },
	"pct1": func(v float64) string {
		return strconv.FormatFloat(v, 'f', 1, 64) + "%"
	},
	"f2":     func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"f3":     func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) },
	"f4":     func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) },
	"f0":     func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) },
	"f1":     func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"mul100": func(v float64) float64 { return 100 * v },
	"dec":    func(n int) int { return n - 1 },
	"inc":    func(n int) int { return n + 1 },
	"deref": func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	},
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		case *time.Time:
			if v == nil {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		return ""
	},
	"dur": func(sec float64) string {
		d := time.Duration(sec * float64(time.Second))
		if d < time.Minute {
			return d.Round(100 * time.Millisecond).String()
		}
		return d.Round(time.Second).String()
	},
	"terminal": func(s annotations.FitStatus) bool { return s.Terminal() },
	"many":     func(n int) bool { return n > manyRaters },
	"join":     strings.Join,
	"specval": func(m map[string]any, k string) string {
		if v, ok := m[k]; ok {
			return fmt.Sprint(v)
		}
		return ""
	},
	"na4": func(v float64) string { // f4, "not available" for NaN (an R-hat of too few draws)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "not available"
		}
		return strconv.FormatFloat(v, 'f', 4, 64)
	},
	"gloss":    glossFunc,
	"num":      validNum,
	"fl":       func(n reports.Number) float64 { return float64(n) },
	"glossary": glossaryFor,
	"sel": func(cur, v string) template.HTMLAttr {
		if cur == v {
			return "selected"
		}
		return ""
	},
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func parseIntField(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, annotations.Errorf(annotations.EINVALID, "%s %q: expected a whole number", name, v)
	}
	return n, nil
}

// rankRow is one row of the consensus ranking table.
type rankRow struct {
	Rank                    float64
	RankLo, RankHi          float64
	ID                      string
	Score, ScoreLo, ScoreHi float64
	HasScore, HasRank       bool
	Grade                   string
	GradeProb               float64
	NLabels                 int
	Labels                  string
	Predicted               bool
	// Value is the consensus on the rating scale with its 95% predictive
	// interval, and Mean the raters' mean of the item's ratings (bounded
	// fits).
	Value, ValueLo, ValueHi float64
	HasValue                bool
	Mean                    float64
	HasMean                 bool
	// Agreement is the item's observed agreement (the share of its labels
	// equal to the most common one) and Raters how many raters labelled
	// it; HasAgr without labels is false.
	Agreement float64
	Raters    int
	HasAgr    bool
}

// ranking returns the consensus ranking (the report's consensus order:
// by expected rank), at most max rows, and how many were left out.
func ranking(rep *reports.Report, max int) ([]rankRow, int) {
	rows := make([]rankRow, 0, min(len(rep.Items), max))
	for i := range rep.Items {
		if len(rows) == max {
			break
		}
		it := &rep.Items[i]
		r := rankRow{ID: it.ID, Grade: it.Consensus, GradeProb: orZero(it.Prob), NLabels: it.NLabels, Predicted: it.NLabels == 0}
		if it.Rank != nil {
			r.HasRank, r.Rank, r.RankLo, r.RankHi = true, float64(it.Rank.Mean), float64(it.Rank.Q025), float64(it.Rank.Q975)
		}
		if it.Score != nil {
			r.HasScore, r.Score, r.ScoreLo, r.ScoreHi = true, float64(it.Score.Mean), float64(it.Score.Q025), float64(it.Score.Q975)
		}
		if it.Value != nil {
			r.HasValue, r.Value, r.ValueLo, r.ValueHi = true, float64(it.Value.Mean), float64(it.Value.Q025), float64(it.Value.Q975)
		}
		if m, ok := it.Baselines["mean"]; ok && m.Score.Valid() {
			r.Mean, r.HasMean = float64(m.Score), true
		}
		r.Agreement, r.Raters, r.HasAgr = itemAgreement(it)
		r.Labels = raterLabels(rep, it)
		rows = append(rows, r)
	}
	return rows, len(rep.Items) - len(rows)
}

// itemAgreement is an item's observed agreement (the report's majority
// share) and how many raters labelled it; ok is false without labels.
func itemAgreement(it *reports.Item) (share float64, raters int, ok bool) {
	if !it.MajorityShare.Valid() {
		return 0, it.NRaters, false
	}
	return float64(it.MajorityShare), it.NRaters, true
}

// orZero is n, or 0 when n is not a number.
func orZero(n reports.Number) float64 {
	if !n.Valid() {
		return 0
	}
	return float64(n)
}

// raterLabels lists an item's labels by rater, in the report's rater
// order ("r1: 2, r3: 1").
func raterLabels(rep *reports.Report, it *reports.Item) string {
	var parts []string
	for _, r := range rep.Raters {
		if v, ok := it.Labels[r.ID]; ok {
			parts = append(parts, r.ID+": "+v)
		}
	}
	return strings.Join(parts, ", ")
}

// svgText escapes text for SVG.
func svgText(s string) string { return template.HTMLEscapeString(s) }

// est is an estimate as the page prints it: mean, sd and 95% interval.
type est struct{ Mean, SD, Q025, Q975 float64 }

func estOf(e reports.Estimate) est {
	return est{float64(e.Mean), float64(e.SD), float64(e.Q025), float64(e.Q975)}
}

func estPtr(e *reports.Estimate) *est {
	if e == nil {
		return nil
	}
	v := estOf(*e)
	return &v
}

func intervalPtr(e *reports.Interval) *est {
	if e == nil {
		return nil
	}
	return &est{Mean: float64(e.Mean), SD: math.NaN(), Q025: float64(e.Q025), Q975: float64(e.Q975)}
}

func numPtr(n *reports.Number) *float64 {
	if n == nil || !n.Valid() {
		return nil
	}
	v := float64(*n)
	return &v
}

func validPtr(n reports.Number) *float64 { return numPtr(&n) }

// raterRow is a rater of the report as the fit page shows it.
type raterRow struct {
	ID                  string
	Reference           bool
	Model               bool // marked as a model rater in the labels
	NLabels             int
	Precision, Variance est
	// Dispersion and Bias: bounded fits; Accuracy, SpamScore, Spammer and
	// MostConfused: the confusion model; Epsilon: the robust model.
	Dispersion, Bias, Accuracy *est
	Severity                   float64
	MeanLogPred                float64
	ConsensusAgreement         *float64
	SpamScore                  *float64
	Spammer                    bool
	MostConfused               *confusedView
	Epsilon                    *epsilonView
	Thresholds                 []thresholdView
}

type confusedView struct {
	True, Label string
	Prob        float64
}

type epsilonView struct {
	Value   float64
	History []float64
}

// thresholdView is a rater's threshold b_lk between two levels.
type thresholdView struct {
	Between          [2]string
	Mean, Q025, Q975 float64
}

// raterRows returns the report's raters by decreasing posterior mean
// precision, with their thresholds (ordinal).
func raterRows(rep *reports.Report) []raterRow {
	th := make(map[string][]thresholdView, len(rep.Thresholds))
	for _, t := range rep.Thresholds {
		for _, b := range t.Thresholds {
			th[t.Rater] = append(th[t.Rater], thresholdView{b.Between, float64(b.Mean), float64(b.Q025), float64(b.Q975)})
		}
	}
	rows := make([]raterRow, len(rep.Raters))
	for i := range rep.Raters {
		r := &rep.Raters[i]
		row := raterRow{ID: r.ID, Reference: r.Reference, Model: r.Model, NLabels: r.NLabels,
			Precision: estOf(r.Precision), Variance: estOf(r.Variance),
			Dispersion: estPtr(r.Dispersion), Bias: estPtr(r.Bias), Accuracy: intervalPtr(r.Accuracy),
			MeanLogPred:        float64(r.MeanLogPred),
			ConsensusAgreement: validPtr(r.ConsensusAgreement), SpamScore: numPtr(r.SpamScore), Spammer: r.Spammer,
			Thresholds: th[r.ID]}
		if r.Severity != nil {
			row.Severity = float64(r.Severity.Mean)
		}
		if c := r.MostConfused; c != nil {
			row.MostConfused = &confusedView{c.True, c.Label, float64(c.Prob)}
		}
		if e := r.Epsilon; e != nil {
			row.Epsilon = &epsilonView{float64(e.Value), e.History}
		}
		rows[i] = row
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Precision.Mean > rows[j].Precision.Mean })
	return rows
}

// precisionChart draws the raters' posterior precisions as a forest plot
// (mean and 95% interval), most precise first; note, when set, labels each
// row on the right (e.g. the rater's agreement with the consensus).
func precisionChart(raters []raterRow, note func(raterRow) string, title string) template.HTML {
	if len(raters) == 0 {
		return ""
	}
	const (
		left, top = 150.0, 28.0
		width     = 720.0
	)
	// Many raters get compact rows (the page puts the chart in a scroll
	// box).
	rowH, dot := 24.0, 5.0
	if len(raters) > manyRaters {
		rowH, dot = 14, 3.5
	}
	right := 30.0
	if note != nil {
		right = 100
	}
	hi := 0.0
	for _, r := range raters {
		hi = math.Max(hi, r.Precision.Q975)
		hi = math.Max(hi, r.Precision.Mean)
	}
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		hi = 1
	}
	hi = niceCeil(hi)
	height := top + rowH*float64(len(raters)) + 34
	x := func(v float64) float64 { return left + (width-left-right)*math.Max(0, math.Min(v, hi))/hi }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" aria-label="rater precision" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" xmlns="http://www.w3.org/2000/svg">`, width, height, width, height)
	if title == "" {
		title = "precision α (posterior mean and 95% interval)"
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="16" class="axis-title">%s; higher = more consistent with the consensus</text>`, left, template.HTMLEscapeString(title))
	// Grid and ticks.
	for i := 0; i <= 5; i++ {
		v := hi * float64(i) / 5
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" class="grid"/>`, x(v), x(v), top-4, height-30)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" class="tick" text-anchor="middle">%s</text>`, x(v), height-14, strconv.FormatFloat(v, 'g', 3, 64))
	}
	for i, r := range raters {
		y := top + rowH*float64(i) + rowH/2
		name := r.ID
		if r.Reference {
			name += " (ref)"
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" class="label" text-anchor="end">%s</text>`, left-8, y+4, svgText(clipText(name, 22)))
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="ci"/>`, x(r.Precision.Q025), x(r.Precision.Q975), y, y)
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="%.1f" class="pt"><title>%s: mean %.3f, 95%% interval %.3f to %.3f, %d labels</title></circle>`,
			x(r.Precision.Mean), y, dot, svgText(r.ID), r.Precision.Mean, r.Precision.Q025, r.Precision.Q975, r.NLabels)
		if note != nil {
			if s := note(r); s != "" {
				fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" class="note">%s</text>`, width-right+12, y+4, svgText(s))
			}
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// thresholdChart draws each rater's thresholds on the consensus scale
// (ordinal fits): where the rater moves from one grade to the next.
func thresholdChart(raters []raterRow) template.HTML {
	type row struct {
		id string
		th []thresholdView
	}
	var rows []row
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range raters {
		if len(r.Thresholds) == 0 {
			continue
		}
		rows = append(rows, row{r.ID, r.Thresholds})
		for _, t := range r.Thresholds {
			lo, hi = math.Min(lo, t.Q025), math.Max(hi, t.Q975)
		}
	}
	if len(rows) == 0 || !(hi > lo) {
		return ""
	}
	pad := 0.05 * (hi - lo)
	lo, hi = lo-pad, hi+pad
	const (
		left, right, top, rowH = 150.0, 30.0, 28.0, 24.0
		width                  = 720.0
	)
	height := top + rowH*float64(len(rows)) + 34
	x := func(v float64) float64 { return left + (width-left-right)*(v-lo)/(hi-lo) }
	colors := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" aria-label="rater thresholds" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" xmlns="http://www.w3.org/2000/svg">`, width, height, width, height)
	fmt.Fprintf(&b, `<text x="%.0f" y="16" class="axis-title">thresholds on the consensus scale (mean and 95%% interval): grade k+1 above threshold k</text>`, left)
	for i := 0; i <= 5; i++ {
		v := lo + (hi-lo)*float64(i)/5
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" class="grid"/>`, x(v), x(v), top-4, height-30)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" class="tick" text-anchor="middle">%s</text>`, x(v), height-14, strconv.FormatFloat(v, 'f', 2, 64))
	}
	for i, r := range rows {
		y := top + rowH*float64(i) + rowH/2
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" class="label" text-anchor="end">%s</text>`, left-8, y+4, svgText(clipText(r.id, 22)))
		for k, t := range r.th {
			col := colors[k%len(colors)]
			boundary := t.Between[0] + "|" + t.Between[1]
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2" opacity="0.55"/>`, x(t.Q025), x(t.Q975), y, y, col)
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4.5" fill="%s"><title>%s, threshold %s: mean %.3f, 95%% interval %.3f to %.3f</title></circle>`,
				x(t.Mean), y, col, svgText(r.id), svgText(boundary), t.Mean, t.Q025, t.Q975)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// Rows and raters of the classification views; the downloads hold
// everything.
const maxConfusionRaters = 60

// classRow is one row of the consensus class table.
type classRow struct {
	ID        string
	Class     string
	Prob      float64
	Entropy   float64
	HasEntr   bool
	Probs     string // the class distribution, most probable first
	NLabels   int
	Labels    string
	Predicted bool
	// Agreement, Raters, HasAgr: the item's observed agreement (see
	// rankRow).
	Agreement float64
	Raters    int
	HasAgr    bool
}

// consensusClasses returns the consensus class table of a classification
// fit (items in consensus class order, then by decreasing probability of
// their class), at most max rows, and how many were left out.
func consensusClasses(rep *reports.Report, limit int) ([]classRow, int) {
	order := make(map[string]int, len(rep.Levels))
	levels := make([]string, len(rep.Levels))
	for k, l := range rep.Levels {
		order[l.Code] = k
		levels[k] = l.Code
	}
	rows := make([]classRow, 0, len(rep.Items))
	for i := range rep.Items {
		it := &rep.Items[i]
		r := classRow{ID: it.ID, Class: it.Consensus, Prob: orZero(it.Prob), NLabels: it.NLabels, Predicted: it.NLabels == 0}
		if it.Entropy.Valid() {
			r.Entropy, r.HasEntr = float64(it.Entropy), true
		}
		r.Probs = distribution(levels, it.Probs, 4)
		r.Agreement, r.Raters, r.HasAgr = itemAgreement(it)
		r.Labels = raterLabels(rep, it)
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		ci, oki := order[rows[i].Class]
		cj, okj := order[rows[j].Class]
		if oki != okj {
			return oki
		}
		if ci != cj {
			return ci < cj
		}
		return rows[i].Prob > rows[j].Prob
	})
	if len(rows) > limit {
		return rows[:limit], len(rows) - limit
	}
	return rows, 0
}

// distribution formats a class distribution (probs in level order), most
// probable first, with at most top classes ("b 0.81 · a 0.12 · …").
func distribution(levels []string, probs []reports.Number, top int) string {
	idx := make([]int, 0, len(levels))
	for k := range levels {
		if k < len(probs) {
			idx = append(idx, k)
		}
	}
	sort.SliceStable(idx, func(i, j int) bool { return probs[idx[i]] > probs[idx[j]] })
	var parts []string
	for i, k := range idx {
		if i == top {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, levels[k]+" "+strconv.FormatFloat(float64(probs[k]), 'f', 2, 64))
	}
	return strings.Join(parts, " · ")
}

// classDist is one row of the class distribution table.
type classDist struct {
	Code, Name          string
	Items, Labels       int
	ItemsPct, LabelsPct float64
	MeanProb            float64
}

// classDistribution lists, per class, the items whose consensus class it
// is and the labels that gave it, and the mean consensus probability of
// the class over the items (the report's class counts).
func classDistribution(rep *reports.Report) []classDist {
	if rep.Classes == nil {
		return nil
	}
	out := make([]classDist, len(rep.Classes.Counts))
	for k, c := range rep.Classes.Counts {
		out[k] = classDist{Code: c.Class, Name: c.Name, Items: c.Consensus, Labels: c.Labels,
			ItemsPct: 100 * orZero(c.ConsensusShare), LabelsPct: 100 * orZero(c.LabelShare), MeanProb: orZero(c.MeanProb)}
	}
	return out
}

// confusionView is a rater's confusion table against the consensus.
type confusionView struct {
	Rater     string
	NLabels   int
	Agreement float64
	HasAgr    bool
	Rows      []confusionRow
	// Probs is the model's confusion matrix (the confusion model): the
	// posterior of the probability of each label given the true class;
	// Accuracy, SpamScore and Spammer summarise it.
	Probs     []confusionProbRow
	Accuracy  *est
	SpamScore *float64
	Spammer   bool
}

type confusionProbRow struct {
	Class string
	Cells []confusionProbCell
}

type confusionProbCell struct {
	Mean, Q025, Q975 float64
	Diag             bool
}

type confusionRow struct {
	Class string
	Cells []confusionCell
}

type confusionCell struct {
	N    int
	Diag bool
	Pct  float64 // share of the row
}

// confusions returns the raters' confusion tables against the consensus
// class, raters with the most labels first, at most max of them, and how
// many were left out.
func confusions(rep *reports.Report, raters []raterRow, limit int) ([]confusionView, int) {
	if rep.Classes == nil {
		return nil, 0
	}
	counts := make(map[string][][]int, len(rep.Classes.Confusion))
	for _, c := range rep.Classes.Confusion {
		counts[c.Rater] = c.Counts
	}
	probs := make(map[string][][]reports.Interval, len(rep.Raters))
	for i := range rep.Raters {
		probs[rep.Raters[i].ID] = rep.Raters[i].ConfusionProbs
	}
	raters = append([]raterRow(nil), raters...)
	sort.SliceStable(raters, func(i, j int) bool {
		if raters[i].NLabels != raters[j].NLabels {
			return raters[i].NLabels > raters[j].NLabels
		}
		return raters[i].ID < raters[j].ID
	})
	left := 0
	if len(raters) > limit {
		raters, left = raters[:limit], len(raters)-limit
	}
	out := make([]confusionView, 0, len(raters))
	for _, r := range raters {
		v := confusionView{Rater: r.ID, NLabels: r.NLabels}
		if r.ConsensusAgreement != nil {
			v.Agreement, v.HasAgr = *r.ConsensusAgreement, true
		}
		for k, row := range counts[r.ID] {
			cr := confusionRow{Class: rep.Levels[k].Code}
			n := 0
			for _, c := range row {
				n += c
			}
			for j, c := range row {
				cr.Cells = append(cr.Cells, confusionCell{N: c, Diag: j == k, Pct: 100 * float64(c) / float64(max(n, 1))})
			}
			v.Rows = append(v.Rows, cr)
		}
		for k, row := range probs[r.ID] {
			pr := confusionProbRow{Class: rep.Levels[k].Code}
			for j, e := range row {
				pr.Cells = append(pr.Cells, confusionProbCell{Mean: float64(e.Mean), Q025: float64(e.Q025), Q975: float64(e.Q975), Diag: j == k})
			}
			v.Probs = append(v.Probs, pr)
		}
		v.Accuracy, v.SpamScore, v.Spammer = r.Accuracy, r.SpamScore, r.Spammer
		out = append(out, v)
	}
	return out, left
}

// agreementNote labels a rater's row of the precision chart with their
// agreement with the consensus class (classification fits).
func agreementNote(r raterRow) string {
	if r.ConsensusAgreement == nil {
		return ""
	}
	return strconv.FormatFloat(100**r.ConsensusAgreement, 'f', 0, 64) + "% agree"
}

// labelErrorRow is one row of a robust fit's table of the labels most
// probably wrong.
type labelErrorRow struct {
	Item, Rater, Label string
	PError             float64
	Class              string
	Prob               float64
	Flagged            bool
}

// labelErrors returns the first limit labels of a robust fit by
// decreasing p_error (the report's order), with their item's consensus
// class and its probability; Flagged marks those among the fit's flags.
func labelErrors(rep *reports.Report, limit int) []labelErrorRow {
	rows := make([]labelErrorRow, 0, min(limit, len(rep.LabelErrors)))
	for _, le := range rep.LabelErrors[:min(limit, len(rep.LabelErrors))] {
		rows = append(rows, labelErrorRow{Item: le.Item, Rater: le.Rater, Label: le.Label, PError: float64(le.PError),
			Class: le.Consensus, Prob: orZero(le.ConsensusProb), Flagged: le.Flagged})
	}
	return rows
}

// fill fills a done fit's page from its report.
func (page *fitPage) fill(rep *reports.Report) {
	page.Report = rep
	page.Tables = tablesFor(len(rep.LabelErrors) > 0)
	page.ModelChoice = rep.ModelChoice
	for _, l := range rep.Levels {
		page.Levels = append(page.Levels, l.Code)
	}
	page.Raters = raterRows(rep)
	page.Headline = newHeadline(rep)
	page.Review, page.ReviewTotal = reviewQueue(rep, maxReviewRows)
	page.Gold, page.GoldItems, page.GoldLeft = goldRows(rep)
	page.Flags = rep.Flags[:min(len(rep.Flags), maxFlagRows)]
	switch rep.Kind {
	case reports.KindRanking:
		// No rater parameters: the ranking, the ROC and the
		// coefficients.
		page.AUC = aucRanking(rep, maxRankingRows)
	case reports.KindClassification:
		page.Classification = true
		page.FixedPrecisions = rep.Model.Precisions == analysis.PrecisionsFixed || rep.Model.Precisions == analysis.PrecisionsFixedFull
		page.MeanEntropy = meanEntropy(rep)
		page.Consensus, page.Truncated = consensusClasses(rep, maxRankingRows)
		page.ClassDist = classDistribution(rep)
		page.Confusions, page.ConfusionsLeft = confusions(rep, page.Raters, maxConfusionRaters)
		page.LabelErrors = labelErrors(rep, maxLabelErrorRows)
		page.LabelErrorsTotal = len(rep.LabelErrors)
		for i := range rep.Raters {
			page.ErrorRates = page.ErrorRates || rep.Raters[i].Epsilon != nil
			page.ConfusionModel = page.ConfusionModel || len(rep.Raters[i].ConfusionProbs) > 0
		}
		if !page.FixedPrecisions && !page.ConfusionModel {
			page.Chart = precisionChart(page.Raters, agreementNote, "")
		}
	default:
		page.Ranking, page.Truncated = ranking(rep, maxRankingRows)
		title := ""
		if rep.Kind == reports.KindValues {
			// Bounded fits: each rater's dispersion nu (Precision
			// repeats it).
			title = "dispersion ν (estimate and 95% interval)"
			page.Values = true
			for _, r := range page.Raters {
				page.Bias = page.Bias || r.Bias != nil
			}
		}
		page.Chart = precisionChart(page.Raters, nil, title)
		page.Thresh = thresholdChart(page.Raters)
	}
	var plots []string
	for _, p := range reports.Plots(rep) {
		plots = append(plots, p.Name)
	}
	page.MainPlots, page.MorePlots = splitPlots(plots, page.AUC != nil)
}

// meanEntropy is the mean entropy, in bits, of the items' consensus class
// distributions; nil when no item has one.
func meanEntropy(rep *reports.Report) *float64 {
	sum, n := 0.0, 0
	for i := range rep.Items {
		if e := rep.Items[i].Entropy; e.Valid() {
			sum += float64(e)
			n++
		}
	}
	if n == 0 {
		return nil
	}
	m := sum / float64(n)
	return &m
}
