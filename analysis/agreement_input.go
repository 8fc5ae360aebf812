package analysis

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"concord/annotations"
	"concord/raters"
)

// CountsInput is a table of counts read for an agreement analysis: a
// two-rater K × K contingency table (ReadContingencyTable) or per-item
// category counts (ReadCounts).
type CountsInput struct {
	// Categories name the columns (and, for a contingency table, the
	// rows).
	Categories []string `json:"categories,omitempty"`
	// Items name the rows of per-item counts (nil when the file has no
	// id column).
	Items []string `json:"items,omitempty"`
	// Rows are the counts, row by row.
	Rows [][]float64 `json:"rows"`
}

// MaxTableCategories bounds the categories of a contingency table or of
// per-item counts (a contingency table holds their square).
const MaxTableCategories = 1000

// MaxCountRows bounds the items of per-item counts.
const MaxCountRows = 5_000_000

// countIDHeader says whether a header cell names an id column of per-item
// counts (empty, or item, item_id, id, subject, unit, group in any case).
func countIDHeader(h string) bool {
	switch strings.ToLower(strings.TrimSpace(h)) {
	case "", "item", "item_id", "id", "subject", "unit", "group":
		return true
	}
	return false
}

// ReadContingencyTable reads a two-rater contingency table from CSV: K
// rows of K non-negative counts (row rater's category k, column rater's
// l). With a header row (its first cell is not a number) the header names
// the column categories after a corner cell, and each row starts with its
// category, which must be the header's in the same order; without one the
// file is K × K numbers and the categories are 1..K. name names the file
// in errors, which give the row and column and what was expected.
func ReadContingencyTable(name string, r io.Reader) (*CountsInput, error) {
	recs, err := readCountRecords(name, r)
	if err != nil {
		return nil, err
	}
	in := &CountsInput{}
	header := !isNumber(recs[0][0])
	first := 0 // first count column
	if header {
		h := recs[0]
		if len(h) < 3 {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row 1: the header has %d cells; expected a corner cell and at least 2 categories", name, len(h))
		}
		in.Categories = trimAll(h[1:])
		if err := distinct(name, in.Categories, 2); err != nil {
			return nil, err
		}
		recs, first = recs[1:], 1
		if len(recs) == 0 {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: a header and no rows of counts", name)
		}
	}
	k := len(recs[0]) - first
	if !header {
		in.Categories = positions(k)
	}
	if k < 2 || k > MaxTableCategories {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: %d categories; a contingency table has 2 to %d", name, k, MaxTableCategories)
	}
	if len(recs) != k {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: %d rows of counts for %d categories; a contingency table is square (one row per category of the row rater)", name, len(recs), k)
	}
	off := boolInt(header) // rows before the first count row
	for x, rec := range recs {
		row := x + 1 + off
		if len(rec) != k+first {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d has %d cells; expected %d", name, row, len(rec), k+first)
		}
		if header && strings.TrimSpace(rec[0]) != in.Categories[x] {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d, column 1: category %q where the header's category %d, %q, is expected (rows and columns list the categories in the same order)", name, row, clip(rec[0], 40), x+1, in.Categories[x])
		}
		vals, err := countCells(name, row, first, rec[first:])
		if err != nil {
			return nil, err
		}
		in.Rows = append(in.Rows, vals)
	}
	return in, nil
}

