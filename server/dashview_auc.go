package server

import (
	"sort"

	"concord/multirater"
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
	Fit          *multirater.AUCFit
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
// other fits).
func aucRanking(res *multirater.FitResult, max int) *aucView {
	if res.Model.Shape() != multirater.OutputRanking || res.AUC == nil {
		return nil
	}
	v := &aucView{Fit: res.AUC, Coefficients: res.Coefficients}
	if res.TrainAUC != nil {
		v.TrainAUC, v.HasTrainAUC = *res.TrainAUC, true
	}
	if le := res.Diagnostics.LogEvidence; le != nil {
		v.LogEvidence = *le
	}
	if se := res.Diagnostics.LogEvidenceSE; se != nil {
		v.LogEviSE, v.HasSE = *se, true
	}
	idx := make([]int, 0, len(res.Items))
	for i := range res.Items {
		if res.Items[i].Score != nil {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool {
		return res.Items[idx[a]].Score.Mean > res.Items[idx[b]].Score.Mean
	})
	negative := "not " + res.AUC.Positive
	for _, l := range res.Levels {
		if l != res.AUC.Positive {
			negative = l
		}
	}
	for k, i := range idx {
		if len(v.Rows) == max {
			v.Truncated = len(idx) - max
			break
		}
		it := &res.Items[i]
		r := aucRow{Rank: k + 1, ID: it.ID, Score: it.Score.Mean, SD: it.Score.SD, NLabels: it.NLabels, Predicted: it.Positive == nil}
		if it.Positive != nil {
			r.Positive = *it.Positive
			r.Label = negative
			if r.Positive {
				r.Label = res.AUC.Positive
			}
		}
		v.Rows = append(v.Rows, r)
	}
	return v
}
