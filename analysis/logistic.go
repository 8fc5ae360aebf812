package analysis

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// LogisticFit is a logistic regression fitted by maximum likelihood:
// P(y = 1 | x) = 1/(1 + exp(-(Intercept + <Coef, x>))).
type LogisticFit struct {
	Intercept float64
	Coef      []float64
	// SE are the standard errors of the intercept (SE[0]) and of the
	// coefficients, from the inverse Fisher information at the estimate.
	SE []float64
	// Iterations is the number of IRLS steps; Deviance is -2 log L.
	Iterations int
	Deviance   float64
}

// FitLogistic fits a logistic regression of y on the columns of x (an
// intercept added) by iteratively reweighted least squares, Newton's method
// on the log likelihood (McCullagh & Nelder sec. 4.4; R's glm.fit): from
// beta = 0, solve (X'WX) beta = X'W z with W = diag(p (1 - p)) and the
// working response z = X beta + (y - p)/(p (1 - p)), until the deviance
// changes by less than 1e-10 relatively (R's test, with its epsilon 1e-8
// tightened). Separable data (no finite maximum) and singular X'WX return
// errors.
func FitLogistic(x mat.Matrix, y []bool) (*LogisticFit, error) {
	n, d := x.Dims()
	if len(y) != n {
		panic(fmt.Sprintf("analysis: FitLogistic: %d labels for %d rows", len(y), n))
	}
	p := d + 1
	xa := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		xa.Set(i, 0, 1)
		for j := 0; j < d; j++ {
			xa.Set(i, j+1, x.At(i, j))
		}
	}
	beta := mat.NewVecDense(p, nil)
	eta := mat.NewVecDense(n, nil)
	w := make([]float64, n)
	z := mat.NewVecDense(n, nil)
	xtw := mat.NewDense(p, n, nil)
	var xtwx mat.SymDense
	xtwx.ReuseAsSym(p)
	rhs := mat.NewVecDense(p, nil)
	var chol mat.Cholesky
	dev := math.Inf(1)
	const maxIter = 100
	for it := 1; it <= maxIter; it++ {
		eta.MulVec(xa, beta)
		newDev := 0.0
		for i := 0; i < n; i++ {
			e := eta.AtVec(i)
			pr := 1 / (1 + math.Exp(-e))
			pr = math.Min(math.Max(pr, 1e-15), 1-1e-15)
			yi := 0.0
			if y[i] {
				yi = 1
			}
			w[i] = pr * (1 - pr)
			z.SetVec(i, e+(yi-pr)/w[i])
			newDev -= 2 * (yi*math.Log(pr) + (1-yi)*math.Log(1-pr))
		}
		if newDev < 1e-6 {
			return nil, fmt.Errorf("logistic regression: the classes are separable by the covariates (every fitted probability is 0 or 1): no finite maximum likelihood estimate")
		}
		if math.Abs(newDev-dev) < 1e-10*(math.Abs(newDev)+0.1) {
			se := make([]float64, p)
			var inv mat.SymDense
			if err := chol.InverseTo(&inv); err != nil {
				return nil, fmt.Errorf("logistic regression: the information matrix is singular: %w", err)
			}
			for j := range se {
				se[j] = math.Sqrt(inv.At(j, j))
			}
			coef := make([]float64, d)
			for j := range coef {
				coef[j] = beta.AtVec(j + 1)
			}
			return &LogisticFit{Intercept: beta.AtVec(0), Coef: coef, SE: se, Iterations: it - 1, Deviance: newDev}, nil
		}
		dev = newDev
		for j := 0; j < p; j++ {
			for i := 0; i < n; i++ {
				xtw.Set(j, i, xa.At(i, j)*w[i])
			}
		}
		for j := 0; j < p; j++ {
			for k := j; k < p; k++ {
				xtwx.SetSym(j, k, floats.Dot(xtw.RawRowView(j), mat.Col(nil, k, xa)))
			}
		}
		if ok := chol.Factorize(&xtwx); !ok {
			return nil, fmt.Errorf("logistic regression: X'WX is not positive definite at step %d (collinear covariates, or separable classes)", it)
		}
		rhs.MulVec(xtw, z)
		if err := chol.SolveVecTo(beta, rhs); err != nil {
			return nil, fmt.Errorf("logistic regression: step %d: %w", it, err)
		}
	}
	return nil, fmt.Errorf("logistic regression: no convergence in %d IRLS steps (the classes may be separable)", maxIter)
}

// LinearPredictorsTo sets dst[i] = Intercept + <Coef, x_i> for the rows
// of x and returns dst (allocated when nil): the log odds, whose order is
// the ranking.
func (f *LogisticFit) LinearPredictorsTo(dst []float64, x mat.Matrix) []float64 {
	n, d := x.Dims()
	if d != len(f.Coef) {
		panic(fmt.Sprintf("analysis: LinearPredictorsTo: %d columns for %d coefficients", d, len(f.Coef)))
	}
	if dst == nil {
		dst = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		s := f.Intercept
		for j, c := range f.Coef {
			s += c * x.At(i, j)
		}
		dst[i] = s
	}
	return dst
}
