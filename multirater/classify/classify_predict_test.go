package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"concord/internal/testutil"
	"concord/multirater/numeric"
)

// TestClassProbsQuadrature checks the Gauss-Hermite evaluation of the
// predictive class probabilities (Rogers et al. eq. 18) against R's
// adaptive quadrature (testdata/classify/predictive_ref.R), including
// probabilities down to 1e-36 and eight nearly tied classes, where the
// adaptive centring and scaling of the rule matter (a plain 24-node rule is
// off by 1.5e-5 relative on the tied classes). Classes below 1e-12 may be
// reported as 0 unless asked for.
func TestClassProbsQuadrature(t *testing.T) {
	rows := testutil.ReadCSV(t, "testdata/classify/predictive_ref.csv")
	type ref struct {
		a float64
		m []float64
		p []float64
	}
	var cases []*ref
	byCase := map[string]*ref{}
	for _, r := range rows[1:] {
		c, ok := byCase[r[0]]
		if !ok {
			a, _ := strconv.ParseFloat(r[1], 64)
			c = &ref{a: a}
			for _, s := range strings.Fields(r[3]) {
				v, _ := strconv.ParseFloat(s, 64)
				c.m = append(c.m, v)
			}
			byCase[r[0]] = c
			cases = append(cases, c)
		}
		p, _ := strconv.ParseFloat(r[4], 64)
		c.p = append(c.p, p)
	}
	tols := map[int]float64{12: 5e-6, DefaultQuadrature: 1e-7, 40: 1e-12}
	for _, nq := range []int{12, DefaultQuadrature, 40} {
		rule := numeric.NewGHRule(nq)
		worst := 0.0
		for ci, c := range cases {
			k := len(c.m)
			q := newClassQuad(rule, k)
			got := make([]float64, k)
			all := make([]float64, k)
			q.probsTo(all, c.m, c.a, -1)
			for j := range got {
				// Asked for, class j is computed however small.
				q.probsTo(got, c.m, c.a, j)
				if all[j] != got[j] && !(all[j] == 0 && c.p[j] < 1e-12) {
					t.Errorf("Q=%d case %d class %d: %.10g without must, %.10g with (R %.10g)", nq, ci+1, j, all[j], got[j], c.p[j])
				}
				rel := math.Abs(got[j]-c.p[j]) / c.p[j]
				worst = math.Max(worst, rel)
				if tol := tols[nq]; rel > tol {
					t.Errorf("Q=%d case %d class %d: got %.10g, R %.10g (relative error %.2g)", nq, ci+1, j, got[j], c.p[j], rel)
				}
			}
		}
		t.Logf("Q=%d: worst relative error %.2g", nq, worst)
	}
}

func BenchmarkClassProbs(b *testing.B) {
	for _, k := range []int{2, 3, 5, 28} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			q := newClassQuad(numeric.NewGHRule(DefaultQuadrature), k)
			ms := make([][]float64, 64)
			for i := range ms {
				ms[i] = make([]float64, k)
				for j := range ms[i] {
					ms[i][j] = rng.NormFloat64()
				}
			}
			dst := make([]float64, k)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q.probsTo(dst, ms[i%64], 3, -1)
			}
		})
	}
}
