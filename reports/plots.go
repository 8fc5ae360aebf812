package reports

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"concord/multirater/diag"
)

// Plot file formats.
const (
	PNG = "png"
	SVG = "svg"
)

// The names of the plots (PlotInfo.Name).
const (
	PlotPrecision  = "precision"
	PlotVariance   = "variance-density"
	PlotTrace      = "trace"
	PlotRhat       = "convergence"
	PlotConsensus  = "consensus"
	PlotThresholds = "thresholds"
	PlotROC        = "roc"
	PlotDispersion = "dispersion"
	PlotErrorRates = "error-rates"
)

// ErrNoPlot is returned (wrapped) by WritePlot for a plot name that does not
// exist or does not apply to the report.
var ErrNoPlot = errors.New("no such plot")

// PlotInfo describes one plot of a report.
type PlotInfo struct {
	// Name is the plot's name (one of the Plot... constants), also its
	// file name without extension.
	Name  string
	Title string
}

// Plot limits: plots with one row or panel per rater show at most this
// many raters (the extremes of the ordering); the consensus plot draws at
// most maxIntervals item intervals (evenly spaced over the ranking).
const (
	maxForestRaters = 80
	maxPanelRaters  = 12
	maxIntervals    = 1500
)

// Plots returns the plots that apply to the report, in a fixed order:
//
//	precision         rater precisions, posterior mean and 95% interval (forest plot)
//	variance-density  posterior densities of the rater variances 1/alpha (Rogers et al. fig. 10); needs the fit's draws
//	trace             trace plots of the rater precisions, one panel per rater, one line per chain (fig. 7b, 9c); needs the fit's traces
//	convergence       R-hat of the precisions as the draws accumulate (fig. 3a, 7a, 9a), R-hat and bulk ESS per parameter group against the limits, and the precisions' autocorrelation (fig. 3b, 9b)
//	consensus         consensus scores of the items in ranking order with 95% intervals, and their distribution (ordinal); the consensus probability distribution and class counts (classification)
//	thresholds        each rater's thresholds on the consensus scale with 95% intervals, above the distribution of the items' scores (ordinal)
//	roc               ROC curves of the consensus probability of the positive class against gold labels, or else against the majority vote (two-level schemes)
//	error-rates       the raters' labelling-error rates epsilon, sorted, and their EM history when learnt (robust fits)
//	coefficients      the coefficients of linear scores, mean and 95% interval (AUC scoring fits)
//
// A report of values (bounded ratings) has, instead of the precisions,
//
//	dispersion        rater dispersions nu, estimate and 95% interval on a log axis (forest plot)
//
// and its consensus plot shows the items' values on the rating scale,
// sorted, with their 95% predictive intervals and the raters' mean.
func Plots(rep *Report) []PlotInfo {
	var out []PlotInfo
	values := rep.Kind == KindValues
	switch {
	case len(rep.Raters) > 0 && values:
		out = append(out, PlotInfo{PlotDispersion, PlotTitle(PlotDispersion)})
	case len(rep.Raters) > 0 && rep.Kind != KindRanking:
		out = append(out, PlotInfo{PlotPrecision, PlotTitle(PlotPrecision)})
	}
	if hasEpsilon(rep) {
		out = append(out, PlotInfo{PlotErrorRates, PlotTitle(PlotErrorRates)})
	}
	if rep.Draws != nil && len(rep.Draws.Alpha) > 0 && len(rep.Raters) > 0 {
		out = append(out, PlotInfo{PlotVariance, PlotTitle(PlotVariance)})
	}
	if rep.Traces != nil && len(rep.Traces.Alpha) > 0 {
		out = append(out, PlotInfo{PlotTrace, PlotTitle(PlotTrace)})
	}
	if len(rep.Diagnostics.Parameters) > 0 || hasTraces(rep) || len(rep.Diagnostics.Autocorrelation) > 0 {
		out = append(out, PlotInfo{PlotRhat, PlotTitle(PlotRhat)})
	}
	switch {
	case len(rep.Items) > 0 && values:
		out = append(out, PlotInfo{PlotConsensus, "Consensus values of the items with 95% predictive intervals"})
	case len(rep.Items) > 0:
		out = append(out, PlotInfo{PlotConsensus, PlotTitle(PlotConsensus)})
	}
	if rep.Kind == KindOrdinal && len(rep.Thresholds) > 0 {
		out = append(out, PlotInfo{PlotThresholds, PlotTitle(PlotThresholds)})
	}
	if len(rep.Levels) == 2 && len(rocCurves(rep)) > 0 {
		out = append(out, PlotInfo{PlotROC, PlotTitle(PlotROC)})
	}
	if a := rep.Agreement; a != nil && a.Kappa != nil && len(a.Kappa.Raters) >= 2 {
		out = append(out, PlotInfo{PlotAgreement, PlotTitle(PlotAgreement)})
	}
	if hasConfusion(rep) {
		out = append(out, PlotInfo{PlotConfusion, PlotTitle(PlotConfusion)})
	}
	if rep.Ranking != nil && len(rep.Ranking.Coefficients) > 0 {
		out = append(out, PlotInfo{PlotCoefficients, PlotTitle(PlotCoefficients)})
	}
	return out
}

// hasConfusion reports whether a classification report has a rater with
// a label against a consensus class (the confusion plot).
func hasConfusion(rep *Report) bool {
	if rep.Kind != KindClassification || rep.Classes == nil {
		return false
	}
	for _, c := range rep.Classes.Confusion {
		for _, row := range c.Counts {
			for _, n := range row {
				if n > 0 {
					return true
				}
			}
		}
	}
	return false
}

// plotTitles are the plots' titles, by name.
var plotTitles = map[string]string{
	PlotPrecision:    "Rater precisions",
	PlotDispersion:   "Rater dispersions",
	PlotVariance:     "Posterior densities of the rater variances",
	PlotTrace:        "Trace plots of the rater precisions",
	PlotRhat:         "Convergence: R-hat, ESS and autocorrelation",
	PlotConsensus:    "Consensus scores of the items",
	PlotThresholds:   "Rater thresholds on the consensus scale",
	PlotROC:          "ROC curves",
	PlotErrorRates:   "Rater labelling-error rates",
	PlotAgreement:    "Agreement heatmap: pairwise Cohen's kappa",
	PlotConfusion:    "Confusion matrices of the raters against the consensus",
	PlotCoefficients: "Coefficients of the linear scores",
}

// PlotTitle returns the title of the named plot (the name itself for an
// unknown one), as Plots lists it.
func PlotTitle(name string) string {
	if t, ok := plotTitles[name]; ok {
		return t
	}
	return name
}

func hasTraces(rep *Report) bool { return rep.Traces != nil && len(rep.Traces.Alpha) > 0 }

