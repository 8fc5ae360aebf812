package laplace_test

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/gp"
	"concord/multirater/kernel"
	"concord/multirater/laplace"
	"concord/multirater/lik"
)

// ExampleRun finds the posterior mode of three items on a line, rated on
// a three-level scale by one rater (thresholds -0.5, 0.5, noise sd 0.5),
// with an RBF prior; the middle item has two ratings.
func ExampleRun() {
	x := mat.NewDense(3, 1, []float64{0, 1, 2})
	var c mat.SymDense
	kernel.RBF{Gamma: 0.5}.GramTo(&c, kernel.Inputs{N: 3, X: x})
	f, err := gp.NewFactor(&c)
	if err != nil {
		fmt.Println(err)
		return
	}
	o := &lik.OrdinalProbit{B: []float64{-0.5, 0.5}, Sigma: 0.5}
	sites := []lik.Site{{Item: 0, Y: 0, Lik: o}, {Item: 1, Y: 1, Lik: o}, {Item: 1, Y: 2, Lik: o}, {Item: 2, Y: 2, Lik: o}}
	res, err := laplace.Run(f, sites, laplace.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range res.Mean {
		fmt.Printf("item %d: mean %.3f sd %.3f\n", i, res.Mean[i], math.Sqrt(res.Var[i]))
	}
	fmt.Printf("Laplace log evidence %.4f\n", res.LogZ)
	// Output:
	// item 0: mean -0.668 sd 0.517
	// item 1: mean 0.399 sd 0.366
	// item 2: mean 0.941 sd 0.565
	// Laplace log evidence -4.7771
}
