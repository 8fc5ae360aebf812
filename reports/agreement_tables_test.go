package reports

import (
	"bytes"
	"math"
	"strconv"
	"testing"

	"concord/raters"
)

// checkAgreementTables checks the Agreement matrix, Item agreement and
// Rater agreement sheets of a workbook against the report.
func checkAgreementTables(b *book, c reportCase) {
	a := c.rep.Agreement
	if a.Kappa != nil {
		rows := b.rows(SheetAgreementMatrix)
		n := len(a.Kappa.Raters)
		// Title, header, n kappa rows, blank, title, header, n rows of counts.
		if len(rows) < 2*n+5 || at(rows[1], 1) != a.Kappa.Raters[0] {
			b.t.Fatalf("Agreement matrix: %d rows for %d raters: %q", len(rows), n, rows[:min(3, len(rows))])
		}
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				b.number("kappa "+a.Kappa.Raters[i]+"-"+a.Kappa.Raters[j], at(rows[2+i], 1+j), float64(a.Kappa.Values[i][j]))
				if got := at(rows[2+n+3+i], 1+j); got != strconv.Itoa(a.Kappa.N[i][j]) {
					b.t.Errorf("shared items %s-%s: %q, want %d", a.Kappa.Raters[i], a.Kappa.Raters[j], got, a.Kappa.N[i][j])
				}
			}
		}
	}
	rows := b.rows(SheetItemAgreement)
	b.headers(SheetItemAgreement, rows[0], "Item", "Labels", "Agreement")
	if len(a.ItemAgreement) == 0 || len(rows) < len(a.ItemAgreement)+1 {
		b.t.Fatalf("Item agreement: %d rows for %d items", len(rows), len(a.ItemAgreement))
	}
	prev := math.Inf(-1)
	for i, it := range a.ItemAgreement {
		if at(rows[i+1], 0) != it.Item {
			b.t.Fatalf("Item agreement row %d: %q, want %q", i+2, at(rows[i+1], 0), it.Item)
		}
		b.number("agreement of "+it.Item, at(rows[i+1], 2), float64(it.Agreement))
		if v := float64(it.Agreement); !math.IsNaN(v) {
			if v < prev {
				b.t.Fatalf("Item agreement not sorted lowest first at row %d", i+2)
			}
			prev = v
		}
	}
	rows = b.rows(SheetRaterAgreement)
	b.headers(SheetRaterAgreement, rows[0], "Rater", "Labels", "Shared items", "Partners", "Pairs", "Agreement", "Mean pairwise kappa", "Pooled kappa")
	for i, r := range a.RaterAgreement {
		b.rowOf(SheetRaterAgreement, i, rows[i+1], r.Rater)
		b.number("pooled kappa of "+r.Rater, at(rows[i+1], 7), float64(r.PooledKappa))
	}
}

// TestAgreementCSV: the CSV writers of the agreement tables.
func TestAgreementCSV(t *testing.T) {
	r := raters.NewRatings(3, 2, 2)
	for i, row := range [][2]float64{{0, 0}, {0, 1}, {1, 1}} {
		r.Add(i, 0, row[0])
		r.Add(i, 1, row[1])
	}
	rep, err := raters.Analyze(r, raters.Options{Bootstrap: -1, RaterNames: []string{"a", "b"}, ItemNames: []string{"x", "y", "z"}})
	if err != nil {
		t.Fatal(err)
	}
	// kappa(a, b): po = 2/3, pe = 4/9 -> (2/3 - 4/9)/(5/9) = 0.4.
	m := writtenCSV(t, func(b *bytes.Buffer) error { return WriteMatrixCSV(b, rep.PairwiseMatrix) })
	if len(m) != 3 || m[0][1] != "a" || m[1][1] != "" || !approx(m[1][2], 0.4) || !approx(m[2][1], 0.4) {
		t.Errorf("matrix CSV %q", m)
	}
	p := writtenCSV(t, func(b *bytes.Buffer) error { return WritePairsCSV(b, rep.CohenKappa, "unweighted") })
	if len(p) != 2 || p[1][0] != "a" || p[1][1] != "b" || p[1][2] != "3" || !approx(p[1][3], 0.4) {
		t.Errorf("pairs CSV %q", p)
	}
	// The SE and the p-value of the test against 0 are the estimate's.
	e := rep.CohenKappa[0].Unweighted
	if len(p[0]) != 8 || p[0][6] != "SE" || p[0][7] != "p-value" || !approx(p[1][6], e.SE) || !approx(p[1][7], e.P) || !(e.P > 0 && e.P < 1) {
		t.Errorf("pairs CSV %q: SE and p-value of %+v", p, *e)
	}
	items := append([]raters.ItemAgreement(nil), rep.ItemAgreement...)
	raters.SortItemAgreement(items)
	it := writtenCSV(t, func(b *bytes.Buffer) error { return WriteItemAgreementCSV(b, items) })
	if len(it) != 4 || it[1][0] != "y" || it[1][2] != "0" || it[2][2] != "1" {
		t.Errorf("items CSV %q", it)
	}
	rs := writtenCSV(t, func(b *bytes.Buffer) error { return WriteRaterAgreementCSV(b, rep.RaterAgreement) })
	if len(rs) != 3 || rs[1][0] != "a" || rs[1][4] != "3" || !approx(rs[1][6], 0.4) || !approx(rs[1][7], 0.4) {
		t.Errorf("raters CSV %q", rs)
	}
	if err := WriteMatrixCSV(&bytes.Buffer{}, nil); err == nil {
		t.Error("no matrix: no error")
	}
}

func approx(s string, want float64) bool {
	v, err := strconv.ParseFloat(s, 64)
	return err == nil && math.Abs(v-want) < 1e-12
}
