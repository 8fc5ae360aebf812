package annotations

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// goodRows are 15 valid long-form rows for the scheme ordinal:1..5.
func goodRows() [][]string {
	var rows [][]string
	for i := 1; i <= 5; i++ {
		for r := 1; r <= 3; r++ {
			rows = append(rows, []string{fmt.Sprintf("i%d", i), fmt.Sprintf("r%d", r), fmt.Sprint((i+r)%5 + 1)})
		}
	}
	return rows
}

// insertAt places bad among the good rows: first, in the middle, or last.
func insertAt(good [][]string, bad []string, pos string) ([][]string, int) {
	at := map[string]int{"first": 0, "middle": len(good) / 2, "last": len(good)}[pos]
	rows := make([][]string, 0, len(good)+1)
	rows = append(rows, good[:at]...)
	rows = append(rows, bad)
	rows = append(rows, good[at:]...)
	return rows, at
}

func csvText(header []string, rows [][]string, sep string) []byte {
	var b strings.Builder
	b.WriteString(strings.Join(header, sep) + "\n")
	for _, r := range rows {
		b.WriteString(strings.Join(r, sep) + "\n")
	}
	return []byte(b.String())
}

// readBuild reads and builds, returning the dataset or the problems.
func readBuild(data []byte, scheme string, opts ReadOptions) (*Dataset, *ProblemList, error) {
	p, err := ReadLabels(bytes.NewReader(data), opts)
	if err == nil {
		var ds *Dataset
		ds, err = BuildDataset(MustParseScheme(scheme), p, nil, opts)
		if err == nil {
			return ds, nil, nil
		}
	}
	var pl *ProblemList
	if errors.As(err, &pl) {
		return nil, pl, nil
	}
	return nil, nil, err
}

// wantOne checks that exactly one problem was reported, at the given place.
func wantOne(t *testing.T, ds *Dataset, pl *ProblemList, err error, file string, line, row int, col, msg string) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error %v", err)
	}
	if ds != nil || pl == nil {
		t.Fatalf("bad input accepted: %d labels", len(ds.Labels))
	}
	if pl.Len() != 1 {
		t.Fatalf("%d problems, want 1:\n%v", pl.Len(), pl)
	}
	p := pl.Problems[0]
	if p.File != file || p.Line != line || p.Row != row || p.Column != col || !strings.Contains(p.Msg, msg) {
		t.Errorf("problem %+v,\nwant file %q line %d row %d column %q message containing %q", p, file, line, row, col, msg)
	}
}

// badCase is one defect in one row.
type badCase struct {
	name   string
	scheme string
	row    []string
	col    string
	msg    string
	// dupOf, when >= 0, makes row a duplicate of good row dupOf: the
	// problem is then reported on the later of the two.
	dupOf int
}

// expect returns where the problem of the bad row inserted at index at of
// the good rows (after a header) is reported, and its message: a
// duplicate is reported at the later of the two labels, naming the earlier
// one's line or row (unit).
func (bc badCase) expect(at int, unit string) (int, string) {
	if bc.dupOf < 0 {
		return 2 + at, bc.msg
	}
	later, earlier := bc.dupIndex(at)
	return 2 + later, bc.msg + fmt.Sprintf(": another label was given at %s %d", unit, 2+earlier)
}

// dupIndex returns the indices among the good rows, the bad one inserted
// at index at, of the later and the earlier of the two labels of a
// duplicate (at and at for a defect that is not a duplicate).
func (bc badCase) dupIndex(at int) (later, earlier int) {
	if bc.dupOf < 0 {
		return at, at
	}
	orig := bc.dupOf
	if bc.dupOf >= at {
		orig++
	}
	return max(at, orig), min(at, orig)
}

