package annotations

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
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
		c.add(Problem{Msg: "cannot open the XLSX workbook: " + err.Error()})
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
	rows, err = f.GetRows(name, excelize.Options{RawCellValue: true})
	if err != nil {
		c.add(Problem{Msg: "cannot read sheet " + strconv.Quote(name) + ": " + err.Error()})
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
	t := &table{c: c, opts: opts, padShort: true}
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
