package reports

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestLibreOffice opens the ordinal and the binary workbooks with
// LibreOffice headless through testdata/check_libreoffice.sh: every sheet
// must convert, with values and without error cells. It runs only when
// soffice is on PATH (Debian: apt-get install libreoffice-calc).
func TestLibreOffice(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("soffice"); err != nil {
		t.Skip("soffice is not on PATH")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "check_libreoffice.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []reportCase{ordinalCase(t), binaryCase(t)} {
		path := filepath.Join(t.TempDir(), c.name+".xlsx")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteXLSX(f, c.rep, XLSXOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		args := append([]string{script, path}, SheetNames(c.rep, XLSXOptions{})...)
		out, err := exec.Command("sh", args...).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", c.name, err, out)
		} else {
			t.Logf("%s:\n%s", c.name, out)
		}
	}

	// The sirt k1 workbook prints on few pages: every table fits the page
	// width (57 to 66 pages before the print setup, when the columns were
	// split over pages and the charts cut).
	c := ordinalCase(t)
	path := filepath.Join(t.TempDir(), "sirt-k1.xlsx")
	var buf bytes.Buffer
	if err := WriteXLSX(&buf, c.rep, XLSXOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pages := pdfPages(t, path)
	t.Logf("sirt k1 workbook: %d printed pages", pages)
	if pages == 0 || pages > 40 {
		t.Errorf("the sirt k1 workbook prints on %d pages, want 1 to 40", pages)
	}

	// The check fails on a workbook with an error cell and on a missing
	// sheet.
	bad := excelize.NewFile()
	defer bad.Close()
	bad.SetSheetName("Sheet1", SheetSummary)
	bad.SetCellValue(SheetSummary, "A1", "x")
	bad.SetCellFormula(SheetSummary, "B1", "1/0")
	path = filepath.Join(t.TempDir(), "bad.xlsx")
	if err := bad.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	for _, sheets := range [][]string{{SheetSummary}, {SheetItems}} {
		out, err := exec.Command("sh", append([]string{script, path}, sheets...)...).CombinedOutput()
		if err == nil {
			t.Errorf("check of a bad workbook (%v) passes:\n%s", sheets, out)
		}
	}
}
