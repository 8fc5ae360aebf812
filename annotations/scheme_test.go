package annotations

import (
	"strings"
	"testing"
)

// TestNumberSyntax: labels, bounds and covariates are decimal numbers as
// written in files: "1_0" is not 10 (strconv.ParseFloat takes Go's digit
// separators), hexadecimal floats, inf and nan are not numbers, and -0 is
// stored as 0 (issue 19 item 10); an ordinal range beyond the limit names it.
func TestNumberSyntax(t *testing.T) {
	b := MustParseScheme("bounded:0..100")
	for _, raw := range []string{"1_0", "0x1p3", "inf", "NaN", "1e", ".", "--1"} {
		if _, err := b.Value(raw); err == nil {
			t.Errorf("Value(%q) accepted", raw)
		}
	}
	for raw, want := range map[string]string{"10": "10", "1e1": "10", "+7.50": "7.5", ".5": "0.5", "3.": "3"} {
		if got, err := b.Normalize(raw); err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	v := MustParseScheme("bounded:-1..1")
	if got, err := v.Normalize("-0"); err != nil || got != "0" {
		t.Errorf(`Normalize("-0") = %q, %v; want "0"`, got, err)
	}
	if _, err := ParseScheme("bounded:1_0..20"); err == nil {
		t.Errorf("bounded:1_0..20 accepted")
	}
	o := MustParseScheme("ordinal:1..5")
	if _, err := o.Normalize("1_0"); err == nil {
		t.Errorf(`ordinal Normalize("1_0") accepted`)
	}
	_, err := ParseScheme("ordinal:1..3000")
	if err == nil || !strings.Contains(ErrorMessage(err), "has 3000 levels; an ordinal range has at most 1001") {
		t.Errorf("ordinal:1..3000: %v", err)
	}
	if s, err := ParseScheme("ordinal:0..1000"); err != nil || s.K() != 1001 {
		t.Errorf("ordinal:0..1000: %v", err)
	}
}
