package annotations

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// The unpacked size of a workbook is bounded by what its data can need, a
// guard against ZIP bombs (a 1 MB file that unpacks to 1000 MB): the XML of
// real workbooks compresses 5 to 20 times, so a workbook may unpack to
// xlsxUnzipRatio times its file size, at least xlsxUnzipMin and at most
// xlsxUnzipMax.
const (
	xlsxUnzipRatio = 50
	xlsxUnzipMin   = 32 << 20
	xlsxUnzipMax   = 1 << 30
)

// xlsxUnzipLimit returns the unpacked-size limit of a workbook of size
// bytes.
func xlsxUnzipLimit(size int) int64 {
	return min(max(int64(size)*xlsxUnzipRatio, xlsxUnzipMin), xlsxUnzipMax)
}

// readSheet opens the workbook in br and returns the rows of the named sheet
// (the first when sheet is ""), with raw cell values cleaned of binary
// floating-point noise (see cleanNumber). Row i of the result is spreadsheet
// row i+1. Problems are recorded in c; ok is false after one.
func readSheet(br *bufio.Reader, c *collector, sheet string) (rows [][]string, name string, ok bool, err error) {
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, "", false, err
	}
	defer func() {
		// A malformed workbook must not take the process down.
		if r := recover(); r != nil {
			c.add(Problem{Msg: fmt.Sprintf("cannot read the XLSX workbook: %v", r)})
			rows, name, ok, err = nil, "", false, nil
		}
	}()
	limit := xlsxUnzipLimit(len(data))
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{UnzipSizeLimit: limit, UnzipXMLSizeLimit: min(limit, excelize.StreamChunkSize)})
	if err != nil {
		if strings.Contains(err.Error(), "unzip size exceeds") {
			c.add(Problem{Msg: fmt.Sprintf("the XLSX workbook (%.2f MB) unpacks to more than %d MB, the limit for its size (%d times the file size, at least %d MB, at most %d MB): refused as a possible ZIP bomb; export the sheet as CSV instead",
				float64(len(data))/(1<<20), limit>>20, xlsxUnzipRatio, xlsxUnzipMin>>20, xlsxUnzipMax>>20)})
			return nil, "", false, nil
		}
		c.add(Problem{Msg: xlsxOpenProblem(data, err)})
		return nil, "", false, nil
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		c.add(Problem{Msg: "the workbook has no sheets"})
		return nil, "", false, nil
	}
	name = sheets[0]
	if sheet != "" {
		found := false
		for _, s := range sheets {
			if s == sheet {
				found = true
				break
			}
		}
		if !found {
			for _, s := range sheets {
				if strings.EqualFold(s, sheet) {
					sheet, found = s, true
					break
				}
			}
		}
		if !found {
			c.add(Problem{Msg: "no sheet named " + strconv.Quote(sheet) + " (sheets: " + quoteList(sheets) + ")"})
			return nil, "", false, nil
		}
		name = sheet
	}
	if rows, ok = sheetRows(f, name, c); !ok {
		return nil, "", false, nil
	}
	for r, row := range rows {
		for j, v := range row {
			if cv, changed := cleanNumber(v); changed {
				// Only cells stored as numbers are rewritten: text that
				// happens to look like a number is kept as typed.
				ref, err := excelize.CoordinatesToCellName(j+1, r+1)
				if err != nil {
					continue
				}
				if ct, err := f.GetCellType(name, ref); err == nil && (ct == excelize.CellTypeUnset || ct == excelize.CellTypeNumber) {
					row[j] = cv
				}
			}
		}
	}
	return rows, name, true, nil
}

// sheetRows returns the rows of a sheet as excelize's GetRows does (raw cell
// values, row i of the result is spreadsheet row i+1), except that a damaged
// row or cell reference is a problem naming the sheet and row: GetRows stops
// at one and returns the rows before it, so that a bad reference in row 2
// read as "a header but no data rows".
func sheetRows(f *excelize.File, sheet string, c *collector) ([][]string, bool) {
	it, err := f.Rows(sheet)
	if err != nil {
		c.add(Problem{Msg: fmt.Sprintf("cannot read sheet %q: the workbook lists it but its worksheet part is missing or damaged (%v); open the workbook in a spreadsheet program and save it again, or export the sheet as CSV", sheet, err)})
		return nil, false
	}
	defer it.Close()
	var rows [][]string
	cur, last := 0, 0
	for it.Next() {
		cur++
		row, err := it.Columns(excelize.Options{RawCellValue: true})
		if err != nil {
			c.add(Problem{Row: cur, Msg: fmt.Sprintf("sheet %q: %s; the workbook is damaged (open it in a spreadsheet program and save it again, or export the sheet as CSV)", sheet, xlsxRefProblem(err))})
			return nil, false
		}
		if len(row) > 0 {
			for len(rows) < cur-1 {
				rows = append(rows, nil)
			}
			rows = append(rows, row)
			last = cur
		}
	}
	if err := it.Error(); err != nil {
		c.add(Problem{Row: cur + 1, Msg: fmt.Sprintf("sheet %q: %s; the workbook is damaged (open it in a spreadsheet program and save it again, or export the sheet as CSV)", sheet, xlsxRefProblem(err))})
		return nil, false
	}
	return rows[:last], true
}

