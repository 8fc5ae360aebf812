package textfeat

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// FuzzTokenize checks that the fast paths of the text folding agree with
// full NFC + lower-casing, that Tokenize never panics and that every token is
// non-empty, valid UTF-8, lower case (a fixed point of strings.ToLower),
// free of white space, and never a stop word when stop words are removed;
// and that canonically equivalent texts (NFC vs NFD) give the same tokens.
// The seed corpus runs as part of go test.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"", "Four month old", "4-month-old", "four-month old", "6 years old", "six-year-olds",
		"one hundred and five", "twenty-one", "twenty-first", "nine hundred ninety nine thousand",
		"It's the patient's don\u2019t O'Brien 'quoted'", "follow-up x\u2011ray -- \u2014 -5 pre-",
		"1,000,000 0.4 12,3456 9/11 $10m", "Café Cafe\u0301 ΟΔΟΣ İstanbul Straße ǅ", "東京タワー مرحبا नमस्ते",
		"co\u00adoperate heart\u200blung \ufeffbom", "\u0301\u0301a", "'s 's' -'-", "\xff\xfe broken utf8 \xc3",
		"ΣΑΣ σς ϒ Ⅻ ½ ² ①", "a\u0345\u0399", "and and hundred and", "twenty twenty one one",
		"1.5.6-yr-olds 3-4 year old", "ﬁle ß ẞ", "Running generously follow-ups",
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(7))
	}
	f.Fuzz(func(t *testing.T, text string, flags uint8) {
		if utf8.ValidString(text) {
			if got, want := foldText(text), cases.Lower(language.Und).String(norm.NFC.String(text)); got != want {
				t.Fatalf("foldText(%q) = %q, want %q", text, got, want)
			}
		}
		opts := Options{Stem: flags&1 != 0, KeepStopWords: flags&2 != 0, Bigrams: flags&4 != 0}
		toks := Tokenize(text, opts)
		for _, tok := range toks {
			switch {
			case tok == "":
				t.Fatalf("empty token in %q", toks)
			case !utf8.ValidString(tok):
				t.Fatalf("invalid UTF-8 token %q", tok)
			case strings.ToLower(tok) != tok:
				t.Fatalf("token %q is not lower case (%q)", tok, strings.ToLower(tok))
			case strings.IndexFunc(tok, unicode.IsSpace) >= 0:
				t.Fatalf("token %q contains white space", tok)
			case !opts.KeepStopWords && !opts.Stem && IsStopWord(tok):
				t.Fatalf("stop word %q left in %q", tok, toks)
			}
		}
		if nfd := norm.NFD.String(text); utf8.ValidString(text) {
			if got := Tokenize(nfd, opts); !slices.Equal(got, toks) {
				t.Fatalf("NFD text gives %q, NFC text %q", got, toks)
			}
		}
		terms := Terms(text, opts)
		if n := len(toks); opts.Bigrams && n > 1 {
			if len(terms) != 2*n-1 {
				t.Fatalf("%d terms for %d tokens with bigrams", len(terms), n)
			}
		} else if !slices.Equal(terms, toks) {
			t.Fatalf("Terms = %q, Tokenize = %q", terms, toks)
		}
	})
}