// WritePlot draws the named plot of the report to w as PNG or SVG. A name
// that Plots does not list is an error wrapping ErrNoPlot.
func WritePlot(w io.Writer, rep *Report, name, format string) error {
	if format != PNG && format != SVG {
		return fmt.Errorf("reports: plot format %q: expected png or svg", format)
	}
	ok := false
	for _, p := range Plots(rep) {
		if p.Name == name {
			ok = true
		}
	}
	if !ok {
		return fmt.Errorf("reports: plot %q: %w for this report", name, ErrNoPlot)
	}
	fig, err := rep.figure(name)
	if err != nil {
		return err
	}
	return fig.render(w, format)
}

// figure draws the named plot.
func (rep *Report) figure(name string) (*figure, error) {
	var fig *figure
	var err error
	switch name {
	case PlotPrecision:
		fig, err = precisionPlot(rep)
	case PlotVariance:
		fig, err = variancePlot(rep)
	case PlotTrace:
		fig, err = tracePlot(rep)
	case PlotRhat:
		fig, err = convergencePlot(rep)
	case PlotConsensus:
		fig, err = consensusPlot(rep)
	case PlotThresholds:
		fig, err = thresholdsPlot(rep)
	case PlotROC:
		fig, err = rocPlot(rep)
	case PlotDispersion:
		fig, err = dispersionPlot(rep)
	case PlotErrorRates:
		fig, err = errorRatePlot(rep)
	case PlotAgreement:
		fig, err = agreementPlot(rep)
	case PlotConfusion:
		fig, err = confusionPlot(rep)
	case PlotCoefficients:
		fig, err = coefficientPlot(rep)
	default:
		return nil, fmt.Errorf("reports: plot %q: %w", name, ErrNoPlot)
	}
	if err != nil {
		return nil, fmt.Errorf("reports: plot %s: %w", name, err)
	}
	return fig, nil
}

// figure is a drawing of a given size: one plot or a grid of panels.
type figure struct {
	w, h  vg.Length
	title string
	// caption holds lines of small text under the plot (what was left
	// out, how to read it); the figure grows to hold them.
	caption []string
	// rows of panels; nil panels are left empty.
	panels [][]*plot.Plot
}

func single(p *plot.Plot, w, h vg.Length) *figure {
	return &figure{w: w, h: h, panels: [][]*plot.Plot{{p}}}
}

// plotDPI is the resolution of the PNG plots.
const plotDPI = 110

func (f *figure) render(w io.Writer, format string) error { return f.renderDPI(w, format, plotDPI) }

// captionLine is the height of a caption line.
const captionLine = 10 * vg.Length(1)

// captionLines returns the caption wrapped to the figure's width (about
// 4 points a character at the caption's size).
func (f *figure) captionLines() []string {
	width := max(int(f.w.Points()/4.1), 40)
	var out []string
	for _, line := range f.caption {
		for len(line) > width {
			cut := strings.LastIndex(line[:width], " ")
			if cut <= 0 {
				cut = width
			}
			out = append(out, line[:cut])
			line = strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return out
}

// height is the figure's height with its caption.
func (f *figure) height() vg.Length {
	if len(f.caption) == 0 {
		return f.h
	}
	return f.h + vg.Length(len(f.captionLines()))*captionLine + vg.Points(6)
}

func (f *figure) renderDPI(w io.Writer, format string, dpi int) error {
	var c vg.CanvasWriterTo
	h := f.height()
	switch format {
	case PNG:
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.w, h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))}
	case SVG:
		c = vgsvg.New(f.w, h)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if lines := f.captionLines(); len(lines) > 0 {
		n := len(lines)
		sty := draw.TextStyle{Color: color.Gray{Y: 60}, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YBottom}
		sty.Font.Size = vg.Points(7.5)
		for i, line := range lines {
			y := dc.Min.Y + vg.Points(3) + vg.Length(n-1-i)*captionLine
			dc.FillText(sty, vg.Point{X: dc.Min.X + vg.Points(6), Y: y}, line)
		}
		dc = draw.Crop(dc, 0, 0, vg.Length(n)*captionLine+vg.Points(6), 0)
	}
	if f.title != "" {
		sty := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
		sty.Font.Size = vg.Points(13)
		dc.FillText(sty, vg.Point{X: (dc.Min.X + dc.Max.X) / 2, Y: dc.Max.Y - vg.Points(4)}, f.title)
		dc = draw.Crop(dc, 0, 0, 0, -vg.Points(22))
	}
	rows := len(f.panels)
	cols := 0
	for _, r := range f.panels {
		cols = max(cols, len(r))
	}
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		copy(grid[i], f.panels[i])
	}
	if rows == 1 && cols == 1 {
		grid[0][0].Draw(dc)
	} else {
		t := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter, PadBottom: vg.Millimeter, PadLeft: vg.Millimeter, PadRight: vg.Millimeter * 2}
		cs := plot.Align(grid, t, dc)
		for i := range grid {
			for j, p := range grid[i] {
				if p != nil {
					p.Draw(cs[i][j])
				}
			}
		}
	}
	_, err := c.WriteTo(w)
	return err
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Tick.Marker = cleanTicks{}
	p.Y.Tick.Marker = cleanTicks{}
	return p
}

// cleanTicks are plot.DefaultTicks labelled with the shortest decimal
// form of their value ("25", "1.05", "-2.5").
type cleanTicks struct{}

func (cleanTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finite(lo) || !finite(hi) || !finite(hi-lo) {
		return nil
	}
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			v := roundSig(ts[i].Value, 10)
			if math.Abs(v) < 1e-12*math.Max(math.Abs(lo), math.Abs(hi)) {
				v = 0
			}
			ts[i].Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ts
}

