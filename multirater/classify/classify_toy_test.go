package classify

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/kernel"
)

// classToy is one data set of the paper's classification toy (Rogers et al.
// sec. 3.2): 30 points from each of three classes, Gaussians with means
// (0,0), (2,2), (-2,-2) and unit covariance; expert 1 gives the true
// labels, experts 2 and 3 the true label with probability 0.5 and otherwise
// a label drawn uniformly from the three classes. The test set is a fresh
// draw of the same design (30 points per class, with their true classes).
type classToy struct {
	data        *Data
	x           *mat.Dense // training inputs, N×2
	truth       []int
	testX       *mat.Dense
	testTruth   []int
	gamma       float64
	noisyAgrees int // labels of experts 2 and 3 equal to the truth
}

func toyClassPoints(rng *rand.Rand, per int) (*mat.Dense, []int) {
	means := [3][2]float64{{0, 0}, {2, 2}, {-2, -2}}
	x := mat.NewDense(3*per, 2, nil)
	truth := make([]int, 3*per)
	for c := 0; c < 3; c++ {
		for i := 0; i < per; i++ {
			row := c*per + i
			x.Set(row, 0, means[c][0]+rng.NormFloat64())
			x.Set(row, 1, means[c][1]+rng.NormFloat64())
			truth[row] = c
		}
	}
	return x, truth
}

func newClassToy(seed uint64) *classToy {
	rng := rand.New(rand.NewPCG(seed, 42))
	t := &classToy{gamma: 1}
	t.x, t.truth = toyClassPoints(rng, 30)
	t.testX, t.testTruth = toyClassPoints(rng, 30)
	n := len(t.truth)
	d := &Data{Classes: []string{"a", "b", "c"}, RaterIDs: []string{"e1", "e2", "e3"}, Kernel: "rbf:gamma=1"}
	for i := 0; i < n; i++ {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprint("x", i))
	}
	for i, c := range t.truth {
		d.Labels = append(d.Labels, multirater.Rating{Item: i, Rater: 0, Level: c})
		for r := 1; r <= 2; r++ {
			lab := c
			if rng.Float64() >= 0.5 {
				lab = rng.IntN(3)
			}
			if lab == c {
				t.noisyAgrees++
			}
			d.Labels = append(d.Labels, multirater.Rating{Item: i, Rater: r, Level: lab})
		}
	}
	var c mat.SymDense
	kernel.RBF{Gamma: t.gamma}.GramTo(&c, kernel.Inputs{N: n, X: t.x})
	d.Cov = &c
	t.data = d
	return t
}

// heldOutLogLik returns the predictive log likelihood of the test set's
// true classes under the consensus predictive distribution of res.
func (t *classToy) heldOutLogLik(res *multirater.FitResult) (float64, error) {
	p, err := NewPredictor(res, t.data.Cov)
	if err != nil {
		return 0, err
	}
	k := kernel.RBF{Gamma: t.gamma}
	nt, _ := t.testX.Dims()
	var cross mat.Dense
	k.CrossTo(&cross, kernel.Inputs{N: nt, X: t.testX}, kernel.Inputs{N: len(t.truth), X: t.x})
	prior := k.DiagTo(nil, kernel.Inputs{N: nt, X: t.testX})
	ids := make([]string, nt)
	for i := range ids {
		ids[i] = fmt.Sprint("t", i)
	}
	out := p.Predict(ids, &cross, prior)
	var ll float64
	for i, it := range out {
		ll += math.Log(math.Max(it.ClassProbs[t.data.Classes[t.testTruth[i]]], 1e-300))
	}
	return ll, nil
}