// ReadCounts reads per-item category counts from CSV (Fleiss's layout,
// statsmodels' fleiss_kappa and irrCAC's *.dist input): one row per item,
// one column per category, each cell the number of raters who put the
// item in the category (a non-negative number). A header row (a cell after
// the first that is not a number, or a first cell naming an id column, as
// below) names the categories; without one they are 1..q. The first
// column holds item ids when its header is empty or one of item, item_id,
// id, subject, unit, group, or when one of its cells is not a number.
// name names the file in errors, which give the row and column and what
// was expected.
func ReadCounts(name string, r io.Reader) (*CountsInput, error) {
	recs, err := readCountRecords(name, r)
	if err != nil {
		return nil, err
	}
	in := &CountsInput{}
	header := countIDHeader(recs[0][0])
	for _, c := range recs[0][1:] {
		header = header || !isNumber(c)
	}
	var h []string
	if header {
		h, recs = trimAll(recs[0]), recs[1:]
		if len(recs) == 0 {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: a header and no rows of counts", name)
		}
	}
	idCol := header && countIDHeader(h[0])
	for _, rec := range recs {
		idCol = idCol || !isNumber(rec[0])
	}
	first := boolInt(idCol)
	q := len(recs[0]) - first
	if header {
		q = len(h) - first
		in.Categories = h[first:]
		if err := distinct(name, in.Categories, first+1); err != nil {
			return nil, err
		}
	} else {
		in.Categories = positions(q)
	}
	if q < 2 || q > MaxTableCategories {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: %d categories; counts have 2 to %d columns of categories", name, q, MaxTableCategories)
	}
	if len(recs) > MaxCountRows {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: %d rows; at most %d items", name, len(recs), MaxCountRows)
	}
	off := boolInt(header)
	for x, rec := range recs {
		row := x + 1 + off
		if len(rec) != q+first {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d has %d cells; expected %d (%s%d categories)", name, row, len(rec), q+first, strings.Repeat("an item id and ", first), q)
		}
		if idCol {
			in.Items = append(in.Items, strings.TrimSpace(rec[0]))
		}
		vals, err := countCells(name, row, first, rec[first:])
		if err != nil {
			return nil, err
		}
		in.Rows = append(in.Rows, vals)
	}
	return in, nil
}

// readCountRecords reads every CSV record (comma-separated, any number of
// cells per row) and refuses an empty file.
func readCountRecords(name string, r io.Reader) ([][]string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = false
	var recs [][]string
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d, column %d: %v", name, pe.StartLine, pe.Column, pe.Err)
			}
			return nil, annotations.Errorf(annotations.EINVALID, "%s: %v", name, err)
		}
		if len(recs) > MaxCountRows {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: more than %d rows", name, MaxCountRows)
		}
		if len(rec) > MaxTableCategories+1 {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d has %d cells; at most %d categories", name, len(recs)+1, len(rec), MaxTableCategories)
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: empty file; expected rows of counts", name)
	}
	return recs, nil
}

// countCells parses the counts of one row (columns from first+1).
func countCells(name string, row, first int, cells []string) ([]float64, error) {
	vals := make([]float64, len(cells))
	for c, s := range cells {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d, column %d: %q is not a count (expected a non-negative number)", name, row, first+c+1, clip(s, 40))
		}
		vals[c] = v
	}
	return vals, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

func trimAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strings.TrimSpace(x)
	}
	return out
}