// logTicks marks 1, 2 and 5 times the powers of ten (and the other digits
// without labels) for log-scaled axes.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	if !(lo > 0) || !(hi > lo) || !finite(hi) || math.Log10(hi)-math.Log10(lo) > 60 {
		return nil
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for d := 1.0; d <= 9; d++ {
			v := d * p
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if d == 1 || d == 2 || d == 5 {
				t.Label = strconv.FormatFloat(roundSig(v, 6), 'f', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// roundSig rounds x to the given number of significant digits.
func roundSig(x float64, digits int) float64 {
	if x == 0 || !finite(x) {
		return x
	}
	e := math.Floor(math.Log10(math.Abs(x)))
	p := math.Pow(10, float64(digits-1)-e)
	if !finite(p) || p == 0 {
		return x
	}
	return math.Round(x*p) / p
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// padRange widens [lo, hi] when it is empty or a point.
func padRange(lo, hi float64) (float64, float64) {
	if !finite(lo) || !finite(hi) {
		return 0, 1
	}
	if hi <= lo {
		d := math.Max(math.Abs(lo)*0.1, 0.5)
		return lo - d, hi + d
	}
	return lo, hi
}

// xErr is a set of points with horizontal error bars.
type xErr struct {
	plotter.XYs
	plotter.XErrors
}

// addIntervalDots adds the points of pts as dots with their horizontal
// intervals (the first palette colour), if there are any.
func addIntervalDots(p *plot.Plot, pts xErr) error {
	if len(pts.XYs) == 0 {
		return nil
	}
	eb, err := plotter.NewXErrorBars(pts)
	if err != nil {
		return err
	}
	eb.LineStyle.Width = vg.Points(1.5)
	eb.LineStyle.Color = plotutil.Color(0)
	sc, err := glyphs(pts.XYs, draw.CircleGlyph{}, vg.Points(3), plotutil.Color(0))
	if err != nil {
		return err
	}
	p.Add(eb, sc)
	return nil
}

// yErr is a set of points with vertical error bars.
type yErr struct {
	plotter.XYs
	plotter.YErrors
}

// raterSubset returns the indices of the raters to show, ordered by key
// (ascending): all of them when there are at most limit, else the limit/2
// lowest and highest. It also says how many were left out.
func raterSubset(n, limit int, key func(l int) float64) (idx []int, left int) {
	idx = make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := key(idx[a]), key(idx[b])
		if !finite(ka) {
			return false
		}
		if !finite(kb) {
			return true
		}
		return ka < kb
	})
	if n <= limit {
		return idx, 0
	}
	h := limit / 2
	out := append(append([]int(nil), idx[:h]...), idx[n-(limit-h):]...)
	return out, n - limit
}

// precisionPlot is the forest plot of the rater precisions.
func precisionPlot(rep *Report) (*figure, error) {
	title := "Rater precision (posterior mean and 95% interval)"
	if len(rep.Raters) > maxForestRaters {
		title = fmt.Sprintf("Rater precision: the %d least and %d most precise of %d raters", maxForestRaters/2, maxForestRaters-maxForestRaters/2, len(rep.Raters))
	}
	return raterForest(rep, func(r *Rater) *Estimate { return &r.Precision }, title, "precision α (higher = more consistent with the consensus)", false)
}

// dispersionPlot is the forest plot of the rater dispersions nu of a
// report of values, on a log axis.
func dispersionPlot(rep *Report) (*figure, error) {
	title := "Rater dispersion ν (estimate and 95% interval)"
	if len(rep.Raters) > maxForestRaters {
		title = fmt.Sprintf("Rater dispersion ν: the %d least and %d most consistent of %d raters", maxForestRaters/2, maxForestRaters-maxForestRaters/2, len(rep.Raters))
	}
	return raterForest(rep, dispersionOf, title, "dispersion ν, log scale (higher = more consistent with the consensus)", true)
}

// dispersionOf is a rater's dispersion estimate, or their precision in a
// document that only has that.
func dispersionOf(r *Rater) *Estimate {
	if r.Dispersion != nil {
		return r.Dispersion
	}
	return &r.Precision
}

// raterForest draws a forest plot of one estimate per rater: mean and 95%
// interval, sorted, the maxForestRaters/2 lowest and highest when there
// are more; logX puts the estimates (positive) on a log axis.
func raterForest(rep *Report, est func(*Rater) *Estimate, title, xlabel string, logX bool) (*figure, error) {
	idx, _ := raterSubset(len(rep.Raters), maxForestRaters, func(l int) float64 {
		m := float64(est(&rep.Raters[l]).Mean)
		if logX && !(m > 0) {
			return math.NaN()
		}
		return m
	})
	p := newPlot(title, xlabel, "")
	var pts xErr
	var fixed plotter.XYs
	names := make([]string, len(idx))
	lo, hi := math.Inf(1), math.Inf(-1)
	for y, l := range idx {
		r := &rep.Raters[l]
		names[y] = r.ID
		e := est(r)
		m, a, b := float64(e.Mean), float64(e.Q025), float64(e.Q975)
		if !finite(m) || (logX && !(m > 0)) {
			continue
		}
		if !finite(a) || !finite(b) || (logX && !(a > 0)) {
			a, b = m, m
		}
		if logX && !(m-(m-a) > 0) {
			// a is positive but below m's rounding: the error bar's
			// low end m - (m - a) would be 0, which a log axis cannot
			// draw; the interval is drawn down to m×1e-12.
			a = m - m*(1-1e-12)
		}
		if r.Reference {
			fixed = append(fixed, plotter.XY{X: m, Y: float64(y)})
		}
		pts.XYs = append(pts.XYs, plotter.XY{X: m, Y: float64(y)})
		pts.XErrors = append(pts.XErrors, struct{ Low, High float64 }{m - a, b - m})
		lo, hi = math.Min(lo, a), math.Max(hi, b)
	}
	if err := addIntervalDots(p, pts); err != nil {
		return nil, err
	}
	if len(fixed) > 0 {
		sc, err := glyphs(fixed, draw.BoxGlyph{}, vg.Points(4), plotutil.Color(1))
		if err != nil {
			return nil, err
		}
		p.Add(sc)
		p.Legend.Add("reference rater (fixed)", sc)
		p.Legend.Top = true
	}
	p.Add(plotter.NewGrid())
	p.NominalY(names...)
	if logX {
		// Positive estimates only (see above); keep the axis within
		// floating point range.
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		if !(lo > 0) || !finite(hi) {
			lo, hi = 1, 10
		}
		p.X.Min = math.Min(math.Max(lo/1.5, 1e-300), 1e300)
		p.X.Max = math.Min(math.Max(hi*1.5, p.X.Min*10), 1e300)
	} else {
		p.X.Min, p.X.Max = padRange(math.Min(lo, 0), hi)
		p.X.Min = 0
	}
	p.Y.Min, p.Y.Max = -0.7, float64(len(idx))-0.3
	h := vg.Length(len(idx))*vg.Points(15) + 3.2*vg.Centimeter
	return single(p, 17*vg.Centimeter, max(h, 7*vg.Centimeter)), nil
}

// kde returns a Gaussian kernel density estimate of x on a grid over
// [lo, hi], reflected at 0 when positive is set (x > 0), with Silverman's
// bandwidth 0.9 min(sd, IQR/1.34) n^(-1/5).
func kde(x []float64, lo, hi float64, points int, positive bool) plotter.XYs {
	n := float64(len(x))
	sorted := append([]float64(nil), x...)
	sort.Float64s(sorted)
	sd := stat.StdDev(sorted, nil)
	iqr := stat.Quantile(0.75, stat.Empirical, sorted, nil) - stat.Quantile(0.25, stat.Empirical, sorted, nil)
	s := sd
	if iqr > 0 && iqr/1.34 < s {
		s = iqr / 1.34
	}
	bw := 0.9 * s * math.Pow(n, -0.2)
	if !(bw > 0) {
		bw = math.Max(math.Abs(sorted[0])*0.01, 1e-6)
	}
	out := make(plotter.XYs, points)
	c := 1 / (n * bw * math.Sqrt(2*math.Pi))
	for i := range out {
		t := lo + (hi-lo)*float64(i)/float64(points-1)
		var d float64
		for _, v := range sorted {
			z := (t - v) / bw
			if z > -8 && z < 8 {
				d += math.Exp(-z * z / 2)
			}
			if positive {
				z = (t + v) / bw
				if z > -8 && z < 8 {
					d += math.Exp(-z * z / 2)
				}
			}
		}
		out[i] = plotter.XY{X: t, Y: d * c}
	}
	return out
}

// variancePlot draws the posterior densities of the rater variances from
// the kept joint draws (Rogers et al. fig. 10). When the variances span
// more than a factor 30 (many raters, some with few labels) the axis is
// logarithmic and the densities are those of log10(1/α), so that the
// consistent raters are not squeezed against 0; the raters left out are
// named under the plot.
func variancePlot(rep *Report) (*figure, error) {
	d := rep.Draws
	nl := len(rep.Raters)
	vars := make([][]float64, nl)
	var all []float64
	for _, row := range d.Alpha {
		for l := 0; l < nl && l < len(row); l++ {
			if a := row[l]; a > 0 && finite(a) {
				vars[l] = append(vars[l], 1/a)
				all = append(all, 1/a)
			}
		}
	}
	idx, left := raterSubset(nl, maxPanelRaters, func(l int) float64 { return float64(rep.Raters[l].Variance.Mean) })
	title := "Posterior densities of the rater variances 1/α"
	if left > 0 {
		title = fmt.Sprintf("Posterior densities of 1/α: the %d most and %d least consistent of %d raters", maxPanelRaters/2, maxPanelRaters-maxPanelRaters/2, nl)
	}
	var caption []string
	if left > 0 {
		shown := map[int]bool{}
		for _, l := range idx {
			shown[l] = true
		}
		ord, _ := raterSubset(nl, nl, func(l int) float64 { return float64(rep.Raters[l].Variance.Mean) })
		var names []string
		for _, l := range ord {
			if !shown[l] {
				names = append(names, rep.Raters[l].ID)
			}
		}
		caption = namesCaption(fmt.Sprintf("Left out (%d raters between them, by variance):", left), names, 40)
	}
	p := newPlot(title, "variance 1/α (lower = more consistent)", "density")
	p.Legend.Top = true
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	if len(all) == 0 {
		return &figure{w: 17 * vg.Centimeter, h: 10 * vg.Centimeter, panels: [][]*plot.Plot{{p}}, caption: caption}, nil
	}
	sort.Float64s(all)
	lo99, hi99 := stat.Quantile(0.01, stat.Empirical, all, nil), stat.Quantile(0.99, stat.Empirical, all, nil)
	logX := lo99 > 0 && hi99/lo99 > 30
	var lo, hi float64
	if logX {
		lo, hi = math.Log10(lo99)-0.15, math.Log10(hi99)+0.15
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		p.X.Label.Text = "variance 1/α, log scale (lower = more consistent)"
		p.Y.Label.Text = "density of log10(1/α)"
		caption = append([]string{"The variances span more than a factor 30: the axis is logarithmic and the curves are the densities of log10(1/α)."}, caption...)
	} else {
		_, hi = padRange(0, hi99*1.05)
	}
	for c, l := range idx {
		v := vars[l]
		if len(v) == 0 {
			continue
		}
		if logX {
			lv := make([]float64, len(v))
			for i, x := range v {
				lv[i] = math.Log10(x)
			}
			v = lv
		}
		var xy plotter.XYs
		if len(v) == 1 || stat.StdDev(v, nil) == 0 {
			xy = plotter.XYs{{X: v[0], Y: 0}, {X: v[0], Y: 1}}
		} else {
			xy = kde(v, lo, hi, 200, !logX)
		}
		if logX {
			for i := range xy {
				xy[i].X = math.Pow(10, xy[i].X)
			}
		}
		ln, err := paletteLine(xy, vg.Points(1.6), c)
		if err != nil {
			return nil, err
		}
		p.Add(ln)
		p.Legend.Add(rep.Raters[l].ID, ln)
	}
	if logX {
		p.X.Min, p.X.Max = math.Pow(10, lo), math.Pow(10, hi)
	} else {
		p.X.Min, p.X.Max = lo, hi
	}
	p.Y.Min = 0
	return &figure{w: 17 * vg.Centimeter, h: 11 * vg.Centimeter, panels: [][]*plot.Plot{{p}}, caption: caption}, nil
}

// alphaTraces returns the rater's precision traces cut to a common length.
func alphaTraces(rep *Report, id string) [][]float64 {
	cs := rep.Traces.Alpha[id]
	n := math.MaxInt
	var out [][]float64
	for _, c := range cs {
		if len(c) > 0 {
			n = min(n, len(c))
			out = append(out, c)
		}
	}
	for i := range out {
		out[i] = out[i][:n]
	}
	return out
}

// rhatOf returns the R-hat of a named parameter from the diagnostics.
func rhatOf(rep *Report, name string) float64 {
	for _, p := range rep.Diagnostics.Parameters {
		if p.Name == name {
			return float64(p.Rhat)
		}
	}
	return math.NaN()
}

// tracePlot draws the precision traces, one panel per rater and one line
// per chain (Rogers et al. fig. 7b, 9c). With many raters it shows those
// with the highest R-hat.
func tracePlot(rep *Report) (*figure, error) {
	var ids []string
	for _, r := range rep.Raters {
		if len(alphaTraces(rep, r.ID)) > 0 {
			ids = append(ids, r.ID)
		}
	}
	left := 0
	if len(ids) > maxPanelRaters {
		sort.SliceStable(ids, func(a, b int) bool {
			ra, rb := rhatOf(rep, "alpha["+ids[a]+"]"), rhatOf(rep, "alpha["+ids[b]+"]")
			if !finite(ra) {
				return false
			}
			if !finite(rb) {
				return true
			}
			return ra > rb
		})
		left = len(ids) - maxPanelRaters
		ids = ids[:maxPanelRaters]
	}
	cols := 1
	if len(ids) > 4 {
		cols = 2
	}
	rows := (len(ids) + cols - 1) / cols
	fig := &figure{title: "Trace plots of the rater precisions α (one colour per chain)"}
	if left > 0 {
		fig.title = fmt.Sprintf("Traces of α: the %d of %d raters with the highest R-hat", len(ids), len(ids)+left)
	}
	every := 1
	if rep.Traces.Every > 0 {
		every = rep.Traces.Every
	}
	for r := 0; r < rows; r++ {
		var row []*plot.Plot
		for c := 0; c < cols; c++ {
			i := r*cols + c
			if i >= len(ids) {
				row = append(row, nil)
				continue
			}
			id := ids[i]
			title := id
			if rh := rhatOf(rep, "alpha["+id+"]"); finite(rh) {
				title = fmt.Sprintf("%s (R-hat %.3f)", id, rh)
			}
			p := newPlot(title, "", "α")
			if r == rows-1 || i+cols >= len(ids) {
				p.X.Label.Text = "draw"
			}
			for ch, tr := range alphaTraces(rep, id) {
				xy := make(plotter.XYs, 0, len(tr))
				for t, v := range tr {
					if finite(v) {
						xy = append(xy, plotter.XY{X: float64(t * every), Y: v})
					}
				}
				if len(xy) == 0 {
					continue
				}
				ln, err := plotter.NewLine(xy)
				if err != nil {
					return nil, err
				}
				ln.LineStyle.Color = withAlpha(plotutil.Color(ch), 200)
				ln.LineStyle.Width = vg.Points(0.6)
				p.Add(ln)
			}
			lo, hi := padRange(p.Y.Min, p.Y.Max)
			p.Y.Min, p.Y.Max = lo, hi
			row = append(row, p)
		}
		fig.panels = append(fig.panels, row)
	}
	fig.w = 18 * vg.Centimeter
	fig.h = vg.Length(rows)*4*vg.Centimeter + 1.5*vg.Centimeter
	return fig, nil
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}

// rhatEvolution returns the largest split R-hat over the raters' precisions
// computed on the first t trace points of every chain, for t growing to
// the whole trace (Rogers et al. fig. 3a, 7a, 9a).
func rhatEvolution(rep *Report) plotter.XYs {
	if !hasTraces(rep) {
		return nil
	}
	var sets [][][]float64
	n := math.MaxInt
	for _, r := range rep.Raters {
		if r.Reference {
			continue
		}
		tr := alphaTraces(rep, r.ID)
		if len(tr) == 0 {
			continue
		}
		sets = append(sets, tr)
		n = min(n, len(tr[0]))
	}
	if len(sets) == 0 || n < 8 {
		return nil
	}
	every := max(rep.Traces.Every, 1)
	var out plotter.XYs
	const steps = 25
	prev := 0
	for s := 1; s <= steps; s++ {
		t := max(8, n*s/steps)
		if t == prev {
			continue
		}
		prev = t
		worst := math.NaN()
		for _, tr := range sets {
			cut := make([][]float64, len(tr))
			for c := range tr {
				cut[c] = tr[c][:t]
			}
			if rh := diag.SplitRhat(cut); finite(rh) && !(rh <= worst) {
				worst = rh
			}
		}
		if finite(worst) {
			out = append(out, plotter.XY{X: float64(t * every), Y: worst})
		}
	}
	return out
}

// convergencePlot draws the convergence panels: the R-hat evolution of the
// precisions, R-hat and bulk ESS per parameter group against the limits,
// and the autocorrelation of the precisions.
func convergencePlot(rep *Report) (*figure, error) {
	var panels []*plot.Plot
	for _, panel := range []func(*Report) ([]*plot.Plot, error){rhatEvolutionPanel, groupPanels, autocorrelationPanel} {
		ps, err := panel(rep)
		if err != nil {
			return nil, err
		}
		panels = append(panels, ps...)
	}
	if len(panels) == 0 {
		p := newPlot("no diagnostics in the fit", "", "")
		panels = append(panels, p)
	}
	fig := &figure{title: "Convergence (" + verdictShort(rep) + ")"}
	for i := 0; i < len(panels); i += 2 {
		row := []*plot.Plot{panels[i], nil}
		if i+1 < len(panels) {
			row[1] = panels[i+1]
		}
		fig.panels = append(fig.panels, row)
	}
	fig.w = 20 * vg.Centimeter
	fig.h = vg.Length(len(fig.panels))*8*vg.Centimeter + vg.Centimeter
	return fig, nil
}

// addLimitLine draws a convergence limit across the panel at y.
func addLimitLine(p *plot.Plot, y float64) error {
	ln, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: y}, {X: p.X.Max, Y: y}})
	if err != nil {
		return err
	}
	ln.LineStyle.Color = color.RGBA{R: 200, A: 255}
	ln.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(ln)
	return nil
}

