package reports

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"concord/annotations"
	"concord/multirater"
)

// TestWorkbook writes the workbook of every report, reads it back with
// excelize and checks the sheets, headers, cell types and values against
// the fit result the report was built from.
func TestWorkbook(t *testing.T) {
	for _, c := range allCases(t) {
		t.Run(c.name, func(t *testing.T) {
			w := openBook(t, c.rep, XLSXOptions{})
			f := w.f
			if got, want := strings.Join(f.GetSheetList(), ","), strings.Join(SheetNames(c.rep, XLSXOptions{}), ","); got != want {
				t.Fatalf("sheets %s, want %s", got, want)
			}
			switch c.rep.Kind {
			case KindRanking:
				checkRanking(w, c)
			case KindValues:
				checkValueSummary(w, c)
				checkValueItems(w, c)
				checkValueRaters(w, c)
			default:
				checkSummary(w, c)
				checkItems(w, c)
				checkRaters(w, c)
			}
			switch c.rep.Kind {
			case KindOrdinal:
				checkThresholds(w, c)
			case KindClassification:
				checkClasses(w, c)
				if hasConfusionProbs(c.rep) {
					checkConfusionMatrices(w, c)
				}
			}
			if c.rep.Kind != KindRanking {
				checkAgreement(w, c)
				checkDiagnostics(w, c)
			}
			switch c.rep.Kind {
			case KindRanking:
			case KindValues:
				checkValueFlags(w, c)
			default:
				checkFlags(w, c)
			}
			if len(c.fit.LabelErrors) > 0 {
				checkLabelErrors(w, c)
			}
			pics, err := f.GetPictureCells(SheetCharts)
			if err != nil {
				t.Fatal(err)
			}
			if len(pics) != len(Plots(c.rep)) {
				t.Errorf("Charts: %d pictures, want %d", len(pics), len(Plots(c.rep)))
			}
		})
	}
}

// checkXML looks into the package: no formulas, no error values, and every
// sheet with data has its dimension and columns.
func checkXML(t *testing.T, b []byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`<f>|<f |t="e"|#REF!|#VALUE!|#DIV/0!|#NAME\?|#N/A|NaN|Inf<`)
	for _, zf := range zr.File {
		if !strings.HasPrefix(zf.Name, "xl/worksheets/sheet") {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if m := bad.Find(data); m != nil {
			i := bytes.Index(data, m)
			t.Errorf("%s: %q near %q", zf.Name, m, data[max(0, i-80):min(len(data), i+80)])
		}
	}
}

type book struct {
	t *testing.T
	f *excelize.File
}

// openBook writes the report's workbook with opts, checks its XML and
// opens it (closed when the test ends).
func openBook(t *testing.T, rep *Report, opts XLSXOptions) *book {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteXLSX(&buf, rep, opts); err != nil {
		t.Fatal(err)
	}
	checkXML(t, buf.Bytes())
	f, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &book{t: t, f: f}
}

// rows returns the raw cell values of a sheet.
func (b *book) rows(sheet string) [][]string {
	b.t.Helper()
	rows, err := b.f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		b.t.Fatal(err)
	}
	return rows
}

// header returns the index of each header of a row.
func header(row []string) map[string]int {
	m := map[string]int{}
	for i, h := range row {
		if _, dup := m[h]; !dup {
			m[h] = i
		}
	}
	return m
}

func at(row []string, i int) string {
	if i < len(row) {
		return row[i]
	}
	return ""
}

// number checks that a cell holds want (empty for NaN).
// tableRows returns the rows of a sheet that holds a header and n rows (a
// row an item or a rater of the fit), failing the test otherwise.
func (b *book) tableRows(sheet string, n int) [][]string {
	b.t.Helper()
	rows := b.rows(sheet)
	if len(rows) != n+1 {
		b.t.Fatalf("%s: %d rows, want %d", sheet, len(rows), n+1)
	}
	return rows
}

