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
)

// Rows the fit page shows; the downloads hold everything.
const (
	maxRankingRows = 5000
	maxFlagRows    = 500
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
	"join":     strings.Join,
	"specval": func(m map[string]any, k string) string {
		if v, ok := m[k]; ok {
			return fmt.Sprint(v)
		}
		return ""
	},
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
}

// ranking returns the consensus ranking (by expected rank), at most max
// rows, and how many were left out.
func ranking(res *multirater.FitResult, max int) ([]rankRow, int) {
	rows := make([]rankRow, 0, len(res.Items))
	raterOrder := make([]string, len(res.Raters))
	for i, r := range res.Raters {
		raterOrder[i] = r.ID
	}
	for _, it := range res.Items {
		r := rankRow{ID: it.ID, Grade: it.Grade, NLabels: it.NLabels, Predicted: it.NLabels == 0}
		if it.Rank != nil {
			r.HasRank, r.Rank, r.RankLo, r.RankHi = true, it.Rank.Mean, it.Rank.Q025, it.Rank.Q975
		}
		if it.Score != nil {
			r.HasScore, r.Score, r.ScoreLo, r.ScoreHi = true, it.Score.Mean, it.Score.Q025, it.Score.Q975
		}
		r.GradeProb = it.GradeProbs[it.Grade]
		var parts []string
		for _, id := range raterOrder {
			if v, ok := it.Labels[id]; ok {
				parts = append(parts, id+": "+v)
			}
		}
		r.Labels = strings.Join(parts, ", ")
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].HasRank != rows[j].HasRank {
			return rows[i].HasRank
		}
		return rows[i].Rank < rows[j].Rank
	})
	if len(rows) > max {
		return rows[:max], len(rows) - max
	}
	return rows, 0
}

// svgText escapes text for SVG.
func svgText(s string) string { return template.HTMLEscapeString(s) }

// precisionChart draws the raters' posterior precisions as a forest plot
// (mean and 95% interval), most precise first.
func precisionChart(raters []multirater.RaterResult) template.HTML {
	if len(raters) == 0 {
		return ""
	}
	const (
		left, right, top, rowH = 150.0, 30.0, 28.0, 24.0
		width                  = 720.0
	)
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
	fmt.Fprintf(&b, `<text x="%.0f" y="16" class="axis-title">precision α (posterior mean and 95%% interval); higher = more consistent with the consensus</text>`, left)
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
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" class="pt"><title>%s: mean %.3f, 95%% interval %.3f to %.3f, %d labels</title></circle>`,
			x(r.Precision.Mean), y, svgText(r.ID), r.Precision.Mean, r.Precision.Q025, r.Precision.Q975, r.NLabels)
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