var badCases = []badCase{
	{name: "unknown level", scheme: "ordinal:1..5", row: []string{"i9", "r1", "6"}, col: "label", msg: `unknown level "6" for scheme ordinal:1..5 (expected one of 1, 2, 3, 4, 5)`, dupOf: -1},
	{name: "empty label", scheme: "ordinal:1..5", row: []string{"i9", "r1", ""}, col: "label", msg: "empty label (expected one of 1, 2, 3, 4, 5)", dupOf: -1},
	{name: "empty rater id", scheme: "ordinal:1..5", row: []string{"i9", "", "3"}, col: "rater_id", msg: "empty rater id", dupOf: -1},
	{name: "empty item id", scheme: "ordinal:1..5", row: []string{"", "r2", "3"}, col: "item_id", msg: "empty item id", dupOf: -1},
	{name: "spaces around id", scheme: "ordinal:1..5", row: []string{" i9", "r2", "3"}, col: "item_id", msg: "leading or trailing spaces", dupOf: -1},
	{name: "control character", scheme: "ordinal:1..5", row: []string{"i9", "r\x01", "3"}, col: "rater_id", msg: "control character", dupOf: -1},
	{name: "id too long", scheme: "ordinal:1..5", row: []string{strings.Repeat("x", 201), "r1", "3"}, col: "item_id", msg: "201 bytes long (at most 200)", dupOf: -1},
	{name: "non-numeric bounded", scheme: "bounded:0..100", row: []string{"i9", "r1", "high"}, col: "label", msg: `non-numeric value "high" for scheme bounded:0..100`, dupOf: -1},
	{name: "bounded out of range", scheme: "bounded:0..5", row: []string{"i9", "r1", "7.5"}, col: "label", msg: "outside [0, 5]", dupOf: -1},
	{name: "duplicate", scheme: "ordinal:1..5", row: []string{"i3", "r2", "2"}, col: "rater_id", msg: `duplicate label for item "i3" by rater "r2"`, dupOf: 7},
}

func TestBadRowCSV(t *testing.T) {
	header := []string{"item_id", "rater_id", "label"}
	for _, bc := range badCases {
		for _, pos := range []string{"first", "middle", "last"} {
			t.Run(bc.name+"/"+pos, func(t *testing.T) {
				good := goodRows()
				rows, at := insertAt(good, bc.row, pos)
				line, msg := bc.expect(at, "line")
				ds, pl, err := readBuild(csvText(header, rows, ","), bc.scheme, ReadOptions{Name: "bad.csv"})
				wantOne(t, ds, pl, err, "bad.csv", line, 0, bc.col, msg)
			})
		}
	}
}

// Structural defects of CSV files: reported by ReadLabels with their line.
func TestBadRowCSVStructure(t *testing.T) {
	header := []string{"item_id", "rater_id", "label"}
	cases := []struct {
		name string
		raw  string // the bad line as it stands in the file
		col  string
		msg  string
	}{
		{"ragged short", "i9,r1", "", "2 fields, expected 3 as in the header (line 1)"},
		{"ragged long", "i9,r1,3,x", "", "4 fields, expected 3 as in the header (line 1)"},
		{"invalid UTF-8", "i9,r\xff\xfe,3", "rater_id", "invalid UTF-8"},
		{"bare quote", "i9,r\"1,3", "", "double quote inside an unquoted field"},
	}
	for _, tc := range cases {
		for _, pos := range []string{"first", "middle", "last"} {
			t.Run(tc.name+"/"+pos, func(t *testing.T) {
				good := goodRows()
				rows, at := insertAt(good, []string{tc.raw}, pos)
				ds, pl, err := readBuild(csvText(header, rows, ","), "ordinal:1..5", ReadOptions{Name: "bad.csv"})
				wantOne(t, ds, pl, err, "bad.csv", 2+at, 0, tc.col, tc.msg)
			})
		}
	}
}