// eachItem checks that each row of the Items sheet (rows, header h) names
// an item of the fit and has its rank (the row's place), checks its
// raters' labels (what a label is called: label or rating) and calls
// check with the row and the item.
func (b *book) eachItem(c reportCase, rows [][]string, h map[string]int, label string, check func(row []string, id string, fi *FitItem)) {
	b.t.Helper()
	byID := map[string]*FitItem{}
	for i := range c.fit.Items {
		byID[c.fit.Items[i].ID] = &c.fit.Items[i]
	}
	for n, row := range rows[1:] {
		id := at(row, h["Item"])
		fi := byID[id]
		if fi == nil {
			b.t.Fatalf("Items row %d: unknown item %q", n+2, id)
		}
		b.number("Items rank", at(row, h["Rank"]), float64(n+1))
		check(row, id, fi)
		for _, r := range c.fit.Raters {
			if got, want := at(row, h[r.ID]), fi.Labels[r.ID]; got != want {
				b.t.Errorf("Items: %s rater %s %s %q, want %q", id, r.ID, label, got, want)
			}
		}
	}
}

// eachRater checks that each row of the Raters sheet (rows, header h)
// names its rater of the fit and has the rater's count of labels in column
// count, and calls check with the row and the rater.
func (b *book) eachRater(c reportCase, rows [][]string, h map[string]int, count string, check func(i int, row []string, r multirater.RaterResult)) {
	b.t.Helper()
	for i, r := range c.fit.Raters {
		row := rows[i+1]
		b.rowOf(SheetRaters, i, row, r.ID)
		b.number("Raters "+strings.ToLower(count)+" of "+r.ID, at(row, h[count]), float64(r.NLabels))
		check(i, row, r)
	}
}

// raterCellsNumeric checks that each rater's first label in the Items
// sheet (rows, header h) is a number cell.
func (b *book) raterCellsNumeric(c reportCase, rows [][]string, h map[string]int) {
	b.t.Helper()
	for _, r := range c.fit.Raters {
		for n, row := range rows[1:] {
			if at(row, h[r.ID]) != "" {
				b.cellType(SheetItems, h[r.ID], n+1, true)
				break
			}
		}
	}
}

func (b *book) number(where string, got string, want float64) {
	b.t.Helper()
	if math.IsNaN(want) || math.IsInf(want, 0) {
		if got != "" {
			b.t.Errorf("%s = %q, want an empty cell", where, got)
		}
		return
	}
	v, err := strconv.ParseFloat(got, 64)
	if err != nil || v != want {
		b.t.Errorf("%s = %q, want %v", where, got, want)
	}
}

// cellType checks the stored type of a cell: numbers have no type
// attribute (or "n"), text is an inline string.
func (b *book) cellType(sheet string, col, row int, number bool) {
	b.t.Helper()
	name, _ := excelize.CoordinatesToCellName(col+1, row+1)
	ct, err := b.f.GetCellType(sheet, name)
	if err != nil {
		b.t.Fatal(err)
	}
	if number && ct != excelize.CellTypeUnset && ct != excelize.CellTypeNumber {
		b.t.Errorf("%s!%s: type %v, want a number", sheet, name, ct)
	}
	if !number && ct != excelize.CellTypeInlineString && ct != excelize.CellTypeSharedString {
		b.t.Errorf("%s!%s: type %v, want text", sheet, name, ct)
	}
}

func (b *book) frozen(sheet string, rows int) {
	b.t.Helper()
	p, err := b.f.GetPanes(sheet)
	if err != nil {
		b.t.Fatal(err)
	}
	if !p.Freeze || p.YSplit != rows {
		b.t.Errorf("%s: panes %+v, want the first %d rows frozen", sheet, p, rows)
	}
}

func (b *book) filtered(sheet string) {
	b.t.Helper()
	for _, d := range b.f.GetDefinedName() {
		if d.Name == "_xlnm._FilterDatabase" && d.Scope == sheet {
			return
		}
	}
	b.t.Errorf("%s: no autofilter", sheet)
}

// table checks the head of a sheet's table: its first headers (want, in
// order), the header row frozen and the autofilter; it returns the index
// of each header.
func (b *book) table(sheet string, row []string, want ...string) map[string]int {
	b.t.Helper()
	b.headers(sheet, row, want...)
	b.frozen(sheet, 1)
	b.filtered(sheet)
	return header(row)
}