// xlsxCellName finds the cell name in excelize's message about it.
var xlsxCellName = regexp.MustCompile(`cell "([^"]*)"`)

// xlsxRefProblem describes excelize's error about a row or cell reference.
func xlsxRefProblem(err error) string {
	switch {
	case errors.Is(err, excelize.ErrMaxRows):
		return fmt.Sprintf("invalid cell reference: a row number beyond the last row a sheet can have (%d)", excelize.TotalRows)
	case errors.Is(err, excelize.ErrColumnNumber):
		return fmt.Sprintf("invalid cell reference: a column beyond the last column a sheet can have (XFD, column %d)", excelize.MaxColumns)
	}
	if m := xlsxCellName.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Sprintf("invalid cell reference %q (expected a column letter and a row number, such as B2)", m[1])
	}
	return "invalid row or cell reference (" + err.Error() + ")"
}

// xlsxOpenProblem explains why a file that starts like a ZIP archive could
// not be opened as a workbook: a damaged archive, an archive without the
// workbook part (xl/workbook.xml), or another archive altogether (a ZIP of
// label files, as doccano exports one file per annotator).
func xlsxOpenProblem(data []byte, err error) string {
	zr, zerr := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if zerr != nil {
		return fmt.Sprintf("the file is not a valid XLSX workbook: the ZIP archive is damaged or truncated (%v)", zerr)
	}
	var names []string
	hasWorkbook := false
	for _, zf := range zr.File {
		if strings.HasSuffix(zf.Name, "/") {
			continue
		}
		names = append(names, zf.Name)
		n := strings.ToLower(zf.Name)
		if n == "xl/workbook.xml" || strings.HasSuffix(n, "/workbook.xml") || strings.HasSuffix(n, "/workbook.bin") {
			hasWorkbook = true
		}
	}
	if !hasWorkbook {
		if len(names) > 5 {
			names = append(names[:5:5], fmt.Sprintf("and %d more", len(names)-5))
		}
		if hasXLPart(names) {
			return "the file is not a valid XLSX workbook: the ZIP archive has no xl/workbook.xml (the workbook part is missing; open it in a spreadsheet program and save it again)"
		}
		return fmt.Sprintf("the file is not a valid XLSX workbook: a ZIP archive without xl/workbook.xml (it holds %s); unzip it and import the label files it holds one by one", strings.Join(names, ", "))
	}
	return "the file is not a valid XLSX workbook: " + err.Error()
}

// hasXLPart reports whether an archive's file names look like a workbook's
// (an xl/ folder or [Content_Types].xml).
func hasXLPart(names []string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, "xl/") || n == "[Content_Types].xml" {
			return true
		}
	}
	return false
}

// cleanNumber maps a stored floating-point number to the shortest decimal
// that Excel shows for it (15 significant digits), so that 2.9999999999999996
// reads as "3" and 0.30000000000000004 as "0.3". Integers written without a
// point or exponent are left alone (long ids stay exact). changed reports
// whether the text differs from v.
func cleanNumber(v string) (string, bool) {
	if !strings.ContainsAny(v, ".eE") {
		return v, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v, false
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 15, 64), 64)
	if err != nil {
		return v, false
	}
	s := strconv.FormatFloat(r, 'f', -1, 64)
	if len(s) > 21 {
		s = strconv.FormatFloat(r, 'g', -1, 64)
	}
	return s, s != v
}

// readXLSXLabels reads a label table (long or wide form) from a workbook.
func readXLSXLabels(br *bufio.Reader, opts ReadOptions, c *collector, want Format) (*Parsed, error) {
	c.parsed.Format = FormatXLSX
	rows, _, ok, err := readSheet(br, c, opts.Sheet)
	if err != nil {
		return nil, err
	}
	if !ok {
		return c.result()
	}
	t := &table{sheet: sheet{c: c, opts: opts, padShort: true}}
	hdr := -1
	for i, row := range rows {
		if !blankRow(row) {
			hdr = i
			break
		}
	}
	if hdr < 0 {
		c.add(Problem{Msg: "the sheet is empty (expected a header row such as item_id,rater_id,label)"})
		return c.result()
	}
	if want == FormatXLSX {
		want = FormatAuto
	}
	if want == FormatAuto && isLSFlat(rows[hdr]) {
		// A Label Studio CSV export saved as a workbook.
		flat := &flatTable{header: rows[hdr], headerRow: hdr + 1}
		for i := hdr + 1; i < len(rows); i++ {
			if !blankRow(rows[i]) {
				flat.add(rows[i], 0, i+1, c)
			}
		}
		flat.read(opts, c)
		return c.result()
	}
	if !t.setHeader(rows[hdr], 0, hdr+1, want) {
		return c.result()
	}
	for i := hdr + 1; i < len(rows); i++ {
		if blankRow(rows[i]) {
			continue
		}
		t.addRow(rows[i], 0, i+1)
	}
	t.finish()
	return c.result()
}

func blankRow(row []string) bool {
	for _, v := range row {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}
