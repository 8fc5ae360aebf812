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

	"concord/annotations"
	"concord/multirater"
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

func parseFloatField(name, v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, annotations.Errorf(annotations.EINVALID, "%s %q: expected a number", name, v)
	}
	return x, nil
}

func parseUintField(name, v string) (uint64, error) {
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, annotations.Errorf(annotations.EINVALID, "%s %q: expected a whole number from 0 up", name, v)
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

// ranking returns the consensus ranking (by expected rank, the summary's
// order), at most max rows, and how many were left out.
func ranking(res *multirater.FitResult, sum *reports.FitSummary, max int) ([]rankRow, int) {
	rows := make([]rankRow, 0, min(len(sum.Ranking), max))
	for _, it := range sum.Ranking {
		if len(rows) == max {
			break
		}
		r := rankRow{ID: it.ID, Grade: it.Grade, NLabels: it.NLabels, Predicted: it.NLabels == 0}
		if it.Rank != nil {
			r.HasRank, r.Rank, r.RankLo, r.RankHi = true, it.Rank.Mean, it.Rank.Q025, it.Rank.Q975
		}
		if it.Score != nil {
			r.HasScore, r.Score, r.ScoreLo, r.ScoreHi = true, it.Score.Mean, it.Score.Q025, it.Score.Q975
		}
		r.GradeProb = it.GradeProbs[it.Grade]
		if it.Value != nil {
			r.HasValue, r.Value, r.ValueLo, r.ValueHi = true, it.Value.Mean, it.Value.Q025, it.Value.Q975
		}
		r.Mean, r.HasMean = ratingsMean(it.Labels)
		r.Agreement, r.Raters, r.HasAgr = observedAgreement(it.Labels)
		r.Labels = raterLabels(res, it)
		rows = append(rows, r)
	}
	return rows, len(sum.Ranking) - len(rows)
}

// ratingsMean is the mean of an item's labels when they are all numbers
// (the raters' mean of bounded ratings).
func ratingsMean(labels map[string]string) (float64, bool) {
	if len(labels) == 0 {
		return 0, false
	}
	sum := 0.0
	for _, v := range labels {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		sum += x
	}
	return sum / float64(len(labels)), true
}

// raterLabels lists an item's labels by rater, in the result's rater
// order ("r1: 2, r3: 1").
func raterLabels(res *multirater.FitResult, it *multirater.ItemResult) string {
	var parts []string
	for _, r := range res.Raters {
		if v, ok := it.Labels[r.ID]; ok {
			parts = append(parts, r.ID+": "+v)
		}
	}
	return strings.Join(parts, ", ")
}

// svgText escapes text for SVG.
func svgText(s string) string { return template.HTMLEscapeString(s) }

// precisionChart draws the raters' posterior precisions as a forest plot
// (mean and 95% interval), most precise first; note, when set, labels each
// row on the right (e.g. the rater's agreement with the consensus).
func precisionChart(raters []multirater.RaterResult, note func(multirater.RaterResult) string, title string) template.HTML {
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
func thresholdChart(res *multirater.FitResult) template.HTML {
	type row struct {
		id string
		th []multirater.Threshold
	}
	var rows []row
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range res.Raters {
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
func consensusClasses(res *multirater.FitResult, limit int) ([]classRow, int) {
	order := make(map[string]int, len(res.Levels))
	for k, l := range res.Levels {
		order[l] = k
	}
	rows := make([]classRow, 0, len(res.Items))
	for i := range res.Items {
		it := &res.Items[i]
		r := classRow{ID: it.ID, Class: it.Class, Prob: it.ClassProbs[it.Class], NLabels: it.NLabels, Predicted: it.NLabels == 0}
		if it.Entropy != nil {
			r.Entropy, r.HasEntr = *it.Entropy, true
		}
		r.Probs = distribution(res.Levels, it.ClassProbs, 4)
		r.Agreement, r.Raters, r.HasAgr = observedAgreement(it.Labels)
		r.Labels = raterLabels(res, it)
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

// distribution formats a class distribution, most probable first, with at
// most top classes ("b 0.81 · a 0.12 · …").
func distribution(levels []string, probs map[string]float64, top int) string {
	codes := append([]string(nil), levels...)
	sort.SliceStable(codes, func(i, j int) bool { return probs[codes[i]] > probs[codes[j]] })
	var parts []string
	for i, c := range codes {
		if i == top {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, c+" "+strconv.FormatFloat(probs[c], 'f', 2, 64))
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
// the class over the items (from the fit's summary).
func classDistribution(sum *reports.FitSummary) []classDist {
	out := make([]classDist, len(sum.Classes))
	for k, c := range sum.Classes {
		out[k] = classDist{Code: c.Level, Name: c.Name, Items: c.Items, Labels: c.Labels,
			ItemsPct: 100 * float64(c.Items) / float64(max(sum.Items, 1)), LabelsPct: 100 * float64(c.Labels) / float64(max(sum.Labels, 1)),
			MeanProb: c.ProbSum / float64(max(sum.Items, 1))}
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
	Accuracy  *multirater.Estimate
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
func confusions(res *multirater.FitResult, limit int) ([]confusionView, int) {
	raters := append([]multirater.RaterResult(nil), res.Raters...)
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
		for k, row := range r.Confusion {
			cr := confusionRow{Class: res.Levels[k]}
			n := 0
			for _, c := range row {
				n += c
			}
			for j, c := range row {
				cr.Cells = append(cr.Cells, confusionCell{N: c, Diag: j == k, Pct: 100 * float64(c) / float64(max(n, 1))})
			}
			v.Rows = append(v.Rows, cr)
		}
		for k, row := range r.ConfusionProbs {
			pr := confusionProbRow{Class: res.Levels[k]}
			for j, e := range row {
				pr.Cells = append(pr.Cells, confusionProbCell{Mean: e.Mean, Q025: e.Q025, Q975: e.Q975, Diag: j == k})
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
func agreementNote(r multirater.RaterResult) string {
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
// decreasing p_error (the result's order), with their item's consensus
// class and its probability; Flagged marks those among the fit's flags.
func labelErrors(res *multirater.FitResult, limit int) []labelErrorRow {
	if len(res.LabelErrors) == 0 {
		return nil
	}
	items := make(map[string]*multirater.ItemResult, len(res.Items))
	for i := range res.Items {
		items[res.Items[i].ID] = &res.Items[i]
	}
	flagged := make(map[[2]string]bool, len(res.Flags))
	for _, f := range res.Flags {
		flagged[[2]string{f.Item, f.Rater}] = true
	}
	rows := make([]labelErrorRow, 0, min(limit, len(res.LabelErrors)))
	for _, le := range res.LabelErrors[:min(limit, len(res.LabelErrors))] {
		r := labelErrorRow{Item: le.Item, Rater: le.Rater, Label: le.Label, PError: le.PError, Flagged: flagged[[2]string{le.Item, le.Rater}]}
		if it := items[le.Item]; it != nil {
			r.Class, r.Prob = it.Class, it.ClassProbs[it.Class]
		}
		rows = append(rows, r)
	}
	return rows
}