// absent checks that none of the columns names is in a sheet's header h,
// as why says.
func (b *book) absent(sheet string, h map[string]int, why string, names ...string) {
	b.t.Helper()
	for _, name := range names {
		if _, ok := h[name]; ok {
			b.t.Errorf("%s: column %q %s", sheet, name, why)
		}
	}
}

// rowOf checks that the table row i of a sheet (its row i+2, below the
// header: a row a rater, parameter...) begins with the name want.
func (b *book) rowOf(sheet string, i int, row []string, want string) {
	b.t.Helper()
	if at(row, 0) != want {
		b.t.Errorf("%s row %d: %q, want %q", sheet, i+2, at(row, 0), want)
	}
}

func (b *book) headers(sheet string, row []string, want ...string) {
	b.t.Helper()
	for i, h := range want {
		if at(row, i) != h {
			b.t.Errorf("%s: header %d is %q, want %q (row %q)", sheet, i+1, at(row, i), h, row)
			return
		}
	}
}

// summary returns the Summary sheet's values by their names (column A).
func (b *book) summary() map[string]string {
	b.t.Helper()
	kv := map[string]string{}
	for _, r := range b.rows(SheetSummary) {
		if len(r) >= 2 {
			kv[r[0]] = r[1]
		}
	}
	return kv
}

func checkSummary(b *book, c reportCase) {
	kv := b.summary()
	if kv["Project"] != c.rep.Project.Name {
		b.t.Errorf("Summary: project %q, want %q", kv["Project"], c.rep.Project.Name)
	}
	b.number("Summary seed", kv["Seed"], float64(c.fit.Model.Seed))
	b.number("Summary items", kv["Items"], float64(len(c.fit.Items)))
	b.number("Summary raters", kv["Raters"], float64(len(c.fit.Raters)))
	conv := kv["Convergence"]
	if deterministic(c.fit.Model) {
		// EP: no chains or R-hat; the engine and its evidence.
		if _, ok := kv["Chains"]; ok || kv["Engine"] != c.fit.Model.Engine {
			b.t.Errorf("Summary of an %s fit: chains %q, engine %q", c.fit.Model.Engine, kv["Chains"], kv["Engine"])
		}
		if c.fit.Diagnostics.Converged != strings.HasPrefix(conv, "The approximation has converged") {
			b.t.Errorf("Summary: convergence %q for converged = %v", conv, c.fit.Diagnostics.Converged)
		}
		if le := c.fit.Diagnostics.LogEvidence; le != nil {
			b.number("Summary log evidence", kv["Log evidence"], *le)
		}
		return
	}
	b.number("Summary chains", kv["Chains"], float64(c.fit.Model.Chains))
	b.number("Summary max R-hat", kv["Max split R-hat"], c.fit.Diagnostics.MaxRhat)
	if c.fit.Diagnostics.Converged != strings.HasPrefix(conv, "The chains have converged") || !strings.Contains(conv, "R-hat") {
		b.t.Errorf("Summary: convergence %q for converged = %v", conv, c.fit.Diagnostics.Converged)
	}
}

