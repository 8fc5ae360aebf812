package kernel

import (
	"strings"
	"testing"
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
	for _, s := range []string{"text", "text+rbf:gamma=0.5", "TEXT-RBF:gamma=2+identity", "text+linear", "rbf", "text:x", "+", "text-rbf:gamma=1e400", " linear + text "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ks, err := ParseSpec(s)
		if err != nil {
			return
		}
		again, err := ParseSpec(ks.String())
		if err != nil || again.String() != ks.String() {
			t.Fatalf("%q -> %q -> %v, %v", s, ks, again, err)
		}
	})
}