// rhatEvolutionPanel is the max R-hat of the precisions as the draws
// accumulate, against the limit (none without traces).
func rhatEvolutionPanel(rep *Report) ([]*plot.Plot, error) {
	d := &rep.Diagnostics
	ev := rhatEvolution(rep)
	if len(ev) == 0 {
		return nil, nil
	}
	p := newPlot("max R-hat of the precisions as draws accumulate", "draws per chain", "max split R-hat")
	ln, err := plotter.NewLine(ev)
	if err != nil {
		return nil, err
	}
	ln.LineStyle.Width = vg.Points(1.5)
	ln.LineStyle.Color = plotutil.Color(0)
	p.Add(ln, plotter.NewGrid())
	p.X.Min, p.X.Max = padRange(ev[0].X, ev[len(ev)-1].X)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range ev {
		lo, hi = math.Min(lo, v.Y), math.Max(hi, v.Y)
	}
	p.Y.Min, p.Y.Max = padRange(math.Min(lo, 1), math.Max(hi, d.LimitRhat))
	return []*plot.Plot{p}, addLimitLine(p, d.LimitRhat)
}

// groupPanels are the split R-hat (those over the limit marked) and the
// bulk ESS of every parameter, by parameter group, against the limits.
func groupPanels(rep *Report) ([]*plot.Plot, error) {
	d := &rep.Diagnostics
	if len(d.Groups) == 0 {
		return nil, nil
	}
	names := make([]string, len(d.Groups))
	gi := map[string]int{}
	for i, g := range d.Groups {
		names[i] = fmt.Sprintf("%s (%d)", g.Group, g.Parameters)
		gi[g.Group] = i
	}
	var rh, ess, bad plotter.XYs
	// Jitter deterministically within each group.
	seen := make([]int, len(d.Groups))
	for _, pr := range d.Parameters {
		g := gi[pr.Group]
		x := float64(g) + 0.3*(math.Mod(float64(seen[g])*0.618034, 1)-0.5)
		seen[g]++
		if pr.Rhat.Valid() {
			rh = append(rh, plotter.XY{X: x, Y: float64(pr.Rhat)})
			if !(float64(pr.Rhat) < d.LimitRhat) {
				bad = append(bad, plotter.XY{X: x, Y: float64(pr.Rhat)})
			}
		}
		if pr.ESSBulk.Valid() && pr.ESSBulk > 0 {
			ess = append(ess, plotter.XY{X: x, Y: float64(pr.ESSBulk)})
		}
	}
	p, err := groupPanel("split R-hat per parameter group", "split R-hat", names, rh, d.LimitRhat, false)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		sc, err := glyphs(bad, draw.CircleGlyph{}, vg.Points(2.2), color.RGBA{R: 210, A: 255})
		if err != nil {
			return nil, err
		}
		p.Add(sc)
		p.Legend.Add("over the limit", sc)
		p.Legend.Top = true
	}
	panels := []*plot.Plot{p}
	if len(ess) > 0 {
		p, err := groupPanel("bulk ESS per parameter group", "bulk ESS (log scale)", names, ess, d.LimitESS, true)
		if err != nil {
			return nil, err
		}
		panels = append(panels, p)
	}
	return panels, nil
}

