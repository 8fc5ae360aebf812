package reports

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot names of the agreement heatmap and the confusion matrices.
const (
	PlotAgreement = "agreement"
	PlotConfusion = "confusion"
)

// Limits of the grid plots: the heatmap shows at most maxHeatRaters
// raters (those with the most labels), the confusion plot the
// maxConfusionPanels raters with the most labels.
const (
	maxHeatRaters      = 40
	maxConfusionPanels = 12
)

// cellGrid is a plotter of coloured cells: row i of Values is drawn at
// y = rows-1-i (the first row on top), column j at x = j. NaN cells are
// drawn light grey. Text, when set, writes each cell's text in it.
type cellGrid struct {
	values [][]float64
	color  func(v float64) color.Color
	text   func(i, j int) string
}

func (g *cellGrid) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	rows := len(g.values)
	sty := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter}
	sty.Font.Size = vg.Points(7)
	if rows > 8 {
		sty.Font.Size = vg.Points(5.5)
	}
	for i, row := range g.values {
		y := float64(rows - 1 - i)
		for j, v := range row {
			x0, x1 := tx(float64(j)-0.5), tx(float64(j)+0.5)
			y0, y1 := ty(y-0.5), ty(y+0.5)
			var col color.Color = color.Gray{Y: 235}
			if finite(v) {
				col = g.color(v)
			}
			c.FillPolygon(col, c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}))
			if g.text != nil {
				if s := g.text(i, j); s != "" {
					c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, s)
				}
			}
		}
	}
}

func (g *cellGrid) DataRange() (xmin, xmax, ymin, ymax float64) {
	cols := 0
	for _, r := range g.values {
		cols = max(cols, len(r))
	}
	return -0.5, float64(cols) - 0.5, -0.5, float64(len(g.values)) - 0.5
}

// divergingColor maps v in [-1, 1] to red (-1), yellow (0) and green (1),
// as the Agreement matrix sheet's colour scale.
func divergingColor(v float64) color.Color {
	v = math.Max(-1, math.Min(1, v))
	lerp := func(a, b uint8, t float64) uint8 { return uint8(float64(a) + (float64(b)-float64(a))*t) }
	red, yellow, green := [3]uint8{0xF8, 0x69, 0x6B}, [3]uint8{0xFF, 0xEB, 0x84}, [3]uint8{0x63, 0xBE, 0x7B}
	a, b, t := yellow, green, v
	if v < 0 {
		a, b, t = yellow, red, -v
	}
	return color.RGBA{R: lerp(a[0], b[0], t), G: lerp(a[1], b[1], t), B: lerp(a[2], b[2], t), A: 255}
}

// blueColor maps a share in [0, 1] to white (0) through blue (1).
func blueColor(v float64) color.Color {
	v = math.Max(0, math.Min(1, v))
	return color.RGBA{R: uint8(255 - 200*v), G: uint8(255 - 150*v), B: 255 - uint8(60*v), A: 255}
}

// nominalTicks labels integer positions with names.
type nominalTicks []string

func (n nominalTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for i, s := range n {
		if float64(i) >= lo-0.5 && float64(i) <= hi+0.5 {
			ts = append(ts, plot.Tick{Value: float64(i), Label: s})
		}
	}
	return ts
}

// namesCaption lists names in a caption: all of them up to limit, else
// the first limit and how many more.
func namesCaption(prefix string, names []string, limit int) []string {
	if len(names) == 0 {
		return nil
	}
	shown := names
	more := ""
	if len(names) > limit {
		shown = names[:limit]
		more = fmt.Sprintf(" and %d more (every rater is in the Raters table)", len(names)-limit)
	}
	// One line: the figure wraps it to its width.
	return []string{prefix + " " + strings.Join(shown, ", ") + more + "."}
}