func positions(k int) []string {
	out := make([]string, max(k, 0))
	for i := range out {
		out[i] = strconv.Itoa(i + 1)
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// distinct checks that the header's categories are distinct and not empty
// (the first in column firstCol of the header row).
func distinct(name string, cats []string, firstCol int) error {
	seen := map[string]int{}
	for i, c := range cats {
		col := firstCol + i
		if c == "" {
			return annotations.Errorf(annotations.EINVALID, "%s: row 1, column %d: empty category name", name, col)
		}
		if prev, ok := seen[c]; ok {
			return annotations.Errorf(annotations.EINVALID, "%s: row 1, column %d: category %q repeats column %d", name, col, clip(c, 40), prev)
		}
		seen[c] = col
	}
	return nil
}

// TableAgreement analyses a contingency table (kind "table") or per-item
// counts (kind "counts") with irrCAC's table and distribution functions
// (raters.AnalyzeTable, raters.AnalyzeCounts); the categories name the
// output. A data-dependent failure is EINVALID.
func TableAgreement(_ context.Context, kind string, in *CountsInput, o raters.TableOptions) (*AgreementReport, error) {
	o.CategoryNames = in.Categories
	var (
		rep *raters.Report
		err error
	)
	switch kind {
	case "table":
		rep, err = raters.AnalyzeTable(in.Rows, o)
	case "counts":
		rep, err = raters.AnalyzeCounts(in.Rows, o)
	default:
		panic(fmt.Sprintf("analysis: unknown table kind %q", kind))
	}
	if err != nil {
		if pe := populationError(err); pe != nil {
			return nil, pe
		}
		return nil, annotations.Errorf(annotations.EINVALID, "%s", strings.TrimPrefix(err.Error(), "raters: "))
	}
	return &AgreementReport{Scheme: kind, Report: rep}, nil
}

// ParseWeightsList reads a comma-separated list of weightings (irrCAC's
// names: unweighted, linear, quadratic, ordinal, ratio, radical, circular,
// bipolar) or "all" (every one but unweighted); "" is nil (the default).
func ParseWeightsList(s string) ([]raters.Weights, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if s == "all" {
		return []raters.Weights{raters.LinearWeights, raters.QuadraticWeights, raters.OrdinalWeights, raters.RatioWeights,
			raters.RadicalWeights, raters.CircularWeights, raters.BipolarWeights}, nil
	}
	var out []raters.Weights
	seen := map[raters.Weights]bool{}
	for _, part := range strings.Split(s, ",") {
		w, err := raters.ParseWeights(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("%q: expected all or a comma-separated list of unweighted, linear, quadratic, ordinal, ratio, radical, circular, bipolar", clip(part, 40))
		}
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out, nil
}

// ParseNull reads the value the coefficients are tested against besides 0
// ("" is 0: none): a finite number.
func ParseNull(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: expected a number (the coefficient value to test against, e.g. 0.5)", clip(s, 40))
	}
	return v, nil
}

// ParsePopulation reads the size of the population of subjects the items
// are a sample of (raters.Options.Population; "" is 0: infinite): a
// non-negative whole number.
func ParsePopulation(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q: expected a whole number of subjects, at least the items analysed (0: an infinite population, no correction)", clip(s, 40))
	}
	return v, nil
}

// ParseCI reads the kind of the analytic intervals: t (the default,
// irrCAC's) or normal (statsmodels' and SAS's).
func ParseCI(s string) (raters.CIKind, error) {
	k, err := raters.ParseCIKind(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q: expected t or normal", clip(s, 40))
	}
	return k, nil
}

// ParseRandomStart reads how M-MSR and KOS draw their random starts:
// concord (the default, "" too) or crowdkit (crowd-kit's numpy draws).
func ParseRandomStart(s string) (raters.RandomStart, error) {
	if s = strings.TrimSpace(s); s == "" {
		return raters.StartConcord, nil
	}
	start, err := raters.ParseRandomStart(s)
	if err != nil {
		return 0, fmt.Errorf("%q: expected %s", clip(s, 40), strings.Join(raters.RandomStarts, " or "))
	}
	return start, nil
}

// StartSeed returns the seed of an agreement analysis: seed when the user
// gave one (given), otherwise def, or with start crowdkit crowd-kit's
// default random_state 0. With crowdkit it must be one numpy's
// RandomState takes, 0 to 2^32 - 1 (the error says so; the caller names
// its seed setting).
func StartSeed(start raters.RandomStart, seed uint64, given bool, def uint64) (uint64, error) {
	switch {
	case given:
	case start == raters.StartCrowdKit:
		seed = raters.CrowdKitSeed
	default:
		seed = def
	}
	if start == raters.StartCrowdKit && seed > raters.MaxNumPySeed {
		return 0, fmt.Errorf("%d is over %d, the largest seed numpy's RandomState takes (crowd-kit's random starts)", seed, uint64(raters.MaxNumPySeed))
	}
	return seed, nil
}

// NewCountsInput checks counts given as numbers (the API's JSON body):
// kind "table" (a square table) or "counts" (rows of per-item counts), at
// least 2 and at most MaxTableCategories categories, every count a
// non-negative finite number, categories (nil: 1..K) and items (nil: none)
// matching the rows. Errors name the field (kind), row and column (from
// 1).
func NewCountsInput(kind string, rows [][]float64, categories, items []string) (*CountsInput, error) {
	if len(rows) == 0 {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: no rows; expected rows of counts", kind)
	}
	k := len(rows[0])
	if k < 2 || k > MaxTableCategories {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: row 1 has %d counts; expected 2 to %d categories", kind, k, MaxTableCategories)
	}
	if kind == "table" && len(rows) != k {
		return nil, annotations.Errorf(annotations.EINVALID, "table: %d rows for %d categories; a contingency table is square", len(rows), k)
	}
	if kind == "counts" && len(rows) > MaxCountRows {
		return nil, annotations.Errorf(annotations.EINVALID, "counts: %d rows; at most %d items", len(rows), MaxCountRows)
	}
	for x, row := range rows {
		if len(row) != k {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d has %d counts; expected %d", kind, x+1, len(row), k)
		}
		for c, v := range row {
			if !(v >= 0) || math.IsInf(v, 0) {
				return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d, column %d: %v is not a count (expected a non-negative number)", kind, x+1, c+1, v)
			}
		}
	}
	if categories == nil {
		categories = positions(k)
	}
	if len(categories) != k {
		return nil, annotations.Errorf(annotations.EINVALID, "categories: %d names for %d columns of counts", len(categories), k)
	}
	if err := distinct("categories", trimAll(categories), 1); err != nil {
		return nil, err
	}
	if items != nil && (kind != "counts" || len(items) != len(rows)) {
		return nil, annotations.Errorf(annotations.EINVALID, "items: %d ids for %d rows of %s (item ids go with counts, one per row)", len(items), len(rows), kind)
	}
	return &CountsInput{Categories: trimAll(categories), Items: items, Rows: rows}, nil
}

// ErrorMatricesTable returns the raters and categories of the initial error
// matrices of ds (ReadErrorMatrices), or an error naming how the user gave
// the matrices (given: a flag, a query parameter) when ds's scheme is not
// categorical.
func ErrorMatricesTable(ds *annotations.Dataset, given string) (raterIDs, categories []string, err error) {
	rt, err := Table(ds)
	if err != nil {
		return nil, nil, err
	}
	if rt.Categories == nil {
		return nil, nil, annotations.Errorf(annotations.EINVALID, "%s goes with categorical schemes; %s is not one", given, ds.Scheme)
	}
	return rt.Raters, rt.Categories, nil
}

// ReadErrorMatrices reads Dawid-Skene's initial error matrices
// (raters.DSOptions.InitialError) from CSV with the header rater, true,
// label, value: one row per cell, value a non-negative number (a count
// from past work, or a probability), true and label categories of the
// scheme, rater one of raters. It returns one k×k matrix (row-major,
// [true][label]) per rater, nil for raters without rows. name names the
// file in errors, which give the row and column.
func ReadErrorMatrices(name string, r io.Reader, raterIDs, categories []string) ([][]float64, error) {
	recs, err := readCountRecords(name, r)
	if err != nil {
		return nil, err
	}
	want := []string{"rater", "true", "label", "value"}
	if len(recs[0]) != len(want) {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: row 1: the header has %d cells; expected rater,true,label,value", name, len(recs[0]))
	}
	for c, h := range recs[0] {
		if !strings.EqualFold(strings.TrimSpace(h), want[c]) {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row 1, column %d: header %q; expected %q (the header is rater,true,label,value)", name, c+1, clip(h, 40), want[c])
		}
	}
	raterIx, catIx := indexOf(raterIDs), indexOf(categories)
	k := len(categories)
	out := make([][]float64, len(raterIDs))
	for x, rec := range recs[1:] {
		row := x + 2
		if len(rec) != 4 {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d has %d cells; expected 4 (rater,true,label,value)", name, row, len(rec))
		}
		j, ok := raterIx[strings.TrimSpace(rec[0])]
		if !ok {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d, column 1: rater %q has no labels in the data", name, row, clip(rec[0], 40))
		}
		var cl [2]int
		for y := 0; y < 2; y++ {
			c, ok := catIx[strings.TrimSpace(rec[1+y])]
			if !ok {
				return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d, column %d: %q is not a category of the scheme (expected one of %s)", name, row, 2+y, clip(rec[1+y], 40), clip(strings.Join(categories, ", "), 200))
			}
			cl[y] = c
		}
		vals, err := countCells(name, row, 3, rec[3:])
		if err != nil {
			return nil, err
		}
		if out[j] == nil {
			out[j] = make([]float64, k*k)
		}
		out[j][cl[0]*k+cl[1]] = vals[0]
	}
	return out, nil
}
