package server

import (
	"math"

	"concord/reports"
)

// maxReviewRows: the labels of the review queue on a fit's page (the
// workbook's Review sheet has them all).
const maxReviewRows = 50

// reviewRow is one label of the review queue on a fit's page.
type reviewRow struct {
	reports.ReviewRow
	Text string // clipped
}

// reviewQueue returns the first limit labels of the report's review queue
// (reports.Review) and how many there are in all.
func reviewQueue(rep *reports.Report, limit int) ([]reviewRow, int) {
	all := reports.Review(rep)
	rows := make([]reviewRow, 0, min(limit, len(all)))
	for _, r := range all[:min(limit, len(all))] {
		rows = append(rows, reviewRow{ReviewRow: r, Text: clipText(r.Text, 140)})
	}
	return rows, len(all)
}

// headline is what the fit page shows of the report beside the model's
// own numbers, as `concord fit` and `concord demo` print them: the
// agreement coefficient to quote, the majority vote beside the consensus,
// the gold labels and the ROC AUC.
type headline struct {
	Alpha *reports.Coefficient
	// MajorityAgreement is the share of items whose majority vote is the
	// consensus; NaN without the agreement analysis.
	MajorityAgreement float64
	// GoldItems, GoldAccuracy: the items with a gold label and the share
	// whose consensus equals it; MajorityGold the same for the majority
	// vote, ties counted as half.
	GoldItems    int
	GoldAccuracy float64
	MajorityGold float64
	ROC          []reports.ROC
}

func newHeadline(rep *reports.Report) *headline {
	s := rep.Summary
	h := &headline{Alpha: s.Alpha, MajorityAgreement: float64(s.MajorityAgreement), GoldItems: s.GoldItems,
		GoldAccuracy: float64(s.GoldAccuracy), MajorityGold: math.NaN(), ROC: rep.ROC}
	if s.GoldItems > 0 {
		h.MajorityGold = reports.MajorityGoldAccuracy(rep)
	}
	return h
}

// glossFunc is the template function gloss: a number's explanation for a
// tooltip (reports.Gloss).
func glossFunc(key string) string { return reports.Gloss(key) }

// validNum reports whether v is a finite number (template function num).
func validNum(v any) bool {
	switch t := v.(type) {
	case float64:
		return !math.IsNaN(t) && !math.IsInf(t, 0)
	case reports.Number:
		return t.Valid()
	}
	return false
}

// glossaryFor returns the glossary entries that apply to a fit page:
// classification pages have no scores, severities or thresholds, pages of
// values no grades, classes or precisions, and only robust fits have error
// rates (template function glossary: page fields Classification, Values,
// ErrorRates).
func glossaryFor(classification, values, errorRates bool) []reports.GlossaryEntry {
	skip := map[string]bool{}
	switch {
	case classification:
		for _, k := range []string{"score", "rank", "severity", "thresholds", "dispersion", "bias"} {
			skip[k] = true
		}
	case values:
		for _, k := range []string{"consensus", "prob", "entropy", "majority", "majority_share", "item_agreement", "severity", "thresholds", "precision", "variance", "consensus_agreement", "error_rate", "p_error"} {
			skip[k] = true
		}
	default:
		for _, k := range []string{"dispersion", "bias"} {
			skip[k] = true
		}
	}
	if !errorRates {
		skip["error_rate"], skip["p_error"] = true, true
	}
	var out []reports.GlossaryEntry
	for _, g := range reports.Glossary() {
		if !skip[g.Key] {
			out = append(out, g)
		}
	}
	return out
}
