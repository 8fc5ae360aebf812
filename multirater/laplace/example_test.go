package laplace_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/laplace"
	"concord/multirater/lik"
)

// ExampleRun finds the posterior mode of four items labelled pass (1) or
// fail (0) by two raters with their own thresholds and noise (K = 2: probit
// classification), under an identity prior plus a shared component that
// correlates items 0 and 1.
func ExampleRun() {
	c := mat.NewSymDense(4, []float64{
		1.5, 0.5, 0, 0,
		0.5, 1.5, 0, 0,
		0, 0, 1, 0,
		0, 0, 0, 1,
	})
	f, err := gp.NewFactor(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	strict := &lik.OrdinalProbit{B: []float64{0.5}, Sigma: 0.4}
	lenient := &lik.OrdinalProbit{B: []float64{-0.5}, Sigma: 0.8}
	sites := []lik.Site{
		{Item: 0, Y: 1, Lik: strict}, {Item: 0, Y: 1, Lik: lenient},
		{Item: 1, Y: 0, Lik: strict}, {Item: 1, Y: 1, Lik: lenient},
		{Item: 2, Y: 0, Lik: strict}, {Item: 2, Y: 0, Lik: lenient},
		{Item: 3, Y: 1, Lik: lenient},
	}
	res, err := laplace.Run(f, sites, laplace.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range res.Mean {
		fmt.Printf("item %d: mode %.3f sd %.3f\n", i, res.Mean[i], math.Sqrt(res.Var[i]))
	}
	fmt.Printf("Laplace log evidence %.4f\n", res.LogZ)
	// Output:
	// item 0: mode 0.956 sd 0.575
	// item 1: mode 0.082 sd 0.523
	// item 2: mode -0.760 sd 0.720
	// item 3: mode 0.338 sd 0.801
	// Laplace log evidence -3.9970
}
