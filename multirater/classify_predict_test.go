package multirater

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestClassProbsQuadrature checks the Gauss-Hermite evaluation of the
// predictive class probabilities (Rogers et al. eq. 18) against R's
// adaptive quadrature (testdata/classify/predictive_ref.R), including
// probabilities down to 1e-36 and eight nearly tied classes, where the
// adaptive centring and scaling of the rule matter (a plain 24-node rule is
// off by 1.5e-5 relative on the tied classes). Classes below 1e-12 may be
// reported as 0 unless asked for.
func TestClassProbsQuadrature(t *testing.T) {
	f, err := os.Open("testdata/classify/predictive_ref.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
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
		rule := newGHRule(nq)
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

// TestLogNormCDF checks log Phi against R's pnorm(x, log.p = TRUE)
// (values printed by R 4 with 17 significant digits).
func TestLogNormCDF(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		// R: sprintf("%.17g", pnorm(c(-40, -20, -5, -1, 0, 0.5, 2, 3.8, 5, 8, 9), log.p = TRUE))
		{-40, -804.6084420137538},
		{-20, -203.91715537109727},
		{-5, -15.064998393988725},
		{-1, -1.8410216450092636},
		{0, -0.69314718055994529},
		{0.5, -0.36894641528865652},
		{2, -0.023012909328963493},
		{3.8, -7.23506611710858e-05},
		{5, -2.8665161296376358e-07},
		{8, -6.2209605742717868e-16},
		{9, -1.1285884059538408e-19},
	} {
		got := logNormCDF(c.x)
		tol := 1e-13 * math.Abs(c.want)
		if c.x > phiOne {
			tol = 1e-18 // rounded to 0
		}
		if math.Abs(got-c.want) > tol {
			t.Errorf("logNormCDF(%v) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
}

func BenchmarkClassProbs(b *testing.B) {
	for _, k := range []int{2, 3, 5, 28} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			q := newClassQuad(newGHRule(DefaultQuadrature), k)
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