// groupPanel is one diagnostic's values by parameter group (the groups
// named on the x axis), on a log axis with logY, against limit when it is
// finite (and positive on a log axis).
func groupPanel(title, ylab string, names []string, pts plotter.XYs, limit float64, logY bool) (*plot.Plot, error) {
	p := newPlot(title, "parameter group (count)", ylab)
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	if finite(limit) && (!logY || limit > 0) {
		lo, hi = limit, limit
	}
	if len(pts) > 0 {
		sc, err := glyphs(pts, draw.CircleGlyph{}, vg.Points(1.8), withAlpha(plotutil.Color(0), 150))
		if err != nil {
			return nil, err
		}
		p.Add(sc)
		for _, v := range pts {
			lo, hi = math.Min(lo, v.Y), math.Max(hi, v.Y)
		}
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	if logY {
		// The points are positive (see above); keep the axis
		// within floating point range.
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min = math.Min(math.Max(lo/1.5, 1e-3), 1e300)
		p.Y.Max = math.Min(hi*1.5, 1e300)
		if !(p.Y.Max > p.Y.Min) {
			p.Y.Max = p.Y.Min * 10
		}
	} else {
		p.Y.Min, p.Y.Max = padRange(math.Min(lo, 1), hi+(hi-math.Min(lo, 1))*0.05)
	}
	if !finite(limit) || (logY && limit <= 0) {
		return p, nil
	}
	return p, addLimitLine(p, limit)
}

// autocorrelationPanel is the autocorrelation of the precisions by lag, a
// line a rater (the report's rater order, at most maxPanelRaters).
func autocorrelationPanel(rep *Report) ([]*plot.Plot, error) {
	d := &rep.Diagnostics
	if len(d.Autocorrelation) == 0 {
		return nil, nil
	}
	p := newPlot("autocorrelation of the precisions", "lag (draws)", "autocorrelation")
	p.Add(plotter.NewGrid())
	ids := make([]string, 0, len(d.Autocorrelation))
	for _, r := range rep.Raters {
		if _, ok := d.Autocorrelation[r.ID]; ok {
			ids = append(ids, r.ID)
		}
	}
	for id := range d.Autocorrelation {
		if indexOf(ids, id) < 0 {
			ids = append(ids, id)
		}
	}
	if len(ids) > maxPanelRaters {
		ids = ids[:maxPanelRaters]
		p.Title.Text = fmt.Sprintf("autocorrelation of the precisions (%d of %d raters)", maxPanelRaters, len(d.Autocorrelation))
	}
	for c, id := range ids {
		acf := d.Autocorrelation[id]
		xy := make(plotter.XYs, 0, len(acf))
		for lag, v := range acf {
			if finite(v) {
				xy = append(xy, plotter.XY{X: float64(lag), Y: v})
			}
		}
		if len(xy) == 0 {
			continue
		}
		ln, err := paletteLine(xy, plotter.DefaultLineStyle.Width, c)
		if err != nil {
			return nil, err
		}
		p.Add(ln)
		if len(ids) <= 8 {
			p.Legend.Add(id, ln)
		}
	}
	p.Legend.Top = true
	p.Y.Min, p.Y.Max = math.Min(p.Y.Min, -0.1), 1.05
	p.X.Min, p.X.Max = padRange(0, p.X.Max)
	return []*plot.Plot{p}, nil
}

func verdictShort(rep *Report) string {
	d := &rep.Diagnostics
	if d.Converged {
		return fmt.Sprintf("converged: max R-hat %.3f, min bulk ESS %.0f", float64(d.MaxRhat), float64(d.MinESSBulk))
	}
	if !d.MaxRhat.Valid() {
		return fmt.Sprintf("NOT converged: R-hat not available (too few draws), min bulk ESS %.0f (limit %g)", float64(d.MinESSBulk), d.LimitESS)
	}
	return fmt.Sprintf("NOT converged: max R-hat %.3f (limit %g), min bulk ESS %.0f (limit %g)", float64(d.MaxRhat), d.LimitRhat, float64(d.MinESSBulk), d.LimitESS)
}

// histogram bins values into about n equal bins over [lo, hi].
func histogram(vals []float64, lo, hi float64, n int) *plotter.Histogram {
	lo, hi = padRange(lo, hi)
	w := (hi - lo) / float64(n)
	bins := make([]plotter.HistogramBin, n)
	for i := range bins {
		bins[i] = plotter.HistogramBin{Min: lo + float64(i)*w, Max: lo + float64(i+1)*w}
	}
	for _, v := range vals {
		if !finite(v) {
			continue
		}
		i := int((v - lo) / w)
		i = min(max(i, 0), n-1)
		bins[i].Weight++
	}
	return &plotter.Histogram{Bins: bins, Width: w, FillColor: withAlpha(plotutil.Color(0), 180), LineStyle: draw.LineStyle{Color: color.Gray{Y: 80}, Width: vg.Points(0.5)}}
}

// consensusPlot draws the consensus scores in ranking order with their
// intervals and the distribution of the scores (ordinal), or the consensus
// probabilities and class counts (classification).
func consensusPlot(rep *Report) (*figure, error) {
	if rep.Kind == KindValues {
		return valuePlot(rep)
	}
	hasScores := false
	for i := range rep.Items {
		if rep.Items[i].Score != nil && rep.Items[i].Score.Mean.Valid() {
			hasScores = true
			break
		}
	}
	if hasScores {
		return scorePlot(rep)
	}
	return classPlot(rep)
}

func scorePlot(rep *Report) (*figure, error) {
	n := len(rep.Items)
	step := 1
	if n > maxIntervals {
		step = (n + maxIntervals - 1) / maxIntervals
	}
	var pts yErr
	var means []float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range rep.Items {
		s := rep.Items[i].Score
		if s == nil || !s.Mean.Valid() {
			continue
		}
		m := float64(s.Mean)
		means = append(means, m)
		lo, hi = math.Min(lo, m), math.Max(hi, m)
		if i%step != 0 {
			continue
		}
		a, b := float64(s.Q025), float64(s.Q975)
		if !finite(a) || !finite(b) {
			a, b = m, m
		}
		pts.XYs = append(pts.XYs, plotter.XY{X: float64(rep.Items[i].Position), Y: m})
		pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{m - a, b - m})
		lo, hi = math.Min(lo, a), math.Max(hi, b)
	}
	title := "Consensus score by rank (posterior mean and 95% interval)"
	if step > 1 {
		title = fmt.Sprintf("Consensus score by rank (every %d-th of %d items)", step, n)
	}
	p := newPlot(title, "position in the consensus ranking", "consensus score m")
	p.Add(plotter.NewGrid())
	eb, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return nil, err
	}
	eb.LineStyle.Color = withAlpha(plotutil.Color(0), 140)
	eb.LineStyle.Width = vg.Points(0.7)
	eb.CapWidth = 0
	sc, err := glyphs(pts.XYs, draw.CircleGlyph{}, vg.Points(1.2), plotutil.Color(1))
	if err != nil {
		return nil, err
	}
	p.Add(eb, sc)
	p.X.Min, p.X.Max = padRange(0.5, float64(n)+0.5)
	p.Y.Min, p.Y.Max = padRange(lo, hi)

	bins := min(max(int(math.Sqrt(float64(len(means)))), 5), 50)
	h := newPlot("Distribution of the consensus scores (posterior means)", "consensus score m", "items")
	h.Add(plotter.NewGrid(), histogram(means, lo, hi, bins))
	h.X.Min, h.X.Max = padRange(lo, hi)
	return &figure{w: 18 * vg.Centimeter, h: 17 * vg.Centimeter, panels: [][]*plot.Plot{{p}, {h}}}, nil
}