func checkItems(b *book, c reportCase) {
	rows := b.tableRows(SheetItems, len(c.fit.Items))
	h := b.table(SheetItems, rows[0], "Rank", "Item")
	cons := "Consensus class"
	if c.rep.Kind == KindOrdinal {
		cons = "Consensus grade"
	}
	for _, name := range []string{cons, "Probability", "Entropy (bits)", "Labels", "Flags"} {
		if _, ok := h[name]; !ok {
			b.t.Errorf("Items: no column %q in %q", name, rows[0])
		}
	}
	for _, r := range c.fit.Raters {
		if _, ok := h[r.ID]; !ok {
			b.t.Errorf("Items: no column for rater %q", r.ID)
		}
	}
	numeric := numericLevels(c.rep)
	prevRank := math.Inf(-1)
	b.eachItem(c, rows, h, "label", func(row []string, id string, fi *FitItem) {
		if fi.Score != nil {
			b.number("Items score of "+id, at(row, h["Score"]), fi.Score.Mean)
			b.number("Items score 2.5% of "+id, at(row, h["Score 2.5%"]), fi.Score.Q025)
			b.number("Items score 97.5% of "+id, at(row, h["Score 97.5%"]), fi.Score.Q975)
		}
		if fi.Rank != nil {
			b.number("Items mean rank of "+id, at(row, h["Mean rank"]), fi.Rank.Mean)
			// Classification reports are in order of the consensus
			// probability (a robust fit's items also have ranks).
			if fi.Rank.Mean < prevRank && c.rep.Kind != KindClassification {
				b.t.Errorf("Items: %s has mean rank %v after %v: not in consensus order", id, fi.Rank.Mean, prevRank)
			}
			prevRank = fi.Rank.Mean
		}
		want := fi.Grade
		if c.rep.Kind == KindClassification {
			want = fi.Class
		}
		if got := at(row, h[cons]); got != want {
			b.t.Errorf("Items: %s consensus %q, want %q", id, got, want)
		}
		b.number("Items labels of "+id, at(row, h["Labels"]), float64(fi.NLabels))
		for ci, l := range c.fit.Levels {
			p := math.NaN()
			if fi.ClassProbs != nil {
				p = fi.ClassProbs[ci]
			} else if fi.GradeProbs != nil {
				p = fi.GradeProbs[l]
			}
			if !math.IsNaN(p) {
				b.number("Items P("+l+") of "+id, at(row, h["P("+l+")"]), p)
			}
		}
	})
	b.cellType(SheetItems, h["Item"], 1, false)
	b.cellType(SheetItems, h["Rank"], 1, true)
	b.cellType(SheetItems, h["Probability"], 1, true)
	if w, _ := b.f.GetColWidth(SheetItems, "B"); w < 6 {
		b.t.Errorf("Items: column B width %v", w)
	}
	if numeric {
		b.raterCellsNumeric(c, rows, h)
	}
}

func checkRaters(b *book, c reportCase) {
	rows := b.tableRows(SheetRaters, len(c.fit.Raters))
	h := b.table(SheetRaters, rows[0], "Rater", "Labels", "Reference", "Precision", "Precision SD", "Precision 2.5%", "Precision 50%", "Precision 97.5%",
		"Variance", "Variance SD", "Variance 2.5%", "Variance 50%", "Variance 97.5%")
	b.eachRater(c, rows, h, "Labels", func(i int, row []string, r multirater.RaterResult) {
		b.number("Raters precision of "+r.ID, at(row, h["Precision"]), r.Precision.Mean)
		b.number("Raters precision 97.5% of "+r.ID, at(row, h["Precision 97.5%"]), r.Precision.Q975)
		b.number("Raters variance of "+r.ID, at(row, h["Variance"]), r.Variance.Mean)
		if len(r.Thresholds) > 0 {
			b.number("Raters severity of "+r.ID, at(row, h["Severity"]), r.Severity)
		}
		if r.Accuracy != nil {
			b.number("Raters accuracy of "+r.ID, at(row, h["Accuracy"]), r.Accuracy.Mean)
			b.number("Raters accuracy 2.5% of "+r.ID, at(row, h["Accuracy 2.5%"]), r.Accuracy.Q025)
			b.number("Raters spam score of "+r.ID, at(row, h["Spam score"]), *r.SpamScore)
			if want := map[bool]string{true: "yes", false: ""}[r.Spammer]; at(row, h["Spammer"]) != want && !(want == "" && at(row, h["Spammer"]) == "no") {
				b.t.Errorf("Raters spammer of %s: %q", r.ID, at(row, h["Spammer"]))
			}
		}
		for ci, l := range c.fit.Levels {
			if r.LevelCounts != nil {
				b.number("Raters count "+l+" of "+r.ID, at(row, h["Labels "+l]), float64(r.LevelCounts[ci]))
			}
		}
		b.cellType(SheetRaters, h["Precision"], i+1, true)
	})
	checkSkills(b, c, rows)
}

