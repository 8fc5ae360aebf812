package reports

import (
	"fmt"
	"io"
	"math"

	"concord/raters"

	"github.com/xuri/excelize/v2"
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

// matrixBlock is a rater × rater matrix: a row per rater, a column per
// rater, the cells by at (blank for NaN); integer cells when integer.
func (x *xlsxWriter) matrixBlock(names []string, at func(i, j int) any, integer bool) *block {
	cols := []col{x.text("Rater")}
	for _, r := range names {
		if integer {
			cols = append(cols, x.integer(r))
		} else {
			cols = append(cols, x.num(r))
		}
	}
	n := len(names)
	return &block{cols: cols, n: n, firstColHeader: true,
		row: func(i int, dst []any) []any {
			dst = append(dst, names[i])
			for j := 0; j < n; j++ {
				dst = append(dst, at(i, j))
			}
			return dst
		}}
}

// kappaMatrixBlock is the matrix of pairwise kappas of m (blank on the
// diagonal and where a pair has no kappa).
func (x *xlsxWriter) kappaMatrixBlock(m *raters.PairMatrix) *block {
	return x.matrixBlock(m.Raters, func(i, j int) any { return float64(m.Kappa[i][j]) }, false)
}

// pairRow is one row of the pairs table.
type pairRow struct {
	a, b                    string
	n                       int
	kappa, low, high, se, p float64
}

// float is the number, NaN when it is absent.
func (n *Number) float() float64 {
	if n == nil {
		return math.NaN()
	}
	return float64(*n)
}

// pairsBlock lists the pairs of raters with a common item: their shared
// items and Cohen's kappa with its interval, standard error and the
// p-value of its test against 0.
func (x *xlsxWriter) pairsBlock(n int, row func(i int) pairRow) *block {
	return &block{
		cols: []col{x.text("Rater A"), x.text("Rater B"), x.integer("Shared items"), x.num("Kappa"), x.num("CI low"), x.num("CI high"), x.num("SE"), x.num("p-value")},
		n:    n, filter: true,
		row: func(i int, dst []any) []any {
			p := row(i)
			return append(dst, p.a, p.b, p.n, p.kappa, p.low, p.high, p.se, p.p)
		}}
}

// cohenPairsBlock is pairsBlock of the raters report's pairs under weights.
func (x *xlsxWriter) cohenPairsBlock(pairs []raters.CohenPair, weights string) *block {
	return x.pairsBlock(len(pairs), func(i int) pairRow {
		p := &pairs[i]
		e := PairEstimate(p, weights)
		return pairRow{p.A, p.B, p.N, e.Value, e.CILow, e.CIHigh, e.SE, e.P}
	})
}

// PairEstimate is the pair's kappa under the named weights (unweighted,
// linear or quadratic; undefined when it was not computed).
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
		return raters.Estimate{Value: n, CILow: n, CIHigh: n, SE: n, Pa: n, Pe: n, SENull: n, Z: n, P: n, ZNull: n, PNull: n}
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
	return writeCSV(w, (&xlsxWriter{}).kappaMatrixBlock(m))
}

// WritePairsCSV writes a row per pair of raters with a common item: Rater
// A, Rater B, Shared items, Kappa (under weights: unweighted, linear or
// quadratic), CI low, CI high, SE, p-value (of the test against 0).
func WritePairsCSV(w io.Writer, pairs []raters.CohenPair, weights string) error {
	return writeCSV(w, (&xlsxWriter{}).cohenPairsBlock(pairs, weights))
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

// agreementMatrix writes the Agreement matrix sheet: the pairwise kappas
// with a red-yellow-green colour scale, the shared items and the pairs
// with their intervals.
func (x *xlsxWriter) agreementMatrix() error {
	a := x.rep.Agreement
	km := a.Kappa
	if km == nil || len(km.Raters) == 0 {
		return x.writeBlocks(SheetAgreementMatrix, []*block{noteBlock("No pairwise kappas: no two raters labelled a common item.")})
	}
	n := len(km.Raters)
	kb := x.matrixBlock(km.Raters, func(i, j int) any { return float64(km.Values[i][j]) }, false)
	kb.title = fmt.Sprintf("Pairwise Cohen's kappa (%s weights for %s data); blank: the pair has no items in common", km.Weights, a.Level)
	kb.after = func(hdr, first, last int) error {
		return x.f.SetConditionalFormat(SheetAgreementMatrix, rangeRef(2, first, n+1, last), []excelize.ConditionalFormatOptions{{
			Type: "3_color_scale", Criteria: "=",
			MinType: "num", MinValue: "-1", MinColor: "#F8696B",
			MidType: "num", MidValue: "0", MidColor: "#FFEB84",
			MaxType: "num", MaxValue: "1", MaxColor: "#63BE7B",
		}})
	}
	nb := x.matrixBlock(km.Raters, func(i, j int) any { return km.N[i][j] }, true)
	nb.title = "Items both raters labelled (diagonal: the items the rater labelled)"
	pb := x.pairsBlock(len(a.Pairs), func(i int) pairRow {
		p := &a.Pairs[i]
		c, ok := p.Kappa[km.Weights]
		if !ok {
			nan := math.NaN()
			return pairRow{p.A, p.B, p.N, nan, nan, nan, nan, nan}
		}
		return pairRow{p.A, p.B, p.N, float64(c.Value), float64(c.CILow), float64(c.CIHigh), float64(c.SE), c.P.float()}
	})
	pb.title = fmt.Sprintf("Pairs of raters with a common item (Cohen's kappa, %s weights, with its interval)", km.Weights)
	pb.filter = false // one autofilter per sheet: none here
	return x.writeBlocks(SheetAgreementMatrix, []*block{kb, nb, pb})
}

// itemAgreement writes the Item agreement sheet: every labelled item,
// lowest agreement first.
func (x *xlsxWriter) itemAgreement() error {
	a := x.rep.Agreement
	if len(a.ItemAgreement)+1 > maxSheetRows-4 {
		return x.writeBlocks(SheetItemAgreement, []*block{noteBlock(fmt.Sprintf("%d items do not fit in a worksheet: the agreement endpoint's items table (CSV) has them all.", len(a.ItemAgreement)))})
	}
	nb := noteBlock("Agreement: " + a.AgreementScore + "; lowest first, blank with fewer than 2 labels.")
	return x.writeBlocks(SheetItemAgreement, []*block{x.itemAgreementBlock(a.ItemAgreement), nb})
}

// raterAgreement writes the Rater agreement sheet.
func (x *xlsxWriter) raterAgreement() error {
	a := x.rep.Agreement
	w := "unweighted"
	if a.Kappa != nil {
		w = a.Kappa.Weights
	}
	nb := noteBlock("Agreement: the mean of the per-item score's weights ("+a.AgreementScore+") over the rater's pairs of labels with the other raters.",
		"Mean pairwise kappa: the mean of the rater's Cohen's kappas with each partner ("+w+" weights); pooled kappa: Cohen's kappa of the rater's labels against every other rater's label of the same items.")
	return x.writeBlocks(SheetRaterAgreement, []*block{x.raterAgreementBlock(a.RaterAgreement), nb})
}