// maxNamedItems is the most items the value plot names on its axis.
const maxNamedItems = 40

// valuePlot draws the items' consensus values on the rating scale (a
// report of values), sorted, with their 95% predictive intervals and the
// raters' mean of each item's ratings as a second marker.
func valuePlot(rep *Report) (*figure, error) {
	type point struct {
		id         string
		m, a, b, r float64
	}
	var pts []point
	for i := range rep.Items {
		it := &rep.Items[i]
		v := it.Value
		if v == nil || !v.Mean.Valid() {
			continue
		}
		p := point{id: it.ID, m: float64(v.Mean), a: float64(v.Q025), b: float64(v.Q975), r: math.NaN()}
		if !finite(p.a) || !finite(p.b) {
			p.a, p.b = p.m, p.m
		}
		if bl, ok := it.Baselines["mean"]; ok && bl.Score.Valid() {
			p.r = float64(bl.Score)
		}
		pts = append(pts, p)
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].m < pts[j].m })
	n := len(pts)
	step := 1
	if n > maxIntervals {
		step = (n + maxIntervals - 1) / maxIntervals
	}
	named := n <= maxNamedItems
	x := func(j int) float64 {
		if named {
			return float64(j) // NominalX puts the names at 0, 1, ...
		}
		return float64(j + 1)
	}
	var bars yErr
	var means plotter.XYs
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, p := range pts {
		lo, hi = math.Min(lo, p.m), math.Max(hi, p.m)
		if finite(p.r) {
			means = append(means, plotter.XY{X: x(j), Y: p.r})
			lo, hi = math.Min(lo, p.r), math.Max(hi, p.r)
		}
		if j%step != 0 {
			continue
		}
		bars.XYs = append(bars.XYs, plotter.XY{X: x(j), Y: p.m})
		bars.YErrors = append(bars.YErrors, struct{ Low, High float64 }{p.m - p.a, p.b - p.m})
		lo, hi = math.Min(lo, p.a), math.Max(hi, p.b)
	}
	if m := rep.Model; m.Lo != nil && m.Hi != nil && *m.Lo < *m.Hi {
		lo, hi = *m.Lo, *m.Hi // the rating scale
	}
	title := "Consensus value per item (mean and 95% predictive interval)"
	if step > 1 {
		title = fmt.Sprintf("Consensus value per item (intervals of every %d-th of %d items)", step, n)
	}
	xlab := "items, sorted by consensus value"
	if !named {
		xlab = fmt.Sprintf("%d items, sorted by consensus value", n)
	}
	p := newPlot(title, xlab, "rating")
	p.Add(plotter.NewGrid())
	// The glyphs' radius: smaller without the items' names.
	r := vg.Points(2.5)
	if !named {
		r = vg.Points(1.2)
	}
	if len(bars.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Color = withAlpha(plotutil.Color(0), 160)
		eb.LineStyle.Width = vg.Points(1)
		if !named {
			eb.LineStyle.Width = vg.Points(0.7)
			eb.CapWidth = 0
		}
		sc, err := glyphs(bars.XYs, draw.CircleGlyph{}, r, plotutil.Color(0))
		if err != nil {
			return nil, err
		}
		p.Add(eb, sc)
		p.Legend.Add("consensus value (95% predictive interval)", sc)
	}
	if len(means) > 0 {
		sc, err := glyphs(means, draw.CrossGlyph{}, r, plotutil.Color(1))
		if err != nil {
			return nil, err
		}
		p.Add(sc)
		p.Legend.Add("raters' mean", sc)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	if named {
		names := make([]string, n)
		for j, pt := range pts {
			names[j] = pt.id
		}
		p.NominalX(names...)
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
		p.X.Min, p.X.Max = -0.7, float64(n)-0.3
	} else {
		p.X.Min, p.X.Max = padRange(0.5, float64(n)+0.5)
	}
	lo, hi = padRange(lo, hi)
	pad := (hi - lo) * 0.03
	p.Y.Min, p.Y.Max = lo-pad, hi+pad+(hi-lo)*0.12 // room for the legend
	return single(p, 18*vg.Centimeter, 12*vg.Centimeter), nil
}

