// Package mcmctest holds helpers for testing the samplers of the model
// families.
package mcmctest

import (
	"sort"

	"gonum.org/v1/gonum/stat"
)

// Spearman returns Spearman's rank correlation of x and y.
func Spearman(x, y []float64) float64 {
	rank := func(v []float64) []float64 {
		idx := make([]int, len(v))
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
		r := make([]float64, len(v))
		for i := 0; i < len(idx); {
			j := i
			for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
				j++
			}
			for k := i; k <= j; k++ {
				r[idx[k]] = float64(i+j)/2 + 1
			}
			i = j + 1
		}
		return r
	}
	return stat.Correlation(rank(x), rank(y), nil)
}
