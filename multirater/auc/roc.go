package auc

import (
	"fmt"
	"sort"
)

// ROCPoint is one point of an ROC curve: the false and true positive rates
// of the rule "positive when the score is at least Threshold".
type ROCPoint struct {
	Threshold float64 `json:"threshold"`
	FPR       float64 `json:"fpr"`
	TPR       float64 `json:"tpr"`
}

// AUC returns the area under the ROC curve of the scores for the labels,
// the Mann-Whitney statistic
//
//	AUC = 1/(n+ n-) sum_{i positive, j negative} (1{s_i > s_j} + 1/2 1{s_i = s_j}),
//
// one minus Ridgway et al.'s empirical AUC risk (sec. 2.1, counting ties
// as half) in O(N log N). It panics when the lengths differ and returns
// NaN when a class is empty.
func AUC(score []float64, positive []bool) float64 {
	if len(score) != len(positive) {
		panic(fmt.Sprintf("auc: AUC: %d scores and %d labels", len(score), len(positive)))
	}
	idx := make([]int, len(score))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return score[idx[a]] < score[idx[b]] })
	// Walk up the scores in blocks of ties: each positive beats the
	// negatives below its block and ties half of those in it.
	var np, nn, below float64
	var sum float64
	tieBlocks(idx, score, positive, func(_ int, bp, bn float64) {
		sum += bp * (below + 0.5*bn)
		below += bn
		np += bp
		nn += bn
	})
	return sum / (np * nn)
}

// tieBlocks walks the scores in the order idx in blocks of ties, calling
// block with each block's first place in idx and its numbers of positives
// and negatives.
func tieBlocks(idx []int, score []float64, positive []bool, block func(lo int, bp, bn float64)) {
	for lo := 0; lo < len(idx); {
		hi := lo
		var bp, bn float64
		for hi < len(idx) && score[idx[hi]] == score[idx[lo]] {
			if positive[idx[hi]] {
				bp++
			} else {
				bn++
			}
			hi++
		}
		block(lo, bp, bn)
		lo = hi
	}
}

// ROC returns the ROC curve of the scores, from (0, 0) to (1, 1), one point
// per distinct score (thresholds descending); nil for no scores.
func ROC(score []float64, positive []bool) []ROCPoint {
	if len(score) != len(positive) {
		panic(fmt.Sprintf("auc: ROC: %d scores and %d labels", len(score), len(positive)))
	}
	idx := make([]int, len(score))
	for i := range idx {
		idx[i] = i
	}
	if len(idx) == 0 {
		return nil
	}
	sort.Slice(idx, func(a, b int) bool { return score[idx[a]] > score[idx[b]] })
	var np, nn float64
	for _, p := range positive {
		if p {
			np++
		} else {
			nn++
		}
	}
	pts := []ROCPoint{{Threshold: score[idx[0]] + 1, FPR: 0, TPR: 0}}
	var tp, fp float64
	tieBlocks(idx, score, positive, func(lo int, bp, bn float64) {
		tp += bp
		fp += bn
		pts = append(pts, ROCPoint{Threshold: score[idx[lo]], FPR: fp / nn, TPR: tp / np})
	})
	return pts
}
