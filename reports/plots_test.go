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
		{ordinalCase(t), "precision,variance-density,trace,convergence,consensus,thresholds"},
		{binaryCase(t), "precision,variance-density,trace,convergence,consensus,roc"},
		{nominalCase(t), "precision,convergence,consensus"},
		{degenerateOrdinalCase(t), "precision,variance-density,trace,convergence,consensus,thresholds"},
		{degenerateClassCase(t), "precision,consensus"},
		{boundedCase(t), "dispersion,consensus"},
		{liveBoundedCase(t), "dispersion,consensus"},
		{robustCase(t), "precision,error-rates,consensus,roc"},
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
