package laplace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"concord/multirater/gp"
	"concord/multirater/gp/gptest"
	"concord/multirater/lik"
)

// TestDiagonalCorrectionMatchesDense runs Laplace's method with a factor
// carrying a diagonal correction (G of rank 15 plus Extra = D) and with the
// eigen-factor of the same covariance C = G G' + D formed densely (full
// rank, the path without a correction): modes, variances, log evidence
// and the implicit term agree to 1e-6.
func TestDiagonalCorrectionMatchesDense(t *testing.T) {
	for _, tc := range []struct {
		n, r int
		seed uint64
	}{{60, 15, 1}, {200, 30, 2}} {
		low, dense, sites, err := gptest.CorrectedProblem(tc.n, tc.r, rand.New(rand.NewPCG(tc.seed, 3)))
		if err != nil {
			t.Fatal(err)
		}
		rl, rd := gptest.RunBoth(t, func(f *gp.Factor) (*Result, error) { return Run(f, sites, Options{}) }, low, dense)
		gptest.SameMarginals(t, fmt.Sprintf("n=%d", tc.n), 1e-6, rl.Mean, rl.Var, rd.Mean, rd.Var)
		ul, ud := rl.Implicit(), rd.Implicit()
		for i := range ud {
			if math.Abs(ul[i]-ud[i]) > 1e-6 {
				t.Fatalf("n=%d item %d: implicit term corrected %v, dense %v", tc.n, i, ul[i], ud[i])
			}
		}
		if math.Abs(rl.LogZ-rd.LogZ) > 1e-6 {
			t.Errorf("n=%d: log evidence corrected %v, dense %v", tc.n, rl.LogZ, rd.LogZ)
		}
		// Draws: the sample mean and variance of two items match the
		// approximation's (Monte Carlo, 20000 draws: 4 standard errors).
		draws := 20000
		m := make([]float64, tc.n)
		var s00, m0, m1 float64
		dr := rand.New(rand.NewPCG(9, 9))
		for d := 0; d < draws; d++ {
			rl.DrawTo(dr, m)
			a, b := m[1]-rl.Mean[1], m[2]-rl.Mean[2]
			m0 += a
			m1 += b
			s00 += a * a
		}
		fd := float64(draws)
		if v := s00 / fd; math.Abs(v-rd.Var[1]) > 4*rd.Var[1]*math.Sqrt(2/fd) {
			t.Errorf("n=%d: draw variance %v, want %v", tc.n, v, rd.Var[1])
		}
		if math.Abs(m0/fd) > 4*math.Sqrt(rd.Var[1]/fd) || math.Abs(m1/fd) > 4*math.Sqrt(rd.Var[2]/fd) {
			t.Errorf("n=%d: draw means off by %v, %v", tc.n, m0/fd, m1/fd)
		}
	}
}

// TestWarmStartSameMode: Newton's method started at the mode of nearby
// likelihood parameters (Result.Mode, as the evidence search does) finds
// the same mode (1e-8) in fewer steps, with and without a diagonal
// correction.
func TestWarmStartSameMode(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const n, r = 150, 20
	g := make([]float64, n*r)
	for i := range g {
		g[i] = rng.NormFloat64() / math.Sqrt(r)
	}
	extra := make([]float64, n)
	for i := range extra {
		extra[i] = 0.3
	}
	for _, withExtra := range []bool{false, true} {
		f := &gp.Factor{N: n, R: r, G: g}
		if withExtra {
			f.Extra = extra
		}
		o := &lik.OrdinalProbit{B: []float64{-0.5, 0.5}, Sigma: 0.5}
		var sites []lik.Site
		for i := 0; i < n; i++ {
			sites = append(sites, lik.Site{Item: i, Y: float64(rng.IntN(3)), Lik: o}, lik.Site{Item: i, Y: float64(rng.IntN(3)), Lik: o})
		}
		first, err := Run(f, sites, Options{})
		if err != nil {
			t.Fatal(err)
		}
		o.Sigma = 0.52
		cold, err := Run(f, sites, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w, e, ff := first.Mode()
		if ff != f {
			t.Fatal("Mode's factor is not the one run")
		}
		warm, err := Run(f, sites, Options{InitW: w, InitE: e})
		if err != nil {
			t.Fatal(err)
		}
		for i := range cold.Mean {
			if math.Abs(cold.Mean[i]-warm.Mean[i]) > 1e-8 {
				t.Fatalf("extra %v item %d: cold %v warm %v", withExtra, i, cold.Mean[i], warm.Mean[i])
			}
		}
		if warm.Iterations >= cold.Iterations {
			t.Errorf("extra %v: %d steps warm, %d cold", withExtra, warm.Iterations, cold.Iterations)
		}
	}
}
