package kernel

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestHyperGradients checks GramGradTo against central finite differences
// of GramTo in the hyperparameters, and the parse/print round trip of ard.
func TestHyperGradients(t *testing.T) {
	x := mat.NewDense(5, 3, []float64{0, 1, 2, 1, 0.5, -1, 2, 2, 0, -1, 0.3, 1, 0.2, -0.7, 0.4})
	in := Inputs{N: 5, X: x}
	for _, k := range []Hyper{RBF{Gamma: 0.7}, ARD{Gammas: []float64{0.2, 1.5, 0.05}}, ARD{}} {
		np := k.NumHyper(3)
		p := k.HyperTo(make([]float64, np), 3)
		grads := make([]*mat.SymDense, np)
		k.GramGradTo(grads, in)
		const h = 1e-6
		for d := 0; d < np; d++ {
			q := append([]float64(nil), p...)
			q[d] += h
			var up, down mat.SymDense
			k.WithHyper(q).GramTo(&up, in)
			q[d] -= 2 * h
			k.WithHyper(q).GramTo(&down, in)
			for i := 0; i < 5; i++ {
				for j := 0; j < 5; j++ {
					fd := (up.At(i, j) - down.At(i, j)) / (2 * h)
					if math.Abs(grads[d].At(i, j)-fd) > 1e-7 {
						t.Errorf("%s: d K[%d,%d] / d p[%d] = %.9g, finite difference %.9g", k, i, j, d, grads[d].At(i, j), fd)
					}
				}
			}
		}
	}
	ks, err := ParseSpec("ard + rbf + rbf:gamma=2 + ard:gamma=0.5,1")
	if err != nil {
		t.Fatal(err)
	}
	want := []bool{true, true, false, false}
	for i, term := range ks {
		if term.Learn != want[i] {
			t.Errorf("term %d (%s): learn %t, want %t", i, term, term.Learn, want[i])
		}
	}
	if got := ks.String(); got != "ard+rbf:gamma=1+rbf:gamma=2+ard:gamma=0.5,1" {
		t.Errorf("printed %q", got)
	}
	if _, err := ParseSpec("ard:gamma=0.5,x"); err == nil {
		t.Error("bad ard gamma accepted")
	}
}
