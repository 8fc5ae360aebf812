package annotations

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
)

// newCSVReader returns a streaming CSV reader over br with the delimiter
// sniffed from the header line. Tab-separated files read quotes leniently,
// since TSV exports often leave quotes in text unescaped.
func newCSVReader(br *bufio.Reader) *csv.Reader {
	head, _ := br.Peek(sniffSize)
	cr := csv.NewReader(br)
	cr.Comma = sniffDelimiter(head)
	cr.LazyQuotes = cr.Comma == '\t'
	cr.FieldsPerRecord = -1 // ragged rows are reported by the table
	cr.ReuseRecord = true
	return cr
}

// csvRows calls fn for each record of cr with its 1-based line, and records a
// problem for each malformed record. It stops early when fn returns false.
func csvRows(cr *csv.Reader, c *collector, fn func(rec []string, line int) bool) error {
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				c.add(Problem{Line: pe.Line, Msg: csvErrorText(pe)})
				continue
			}
			return err
		}
		line, _ := cr.FieldPos(0)
		if !fn(rec, line) {
			return nil
		}
	}
}

func csvErrorText(pe *csv.ParseError) string {
	switch pe.Err {
	case csv.ErrBareQuote:
		return "a double quote inside an unquoted field (quote the whole field and double the quote: \"5\"\" screen\")"
	case csv.ErrQuote:
		return "a quoted field is not closed properly (expected a closing double quote before the delimiter or line end)"
	}
	return pe.Err.Error()
}

// readCSVLabels reads a CSV or TSV label file in long or wide form.
func readCSVLabels(br *bufio.Reader, opts ReadOptions, c *collector, want Format) (*Parsed, error) {
	cr := newCSVReader(br)
	t := &table{sheet: sheet{c: c, opts: opts}}
	headerOK := false
	sawHeader := false
	var flat *flatTable // a Label Studio CSV export
	err := csvRows(cr, c, func(rec []string, line int) bool {
		if !sawHeader {
			if c.problems.Len() > 0 {
				return false // the header line itself was malformed
			}
			sawHeader = true
			if want == FormatLabelStudio || want == FormatAuto && isLSFlat(rec) {
				flat = &flatTable{header: append([]string(nil), rec...), headerLine: line}
				return true
			}
			headerOK = t.setHeader(rec, line, 0, want)
			if t.wide {
				c.parsed.Format = FormatCSVWide
			} else {
				c.parsed.Format = FormatCSVLong
				head, _ := br.Peek(sniffSize)
				c.reserve(head)
			}
			return headerOK
		}
		if flat != nil {
			flat.add(rec, line, 0, c)
			return true
		}
		t.addRow(rec, line, 0)
		return true
	})
	if err != nil {
		return nil, err
	}
	if flat != nil {
		flat.read(opts, c)
		return c.result()
	}
	if !sawHeader && c.problems.Len() == 0 {
		c.add(Problem{Msg: "file is empty (expected a header line such as item_id,rater_id,label)"})
	}
	if headerOK {
		t.finish()
	}
	return c.result()
}

// flatTable gathers the rows of a Label Studio CSV export.
type flatTable struct {
	header     []string
	headerLine int
	headerRow  int
	recs       []flatRec
}

func (f *flatTable) add(rec []string, line, row int, c *collector) {
	if len(rec) > len(f.header) {
		c.rowProblem(line, row, "", "%d fields, expected %d as in the header (%s)", len(rec), len(f.header), at(f.headerLine, f.headerRow))
		return
	}
	m := make(map[string]json.RawMessage, len(f.header))
	for i, v := range rec {
		if !c.checkUTF8(line, row, f.header[i], v) {
			return
		}
		if raw := csvCellJSON(v); raw != nil {
			m[f.header[i]] = raw
		}
	}
	f.recs = append(f.recs, flatRec{fields: m, line: line, row: row})
}

func (f *flatTable) read(opts ReadOptions, c *collector) {
	if c.problems.Len() > 0 {
		return
	}
	if len(f.recs) == 0 {
		c.rowProblem(f.headerLine, f.headerRow, "", "the file has a header but no data rows")
		return
	}
	readLabelStudioFlat(f.recs, f.header, opts, c)
}