// checkSkills checks the Raters sheet's columns of the aggregators' own
// rater parameters (Wawa's weight, GLAD's ability, MACE's competence)
// against the report.
func checkSkills(b *book, c reportCase, rows [][]string) {
	h := header(rows[0])
	if c.rep.Agreement == nil {
		return
	}
	for _, a := range c.rep.Agreement.Aggregators {
		for i, r := range c.rep.Raters {
			q, ok := r.Baselines[a.Name]
			if !ok || q.Skill == nil {
				continue
			}
			name := map[string]string{"wawa": "Wawa weight", "glad": "GLAD ability", "mace": "MACE competence",
				"zero_based_skill": "Zero-Based Skill skill", "kos": "KOS reliability", "mmsr": "M-MSR log-odds", "gold_majority": "gold majority vote gold accuracy"}[a.Name]
			col, ok := h[name]
			if !ok {
				b.t.Errorf("Raters: no column %q", name)
				break
			}
			b.number("Raters "+name+" of "+r.ID, at(rows[i+1], col), float64(*q.Skill))
		}
	}
}

func checkThresholds(b *book, c reportCase) {
	rows := b.rows(SheetThresholds)
	b.table(SheetThresholds, rows[0], "Rater", "Threshold", "Between levels", "Mean", "SD", "2.5%", "50%", "97.5%", "Fixed")
	i := 1
	for _, r := range c.fit.Raters {
		for j, th := range r.Thresholds {
			row := rows[i]
			if at(row, 0) != r.ID {
				b.t.Errorf("Thresholds row %d: rater %q, want %q", i+1, at(row, 0), r.ID)
			}
			b.number("Thresholds index", at(row, 1), float64(j+1))
			b.number("Thresholds mean of "+r.ID, at(row, 3), th.Mean)
			b.number("Thresholds 2.5% of "+r.ID, at(row, 5), th.Q025)
			if want := th.Between[0] + " | " + th.Between[1]; at(row, 2) != want {
				b.t.Errorf("Thresholds: between %q, want %q", at(row, 2), want)
			}
			i++
		}
	}
}

func checkClasses(b *book, c reportCase) {
	rows := b.rows(SheetClasses)
	b.headers(SheetClasses, rows[0], "Class", "Name", "Labels", "Share of labels", "Consensus items", "Share of items", "Mean probability", "Gold items")
	b.frozen(SheetClasses, 1)
	// Label counts from the fit.
	counts := map[string]int{}
	cons := map[string]int{}
	total := 0
	for _, it := range c.fit.Items {
		for _, v := range it.Labels {
			counts[v]++
			total++
		}
		if it.Class != "" {
			cons[it.Class]++
		}
	}
	for i, l := range c.fit.Levels {
		row := rows[i+1]
		b.rowOf(SheetClasses, i, row, l)
		b.number("Classes labels of "+l, at(row, 2), float64(counts[l]))
		b.number("Classes consensus of "+l, at(row, 4), float64(cons[l]))
	}
	// Every rater has a confusion table whose total is their labels on
	// items with a consensus.
	for _, r := range c.fit.Raters {
		want := 0
		for _, it := range c.fit.Items {
			if _, ok := it.Labels[r.ID]; ok && it.Class != "" {
				want++
			}
		}
		found := false
		for i, row := range rows {
			if strings.HasPrefix(at(row, 0), "Rater "+r.ID+":") {
				found = true
				got := 0
				for k := range c.fit.Levels {
					v, _ := strconv.Atoi(at(rows[i+2+k], len(c.fit.Levels)+1))
					got += v
				}
				if got != want {
					b.t.Errorf("Classes: confusion of %s totals %d, want %d", r.ID, got, want)
				}
			}
		}
		if !found {
			b.t.Errorf("Classes: no confusion table for %s", r.ID)
		}
	}
}

