package bounded

import "testing"

// FuzzParseLikelihood: any input gives a canonical name or an error, and a
// canonical name parses to itself.
func FuzzParseLikelihood(f *testing.F) {
	for _, s := range []string{"", "beta", " TruncNorm ", "warped", "tg", "gamma", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, err := ParseLikelihood(s)
		if err != nil {
			return
		}
		if again, err := ParseLikelihood(name); err != nil || again != name {
			t.Fatalf("%q -> %q -> %q, %v", s, name, again, err)
		}
		newLik(name, 1) // every canonical name has a likelihood
	})
}
