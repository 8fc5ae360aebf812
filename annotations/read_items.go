package annotations

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// ReadItems reads an items file (CSV, TSV or XLSX, detected from the content;
// opts.Sheet selects a sheet) with a header row:
//
//	item_id,text,<other columns>
//
// The id column takes the same aliases as in label files (item_id, item,
// task, id, ...). The item text is the "text" column, or the opts.TextColumns
// joined with newlines (empty parts skipped). A column named gold, gold_label,
// truth or true_label is the reference label (Item.Gold). Every other column
// whose values are all numbers is a covariate (an empty cell in it is a
// problem, since covariates need a value for every item); any other column is
// kept verbatim in Item.Attrs (empty cells omitted). Empty, malformed and
// duplicate item ids are problems.
//
// A rejected file returns a *ProblemList naming file, line (or row) and
// column of each problem; no partial result is returned.
func ReadItems(r io.Reader, opts ReadOptions) ([]Item, error) {
	br := bufio.NewReaderSize(r, sniffSize)
	c := newCollector(opts, "")
	kind, err := sniff(br, c)
	if err != nil {
		return nil, err
	}
	it := &itemTable{sheet: sheet{c: c, opts: opts}}
	switch kind {
	case kindBad:
	case kindEmpty:
		c.add(Problem{Msg: "file is empty (expected a header line such as item_id,text)"})
	case kindJSONArray, kindJSONLines:
		c.add(Problem{Line: 1, Msg: "items files are CSV, TSV or XLSX tables with a header line such as item_id,text"})
	case kindZip:
		rows, _, ok, err := readSheet(br, c, opts.Sheet)
		if err != nil {
			return nil, err
		}
		if ok {
			it.padShort = true
			started := false
			for i, row := range rows {
				if blankRow(row) {
					continue
				}
				if !started {
					started = true
					if !it.setHeader(row, 0, i+1) {
						break
					}
					continue
				}
				it.addRow(row, 0, i+1)
			}
			if !started {
				c.add(Problem{Msg: "the sheet is empty (expected a header row such as item_id,text)"})
			}
		}
	default:
		cr := newCSVReader(br)
		started := false
		err := csvRows(cr, c, func(rec []string, line int) bool {
			if !started {
				if c.problems.Len() > 0 {
					return false // the header line itself was malformed
				}
				started = true
				return it.setHeader(rec, line, 0)
			}
			it.addRow(rec, line, 0)
			return true
		})
		if err != nil {
			return nil, err
		}
		if !started && c.problems.Len() == 0 {
			c.add(Problem{Msg: "file is empty (expected a header line such as item_id,text)"})
		}
	}
	items := it.finish()
	if err := c.problems.Err(); err != nil {
		return nil, err
	}
	return items, nil
}

// itemTable collects the rows of an items file.
type itemTable struct {
	sheet
	idCol     int
	textCols  []int
	goldCol   int
	otherCols []int

	rows  [][]string
	lines []int // line (CSV) or row (XLSX) of each row
	byID  map[string]int
}

func (it *itemTable) setHeader(h []string, line, row int) bool {
	c := it.c
	it.header = make([]string, len(h))
	for i, s := range h {
		it.header[i] = strings.Clone(s)
		if !c.checkUTF8(line, row, fmt.Sprintf("#%d", i+1), s) {
			return false
		}
	}
	it.headerLine, it.headerRow = line, row
	it.idCol = bestColumn(it.header, itemAliases)
	if it.idCol < 0 {
		c.rowProblem(line, row, "", "no item id column in the header %s (expected one of %s)", quoteList(it.header), strings.Join(itemAliases, ", "))
		return false
	}
	ok := true
	if it.opts.TextColumns != nil {
		for _, name := range it.opts.TextColumns {
			col := columnIndex(it.header, name)
			if col < 0 {
				c.rowProblem(line, row, name, "no column %q for the item text (columns: %s)", name, quoteList(it.header))
				ok = false
				continue
			}
			it.textCols = append(it.textCols, col)
		}
	} else if tc := bestColumn(it.header, textAliases, it.idCol); tc >= 0 {
		it.textCols = []int{tc}
	}
	it.goldCol = bestColumn(it.header, goldAliases, it.idCol)
	seen := map[string]int{}
	for i, h := range it.header {
		if i == it.idCol || i == it.goldCol || slices.Contains(it.textCols, i) {
			continue
		}
		if strings.TrimSpace(h) == "" {
			c.rowProblem(line, row, fmt.Sprintf("#%d", i+1), "column %d has no name", i+1)
			ok = false
			continue
		}
		if j, dup := seen[normName(h)]; dup {
			c.rowProblem(line, row, h, "columns %d and %d are both named %q", j+1, i+1, h)
			ok = false
			continue
		}
		seen[normName(h)] = i
		it.otherCols = append(it.otherCols, i)
	}
	it.byID = map[string]int{}
	return ok
}

