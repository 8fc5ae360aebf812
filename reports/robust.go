package reports

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/xuri/excelize/v2"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"concord/multirater"
)

// robustLikelihood is the likelihood the robust model records in its
// settings (multirater.ModelSettings.Likelihood).
const robustLikelihood = "robust-probit"

// maxHistoryRaters bounds the raters of the error-rates plot's EM history
// panel.
const maxHistoryRaters = 8

// maxLabelErrorRows bounds the rows of the Label errors sheet (a
// worksheet holds 1,048,575 rows after the header; a note follows).
const maxLabelErrorRows = maxSheetRows - 4

// kv is one line of the Summary sheet: a key, its value and the value's
// style.
type kv struct {
	key   string
	val   any
	style int
}

// deterministic reports whether the fit was made by a deterministic
// engine (EP, Laplace), which has no sampler, chains or R-hat.
func deterministic(m multirater.ModelSettings) bool {
	return m.Engine == multirater.EngineEP || m.Engine == multirater.EngineLaplace
}

// hasEpsilon reports whether any rater has a labelling-error rate (the
// robust model).
func hasEpsilon(rep *Report) bool {
	for i := range rep.Raters {
		if rep.Raters[i].Epsilon != nil {
			return true
		}
	}
	return false
}

// hasItemText reports whether any item has a text.
func hasItemText(rep *Report) bool {
	for i := range rep.Items {
		if rep.Items[i].Text != "" {
			return true
		}
	}
	return false
}

// errorRateWords says how the raters' labelling-error rates were set.
func errorRateWords(rep *Report) string {
	steps, value := 0, nan
	for _, r := range rep.Raters {
		if e := r.Epsilon; e != nil {
			steps = max(steps, e.Steps)
			value = e.Value
		}
	}
	switch rep.Summary.ErrorRates {
	case "learnt":
		return fmt.Sprintf("learnt per rater by EM (Kim & Ghahramani sec. 4), %d steps", steps)
	case "fixed":
		return fmt.Sprintf("fixed at %s for every rater", strconv.FormatFloat(float64(value), 'g', 4, 64))
	case "none":
		return "none: the plain probit classifier (ε = 0)"
	}
	return ""
}

// robustRows are the Summary sheet's lines of the robust model: how the
// error rates were set, their mean and extremes, the labels more probably
// wrong than right, the log evidence and the model selection. None for
// other models.
func (x *xlsxWriter) robustRows() []kv {
	rep, st := x.rep, x.st
	s := rep.Summary
	d := rep.Diagnostics
	var rows []kv
	if d.LogEvidence != nil {
		rows = append(rows, kv{"Log evidence", float64(*d.LogEvidence), st.num3})
	}
	if !hasEpsilon(rep) && len(rep.LabelErrors) == 0 {
		return rows
	}
	rows = append(rows, kv{"", nil, 0})
	if w := errorRateWords(rep); w != "" {
		rows = append(rows, kv{"Labelling-error rates ε", w, st.wrap})
	}
	sum, n := 0.0, 0
	for _, r := range rep.Raters {
		if e := r.Epsilon; e != nil && e.Value.Valid() {
			sum += float64(e.Value)
			n++
		}
	}
	if n > 0 && s.ErrorRates == "learnt" {
		rows = append(rows, kv{"Mean error rate ε over raters", sum / float64(n), st.num4})
	}
	eps := func(id string) string {
		for _, r := range rep.Raters {
			if r.ID == id && r.Epsilon != nil {
				return fmt.Sprintf("%s (ε = %.4f, %d labels)", id, float64(r.Epsilon.Value), r.NLabels)
			}
		}
		return id
	}
	if s.MostErrorProne != "" {
		rows = append(rows, kv{"Highest error rate", eps(s.MostErrorProne), 0}, kv{"Lowest error rate", eps(s.LeastErrorProne), 0})
	}
	if s.LikelyErrors != nil {
		rows = append(rows, kv{"Labels more probably wrong than right (p_error > 0.5)", *s.LikelyErrors, st.int})
		if s.Labels > 0 {
			rows = append(rows, kv{"  share of labels", float64(*s.LikelyErrors) / float64(s.Labels), st.pct})
		}
	}
	if d.Selected != "" {
		rows = append(rows, kv{"Model selection by the evidence (Kim & Ghahramani eq. 21)", selectionWords(d), st.wrap})
	}
	return rows
}

