package kernel

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in, want  string
		text, cov bool
	}{
		{"text", "text", true, false},
		{" TEXT + rbf:gamma=0.5 ", "text+rbf:gamma=0.5", true, true},
		{"text+linear", "text+linear", true, true},
		{"text-rbf", "text-rbf:gamma=1", true, false},
		{"text-rbf:gamma=2+identity", "text-rbf:gamma=2+identity", true, false},
		{"identity", "identity", false, false},
		{"rbf:gamma=1+linear", "rbf:gamma=1+linear", false, true},
		{"text:term1 + Text:Term2+text", "text:term1+text:Term2+text", true, false},
	} {
		ks, err := ParseSpec(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if ks.String() != tc.want || ks.Text() != tc.text || ks.Covariates() != tc.cov {
			t.Errorf("%q: %s text %t cov %t, want %s %t %t", tc.in, ks, ks.Text(), ks.Covariates(), tc.want, tc.text, tc.cov)
		}
	}
	for _, tc := range []struct{ in, msg string }{
		{"", "empty kernel"},
		{"text:min_df=2", "expected text or text:COLUMN"},
		{"text:", "expected text or text:COLUMN"},
		{"text:a+text:a", "text:a is given twice"},
		{"text+text", "text is given twice"},
		{"text-rbf:g=1", "expected gamma=G"},
		{"text-rbf:gamma=-1", "positive"},
		{"text+", "empty term"},
		{"bow", "unknown kernel"},
		{"text+rbf:gamma=x", "rbf gamma"},
	} {
		if _, err := ParseSpec(tc.in); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: error %v, want one mentioning %q", tc.in, err, tc.msg)
		}
	}
}

// FuzzParseSpec: any accepted specification prints in a canonical
// form that parses back to itself.
func FuzzParseSpec(f *testing.F) {
	fuzzCanonical(f, []string{"text", "text+rbf:gamma=0.5", "TEXT-RBF:gamma=2+identity", "text+linear", "rbf", "text:x", "+", "text-rbf:gamma=1e400", " linear + text "}, ParseSpec)
}

// TestConstWhite: const:V and white:V parse, print back, give V everywhere
// and V on the diagonal, and as bare terms are learnt starting at 1; their
// Gram gradient in log V is the Gram matrix.
func TestConstWhite(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		learn bool
		want  [][]float64 // Gram matrix of 2 items
		cross float64     // cross covariance of a new item
	}{
		{"const:0.5", false, [][]float64{{0.5, 0.5}, {0.5, 0.5}}, 0.5},
		{"white:2", false, [][]float64{{2, 0}, {0, 2}}, 0},
		{"const", true, [][]float64{{1, 1}, {1, 1}}, 1},
		{"white", true, [][]float64{{1, 0}, {0, 1}}, 0},
	} {
		ks, err := ParseSpec(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		term := ks[0]
		if term.Learn != tc.learn || term.Cov.Covariates() {
			t.Errorf("%s: learn %v covariates %v", tc.spec, term.Learn, term.Cov.Covariates())
		}
		if back, err := ParseSpec(term.String()); err != nil || back[0].Cov != term.Cov {
			t.Errorf("%s: printed %q reads back as %v, %v", tc.spec, term.String(), back, err)
		}
		var g mat.SymDense
		term.Cov.GramTo(&g, Inputs{N: 2})
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				if g.At(i, j) != tc.want[i][j] {
					t.Errorf("%s: K[%d,%d] = %v, want %v", tc.spec, i, j, g.At(i, j), tc.want[i][j])
				}
			}
		}
		var c mat.Dense
		term.Cov.CrossTo(&c, Inputs{N: 1}, Inputs{N: 2})
		if c.At(0, 0) != tc.cross || c.At(0, 1) != tc.cross {
			t.Errorf("%s: cross %v, want %v", tc.spec, mat.Formatted(&c), tc.cross)
		}
		h := term.Cov.(Hyper)
		grad := make([]*mat.SymDense, 1)
		h.GramGradTo(grad, Inputs{N: 2})
		p := h.HyperTo(make([]float64, 1), 0)
		const e = 1e-6
		var up, dn mat.SymDense
		h.WithHyper([]float64{p[0] + e}).GramTo(&up, Inputs{N: 2})
		h.WithHyper([]float64{p[0] - e}).GramTo(&dn, Inputs{N: 2})
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				if fd := (up.At(i, j) - dn.At(i, j)) / (2 * e); math.Abs(grad[0].At(i, j)-fd) > 1e-6 {
					t.Errorf("%s: dK/dlogV[%d,%d] = %v, finite difference %v", tc.spec, i, j, grad[0].At(i, j), fd)
				}
			}
		}
	}
	for _, bad := range []string{"const:0", "white:-1", "const:x", "white:inf"} {
		if _, err := ParseSpec(bad); err == nil || !strings.Contains(err.Error(), "must be a positive number") {
			t.Errorf("%s: error %v", bad, err)
		}
	}
}
