package confusion_test

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"concord/multirater"
	"concord/multirater/confusion"
)

// Forty products are labelled cheap or dear by two raters, one label each;
// rater b is careless and says cheap too often. Each product has a price,
// and an RBF kernel on the log price lets products of alike prices share
// their labels: b's careless labels of dear products (p29, p37) are
// overruled by their neighbours', and a new product is predicted from its
// price alone.
func ExampleFit_kernel() {
	const n = 40
	data := &confusion.Data{RaterIDs: []string{"a", "b"}, Classes: []string{"cheap", "dear"}, Kernel: "rbf:gamma=4"}
	logPrice := make([]float64, n)
	for i := range logPrice {
		logPrice[i] = -1 + 2*float64(i)/float64(n-1)
		data.ItemIDs = append(data.ItemIDs, fmt.Sprintf("p%02d", i))
		class := 0
		if logPrice[i] > 0 {
			class = 1
		}
		label, rater := class, i%2
		if rater == 1 && i%4 == 1 {
			label = 0 // b's careless labels
		}
		data.Labels = append(data.Labels, multirater.Rating{Item: i, Rater: rater, Level: label})
	}
	rbf := func(x, y float64) float64 { return math.Exp(-4 * (x - y) * (x - y)) }
	cov := mat.NewSymDense(n, nil)
	for i := range logPrice {
		for j := i; j < n; j++ {
			cov.SetSym(i, j, rbf(logPrice[i], logPrice[j]))
		}
	}
	data.Cov = cov
	res, err := confusion.Fit(context.Background(), data, confusion.Options{Hierarchy: confusion.Pooled})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, i := range []int{5, 29, 37} {
		it := res.Items[i]
		fmt.Printf("%s (label %s by %s): %s, P = %.2f\n", it.ID, data.Classes[data.Labels[i].Level], data.RaterIDs[data.Labels[i].Rater], it.Class, it.ClassProbs[it.Class])
	}
	pred, err := confusion.NewPredictor(res, cov)
	if err != nil {
		fmt.Println(err)
		return
	}
	newPrice := 0.8
	cross := mat.NewDense(1, n, nil)
	for j := range logPrice {
		cross.Set(0, j, rbf(newPrice, logPrice[j]))
	}
	p := pred.Predict([]string{"new"}, cross, []float64{1})[0]
	fmt.Printf("new product: %s, P = %.2f\n", p.Class, p.ClassProbs[p.Class])
	// Output:
	// p05 (label cheap by b): cheap, P = 0.98
	// p29 (label cheap by b): dear, P = 0.73
	// p37 (label cheap by b): dear, P = 0.62
	// new product: dear, P = 0.86
}