func checkAgreement(b *book, c reportCase) {
	rows := b.rows(SheetAgreement)
	a := c.rep.Agreement
	if a == nil {
		if len(rows) == 0 || !strings.HasPrefix(at(rows[0], 0), "No agreement analysis") {
			b.t.Errorf("Agreement without analysis: %q", rows)
		}
		return
	}
	b.table(SheetAgreement, rows[0], "Coefficient", "Key", "Variant", "Value", "SE", "CI low", "CI high", "CI method")
	for i, co := range a.Coefficients {
		row := rows[i+1]
		b.rowOf(SheetAgreement, i, row, co.Label)
		b.number("Agreement value of "+co.Label, at(row, 3), float64(co.Value))
		b.number("Agreement CI low of "+co.Label, at(row, 5), float64(co.CILow))
	}
	checkAgreementTables(b, c)
	if a.Kappa != nil {
		cfs, err := b.f.GetConditionalFormats(SheetAgreementMatrix)
		if err != nil {
			b.t.Fatal(err)
		}
		scale := false
		for _, fs := range cfs {
			for _, f := range fs {
				scale = scale || f.Type == "3_color_scale"
			}
		}
		if !scale {
			b.t.Errorf("Agreement: no colour scale on the kappa matrix (%v)", cfs)
		}
	}
}

func checkDiagnostics(b *book, c reportCase) {
	rows := b.rows(SheetDiagnostics)
	b.headers(SheetDiagnostics, rows[0], "Parameter", "Group", "Mean", "SD", "R-hat", "Bulk ESS", "Tail ESS", "Over the limits", "", "Group")
	b.frozen(SheetDiagnostics, 1)
	ps := c.fit.Diagnostics.Parameters
	for i, p := range ps {
		row := rows[i+1]
		b.rowOf(SheetDiagnostics, i, row, p.Name)
		b.number("Diagnostics R-hat of "+p.Name, at(row, 4), p.Rhat)
		b.number("Diagnostics bulk ESS of "+p.Name, at(row, 5), p.ESSBulk)
		over := !(p.Rhat < c.rep.Diagnostics.LimitRhat) || !(p.ESSBulk >= c.rep.Diagnostics.LimitESS)
		if over != (at(row, 7) != "") {
			b.t.Errorf("Diagnostics: %s over the limits %q, want %v", p.Name, at(row, 7), over)
		}
	}
	if len(ps) > 0 {
		b.filtered(SheetDiagnostics)
		cfs, err := b.f.GetConditionalFormats(SheetDiagnostics)
		if err != nil {
			b.t.Fatal(err)
		}
		if len(cfs) < 2 {
			b.t.Errorf("Diagnostics: conditional formats %v, want R-hat and ESS flags", cfs)
		}
	}
}

func checkFlags(b *book, c reportCase) {
	rows := b.rows(SheetFlags)
	b.table(SheetFlags, rows[0], "Item", "Rater", "Label", "Probability", "Flagged", "Expected", "Item consensus", "Item position")
	// Every flag of the fit is a row marked flagged.
	for _, fl := range c.fit.Flags {
		found := false
		for _, row := range rows[1:] {
			if at(row, 0) == fl.Item && at(row, 1) == fl.Rater {
				found = true
				if at(row, 2) != fl.Label || at(row, 4) != "yes" {
					b.t.Errorf("Flags: %q, want label %s flagged", row, fl.Label)
				}
				b.number("Flags probability", at(row, 3), fl.Prob)
			}
		}
		if !found {
			b.t.Errorf("Flags: no row for %s/%s", fl.Item, fl.Rater)
		}
	}
	// The probabilities of the other rows are the raters' predictive
	// probabilities of their labels, in increasing order.
	byID := map[string]*FitItem{}
	for i := range c.fit.Items {
		byID[c.fit.Items[i].ID] = &c.fit.Items[i]
	}
	prev := math.Inf(-1)
	for _, row := range rows[1:] {
		if at(row, 0) == "" || strings.Contains(at(row, 0), " ") {
			break // the note
		}
		p, err := strconv.ParseFloat(at(row, 3), 64)
		if err != nil || p < prev {
			b.t.Errorf("Flags: probability %q after %v", at(row, 3), prev)
		}
		prev = p
		if at(row, 4) == "no" {
			fi := byID[at(row, 0)]
			probs := fi.RaterGradeProbs[at(row, 1)]
			if probs == nil {
				probs = fi.RaterClassProbs[at(row, 1)]
			}
			if probs == nil { // robust: the probability that the label is right
				for _, le := range c.fit.LabelErrors {
					if le.Item == at(row, 0) && le.Rater == at(row, 1) {
						b.number("Flags probability of "+at(row, 0), at(row, 3), 1-le.PError)
					}
				}
				continue
			}
			b.number("Flags probability of "+at(row, 0), at(row, 3), probs[indexOf(c.fit.Levels, fi.Labels[at(row, 1)])])
		}
	}
}

