package reports

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotsRender draws every plot of every report in both formats: PNGs
// must decode with the promised size range, SVGs must be SVG documents.
// Set CONCORD_PLOT_DIR to keep the files for a look.
func TestPlotsRender(t *testing.T) {
	keep := os.Getenv("CONCORD_PLOT_DIR")
	for _, c := range allCases(t) {
		plots := Plots(c.rep)
		if len(plots) == 0 {
			t.Errorf("%s: no plots", c.name)
		}
		for _, p := range plots {
			for _, format := range []string{PNG, SVG} {
				var buf bytes.Buffer
				if err := WritePlot(&buf, c.rep, p.Name, format); err != nil {
					t.Errorf("%s: %s.%s: %v", c.name, p.Name, format, err)
					continue
				}
				switch format {
				case PNG:
					img, err := png.Decode(bytes.NewReader(buf.Bytes()))
					if err != nil {
						t.Errorf("%s: %s.png does not decode: %v", c.name, p.Name, err)
						continue
					}
					if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
						t.Errorf("%s: %s.png is %dx%d", c.name, p.Name, b.Dx(), b.Dy())
					}
				case SVG:
					if !strings.Contains(buf.String(), "<svg") || !strings.HasSuffix(strings.TrimSpace(buf.String()), "</svg>") {
						t.Errorf("%s: %s.svg is not an SVG document", c.name, p.Name)
					}
				}
				if keep != "" {
					dir := filepath.Join(keep, c.name)
					os.MkdirAll(dir, 0o755)
					os.WriteFile(filepath.Join(dir, plotFileName(p.Name, format)), buf.Bytes(), 0o644)
				}
			}
		}
	}
}

func TestPlotsApply(t *testing.T) {
	names := func(c reportCase) string {
		var s []string
		for _, p := range Plots(c.rep) {
			s = append(s, p.Name)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		c    reportCase
		want string
	}{
		{ordinalCase(t), "precision,variance-density,trace,convergence,consensus,thresholds,agreement"},
		{binaryCase(t), "precision,variance-density,trace,convergence,consensus,roc,agreement,confusion"},
		{nominalCase(t), "precision,convergence,consensus,agreement,confusion"},
		{degenerateOrdinalCase(t), "precision,variance-density,trace,convergence,consensus,thresholds"},
		{degenerateClassCase(t), "precision,consensus,confusion"},
		{boundedCase(t), "dispersion,consensus,agreement"},
		{liveBoundedCase(t), "dispersion,consensus"},
		{robustCase(t), "precision,error-rates,consensus,roc,agreement,confusion"},
	} {
		if got := names(tc.c); got != tc.want {
			t.Errorf("%s: plots %s, want %s", tc.c.name, got, tc.want)
		}
	}
	c := nominalCase(t)
	err := WritePlot(new(bytes.Buffer), c.rep, PlotThresholds, PNG)
	if !errors.Is(err, ErrNoPlot) {
		t.Errorf("thresholds of a classification: err %v, want ErrNoPlot", err)
	}
	if err := WritePlot(new(bytes.Buffer), c.rep, PlotPrecision, "gif"); err == nil {
		t.Error("gif: no error")
	}
}

// TestPlotsManyRaters draws the plots of 164 raters (the shape of the RTE
// demo project): the variance densities on a log axis naming the raters
// left out, the agreement heatmap of the 40 raters with the most labels
// and the confusion matrices of the 12 raters with the most labels.
func TestPlotsManyRaters(t *testing.T) {
	c := manyRatersCase(t)
	rep := c.rep
	for _, tc := range []struct {
		plot    string
		caption []string // in the caption
		panels  int
	}{
		{PlotVariance, []string{"logarithmic", "Left out (152 raters between them"}, 1},
		{PlotAgreement, []string{"Left out (124 raters with fewer labels)", "and 84 more"}, 1},
		{PlotConfusion, []string{"Left out (152 raters with fewer labels)", "Rows: the items' consensus class"}, 12},
	} {
		fig, err := rep.figure(tc.plot)
		if err != nil {
			t.Fatalf("%s: %v", tc.plot, err)
		}
		caption := strings.Join(fig.caption, " ")
		for _, want := range tc.caption {
			if !strings.Contains(caption, want) {
				t.Errorf("%s: caption %q lacks %q", tc.plot, caption, want)
			}
		}
		n := 0
		for _, row := range fig.panels {
			n += len(row)
		}
		if n != tc.panels {
			t.Errorf("%s: %d panels, want %d", tc.plot, n, tc.panels)
		}
		var buf bytes.Buffer
		if err := fig.render(&buf, PNG); err != nil {
			t.Fatalf("%s: %v", tc.plot, err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%s: %v", tc.plot, err)
		}
		if b := img.Bounds(); b.Dy() <= int(fig.h.Dots(plotDPI)) {
			t.Errorf("%s: %d pixels tall: no room for the caption", tc.plot, b.Dy())
		}
		if keep := os.Getenv("CONCORD_PLOT_DIR"); keep != "" {
			os.MkdirAll(filepath.Join(keep, c.name), 0o755)
			f, _ := os.Create(filepath.Join(keep, c.name, tc.plot+".png"))
			fig.render(f, PNG)
			f.Close()
		}
	}
	// The raters left out are not in the legend; every rater shown or
	// left out is named once.
	fig, _ := rep.figure(PlotVariance)
	named := strings.Count(strings.Join(fig.caption, " "), "w")
	if named < 40 {
		t.Errorf("variance caption names %d raters", named)
	}
}

// TestDispersionPlotTinyLowerEnd: a dispersion interval whose lower end is
// positive but below the estimate's rounding (a fit's interval reaching
// down to 1e-300) is drawn, not a panic of the log axis ("Values must be
// greater than 0 for a log scale", seen with a 3-rater bounded fit).
func TestDispersionPlotTinyLowerEnd(t *testing.T) {
	rep := &Report{Raters: []Rater{
		{ID: "a", Dispersion: &Estimate{Mean: 1, Q025: 1e-300, Q975: 2}},
		{ID: "b", Dispersion: &Estimate{Mean: 5, Q025: 3, Q975: 8}},
		{ID: "c", Dispersion: &Estimate{Mean: 0.5, Q025: 0.5 * 1e-17, Q975: 0.9}},
	}}
	fig, err := dispersionPlot(rep)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fig.render(&buf, PNG); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&buf); err != nil {
		t.Fatal(err)
	}
}