func classPlot(rep *Report) (*figure, error) {
	k := len(rep.Levels)
	var probs []float64
	counts := make([]float64, k)
	for i := range rep.Items {
		it := &rep.Items[i]
		if it.Prob.Valid() {
			probs = append(probs, float64(it.Prob))
		}
		if c := levelIdx(rep, it.Consensus); c >= 0 {
			counts[c]++
		}
	}
	h := newPlot("Probability of the consensus class", "posterior probability of the consensus class", "items")
	h.Add(plotter.NewGrid(), histogram(probs, 1/float64(k), 1, 20))
	h.X.Min, h.X.Max = padRange(1/float64(k), 1)
	names := make([]string, k)
	for c, l := range rep.Levels {
		names[c] = l.Code
		if l.Name != "" {
			names[c] = l.Code + " " + l.Name
		}
	}
	b := newPlot("Items per consensus class", "class", "items")
	bc, err := plotter.NewBarChart(plotter.Values(counts), vg.Points(max(8, 200/float64(k))))
	if err != nil {
		return nil, err
	}
	bc.Color = plotutil.Color(0)
	b.Add(plotter.NewGrid(), bc)
	b.NominalX(names...)
	b.X.Min, b.X.Max = -0.6, float64(k)-0.4
	b.Y.Min = 0
	if b.Y.Max <= 0 {
		b.Y.Max = 1
	}
	return &figure{w: 18 * vg.Centimeter, h: 16 * vg.Centimeter, panels: [][]*plot.Plot{{h}, {b}}}, nil
}