// selectionWords says which model the evidence selected, with both
// evidences.
func selectionWords(d Diagnostics) string {
	names := make([]string, 0, len(d.Evidence))
	for k := range d.Evidence {
		names = append(names, k)
	}
	sort.Strings(names)
	w := d.Selected + " kept"
	for i, k := range names {
		if i == 0 {
			w += " (log evidence "
		} else {
			w += ", "
		}
		w += k + " " + strconv.FormatFloat(float64(d.Evidence[k]), 'f', 3, 64)
		if i == len(names)-1 {
			w += ")"
		}
	}
	return w
}

// labelErrorsBlock is the Label errors table (also the label-errors CSV):
// every label by decreasing p_error, with the item's consensus class, its
// probability and position, and the item's text when the report has
// texts. At most limit rows (0: all).
func (x *xlsxWriter) labelErrorsBlock(limit int) *block {
	rep := x.rep
	numeric := numericLevels(rep)
	text := hasItemText(rep)
	labelCol := func(name string) col {
		if numeric {
			return col{header: name, dec: -1}
		}
		return x.text(name)
	}
	cols := []col{x.integer("Rank"), x.text("Item"), x.text("Rater"), labelCol("Label"), x.c("P(error)", x.st.num4, 4), x.text("Flagged"),
		labelCol("Consensus class"), x.c("P(class)", x.st.num4, 4), x.integer("Item position")}
	if text {
		cols = append(cols, x.text("Item text"))
	}
	n := len(rep.LabelErrors)
	if limit > 0 {
		n = min(n, limit)
	}
	return &block{cols: cols, n: n, filter: true, freeze: true, freezeCols: 0,
		row: func(i int, dst []any) []any {
			le := &rep.LabelErrors[i]
			flagged := "no"
			if le.Flagged {
				flagged = "yes"
			}
			dst = append(dst, i+1, le.Item, le.Rater, x.labelValue(le.Label, numeric), float64(le.PError), flagged,
				x.labelValue(le.Consensus, numeric), float64(le.ConsensusProb), le.Position)
			if text {
				var t string
				if le.Position >= 1 && le.Position <= len(rep.Items) {
					t = rep.Items[le.Position-1].Text
				}
				dst = append(dst, clipCell(t))
			}
			return dst
		}}
}

// clipCell shortens a text to what a worksheet cell holds (32,767
// characters).
func clipCell(s string) string {
	const maxCell = 32767
	if len(s) <= maxCell {
		return s
	}
	r := []rune(s)
	if len(r) <= maxCell {
		return s
	}
	return string(r[:maxCell-1]) + "…"
}

