package robust_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/kernel"
	"concord/multirater/robust"
)

// ExampleFit fits one annotator's labels of twelve points on a line (class
// +1 right of 0) with two labels flipped, under an RBF kernel: the robust
// classifier learns the labelling-error rate and names the flipped labels
// as the most probable errors.
func ExampleFit() {
	xs := []float64{-3, -2.5, -2, -1.5, -1, -0.5, 0.5, 1, 1.5, 2, 2.5, 3}
	x := mat.NewDense(len(xs), 1, xs)
	cov := mat.NewSymDense(len(xs), nil)
	kernel.RBF{Gamma: 0.1}.GramTo(cov, kernel.Inputs{N: len(xs), X: x})
	d := &robust.Data{RaterIDs: []string{"annotator"}, Classes: [2]string{"neg", "pos"}, Cov: cov, Kernel: "rbf:gamma=0.1"}
	for i, v := range xs {
		d.ItemIDs = append(d.ItemIDs, fmt.Sprint(v))
		y := 1.0
		if v < 0 {
			y = -1
		}
		if v == -2.5 || v == 2 { // flipped
			y = -y
		}
		d.Labels = append(d.Labels, robust.Label{Item: i, Rater: 0, Y: y})
	}
	res, err := robust.Fit(context.Background(), d, robust.Options{Select: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("selected: %s\n", res.Diagnostics.Selected)
	fmt.Printf("error rate: %.2f\n", res.Raters[0].Epsilon.Value)
	for _, le := range res.LabelErrors[:3] {
		fmt.Printf("x = %s labelled %s: p_error %.2f\n", le.Item, le.Label, le.PError)
	}
	// Output:
	// selected: robust
	// error rate: 0.20
	// x = 2 labelled neg: p_error 0.91
	// x = -2.5 labelled pos: p_error 0.87
	// x = 0.5 labelled pos: p_error 0.16
}