func levelIdx(rep *Report, code string) int {
	for i, l := range rep.Levels {
		if l.Code == code {
			return i
		}
	}
	return -1
}

// thresholdsPlot draws each rater's thresholds with their 95% intervals on
// the consensus scale, above a box plot of the items' consensus scores.
func thresholdsPlot(rep *Report) (*figure, error) {
	sev := map[string]float64{}
	for _, r := range rep.Raters {
		if r.Severity != nil {
			sev[r.ID] = float64(r.Severity.Mean)
		}
	}
	ts := rep.Thresholds
	idx, left := raterSubset(len(ts), maxForestRaters, func(i int) float64 { return sev[ts[i].Rater] })
	title := "Rater thresholds on the consensus scale (mean and 95% interval)"
	if left > 0 {
		title = fmt.Sprintf("Thresholds of the %d most lenient and %d most severe of %d raters", maxForestRaters/2, maxForestRaters-maxForestRaters/2, len(ts))
	}
	p := newPlot(title, "consensus scale", "")
	p.Add(plotter.NewGrid())
	k := len(rep.Levels)
	names := make([]string, 0, len(idx)+1)
	lo, hi := math.Inf(1), math.Inf(-1)
	for j := 0; j < k-1; j++ {
		var pts xErr
		for y, i := range idx {
			t := ts[i].Thresholds
			if j >= len(t) || !t[j].Mean.Valid() {
				continue
			}
			m, a, b := float64(t[j].Mean), float64(t[j].Q025), float64(t[j].Q975)
			if !finite(a) || !finite(b) {
				a, b = m, m
			}
			pts.XYs = append(pts.XYs, plotter.XY{X: m, Y: float64(y + 1)})
			pts.XErrors = append(pts.XErrors, struct{ Low, High float64 }{m - a, b - m})
			lo, hi = math.Min(lo, a), math.Max(hi, b)
		}
		if len(pts.XYs) == 0 {
			continue
		}
		eb, err := plotter.NewXErrorBars(pts)
		if err != nil {
			return nil, err
		}
		eb.LineStyle.Color = plotutil.Color(j)
		eb.LineStyle.Width = vg.Points(1.3)
		sc, err := glyphs(pts.XYs, plotutil.Shape(j), vg.Points(3), plotutil.Color(j))
		if err != nil {
			return nil, err
		}
		p.Add(eb, sc)
		p.Legend.Add(fmt.Sprintf("b%d: %s | %s", j+1, rep.Levels[j].Code, rep.Levels[j+1].Code), sc)
	}
	// The items' scores, as a horizontal box plot in row 0.
	names = append(names, "item scores")
	var scores plotter.Values
	for i := range rep.Items {
		if s := rep.Items[i].Score; s != nil && s.Mean.Valid() {
			scores = append(scores, float64(s.Mean))
			lo, hi = math.Min(lo, float64(s.Mean)), math.Max(hi, float64(s.Mean))
		}
	}
	if len(scores) > 0 {
		bp, err := plotter.NewBoxPlot(vg.Points(10), 0, scores)
		if err != nil {
			return nil, err
		}
		bp.Horizontal = true
		bp.FillColor = withAlpha(color.Gray{Y: 128}, 90)
		p.Add(bp)
	}
	for _, i := range idx {
		names = append(names, ts[i].Rater)
	}
	p.NominalY(names...)
	p.Legend.Top = true
	p.Legend.Left = true
	p.X.Min, p.X.Max = padRange(lo, hi)
	p.X.Max += (p.X.Max - p.X.Min) * 0.05
	p.Y.Min, p.Y.Max = -0.7, float64(len(names))-0.3+float64(k)*0.45
	h := vg.Length(len(names))*vg.Points(16) + vg.Length(k)*vg.Points(10) + 3.5*vg.Centimeter
	return single(p, 18*vg.Centimeter, max(h, 8*vg.Centimeter)), nil
}

// rocPlot draws the ROC curves of a two-level report.
func rocPlot(rep *Report) (*figure, error) {
	curves := rocCurves(rep)
	ref := "gold labels"
	if len(curves) > 0 && curves[0].Reference == "majority" {
		ref = "the majority vote (no gold labels)"
	}
	p := newPlot("ROC against "+ref, "false positive rate", "true positive rate")
	p.Add(plotter.NewGrid())
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return nil, err
	}
	diag.LineStyle.Color = color.Gray{Y: 150}
	diag.LineStyle.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	p.Add(diag)
	for i, c := range curves {
		xy := make(plotter.XYs, len(c.FPR))
		for j := range xy {
			xy[j] = plotter.XY{X: c.FPR[j], Y: c.TPR[j]}
		}
		ln, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		ln.LineStyle.Color = plotutil.Color(i)
		ln.LineStyle.Width = vg.Points(1.6)
		ln.LineStyle.Dashes = plotutil.Dashes(i)
		p.Add(ln)
		name := c.Scorer
		if name != "model" {
			name = aggregatorLabel(name)
		}
		p.Legend.Add(fmt.Sprintf("%s (AUC %.3f)", name, float64(c.AUC)), ln)
	}
	p.Legend.Top = false
	p.Legend.Left = false
	p.Legend.XOffs = -vg.Millimeter * 2
	p.Legend.YOffs = vg.Millimeter * 2
	p.X.Min, p.X.Max = 0, 1
	p.Y.Min, p.Y.Max = 0, 1.01
	return single(p, 14*vg.Centimeter, 13*vg.Centimeter), nil
}

// plotFileName returns the file name of a plot.
func plotFileName(name, format string) string {
	return strings.ToLower(name) + "." + format
}

// paletteLine is a line through xy of the given width in the i-th colour
// of plotutil's palette, dashed once the colours are used up.
func paletteLine(xy plotter.XYer, width vg.Length, i int) (*plotter.Line, error) {
	ln, err := plotter.NewLine(xy)
	if err != nil {
		return nil, err
	}
	ln.LineStyle.Width = width
	ln.LineStyle.Color = plotutil.Color(i)
	ln.LineStyle.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
	return ln, nil
}

// glyphs is a scatter of xy drawn with the given glyph shape, radius and
// colour.
func glyphs(xy plotter.XYer, shape draw.GlyphDrawer, radius vg.Length, c color.Color) (*plotter.Scatter, error) {
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Shape = shape
	sc.GlyphStyle.Radius = radius
	sc.GlyphStyle.Color = c
	return sc, nil
}