func (it *itemTable) addRow(rec []string, line, row int) {
	c := it.c
	rec, ok := it.row(rec, line, row)
	if !ok {
		return
	}
	cells := make([]string, len(it.header))
	for i := range rec {
		cells[i] = strings.Clone(rec[i])
	}
	id := cells[it.idCol]
	if err := validateID("item id", id); err != nil {
		c.rowProblem(line, row, it.header[it.idCol], "%s", ErrorMessage(err))
		return
	}
	pos := line
	if pos == 0 {
		pos = row
	}
	if j, dup := it.byID[id]; dup {
		jl, jr := it.lines[j], 0
		if line == 0 {
			jl, jr = 0, it.lines[j]
		}
		c.rowProblem(line, row, it.header[it.idCol], "duplicate item id %q (first at %s)", id, at(jl, jr))
		return
	}
	it.byID[id] = len(it.rows)
	it.rows = append(it.rows, cells)
	it.lines = append(it.lines, pos)
}

// finish decides which columns are covariates and builds the items.
func (it *itemTable) finish() []Item {
	c := it.c
	if it.header == nil || c.problems.Len() > 0 && len(it.rows) == 0 {
		return nil
	}
	if len(it.rows) == 0 {
		c.rowProblem(it.headerLine, it.headerRow, "", "the file has a header but no items")
		return nil
	}
	numeric := make(map[int]bool, len(it.otherCols))
	for _, col := range it.otherCols {
		isNum, any := true, false
		for _, r := range it.rows {
			v := strings.TrimSpace(r[col])
			if v == "" {
				continue
			}
			any = true
			if _, ok := parseFinite(v); !ok {
				isNum = false
				break
			}
		}
		numeric[col] = isNum && any
	}
	items := make([]Item, len(it.rows))
	for i, r := range it.rows {
		item := Item{ID: r[it.idCol]}
		var parts []string
		for _, tc := range it.textCols {
			if r[tc] != "" {
				parts = append(parts, r[tc])
			}
		}
		item.Text = normText(strings.Join(parts, "\n"))
		if it.goldCol >= 0 {
			item.Gold = strings.TrimSpace(r[it.goldCol])
		}
		for _, col := range it.otherCols {
			name := strings.TrimSpace(it.header[col])
			v := r[col]
			if numeric[col] {
				f, ok := parseFinite(strings.TrimSpace(v))
				if !ok {
					line, row := it.lines[i], 0
					if it.headerLine == 0 {
						line, row = 0, it.lines[i]
					}
					c.rowProblem(line, row, name, "empty cell in numeric column %q (covariates need a value for every item)", name)
					continue
				}
				if item.Covariates == nil {
					item.Covariates = map[string]float64{}
				}
				item.Covariates[name] = f
				continue
			}
			if v == "" {
				continue
			}
			if item.Attrs == nil {
				item.Attrs = map[string]string{}
			}
			item.Attrs[name] = normText(v)
		}
		items[i] = item
	}
	return items
}

// parseFinite parses a finite number.
func parseFinite(s string) (float64, bool) {
	f, err := parseNumber(s)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}
