package ep

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/lik"
)

func readCSV(t testing.TB, path string) [][]string {
	t.Helper()
	rows := testutil.ReadCSV(t, path)
	return rows[1:]
}

func atof(t testing.TB, s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// exactCase is one model of testdata/exact_evidence.R.
type exactCase struct {
	name  string
	fac   *gp.Factor
	sites []lik.Site
	cov   mat.Symmetric // nil: identity
}

func factorOf(t testing.TB, n int, c mat.Symmetric) *gp.Factor {
	f, err := gp.NewPrior(n, c)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// exactCases builds the models of testdata/exact_evidence.R from its data.
func exactCases(t testing.TB) []exactCase {
	var out []exactCase
	// Pyrimidines: one rater, RBF gamma 0.5/9.
	rows := readCSV(t, "testdata/pyrimidines10.csv")
	x := mat.NewDense(len(rows), 9, nil)
	one := &lik.OrdinalProbit{B: []float64{-1.5, -0.5, 0.5, 1.5}, Sigma: 0.5}
	var sites []lik.Site
	for i, r := range rows {
		for j := 0; j < 9; j++ {
			x.Set(i, j, atof(t, r[1+j]))
		}
		sites = append(sites, lik.Site{Item: i, Y: atof(t, r[10]) - 1, Lik: one})
	}
	var c mat.SymDense
	kernel.RBF{Gamma: 0.5 / 9}.GramTo(&c, kernel.Inputs{N: len(rows), X: x})
	out = append(out, exactCase{"pyrimidines10", factorOf(t, len(rows), &c), sites, &c})

	// sirt k1: 6 essays, one likelihood per rater.
	rows = readCSV(t, "testdata/sirt_k1_6items.csv")
	var items, raters []string
	index := func(ids *[]string, id string) int {
		for i, v := range *ids {
			if v == id {
				return i
			}
		}
		*ids = append(*ids, id)
		return len(*ids) - 1
	}
	type obs struct{ item, rater, level int }
	var os []obs
	for _, r := range rows {
		os = append(os, obs{index(&items, r[0]), index(&raters, r[1]), int(atof(t, r[2]))})
	}
	liks := make([]*lik.OrdinalProbit, len(raters))
	for l := range liks {
		shift := -0.3 + 0.6*float64(l)/float64(len(raters)-1)
		sig := 0.6 + 0.6*float64(l)/float64(len(raters)-1)
		liks[l] = &lik.OrdinalProbit{B: []float64{-1 + shift, shift, 1 + shift}, Sigma: sig}
	}
	sites = nil
	for _, o := range os {
		sites = append(sites, lik.Site{Item: o.item, Y: float64(o.level), Lik: liks[o.rater]})
	}
	out = append(out, exactCase{"sirt_k1_6items_identity", gp.IdentityFactor(len(items)), sites, nil})
	pos := mat.NewDense(len(items), 1, nil)
	for i := range items {
		pos.Set(i, 0, float64(i+1))
	}
	var c2 mat.SymDense
	kernel.RBF{Gamma: 0.3}.GramTo(&c2, kernel.Inputs{N: len(items), X: pos})
	out = append(out, exactCase{"sirt_k1_6items_rbf", factorOf(t, len(items), &c2), sites, &c2})
	return out
}

// TestLogZExact compares log Z_EP with the exact log evidence, the Gaussian
// box probability computed by mvtnorm::pmvnorm (testdata/exact_evidence.R),
// for sequential and parallel EP.
func TestLogZExact(t *testing.T) {
	ref := map[string]float64{}
	for _, r := range readCSV(t, "testdata/exact_evidence.csv") {
		ref[r[0]] = atof(t, r[1])
	}
	for _, tc := range exactCases(t) {
		want, ok := ref[tc.name]
		if !ok {
			t.Fatalf("no reference for %s", tc.name)
		}
		for _, par := range []bool{false, true} {
			res, err := Run(tc.fac, tc.sites, Options{Parallel: par})
			if err != nil {
				t.Fatalf("%s (parallel %t): %v", tc.name, par, err)
			}
			t.Logf("%s parallel %t: log Z_EP %.6f, exact %.6f (%d sweeps)", tc.name, par, res.LogZ, want, res.Sweeps)
			if math.Abs(res.LogZ-want) > 0.01 {
				t.Errorf("%s (parallel %t): log Z_EP = %.6f, exact %.6f", tc.name, par, res.LogZ, want)
			}
		}
	}
}

// TestGradients checks the gradient of log Z_EP in the RBF gamma (by
// KernelGrad) and in every rater's thresholds and sigma (the sum of the
// sites' tilted gradients at their cavities) against central finite
// differences of log Z_EP with EP run to convergence.
func TestGradients(t *testing.T) {
	tc := exactCases(t)[2] // sirt k1 with an RBF kernel on positions
	n := tc.fac.N
	pos := mat.NewDense(n, 1, nil)
	for i := 0; i < n; i++ {
		pos.Set(i, 0, float64(i+1))
	}
	gram := func(gamma float64) *mat.SymDense {
		var c mat.SymDense
		kernel.RBF{Gamma: gamma}.GramTo(&c, kernel.Inputs{N: n, X: pos})
		return &c
	}
	run := func(gamma float64) *Result {
		f, err := gp.NewFactor(gram(gamma))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(f, tc.sites, Options{Tol: 1e-12, MaxSweeps: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	const gamma, h = 0.3, 1e-5
	res := run(gamma)
	c := gram(gamma)
	dc := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			d := pos.At(i, 0) - pos.At(j, 0)
			dc.SetSym(i, j, -d*d*c.At(i, j))
		}
	}
	g, err := res.KernelGrad([]mat.Symmetric{dc})
	if err != nil {
		t.Fatal(err)
	}
	fd := (run(gamma+h).LogZ - run(gamma-h).LogZ) / (2 * h)
	if math.Abs(g[0]-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
		t.Errorf("d log Z / d gamma = %.9g, finite difference %.9g", g[0], fd)
	}
	// Likelihood parameters: every rater's (b_0, ln Delta_1, ln Delta_2, ln sigma).
	liks := map[*lik.OrdinalProbit]bool{}
	for _, s := range tc.sites {
		liks[s.Lik.(*lik.OrdinalProbit)] = true
	}
	checked := 0
	for o := range liks {
		p := o.ParamsTo(make([]float64, o.NumParams()))
		grad := make([]float64, len(p))
		buf := make([]float64, len(p))
		for j, s := range tc.sites {
			if s.Lik != o {
				continue
			}
			o.TiltedGradTo(buf, s.Y, res.CavMean[j], res.CavVar[j])
			for k := range grad {
				grad[k] += buf[k]
			}
		}
		for k := range p {
			q := append([]float64(nil), p...)
			q[k] += h
			o.SetParams(q)
			up := run(gamma).LogZ
			q[k] -= 2 * h
			o.SetParams(q)
			down := run(gamma).LogZ
			o.SetParams(p)
			fd := (up - down) / (2 * h)
			if math.Abs(grad[k]-fd) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("rater sigma %.2f: d log Z / d p[%d] = %.9g, finite difference %.9g", o.Sigma, k, grad[k], fd)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d likelihood gradients checked", checked)
	}
}

// TestDrawTo: joint draws from the EP posterior have its marginal means and
// variances (20,000 draws; 5 standard errors).
func TestDrawTo(t *testing.T) {
	for _, tc := range exactCases(t) {
		res, err := Run(tc.fac, tc.sites, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := tc.fac.N
		rng := rand.New(rand.NewPCG(5, 6))
		const draws = 20000
		s, s2 := make([]float64, n), make([]float64, n)
		f := make([]float64, n)
		for d := 0; d < draws; d++ {
			res.DrawTo(rng, f)
			for i, v := range f {
				s[i] += v
				s2[i] += v * v
			}
		}
		for i := 0; i < n; i++ {
			m := s[i] / draws
			v := s2[i]/draws - m*m
			if se := math.Sqrt(res.Var[i] / draws); math.Abs(m-res.Mean[i]) > 5*se {
				t.Errorf("%s item %d: draw mean %.4f, posterior mean %.4f", tc.name, i, m, res.Mean[i])
			}
			if math.Abs(v-res.Var[i]) > 5*res.Var[i]*math.Sqrt(2.0/draws) {
				t.Errorf("%s item %d: draw variance %.4f, posterior variance %.4f", tc.name, i, v, res.Var[i])
			}
		}
	}
}