// TestWorkbookControlCharacters checks that ids with characters XML cannot
// hold (possible in a hand-edited result file) do not break the workbook:
// they become U+FFFD (encoding/xml's escaping, which excelize uses).
func TestWorkbookControlCharacters(t *testing.T) {
	fit := degenerateClassCase(t).fit
	fit.Items[0].ID = "a\x01b"
	fit.Items[0].Labels = map[string]string{"r\x02": "b"}
	fit.Raters[0].ID = "r\x02"
	rep, err := BuildFit(annotations.Project{Name: "p\x03"}, fit, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := openBook(t, rep, XLSXOptions{}).f.GetRows(SheetItems)
	if err != nil {
		t.Fatal(err)
	}
	if got := rows[1][1]; got != "a\uFFFDb" {
		t.Errorf("item id %q", got)
	}
	if h := rows[0][len(rows[0])-1]; h != "r\uFFFD" {
		t.Errorf("rater header %q", h)
	}
}

// checkConfusionMatrices reads the Confusion matrices sheet back: the
// table of raters (most labels first) with accuracy, spam score and
// spammer mark, and each rater's block of mean probabilities and
// interval texts, against the fit.
func checkConfusionMatrices(b *book, c reportCase) {
	rows := b.rows(SheetConfusion)
	fr := map[string]*multirater.RaterResult{}
	for i := range c.fit.Raters {
		fr[c.fit.Raters[i].ID] = &c.fit.Raters[i]
	}
	k := len(c.fit.Levels)
	// rows[0] is the title, rows[1] the header, then one row per rater.
	h := header(rows[1])
	b.headers(SheetConfusion, rows[1], "Rater", "Labels", "Accuracy", "Accuracy 2.5%", "Accuracy 97.5%", "Spam score", "Spammer")
	n := len(c.fit.Raters)
	prev := math.MaxInt
	for i := 0; i < n; i++ {
		row := rows[2+i]
		r := fr[at(row, 0)]
		if r == nil {
			b.t.Fatalf("Confusion matrices row %d: rater %q", i+3, at(row, 0))
		}
		if r.NLabels > prev {
			b.t.Errorf("Confusion matrices: %s (%d labels) after a rater with %d", r.ID, r.NLabels, prev)
		}
		prev = r.NLabels
		b.number("Confusion accuracy of "+r.ID, at(row, h["Accuracy"]), r.Accuracy.Mean)
		b.number("Confusion accuracy 97.5% of "+r.ID, at(row, h["Accuracy 97.5%"]), r.Accuracy.Q975)
		b.number("Confusion spam score of "+r.ID, at(row, h["Spam score"]), *r.SpamScore)
		if r.Spammer != (at(row, h["Spammer"]) == "yes") {
			b.t.Errorf("Confusion matrices: %s spammer %q, the fit says %v", r.ID, at(row, h["Spammer"]), r.Spammer)
		}
		b.number("Confusion most confused of "+r.ID, at(row, h["Most confused: probability"]), r.MostConfused.Prob)
	}
	// Each block: a blank row, the title, the header, k rows.
	at0 := 2 + n
	for i := 0; i < n; i++ {
		for at0 < len(rows) && len(rows[at0]) == 0 {
			at0++
		}
		title := at(rows[at0], 0)
		id := strings.TrimPrefix(strings.SplitN(title, " (", 2)[0], "Rater ")
		r := fr[id]
		if r == nil {
			b.t.Fatalf("Confusion matrices: block title %q", title)
		}
		if r.Spammer != strings.Contains(title, "SPAMMER") {
			b.t.Errorf("Confusion matrices: title %q, spammer %v", title, r.Spammer)
		}
		b.headers(SheetConfusion, rows[at0+1], "True class \\ label", c.fit.Levels[0])
		for ki := 0; ki < k; ki++ {
			row := rows[at0+2+ki]
			if at(row, 0) != c.fit.Levels[ki] {
				b.t.Errorf("Confusion matrices %s row %d: %q", id, ki, at(row, 0))
			}
			for j := 0; j < k; j++ {
				e := r.ConfusionProbs[ki][j]
				b.number(fmt.Sprintf("Confusion %s [%d][%d]", id, ki, j), at(row, 1+j), e.Mean)
				if want := fmt.Sprintf("%.2f (%.2f-%.2f)", e.Mean, e.Q025, e.Q975); at(row, 1+k+j) != want {
					b.t.Errorf("Confusion %s [%d][%d] text %q, want %q", id, ki, j, at(row, 1+k+j), want)
				}
			}
			b.cellType(SheetConfusion, 1, at0+2+ki, true)
		}
		at0 += 2 + k
	}
}

// checkRanking checks the sheets of a ranking report (the AUC model): the
// items by decreasing score with their label, gamma's settings and the ROC
// curve's points, and the coefficients.
func checkRanking(b *book, c reportCase) {
	summary := map[string]string{}
	for _, r := range b.rows(SheetSummary) {
		if len(r) >= 2 {
			summary[r[0]] = r[1]
		}
	}
	if summary["Scores"] != c.fit.AUC.Scores || summary["Positive class"] != c.fit.AUC.Positive || summary["Training AUC"] == "" {
		b.t.Errorf("Summary: scores %q, positive class %q, training AUC %q", summary["Scores"], summary["Positive class"], summary["Training AUC"])
	} else {
		b.number("Summary training AUC", summary["Training AUC"], *c.fit.TrainAUC)
	}
	rows := b.rows(SheetRanking)
	b.headers(SheetRanking, rows[0], "Rank", "Item", "Score mean", "Score SD", "2.5%", "97.5%", "Label (majority)", "Positive")
	b.frozen(SheetRanking, 1)
	n := len(c.fit.Items)
	if len(rows) < n+1 {
		b.t.Fatalf("Ranking: %d rows for %d items", len(rows), n)
	}
	byID := map[string]*FitItem{}
	for i := range c.fit.Items {
		byID[c.fit.Items[i].ID] = &c.fit.Items[i]
	}
	prev := math.Inf(1)
	for i, row := range rows[1 : n+1] {
		if row[0] != strconv.Itoa(i+1) {
			b.t.Errorf("Ranking row %d: rank %q", i+2, row[0])
		}
		fi := byID[row[1]]
		if fi == nil || fi.Score == nil {
			b.t.Fatalf("Ranking row %d: item %q not in the fit", i+2, row[1])
		}
		b.number("Ranking score of "+row[1], row[2], fi.Score.Mean)
		b.number("Ranking sd of "+row[1], row[3], fi.Score.SD)
		if fi.Score.Mean > prev {
			b.t.Errorf("Ranking row %d: score %v above the row before (%v)", i+2, fi.Score.Mean, prev)
		}
		prev = fi.Score.Mean
		if want := fi.Positive != nil && *fi.Positive; (at(row, 7) == "yes") != want || at(row, 7) == "" {
			b.t.Errorf("Ranking row %d (%s): positive %q, the fit says %v", i+2, row[1], at(row, 7), want)
		}
	}
	all := strings.Join(flatten(rows[n+1:]), " ")
	if !strings.Contains(all, fmt.Sprintf("gamma %g", c.fit.AUC.Gamma)) || !strings.Contains(all, "False positive rate") {
		b.t.Errorf("Ranking: no gamma note or ROC table below the items: %.300s", all)
	}
	if len(c.fit.Coefficients) > 0 {
		crows := b.rows(SheetCoefficients)
		b.headers(SheetCoefficients, crows[0], "Covariate", "Mean", "SD", "2.5%", "97.5%", "Inclusion probability")
		for i, co := range c.fit.Coefficients {
			if crows[i+1][0] != co.Name {
				b.t.Errorf("Coefficients row %d: %q, want %q", i+2, crows[i+1][0], co.Name)
			}
			b.number("Coefficients mean of "+co.Name, crows[i+1][1], co.Mean)
		}
	}
}

func flatten(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}