func TestBadCellWide(t *testing.T) {
	// fleiss-like wide table: one row per item, one column per rater.
	header := []string{"item_id", "r1", "r2", "r3"}
	var good [][]string
	for i := 1; i <= 6; i++ {
		good = append(good, []string{fmt.Sprint(i), "1", "", fmt.Sprint(i%5 + 1)})
	}
	for _, pos := range []string{"first", "middle", "last"} {
		t.Run(pos, func(t *testing.T) {
			rows, at := insertAt(good, []string{"9", "2", "6", ""}, pos)
			ds, pl, err := readBuild(csvText(header, rows, "\t"), "ordinal:1..5", ReadOptions{Name: "wide.tsv"})
			wantOne(t, ds, pl, err, "wide.tsv", 2+at, 0, "r2", `unknown level "6"`)
		})
	}
}

// xlsxBytes writes rows (all as text cells) to a one-sheet workbook.
func xlsxBytes(t testing.TB, sheet string, rows [][]string) []byte {
	t.Helper()
	cells := make([][]any, len(rows))
	for i, r := range rows {
		cells[i] = make([]any, len(r))
		for j, v := range r {
			cells[i][j] = v
		}
	}
	return xlsxCells(t, sheet, cells)
}

// xlsxCells writes rows of cells (text or numbers) to a one-sheet
// workbook named sheet (the default name when empty).
func xlsxCells(t testing.TB, sheet string, rows [][]any) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	if sheet == "" {
		sheet = f.GetSheetName(0)
	} else if err := f.SetSheetName(f.GetSheetName(0), sheet); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		ref, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow(sheet, ref, &rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBadRowXLSX(t *testing.T) {
	for _, bc := range badCases {
		if bc.name == "control character" {
			continue // a workbook cannot hold control characters
		}
		for _, pos := range []string{"first", "middle", "last"} {
			t.Run(bc.name+"/"+pos, func(t *testing.T) {
				good := goodRows()
				rows, at := insertAt(good, bc.row, pos)
				all := append([][]string{{"Item", "Annotator", "Score"}}, rows...)
				row, msg := bc.expect(at, "row")
				col := map[string]string{"item_id": "Item", "rater_id": "Annotator", "label": "Score"}[bc.col]
				ds, pl, err := readBuild(xlsxBytes(t, "ratings", all), bc.scheme, ReadOptions{Name: "bad.xlsx"})
				wantOne(t, ds, pl, err, "bad.xlsx", 0, row, col, msg)
			})
		}
	}
}

func jsonRecordText(r []string) string {
	q := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return fmt.Sprintf(`{"item_id": %s, "rater_id": %s, "label": %s}`, q(r[0]), q(r[1]), q(r[2]))
}

func TestBadRecordJSON(t *testing.T) {
	for _, bc := range badCases {
		for _, pos := range []string{"first", "middle", "last"} {
			good := goodRows()
			rows, at := insertAt(good, bc.row, pos)
			recs := make([]string, len(rows))
			for i, r := range rows {
				recs[i] = jsonRecordText(r)
			}
			t.Run("array/"+bc.name+"/"+pos, func(t *testing.T) {
				// One record per line after the opening bracket.
				data := "[\n" + strings.Join(recs, ",\n") + "\n]\n"
				idx, first := bc.dupIndex(at)
				msg := bc.msg
				if bc.dupOf >= 0 {
					msg += fmt.Sprintf(": another label was given at record %d (line %d)", first+1, first+2)
				}
				ds, pl, err := readBuild([]byte(data), bc.scheme, ReadOptions{Name: "bad.json"})
				wantOne(t, ds, pl, err, "bad.json", idx+2, idx+1, bc.col, msg)
			})
			t.Run("lines/"+bc.name+"/"+pos, func(t *testing.T) {
				data := strings.Join(recs, "\n") + "\n"
				idx, first := bc.dupIndex(at)
				msg := bc.msg
				if bc.dupOf >= 0 {
					msg += fmt.Sprintf(": another label was given at line %d", first+1)
				}
				ds, pl, err := readBuild([]byte(data), bc.scheme, ReadOptions{Name: "bad.jsonl"})
				wantOne(t, ds, pl, err, "bad.jsonl", idx+1, 0, bc.col, msg)
			})
		}
	}
}

func TestBadRecordJSONStructure(t *testing.T) {
	good := goodRows()
	cases := []struct {
		name, rec, col, msg string
	}{
		{"missing rater", `{"item_id": "i9", "label": 3}`, "rater_id", "missing rater id (expected a field named one of rater_id, rater"},
		{"label object", `{"item_id": "i9", "rater_id": "r1", "label": {"v": 3}}`, "label", "expected a string or number, found an object"},
		{"not an object", `[1, 2, 3]`, "", "expected a JSON object"},
	}
	for _, tc := range cases {
		for _, pos := range []string{"first", "middle", "last"} {
			if pos == "first" && tc.rec[0] == '[' {
				continue // a file that starts with '[' is a JSON array
			}
			t.Run(tc.name+"/"+pos, func(t *testing.T) {
				recs := make([]string, len(good))
				for i, r := range good {
					recs[i] = jsonRecordText(r)
				}
				at := map[string]int{"first": 0, "middle": len(good) / 2, "last": len(good)}[pos]
				recs = append(recs[:at], append([]string{tc.rec}, recs[at:]...)...)
				ds, pl, err := readBuild([]byte(strings.Join(recs, "\n")), "ordinal:1..5", ReadOptions{Name: "bad.jsonl"})
				wantOne(t, ds, pl, err, "bad.jsonl", at+1, 0, tc.col, tc.msg)
			})
		}
	}
	t.Run("syntax error", func(t *testing.T) {
		data := "{\"item_id\": \"i1\", \"rater_id\": \"r1\", \"label\": 3}\n{\"item_id\": \"i2\", \"rater_id\": \n"
		ds, pl, err := readBuild([]byte(data), "ordinal:1..5", ReadOptions{Name: "bad.jsonl"})
		wantOne(t, ds, pl, err, "bad.jsonl", 2, 0, "", "invalid JSON")
	})
	t.Run("array syntax error", func(t *testing.T) {
		data := "[\n{\"item_id\": \"i1\", \"rater_id\": \"r1\", \"label\": 3},\n{\"item_id\": \"i2\" \"rater_id\": 1}\n]"
		ds, pl, err := readBuild([]byte(data), "ordinal:1..5", ReadOptions{Name: "bad.json"})
		wantOne(t, ds, pl, err, "bad.json", 3, 0, "", "invalid JSON")
	})
}

func TestProblemCap(t *testing.T) {
	var rows [][]string
	for i := 0; i < 250; i++ {
		// 250 different unknown levels (one that repeats is reported
		// once, with its count).
		rows = append(rows, []string{fmt.Sprint("i", i), "r1", fmt.Sprint(10 + i)})
	}
	data := csvText([]string{"item_id", "rater_id", "label"}, rows, ",")
	for _, tc := range []struct{ max, kept int }{{10, 10}, {0, DefaultMaxProblems}, {1, 1}} {
		_, pl, err := readBuild(data, "ordinal:1..5", ReadOptions{Name: "many.csv", MaxProblems: tc.max})
		if err != nil || pl == nil {
			t.Fatalf("max %d: %v", tc.max, err)
		}
		if len(pl.Problems) != tc.kept || pl.Omitted != 250-tc.kept || pl.Len() != 250 {
			t.Errorf("max %d: kept %d, omitted %d; want %d, %d", tc.max, len(pl.Problems), pl.Omitted, tc.kept, 250-tc.kept)
		}
		if pl.Problems[0].Line != 2 || pl.Problems[len(pl.Problems)-1].Line != 1+tc.kept {
			t.Errorf("max %d: first problem at line %d, last at %d", tc.max, pl.Problems[0].Line, pl.Problems[len(pl.Problems)-1].Line)
		}
		if want := fmt.Sprintf("... and %d more", 250-tc.kept); !strings.Contains(pl.Error(), want) {
			t.Errorf("message lacks %q", want)
		}
	}
	// Ragged rows are capped while reading.
	var ragged [][]string
	for i := 0; i < 50; i++ {
		ragged = append(ragged, []string{"i", "r"})
	}
	_, pl, err := readBuild(csvText([]string{"item_id", "rater_id", "label"}, ragged, ","), "ordinal:1..5", ReadOptions{MaxProblems: 5})
	if err != nil || pl == nil || len(pl.Problems) != 5 || pl.Len() != 50 {
		t.Errorf("ragged rows: %v %v", pl, err)
	}
}

// utf16 encodes ASCII text as UTF-16 with or without a byte-order mark.
func utf16(s string, bigEndian, bom bool) []byte {
	var b []byte
	if bom {
		if bigEndian {
			b = append(b, 0xFE, 0xFF)
		} else {
			b = append(b, 0xFF, 0xFE)
		}
	}
	for i := 0; i < len(s); i++ {
		if bigEndian {
			b = append(b, 0, s[i])
		} else {
			b = append(b, s[i], 0)
		}
	}
	return b
}

func TestEncodingAndEmpty(t *testing.T) {
	const text = "item_id,rater_id,label\n1,a,1\n1,b,2\n"
	tests := []struct {
		name string
		data []byte
		opts ReadOptions
		line int
		msg  string
	}{
		{"utf-16le bom", utf16(text, false, true), ReadOptions{}, 0, "file is UTF-16 encoded; save it as UTF-8"},
		{"utf-16be bom", utf16(text, true, true), ReadOptions{}, 0, "file is UTF-16 encoded; save it as UTF-8"},
		{"utf-16le no bom", utf16(text, false, false), ReadOptions{}, 0, "file is UTF-16 encoded; save it as UTF-8"},
		{"utf-16 items", utf16(text, false, true), ReadOptions{Format: FormatCSVLong}, 0, "UTF-16"},
		{"binary", []byte("item_id,rater_id,label\n1,a\x00,1\n"), ReadOptions{}, 2, "NUL bytes"},
		{"empty", nil, ReadOptions{}, 0, "file is empty"},
		{"blank", []byte("  \n\r\n"), ReadOptions{}, 0, "file is empty"},
		{"bom only", bomUTF8, ReadOptions{}, 0, "file is empty"},
		{"header only", []byte("item_id,rater_id,label\n"), ReadOptions{}, 1, "header but no data rows"},
		{"header only wide", []byte("item_id,r1,r2\n"), ReadOptions{}, 1, "header but no data rows"},
		{"old excel", append(append([]byte{}, magicOLE...), make([]byte, 100)...), ReadOptions{}, 0, "old Excel (.xls)"},
		{"broken zip", []byte("PK\x03\x04 not really a workbook"), ReadOptions{}, 0, "not a valid XLSX workbook: the ZIP archive is damaged or truncated"},
		{"json not xlsx", []byte(`[{"item_id": 1}]`), ReadOptions{Format: FormatXLSX}, 0, "not an XLSX workbook"},
		{"empty json array", []byte("[]"), ReadOptions{}, 1, "no records"},
		{"invalid utf-8 json", []byte("[\n{\"item_id\": \"a\xff\", \"rater_id\": \"b\", \"label\": 1}\n]"), ReadOptions{}, 2, "invalid UTF-8"},
		{"invalid utf-8 jsonl", []byte("{\"item_id\": \"a\", \"rater_id\": \"b\", \"label\": 1}\n{\"item_id\": \"a\xff\", \"rater_id\": \"b\", \"label\": 1}\n"), ReadOptions{}, 2, "invalid UTF-8"},
		{"json as jsonl", []byte(`[{"item_id": 1, "rater_id": 2, "label": 3}]`), ReadOptions{Format: FormatJSONL}, 1, "this is a JSON array"},
		{"jsonl as json", []byte(`{"item_id": 1, "rater_id": 2, "label": 3}`), ReadOptions{Format: FormatJSON}, 1, "looks like JSON Lines"},
		{"csv as json", []byte("item_id,rater_id,label\n1,2,3\n"), ReadOptions{Format: FormatJSON}, 1, "expected json"},
		{"unknown format", []byte("item_id,rater_id,label\n1,2,3\n"), ReadOptions{Format: "yaml"}, 0, `unknown format "yaml"`},
		{"long without rater", []byte("item_id,label\n1,3\n"), ReadOptions{}, 1, "no rater id column"},
		{"forced long", []byte("item,annotator,r2\n1,3,4\n"), ReadOptions{Format: FormatCSVLong}, 1, "no label column"},
		{"wide without raters", []byte("item_id,text\n1,hello\n"), ReadOptions{Format: FormatCSVWide}, 1, "no rater columns"},
		{"wide duplicate rater", []byte("item_id,a,a\n1,3,4\n"), ReadOptions{}, 1, `columns 2 and 3 are both named "a"`},
		{"wide unnamed column", []byte("item_id,a,\n1,3,4\n"), ReadOptions{}, 1, "column 3 has no name"},
		{"long duplicate column", []byte("item_id,rater_id,label,Label\n1,3,4,5\n"), ReadOptions{}, 1, `columns 3 and 4 are both named "Label"`},
		{"empty header", []byte(",,\n1,2,3\n"), ReadOptions{}, 1, "empty header"},
		{"only empty cells", []byte("item_id,r1\n,\n"), ReadOptions{}, 0, "no labels found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Name = "f"
			p, err := ReadLabels(bytes.NewReader(tt.data), tt.opts)
			var pl *ProblemList
			if !errors.As(err, &pl) {
				t.Fatalf("got %v, %v; want problems", p, err)
			}
			if pl.Len() != 1 {
				t.Fatalf("%d problems, want 1: %v", pl.Len(), pl)
			}
			pr := pl.Problems[0]
			if pr.File != "f" || pr.Line != tt.line || !strings.Contains(pr.Msg, tt.msg) {
				t.Errorf("problem %+v, want line %d and message containing %q", pr, tt.line, tt.msg)
			}
			if ErrorCode(err) != EINVALID {
				t.Errorf("code %q", ErrorCode(err))
			}
		})
	}
}

