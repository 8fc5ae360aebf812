package reports

import "sort"

// ReviewRow is one label of the review queue (Review): the label, its
// probability under the model and whether it is flagged (Flag), with what
// a coordinator needs to judge it without another sheet: the item's text
// (when the report has texts), its consensus and the consensus's
// probability, its observed agreement (the share of its labels equal to
// the majority label) and how many raters labelled it.
type ReviewRow struct {
	Flag
	Text          string
	ConsensusProb Number
	MajorityShare Number
	NRaters       int
}

// Review returns the labels to look at first: every flagged label and the
// least probable other labels (Report.Lowest), by increasing probability
// (ties by item position, then rater). Where nothing is flagged it is
// still the LowestLabels least probable labels, so a fit always has a
// review queue. Reports of values list their flagged ratings only (the fit
// keeps no probability of the other ratings).
func Review(rep *Report) []ReviewRow {
	flags := flagRows(rep)
	byID := make(map[string]*Item, len(rep.Items))
	for i := range rep.Items {
		byID[rep.Items[i].ID] = &rep.Items[i]
	}
	out := make([]ReviewRow, len(flags))
	for i, f := range flags {
		r := ReviewRow{Flag: f, ConsensusProb: nan, MajorityShare: nan}
		if it := byID[f.Item]; it != nil {
			r.Text, r.ConsensusProb, r.MajorityShare, r.NRaters = it.Text, it.Prob, it.MajorityShare, it.NRaters
		}
		out[i] = r
	}
	return out
}

// flagRows returns every flagged label, then the least probable other
// labels (Report.Lowest), by probability, then item position, then rater.
func flagRows(rep *Report) []Flag {
	rows := append([]Flag(nil), rep.Flags...)
	seen := make(map[[2]string]bool, len(rows))
	for _, f := range rows {
		seen[[2]string{f.Item, f.Rater}] = true
	}
	extra := 0
	for _, f := range rep.Lowest {
		if !seen[[2]string{f.Item, f.Rater}] {
			rows = append(rows, f)
			extra++
		}
	}
	if extra > 0 {
		sort.SliceStable(rows, func(i, j int) bool {
			a, b := &rows[i], &rows[j]
			if a.Prob != b.Prob {
				return a.Prob < b.Prob
			}
			if a.Position != b.Position {
				return a.Position < b.Position
			}
			return a.Rater < b.Rater
		})
	}
	return rows
}
