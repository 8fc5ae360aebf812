package robust_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"concord/multirater/kernel"
	"concord/multirater/robust"
)

// ExampleFit fits one annotator's labels of 24 points on a line (class +1
// right of 0) with two labels flipped, under an RBF kernel: model selection
// prefers the robust classifier (its evidence with the error rate
// integrated out), which learns the labelling-error rate and names the
// flipped labels as the most probable errors.
func ExampleFit() {
	var xs []float64
	for v := -3.0; v <= 3; v += 0.25 {
		if v != 0 {
			xs = append(xs, v)
		}
	}
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
	fmt.Printf("selected: %s (log evidence: plain %.2f, robust %.2f)\n", res.Diagnostics.Selected, res.Diagnostics.Evidence["plain"], res.Diagnostics.Evidence["robust_integrated"])
	fmt.Printf("error rate: %.2f\n", res.Raters[0].Epsilon.Value)
	for _, le := range res.LabelErrors[:3] {
		fmt.Printf("x = %s labelled %s: p_error %.2f\n", le.Item, le.Label, le.PError)
	}
	// Output:
	// selected: robust (log evidence: plain -12.98, robust -11.88)
	// error rate: 0.09
	// x = 2 labelled neg: p_error 0.97
	// x = -2.5 labelled pos: p_error 0.93
	// x = 0.25 labelled pos: p_error 0.05
}
