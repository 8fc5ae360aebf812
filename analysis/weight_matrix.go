package analysis

import (
	"io"
	"math"
	"strconv"
	"strings"

	"concord/annotations"
)

// ReadWeightMatrix reads custom agreement weights for q categories from
// CSV without a header: either q rows of q numbers (the matrix w_kl), or
// one row of q numbers v (toeplitz weights by distance, w_kl = v_|k-l|, as
// statsmodels' cohens_kappa takes with wt='toeplitz'). The weights are
// agreements (1 on the diagonal, so v_1 = 1); statsmodels' are
// disagreements d, whose agreements are 1 - d. The matrix must be
// symmetric (concord's Scott, Fleiss and Krippendorff forms average the two
// raters' margins). name names the file in errors, which give the row and
// column.
func ReadWeightMatrix(name string, r io.Reader, q int) ([][]float64, error) {
	recs, err := readCountRecords(name, r)
	if err != nil {
		return nil, err
	}
	nums := make([][]float64, len(recs))
	for x, rec := range recs {
		for c, cell := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d, column %d: %q is not a finite number (the weights file has no header)", name, x+1, c+1, clip(cell, 40))
			}
			nums[x] = append(nums[x], v)
		}
	}
	return NewWeightMatrix(name, nums, q)
}

// ReadLabelWeightMatrix reads custom agreement weights (the layouts of
// ReadWeightMatrix) for the labels of ds: one row and column per category
// of its scheme, in the scheme's order (its levels as --scheme or the
// project lists them). Their weighted coefficients (percent agreement,
// Fleiss', Conger's, Gwet's AC2, Brennan-Prediger, Krippendorff's alpha;
// irrCAC's raw-data functions) are raters.Options.WeightMatrix's. A
// bounded scheme has no categories to weigh: an error says so.
func ReadLabelWeightMatrix(name string, r io.Reader, ds *annotations.Dataset) ([][]float64, error) {
	rt, err := Table(ds)
	if err != nil {
		return nil, err
	}
	if rt.Categories == nil {
		return nil, annotations.Errorf(annotations.EINVALID, "%s: custom agreement weights go with categorical schemes (one row and column per category); %s is not one: its values are weighted by the named weightings (linear, quadratic)", name, ds.Scheme)
	}
	return ReadWeightMatrix(name, r, len(rt.Categories))
}

// NewWeightMatrix checks custom agreement weights for q categories given
// as rows of numbers (the layouts of ReadWeightMatrix: q rows of q, or one
// row of q toeplitz weights by distance) and returns the q x q matrix. name
// names the input in errors, which give the row and column.
func NewWeightMatrix(name string, nums [][]float64, q int) ([][]float64, error) {
	for x, row := range nums {
		for c, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d, column %d: %v is not a finite number", name, x+1, c+1, v)
			}
		}
	}
	w := make([][]float64, q)
	switch {
	case len(nums) == 1 && q > 1:
		v := nums[0]
		if len(v) != q {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row 1 has %d weights; a toeplitz weights row has one per distance 0..%d (%d categories)", name, len(v), q-1, q)
		}
		if v[0] != 1 {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row 1, column 1: the weight of distance 0 is %v; agreement weights are 1 there (statsmodels' disagreement weights d are 1 - d here)", name, v[0])
		}
		for k := range w {
			w[k] = make([]float64, q)
			for l := range w[k] {
				w[k][l] = v[abs(k-l)]
			}
		}
		return w, nil
	case len(nums) != q:
		return nil, annotations.Errorf(annotations.EINVALID, "%s: %d rows of weights for %d categories; expected a %d x %d matrix or one row of %d toeplitz weights", name, len(nums), q, q, q, q)
	}
	for k, row := range nums {
		if len(row) != q {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d has %d weights; expected %d (one per category)", name, k+1, len(row), q)
		}
	}
	for k, row := range nums {
		if row[k] != 1 {
			return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d, column %d: diagonal weight %v; agreement weights are 1 on the diagonal (statsmodels' disagreement weights d are 1 - d here)", name, k+1, k+1, row[k])
		}
		for l := 0; l < k; l++ {
			if row[l] != nums[l][k] {
				return nil, annotations.Errorf(annotations.EINVALID, "%s: row %d, column %d: weight %v differs from row %d, column %d: %v; the weights must be symmetric", name, k+1, l+1, row[l], l+1, k+1, nums[l][k])
			}
		}
	}
	return nums, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
