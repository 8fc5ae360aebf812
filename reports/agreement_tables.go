package reports

import (
	"fmt"
	"io"
	"math"

	"concord/raters"
)

// The agreement tables of package raters (the pairwise kappa matrix, the
// per-item and the per-rater agreement) as CSV tables and workbook sheets.
// One block per table defines the columns of both.

// The names of the agreement tables, for WriteAgreementCSV.
const (
	AgreementMatrix = "matrix"
	AgreementPairs  = "pairs"
	AgreementItems  = "items"
	AgreementRaters = "raters"
)

// AgreementTables lists the agreement tables' names.
var AgreementTables = []string{AgreementMatrix, AgreementPairs, AgreementItems, AgreementRaters}

// matrixBlock is the pairwise kappa matrix: a row per rater, a column per
// rater, blank on the diagonal and where a pair has no kappa.
func (x *xlsxWriter) matrixBlock(m *raters.PairMatrix) *block {
	cols := []col{x.text("Rater")}
	for _, r := range m.Raters {
		cols = append(cols, x.num(r))
	}
	n := len(m.Raters)
	return &block{cols: cols, n: n, firstColHeader: true,
		row: func(i int, dst []any) []any {
			dst = append(dst, m.Raters[i])
			for j := 0; j < n; j++ {
				dst = append(dst, float64(m.Kappa[i][j]))
			}
			return dst
		}}
}

// sharedBlock is the matrix of shared items: a row per rater, the items
// both raters labelled (the diagonal: the items the rater labelled).
func (x *xlsxWriter) sharedBlock(m *raters.PairMatrix) *block {
	cols := []col{x.text("Rater")}
	for _, r := range m.Raters {
		cols = append(cols, x.integer(r))
	}
	n := len(m.Raters)
	return &block{cols: cols, n: n, firstColHeader: true,
		row: func(i int, dst []any) []any {
			dst = append(dst, m.Raters[i])
			for j := 0; j < n; j++ {
				dst = append(dst, m.N[i][j])
			}
			return dst
		}}
}

// pairsBlock lists the pairs of raters with a common item: their shared
// items and Cohen's kappa under the matrix's weights with its interval.
func (x *xlsxWriter) pairsBlock(pairs []raters.CohenPair, weights string) *block {
	return &block{
		cols: []col{x.text("Rater A"), x.text("Rater B"), x.integer("Shared items"), x.num("Kappa"), x.num("CI low"), x.num("CI high")},
		n:    len(pairs), filter: true,
		row: func(i int, dst []any) []any {
			p := &pairs[i]
			e := PairEstimate(p, weights)
			return append(dst, p.A, p.B, p.N, e.Value, e.CILow, e.CIHigh)
		}}
}

// pairEstimate is the pair's kappa under the named weights (undefined when
// it was not computed).
func PairEstimate(p *raters.CohenPair, weights string) raters.Estimate {
	var e *raters.Estimate
	switch weights {
	case "unweighted":
		e = p.Unweighted
	case "linear":
		e = p.Linear
	case "quadratic":
		e = p.Quadratic
	}
	if e == nil {
		n := math.NaN()
		return raters.Estimate{Value: n, CILow: n, CIHigh: n, SE: n, Pa: n, Pe: n}
	}
	return *e
}

// itemAgreementBlock lists per-item agreement rows in the given order.
func (x *xlsxWriter) itemAgreementBlock(rows []raters.ItemAgreement) *block {
	return &block{
		cols: []col{x.text("Item"), x.integer("Labels"), x.num("Agreement")},
		n:    len(rows), filter: true, freeze: true,
		row: func(i int, dst []any) []any {
			r := &rows[i]
			return append(dst, r.Item, r.Labels, float64(r.Agreement))
		}}
}

// raterAgreementBlock lists per-rater agreement rows.
func (x *xlsxWriter) raterAgreementBlock(rows []raters.RaterAgreement) *block {
	return &block{
		cols: []col{x.text("Rater"), x.integer("Labels"), x.integer("Shared items"), x.integer("Partners"), x.integer("Pairs"),
			x.num("Agreement"), x.num("Mean pairwise kappa"), x.num("Pooled kappa")},
		n: len(rows), filter: true, freeze: true,
		row: func(i int, dst []any) []any {
			r := &rows[i]
			return append(dst, r.Rater, r.Labels, r.Items, r.Partners, r.Pairs, float64(r.Agreement), float64(r.MeanKappa), float64(r.PooledKappa))
		}}
}

// WriteMatrixCSV writes the pairwise kappa matrix as CSV: a header row
// "Rater" and the raters, then a row per rater with the kappas (empty on
// the diagonal and for undefined kappas). The shared items are in the
// pairs table (WritePairsCSV). See WriteItemsCSV for the conventions.
func WriteMatrixCSV(w io.Writer, m *raters.PairMatrix) error {
	if m == nil {
		return fmt.Errorf("reports: no pairwise matrix")
	}
	return writeCSV(w, (&xlsxWriter{}).matrixBlock(m))
}

// WritePairsCSV writes a row per pair of raters with a common item: Rater
// A, Rater B, Shared items, Kappa (under weights: unweighted, linear or
// quadratic), CI low, CI high.
func WritePairsCSV(w io.Writer, pairs []raters.CohenPair, weights string) error {
	return writeCSV(w, (&xlsxWriter{}).pairsBlock(pairs, weights))
}

// WriteItemAgreementCSV writes the per-item agreement rows in their order:
// Item, Labels, Agreement (empty with fewer than 2 labels).
func WriteItemAgreementCSV(w io.Writer, rows []raters.ItemAgreement) error {
	return writeCSV(w, (&xlsxWriter{}).itemAgreementBlock(rows))
}

// WriteRaterAgreementCSV writes the per-rater agreement rows: Rater,
// Labels, Shared items, Partners, Pairs, Agreement, Mean pairwise kappa,
// Pooled kappa.
func WriteRaterAgreementCSV(w io.Writer, rows []raters.RaterAgreement) error {
	return writeCSV(w, (&xlsxWriter{}).raterAgreementBlock(rows))
}
