package auc_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"concord/internal/testutil"
	"concord/multirater/auc"
)

// pima reads testdata/pima_tr.csv or pima_te.csv (MASS's Pima.tr/Pima.te).
func pima(name string) (*mat.Dense, []bool, []string) {
	recs, err := testutil.Records("testdata/" + name)
	if err != nil {
		panic(err)
	}
	x, y, names, err := testutil.Classified(recs, "Yes")
	if err != nil {
		panic(err)
	}
	return x, y, names
}

// ExampleFit scores the Pima Indians (Ridgway et al. Table 1): linear
// scores on z-scored covariates, EP, gamma chosen by 5-fold
// cross-validation on Pima.tr, then the test AUC on Pima.te.
func ExampleFit() {
	xtr, ytr, names := pima("pima_tr.csv")
	xte, yte, _ := pima("pima_te.csv")
	res, err := auc.Fit(context.Background(), auc.Data{X: xtr, Positive: ytr, Names: names},
		auc.Options{Standardize: true, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("gamma %g chosen by CV from %d candidates\n", res.Gamma, len(res.CV))
	c := res.Coefficients[1]
	fmt.Printf("%s: %.2f (sd %.2f)\n", c.Name, c.Mean, c.SD)
	fmt.Printf("test AUC %.3f\n", auc.AUC(res.PredictMeansTo(nil, xte), yte))
	// Output:
	// gamma 30 chosen by CV from 7 candidates
	// glu: 1.20 (sd 0.71)
	// test AUC 0.853
}
