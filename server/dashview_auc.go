package server

import (
	"sort"

	"concord/multirater"
	"concord/reports"
)

// aucRow is one row of an AUC scoring fit's ranking table.
type aucRow struct {
	Rank      int
	ID        string
	Score, SD float64
	// Label is the item's label (the majority of its labels); Positive
	// whether it is the positive class; Predicted for items without one,
	// scored by prediction.
	Label     string
	Positive  bool
	Predicted bool
	NLabels   int
}

// aucView is what the fit page shows of an AUC scoring fit: the items by
// score (at most max rows), the coefficients, gamma's cross-validation and
// the candidate kernels.
type aucView struct {
	Fit          *reports.Ranking
	Rows         []aucRow
	Truncated    int
	Coefficients []multirater.Coefficient
	TrainAUC     float64
	HasTrainAUC  bool
	LogEvidence  float64
	LogEviSE     float64
	HasSE        bool
}

// aucRanking returns the fit page's view of an AUC scoring fit (nil for
// other fits): the report's ranking section and its items by score.
func aucRanking(rep *reports.Report, max int) *aucView {
	a := rep.Ranking
	if a == nil {
		return nil
	}
	v := &aucView{Fit: a, Coefficients: a.Coefficients, LogEvidence: orZero(a.LogEvidence)}
	if a.TrainAUC.Valid() {
		v.TrainAUC, v.HasTrainAUC = float64(a.TrainAUC), true
	}
	if se := numPtr(a.LogEvidenceSE); se != nil {
		v.LogEviSE, v.HasSE = *se, true
	}
	idx := make([]int, 0, len(rep.Items))
	for i := range rep.Items {
		if s := rep.Items[i].Score; s != nil && s.Mean.Valid() {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(x, y int) bool {
		return rep.Items[idx[x]].Score.Mean > rep.Items[idx[y]].Score.Mean
	})
	for k, i := range idx {
		if len(v.Rows) == max {
			v.Truncated = len(idx) - max
			break
		}
		it := &rep.Items[i]
		// The item's label is the majority of its labels; without one
		// (no labels, a tie) it was scored by prediction.
		labelled := it.Majority != "" && !it.MajorityTie
		v.Rows = append(v.Rows, aucRow{Rank: k + 1, ID: it.ID, Score: float64(it.Score.Mean), SD: float64(it.Score.SD),
			NLabels: it.NLabels, Predicted: !labelled, Label: it.Majority, Positive: labelled && it.Majority == a.Positive})
	}
	return v
}
