package reports

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestWorkbookPrints reads back the page setup of every sheet: landscape,
// fit to the width of one page (several for very wide tables) and as many
// pages down as needed, narrow margins, a footer, and the header rows of
// the tables repeated on every page; the charts are scaled to a page.
func TestWorkbookPrints(t *testing.T) {
	for _, c := range append(allCases(t), manyRatersCase(t)) {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteXLSX(&buf, c.rep, XLSXOptions{}); err != nil {
				t.Fatal(err)
			}
			f, err := excelize.OpenReader(&buf)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			titles := map[string]string{}
			for _, d := range f.GetDefinedName() {
				if d.Name == "_xlnm.Print_Titles" {
					titles[d.Scope] = d.RefersTo
				}
			}
			for _, sh := range f.GetSheetList() {
				pl, err := f.GetPageLayout(sh)
				if err != nil {
					t.Fatal(err)
				}
				if pl.Orientation == nil || *pl.Orientation != "landscape" {
					t.Errorf("%s: orientation %v", sh, pl.Orientation)
				}
				if pl.FitToWidth == nil || *pl.FitToWidth < 1 || pl.FitToHeight == nil || *pl.FitToHeight != 0 {
					t.Errorf("%s: fit to %v wide, %v tall; want pages wide and any number tall", sh, pl.FitToWidth, pl.FitToHeight)
				}
				props, err := f.GetSheetProps(sh)
				if err != nil {
					t.Fatal(err)
				}
				if props.FitToPage == nil || !*props.FitToPage {
					t.Errorf("%s: fit to page is off", sh)
				}
				m, err := f.GetPageMargins(sh)
				if err != nil {
					t.Fatal(err)
				}
				if m.Left == nil || *m.Left != marginSide || m.Top == nil || *m.Top != marginTopBottom {
					t.Errorf("%s: margins %v %v", sh, m.Left, m.Top)
				}
				hf, err := f.GetHeaderFooter(sh)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(hf.OddFooter, "&P of &N") {
					t.Errorf("%s: footer %q", sh, hf.OddFooter)
				}
				switch sh {
				case SheetSummary, SheetCharts:
					if titles[sh] != "" {
						t.Errorf("%s: print titles %q", sh, titles[sh])
					}
				case SheetItems, SheetRaters, SheetReview, SheetDiagnostics, SheetFlags:
					want := "'" + sh + "'!$1:$1"
					if !strings.HasSuffix(titles[sh], want) {
						t.Errorf("%s: print titles %q, want the header row %s", sh, titles[sh], want)
					}
				}
			}
			// The wide Items sheet of many raters prints on several pages
			// across, with the rank and item repeated on each.
			pl, _ := f.GetPageLayout(SheetItems)
			cols, err := f.GetCols(SheetItems)
			if err != nil {
				t.Fatal(err)
			}
			total := 0.0
			for j := range cols {
				w, _ := f.GetColWidth(SheetItems, colName(j+1))
				total += w
			}
			wide := *pl.FitToWidth > 1
			switch {
			case *pl.FitToWidth != pagesWide(total):
				t.Errorf("Items of %.0f characters: %d pages wide, want %d", total, *pl.FitToWidth, pagesWide(total))
			case c.name == "many-raters" && !wide, c.name == "ordinal" && wide:
				t.Errorf("Items of %d raters (%.0f characters): %d pages wide", len(c.rep.Raters), total, *pl.FitToWidth)
			case wide && !strings.HasPrefix(titles[SheetItems], "'Items'!$A:$B,"):
				t.Errorf("Items print titles %q, want the first two columns too", titles[SheetItems])
			}
			// Every chart fits a page.
			pics, err := f.GetPictureCells(SheetCharts)
			if err != nil {
				t.Fatal(err)
			}
			for _, cell := range pics {
				ps, err := f.GetPictures(SheetCharts, cell)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					if p.Format.ScaleX <= 0 || p.Format.ScaleX > 1 || p.Format.ScaleX != p.Format.ScaleY {
						t.Errorf("chart at %s: scale %v x %v", cell, p.Format.ScaleX, p.Format.ScaleY)
					}
				}
			}
		})
	}
	for _, tc := range []struct {
		w, h, scale float64
	}{
		{600, 400, 1},
		{2 * pageWidthPx, 100, 0.5},
		{600, 2 * (pageHeightPx - 40), 0.5},
	} {
		if got := chartScale(tc.w, tc.h); got != tc.scale {
			t.Errorf("chartScale(%v, %v) = %v, want %v", tc.w, tc.h, got, tc.scale)
		}
	}
}

// pdfPages converts a workbook to PDF with LibreOffice and counts its
// pages.
func pdfPages(t *testing.T, book string) int {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("soffice", "-env:UserInstallation=file://"+filepath.Join(dir, "profile"), "--headless", "--norestore",
		"--convert-to", "pdf", "--outdir", dir, book).CombinedOutput()
	if err != nil {
		t.Fatalf("soffice: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(filepath.Base(book), ".xlsx")+".pdf"))
	if err != nil {
		t.Fatalf("soffice wrote no PDF: %v\n%s", err, out)
	}
	n := 0
	for _, m := range regexp.MustCompile(`/Type\s*/Pages\b[^>]*?/Count\s+(\d+)|/Count\s+(\d+)[^>]*?/Type\s*/Pages\b`).FindAllSubmatch(b, -1) {
		for _, g := range m[1:] {
			if v, err := strconv.Atoi(string(g)); err == nil && v > n {
				n = v
			}
		}
	}
	return n
}
