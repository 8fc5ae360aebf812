package ordinal

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/mcmc"
)

// gaussPredictor predicts new items from the Gaussian posterior of a
// deterministic fit, q(m) ∝ N(m; 0, C) exp(-m'Sm/2 + V'm) with S, V the
// per-item site sums (FitResult.Gaussian). A new item with covariances k
// with the fitted items and prior variance k* has the latent predictive
// N(mu, s^2) (Chu & Ghahramani eq. 16 for Laplace, 17 for EP):
//
//	mu  = k'(C + S^-1)^-1 S^-1 V = k' alpha,   alpha = V - S^1/2 B^-1 S^1/2 C V,
//	s^2 = k* - k'(C + S^-1)^-1 k = k* - |L^-1 S^1/2 k|^2,
//
// with B = I + S^1/2 C S^1/2 = L L' (Rasmussen & Williams alg. 3.6; S >= 0
// for the probit likelihoods, and C may be singular), and rater l's grade
// distribution is Chu's eq. 18,
//
//	P(t = c) = Phi((b_lc - mu)/sqrt(sigma_l^2 + s^2)) - Phi((b_l,c-1 - mu)/sqrt(sigma_l^2 + s^2)).
//
// B is factorised once, O(N^3); each new item costs O(N^2).
type gaussPredictor struct {
	res   *multirater.FitResult
	n     int
	sq    []float64 // S^1/2
	chol  mat.Cholesky
	alpha []float64
}

func newGaussianPredictor(res *multirater.FitResult, cov mat.Symmetric) (*Predictor, error) {
	n := len(res.Items)
	g := res.Gaussian
	if len(g.Precision) != n || len(g.Shift) != n {
		return nil, multirater.DataErrorf("malformed gaussian posterior in the fit result: %d precisions and %d shifts for %d items", len(g.Precision), len(g.Shift), n)
	}
	for _, r := range res.Raters {
		if len(r.Thresholds) != len(res.Levels)-1 || !(r.Precision.Mean > 0) {
			return nil, multirater.DataErrorf("rater %q has malformed thresholds or precision in the fit result", r.ID)
		}
	}
	gp := &gaussPredictor{res: res, n: n, sq: make([]float64, n)}
	for i, s := range g.Precision {
		if !(s >= 0) || math.IsInf(s, 0) || math.IsNaN(g.Shift[i]) || math.IsInf(g.Shift[i], 0) {
			return nil, multirater.DataErrorf("item %d has an invalid site precision %v or shift %v in the fit result", i, s, g.Shift[i])
		}
		gp.sq[i] = math.Sqrt(s)
	}
	b := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := gp.sq[i] * cov.At(i, j) * gp.sq[j]
			if i == j {
				v++
			}
			b.SetSym(i, j, v)
		}
	}
	if !gp.chol.Factorize(b) {
		return nil, multirater.DataErrorf("the fit's posterior precision is not positive definite with this covariance")
	}
	// alpha = V - S^1/2 B^-1 S^1/2 C V.
	v := mat.NewVecDense(n, append([]float64(nil), g.Shift...))
	var cv mat.VecDense
	cv.MulVec(cov, v)
	for i := 0; i < n; i++ {
		cv.SetVec(i, cv.AtVec(i)*gp.sq[i])
	}
	var x mat.VecDense
	if err := gp.chol.SolveVecTo(&x, &cv); err != nil {
		return nil, multirater.DataErrorf("the fit's posterior precision is singular with this covariance: %v", err)
	}
	gp.alpha = make([]float64, n)
	for i := range gp.alpha {
		gp.alpha[i] = g.Shift[i] - gp.sq[i]*x.AtVec(i)
	}
	return &Predictor{res: res, n: n, gauss: gp}, nil
}

func (p *gaussPredictor) predict(ids []string, cross mat.Matrix, prior []float64) []multirater.ItemResult {
	r, c := cross.Dims()
	if r != len(ids) || c != p.n || len(prior) != len(ids) {
		panic("ordinal: Predict: cross must be len(ids)×N and prior of length len(ids)")
	}
	res := p.res
	levels := res.Levels
	k := len(levels)
	var l mat.TriDense
	p.chol.LTo(&l)
	out := make([]multirater.ItemResult, len(ids))
	sk := mat.NewVecDense(p.n, nil)
	b := make([]float64, k+1)
	for i, id := range ids {
		mu := 0.0
		for j := 0; j < p.n; j++ {
			kv := cross.At(i, j)
			mu += kv * p.alpha[j]
			sk.SetVec(j, p.sq[j]*kv)
		}
		sk.SolveVec(&l, sk)
		vr := math.Max(prior[i]-mat.Dot(sk, sk), 0)
		sd := math.Sqrt(vr)
		it := multirater.ItemResult{ID: id, RaterGradeProbs: make(map[string][]float64, len(res.Raters)), GradeProbs: make(map[string]float64, k)}
		it.Score = &multirater.Estimate{Mean: mu, SD: sd, Q025: mu - 1.959963984540054*sd, Q50: mu, Q975: mu + 1.959963984540054*sd}
		cons := make([]float64, k)
		for _, rr := range res.Raters {
			sdy := math.Sqrt(vr + 1/rr.Precision.Mean)
			b[0], b[k] = math.Inf(-1), math.Inf(1)
			for c, t := range rr.Thresholds {
				b[c+1] = t.Estimate.Mean
			}
			pr := make([]float64, k)
			for c := range pr {
				pv := normInterval((b[c]-mu)/sdy, (b[c+1]-mu)/sdy)
				cons[c] += pv / float64(len(res.Raters))
				pr[c] = mcmc.Round6(pv)
			}
			it.RaterGradeProbs[rr.ID] = pr
		}
		setConsensus(&it, levels, cons)
		out[i] = it
	}
	return out
}