// agreementPlot draws the pairwise Cohen's kappa matrix of the agreement
// analysis as a heatmap (red -1, yellow 0, green 1; grey: no common
// items), the raters with the most labels first; with more than
// maxHeatRaters raters, those with the most labels.
func agreementPlot(rep *Report) (*figure, error) {
	km := rep.Agreement.Kappa
	n := len(km.Raters)
	labels := map[string]int{}
	for _, r := range rep.Raters {
		labels[r.ID] = r.NLabels
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		la, lb := labels[km.Raters[idx[a]]], labels[km.Raters[idx[b]]]
		if la != lb {
			return la > lb
		}
		return km.Raters[idx[a]] < km.Raters[idx[b]]
	})
	var left []string
	if n > maxHeatRaters {
		for _, i := range idx[maxHeatRaters:] {
			left = append(left, km.Raters[i])
		}
		idx = idx[:maxHeatRaters]
	}
	m := len(idx)
	vals := make([][]float64, m)
	names := make([]string, m)
	for a, i := range idx {
		names[a] = clipName(km.Raters[i], 14)
		vals[a] = make([]float64, m)
		for b, j := range idx {
			vals[a][b] = math.NaN()
			if i != j && i < len(km.Values) && j < len(km.Values[i]) {
				vals[a][b] = float64(km.Values[i][j])
			}
		}
	}
	title := fmt.Sprintf("Pairwise Cohen's kappa (%s)", km.Weights)
	if len(left) > 0 {
		title = fmt.Sprintf("Pairwise Cohen's kappa (%s): the %d of %d raters with the most labels", km.Weights, m, n)
	}
	p := newPlot(title, "", "")
	g := &cellGrid{values: vals, color: divergingColor}
	if m <= 15 {
		g.text = func(i, j int) string {
			if v := vals[i][j]; finite(v) {
				return strconv.FormatFloat(v, 'f', 2, 64)
			}
			return ""
		}
	}
	p.Add(g)
	rev := make([]string, m)
	for i := range names {
		rev[m-1-i] = names[i]
	}
	p.X.Tick.Marker = nominalTicks(names)
	p.Y.Tick.Marker = nominalTicks(rev)
	p.X.Tick.Label.Rotation = math.Pi / 2
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
	if m > 20 {
		p.X.Tick.Label.Font.Size = vg.Points(6)
		p.Y.Tick.Label.Font.Size = vg.Points(6)
	}
	p.X.Min, p.X.Max = -0.5, float64(m)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(m)-0.5
	side := 15 * vg.Centimeter
	caption := []string{"Red: kappa -1 (systematic disagreement); yellow: 0 (chance); green: 1 (perfect agreement); grey: the pair shares no item. The Agreement matrix sheet has the values and the items each pair shares."}
	caption = append(caption, namesCaption(fmt.Sprintf("Left out (%d raters with fewer labels):", len(left)), left, 40)...)
	return &figure{w: side + 2*vg.Centimeter, h: side + 2*vg.Centimeter, panels: [][]*plot.Plot{{p}}, caption: caption}, nil
}

// confusionPlot draws the confusion matrices of the raters with the most
// labels against the consensus class (classification): rows the consensus
// class, columns the rater's label, each cell the count, shaded by its
// share of the row.
func confusionPlot(rep *Report) (*figure, error) {
	cl := rep.Classes
	k := len(rep.Levels)
	labels := map[string]int{}
	for _, r := range rep.Raters {
		labels[r.ID] = r.NLabels
	}
	conf := append([]RaterConfusion(nil), cl.Confusion...)
	sort.SliceStable(conf, func(a, b int) bool {
		la, lb := labels[conf[a].Rater], labels[conf[b].Rater]
		if la != lb {
			return la > lb
		}
		return conf[a].Rater < conf[b].Rater
	})
	var left []string
	if len(conf) > maxConfusionPanels {
		for _, c := range conf[maxConfusionPanels:] {
			left = append(left, c.Rater)
		}
		conf = conf[:maxConfusionPanels]
	}
	codes := make([]string, k)
	rev := make([]string, k)
	for c, l := range rep.Levels {
		codes[c] = clipName(l.Code, 8)
		rev[k-1-c] = codes[c]
	}
	cols := min(len(conf), 4)
	if cols == 0 {
		cols = 1
	}
	var grid [][]*plot.Plot
	for i, rc := range conf {
		share := make([][]float64, k)
		for a := 0; a < k; a++ {
			share[a] = make([]float64, k)
			tot := 0
			for b := 0; b < k; b++ {
				tot += cell2(rc.Counts, a, b)
			}
			for b := 0; b < k; b++ {
				share[a][b] = math.NaN()
				if tot > 0 {
					share[a][b] = float64(cell2(rc.Counts, a, b)) / float64(tot)
				}
			}
		}
		title := clipName(rc.Rater, 18)
		if rc.Agreement.Valid() {
			title += fmt.Sprintf(" (%.0f%% agree)", 100*float64(rc.Agreement))
		}
		p := newPlot(title, "rater's label", "consensus")
		p.Title.TextStyle.Font.Size = vg.Points(9)
		counts := rc.Counts
		p.Add(&cellGrid{values: share, color: blueColor, text: func(a, b int) string {
			if k > 12 {
				return ""
			}
			return strconv.Itoa(cell2(counts, a, b))
		}})
		p.X.Tick.Marker = nominalTicks(codes)
		p.Y.Tick.Marker = nominalTicks(rev)
		p.X.Min, p.X.Max = -0.5, float64(k)-0.5
		p.Y.Min, p.Y.Max = -0.5, float64(k)-0.5
		if i%cols == 0 {
			grid = append(grid, nil)
		}
		grid[len(grid)-1] = append(grid[len(grid)-1], p)
	}
	caption := []string{"Rows: the items' consensus class; columns: the rater's label; each cell counts the items, shaded by its share of the row (the diagonal is agreement). The Classes sheet has every rater's table."}
	caption = append(caption, namesCaption(fmt.Sprintf("Left out (%d raters with fewer labels):", len(left)), left, 40)...)
	h := vg.Length(len(grid))*5.5*vg.Centimeter + 1.5*vg.Centimeter
	return &figure{w: 24 * vg.Centimeter, h: h, title: "Raters' labels against the consensus: the raters with the most labels", panels: grid, caption: caption}, nil
}

// cell2 is m[a][b], 0 outside the matrix.
func cell2(m [][]int, a, b int) int {
	if a < len(m) && b < len(m[a]) {
		return m[a][b]
	}
	return 0
}

// clipName shortens a name for an axis.
func clipName(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}