// labelErrors writes the Label errors sheet: every label of a robust fit,
// most probably wrong first; the rows of flagged labels are red and those
// more probably wrong than right amber.
func (x *xlsxWriter) labelErrors() error {
	rep := x.rep
	b := x.labelErrorsBlock(maxLabelErrorRows)
	last := len(b.cols)
	b.after = func(hdr, first, lastRow int) error {
		red, amber := x.st.red, x.st.amber
		ref := rangeRef(1, first, last, lastRow)
		p := fmt.Sprintf("$E%d", first)
		flagged := fmt.Sprintf("$F%d", first)
		return x.f.SetConditionalFormat(SheetLabelErrors, ref, []excelize.ConditionalFormatOptions{
			{Type: "formula", Criteria: flagged + `="yes"`, Format: &red},
			{Type: "formula", Criteria: fmt.Sprintf(`AND(%s<>"yes",%s>0.5)`, flagged, p), Format: &amber},
		})
	}
	lines := []string{
		fmt.Sprintf("Every label with P(error), the posterior probability that it is a labelling error given the other labels (Kim & Ghahramani's robust classifier), most probable first. Red: flagged (the label is right with a probability below %g); amber: more probably wrong than right (P(error) > 0.5).", rep.Model.FlagThreshold),
		"Consensus class and P(class) are the item's; Item position is its place on the Items sheet.",
	}
	if b.n < len(rep.LabelErrors) {
		lines = append(lines, fmt.Sprintf("Only the %d most probable of %d labels fit in the sheet; the label-errors CSV and the JSON report have them all.", b.n, len(rep.LabelErrors)))
	}
	return x.writeBlocks(SheetLabelErrors, []*block{b, noteBlock(lines...)})
}

// errorRatePlot draws the raters' labelling-error rates epsilon (robust
// fits) as a forest plot, sorted (the most error-prone at the top; the
// maxForestRaters/2 lowest and highest when there are more), and, when
// they were learnt by EM, beside it their EM history: the error rate after
// each step of the (at most maxHistoryRaters) most error-prone raters.
func errorRatePlot(rep *Report) (*figure, error) {
	title := "Rater labelling-error rate ε (how often the rater's label is flipped)"
	if len(rep.Raters) > maxForestRaters {
		title = fmt.Sprintf("Rater labelling-error rate ε: the %d lowest and %d highest of %d raters", maxForestRaters/2, maxForestRaters-maxForestRaters/2, len(rep.Raters))
	}
	est := func(r *Rater) *Estimate {
		v := nan
		if r.Epsilon != nil {
			v = r.Epsilon.Value
		}
		return &Estimate{Mean: v, SD: nan, Q025: v, Q50: v, Q975: v}
	}
	fig, err := raterForest(rep, est, title, "error rate ε (0 = never flips a label, 0.5 = labels at random)", false)
	if err != nil {
		return nil, err
	}
	// Error rates lie in [0, 0.5).
	forest := fig.panels[0][0]
	forest.X.Min, forest.X.Max = 0, 0.5
	// The EM history of the most error-prone raters.
	idx, _ := raterSubset(len(rep.Raters), len(rep.Raters), func(l int) float64 {
		if e := rep.Raters[l].Epsilon; e != nil && e.Learnt && len(e.History) > 1 && e.Value.Valid() {
			return -float64(e.Value)
		}
		return math.NaN()
	})
	var lines []int
	for _, l := range idx {
		if e := rep.Raters[l].Epsilon; e != nil && e.Learnt && len(e.History) > 1 && len(lines) < maxHistoryRaters {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return fig, nil
	}
	p := newPlot(fmt.Sprintf("EM history of the error rates (the %d highest)", len(lines)), "EM step", "ε")
	top := 0.0
	for k, l := range lines {
		h := rep.Raters[l].Epsilon.History
		for _, v := range h {
			top = math.Max(top, v)
		}
		pts := make(plotter.XYs, len(h))
		for s, v := range h {
			pts[s] = plotter.XY{X: float64(s), Y: v}
		}
		ln, err := paletteLine(pts, vg.Points(1.2), k)
		if err != nil {
			return nil, err
		}
		p.Add(ln)
		name := []rune(rep.Raters[l].ID)
		if len(name) > 18 {
			name = append(name[:17], '…')
		}
		p.Legend.Add(string(name), ln)
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = false
	// Room above the lines for the legend.
	p.Y.Min, p.Y.Max = 0, math.Max(top, 0.05)*(1+0.07*float64(len(lines)))
	// Side by side: the history panel as tall as the forest.
	return &figure{w: fig.w + 13*vg.Centimeter, h: max(fig.h, 9*vg.Centimeter), panels: [][]*plot.Plot{{forest, p}}}, nil
}