func TestBOMStripped(t *testing.T) {
	data := append(append([]byte{}, bomUTF8...), "Item ID,Rater,Rating\n1,a,1\n1,b,2\n"...)
	p, err := ReadLabels(bytes.NewReader(data), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != FormatCSVLong || len(p.Labels) != 2 || p.Labels[0].ItemCol != "Item ID" || p.Labels[1].Line != 3 {
		t.Errorf("got %+v", p)
	}
}

// xlsxNumbers writes a long table whose labels are numeric cells.
func xlsxNumbers(t testing.TB, vals []float64) []byte {
	t.Helper()
	rows := [][]any{{"item_id", "rater_id", "label"}}
	for i, v := range vals {
		rows = append(rows, []any{i + 1, "r", v})
	}
	return xlsxCells(t, "", rows)
}

func TestMalformedHeaderLine(t *testing.T) {
	data := []byte("item_id,rater\"_id,label\n1,a,2\n")
	_, pl, err := readBuild(data, "ordinal:1..5", ReadOptions{Name: "h.csv"})
	wantOne(t, nil, pl, err, "h.csv", 1, 0, "", "double quote inside an unquoted field")
	_, err = ReadItems(bytes.NewReader(data), ReadOptions{Name: "h.csv"})
	if !errors.As(err, &pl) || pl.Len() != 1 || pl.Problems[0].Line != 1 {
		t.Errorf("items: %v", err)
	}
}
