package textfeat

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/cases"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// part is a piece of a word between hyphens. linked reports that the part
// was joined to the previous one by a hyphen ("follow-up" is the parts
// "follow" and linked "up").
type part struct {
	text   string
	linked bool
}

// Tokenize returns the tokens of text in order, after every normalisation
// step described in the package documentation: NFC, lower-casing, splitting,
// possessives, number words to digits, age phrases, stop-word removal (unless
// opts.KeepStopWords) and stemming (if opts.Stem). Bigrams are not formed
// here; see Terms. Only the tokenisation options of opts are used.
func Tokenize(text string, opts Options) []string {
	tk := tokenizer{opts: opts}
	return tk.tokenize(text)
}

// Terms returns the features of text: the tokens of Tokenize followed, if
// opts.Bigrams, by the bigrams of consecutive tokens, each two tokens joined
// by one space ("heart murmur"). Bigrams are formed after stop-word removal
// and stemming, as in scikit-learn's ngram_range=(1, 2).
func Terms(text string, opts Options) []string {
	tk := tokenizer{opts: opts}
	return tk.terms(text)
}

// maxStemCache bounds the memo of a tokenizer's stemmer.
const maxStemCache = 1 << 16

// tokenizer applies the rules of Tokenize under opts. stems, if not nil,
// memoises the stemmer (a pure function) for the goroutine that owns the
// tokenizer.
type tokenizer struct {
	opts  Options
	stems map[string]string
}

// newCachingTokenizer returns a tokenizer with a stem memo, for one
// goroutine featurising many documents.
func newCachingTokenizer(opts Options) *tokenizer {
	tk := &tokenizer{opts: opts}
	if opts.Stem {
		tk.stems = make(map[string]string)
	}
	return tk
}

func (tk *tokenizer) tokenize(text string) []string {
	parts := splitWords(foldText(text))
	parts = numbersToDigits(parts)
	parts = joinAgePhrases(parts)
	return tk.finish(parts)
}

func (tk *tokenizer) terms(text string) []string {
	toks := tk.tokenize(text)
	if !tk.opts.Bigrams || len(toks) < 2 {
		return toks
	}
	terms := make([]string, len(toks), 2*len(toks)-1)
	copy(terms, toks)
	for k := 1; k < len(toks); k++ {
		terms = append(terms, toks[k-1]+" "+toks[k])
	}
	return terms
}

func (tk *tokenizer) stem(tok string) string {
	if tk.stems == nil {
		return english.Stem(tok, true)
	}
	if s, ok := tk.stems[tok]; ok {
		return s
	}
	s := english.Stem(tok, true)
	if len(tk.stems) < maxStemCache {
		tk.stems[tok] = s
	}
	return s
}

// foldText returns text in Unicode normalisation form NFC and lower case
// (full Unicode lower-casing, with the Greek final sigma).
func foldText(text string) string {
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(text) // ASCII is already NFC
	}
	text = norm.NFC.String(text)
	// Full lower-casing differs from the simple per-rune mapping only for
	// runes that have a lower-case mapping (final sigma, U+0130). If no
	// non-ASCII rune has one (typographic quotes, accented lower case, most
	// scripts), lower-casing the ASCII letters is enough.
	for _, r := range text {
		if r >= utf8.RuneSelf && unicode.ToLower(r) != r {
			return cases.Lower(language.Und).String(text)
		}
	}
	return strings.ToLower(text)
}

const zeroWidthSpace = '\u200b'

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

func isApostrophe(r rune) bool { return r == '\'' || r == '\u2019' || r == '\u02bc' }

func isHyphen(r rune) bool { return r == '-' || r == '\u2010' || r == '\u2011' }

// isIgnorable reports format characters that are dropped without ending a
// word (soft hyphen, zero-width joiners, directional marks, BOM). The
// zero-width space is a word boundary instead.
func isIgnorable(r rune) bool { return r != zeroWidthSpace && unicode.Is(unicode.Cf, r) }

// nextRune returns the first rune of s[i:] that is not ignorable, or
// utf8.RuneError if there is none.
func nextRune(s string, i int) rune {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isIgnorable(r) {
			return r
		}
		i += size
	}
	return utf8.RuneError
}

func isASCIIDigit(b byte) bool { return '0' <= b && b <= '9' }

// isThousandsGroup reports whether s[i:] starts with exactly three ASCII
// digits (not followed by a fourth).
func isThousandsGroup(s string, i int) bool {
	if i+3 > len(s) {
		return false
	}
	for k := i; k < i+3; k++ {
		if !isASCIIDigit(s[k]) {
			return false
		}
	}
	return i+3 == len(s) || !isASCIIDigit(s[i+3])
}

// splitWords splits folded text into words and words into hyphen-linked
// parts. A word is a maximal run of letters, numbers and combining marks,
// with these joiners allowed between two such characters: an apostrophe
// (', U+2019, U+02BC; kept as '), a hyphen (-, U+2010, U+2011; splits the
// word into linked parts), a decimal point between two ASCII digits (kept)
// and a thousands comma between a digit and a group of exactly three digits
// (dropped). Everything else ends a word. Possessive 's is removed from words
// that are not in the stop-word list (which holds contractions such as
// "it's" and "let's").
func splitWords(s string) []part {
	var (
		parts  = make([]part, 0, len(s)/5+1)
		cur    []byte // the current part, when it differs from s[start:]
		start  = -1   // byte offset of the current part in s; -1 between parts
		dirty  bool   // cur, not s[start:end], holds the part's text
		linked bool
		first  int // index in parts of the current word's first part
	)
	flush := func(end int) {
		if start >= 0 {
			text := s[start:end]
			if dirty {
				text = string(cur)
			}
			parts = append(parts, part{text: text, linked: linked})
		}
		cur, start, dirty, linked = cur[:0], -1, false, false
	}
	endWord := func(end int) {
		flush(end)
		stripPossessive(parts[first:])
		first = len(parts)
	}
	// add appends s[i:next] to the current part; drop marks a dropped or
	// replaced character at i, after which the part is built in cur.
	add := func(i, next int) {
		if start < 0 {
			start = i
		}
		if dirty {
			cur = append(cur, s[i:next]...)
		}
	}
	drop := func(i int) {
		if !dirty {
			dirty = true
			cur = append(cur[:0], s[start:i]...)
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		next := i + size
		inWord := start >= 0
		switch {
		case isApostrophe(r): // before letters: U+02BC is a modifier letter
			if inWord && isWordRune(nextRune(s, next)) {
				if r != '\'' {
					drop(i)
					cur = append(cur, '\'')
				} else {
					add(i, next)
				}
			} else if inWord {
				endWord(i)
			}
		case isWordRune(r):
			add(i, next)
		case inWord && unicode.IsMark(r):
			add(i, next)
		case isIgnorable(r):
			// dropped, does not end the word
			if inWord {
				drop(i)
			}
		case inWord && isHyphen(r) && isWordRune(nextRune(s, next)):
			flush(i)
			linked = true
		case inWord && r == '.' && isASCIIDigit(s[i-1]) && next < len(s) && isASCIIDigit(s[next]):
			add(i, next)
		case inWord && r == ',' && isASCIIDigit(s[i-1]) && isThousandsGroup(s, next):
			drop(i) // thousands separator
		default:
			if inWord {
				endWord(i)
			}
		}
		i = next
	}
	endWord(len(s))
	return parts
}

// stripPossessive removes a final 's from the last part of a word unless the
// word is a stop word ("patient's" -> "patient", "it's" stays).
func stripPossessive(word []part) {
	if len(word) == 0 {
		return
	}
	last := &word[len(word)-1]
	if len(last.text) < 3 || !strings.HasSuffix(last.text, "'s") {
		return
	}
	if len(word) == 1 && smartStopWords[last.text] {
		return
	}
	last.text = last.text[:len(last.text)-2]
}

// numbersToDigits replaces each cardinal number-word phrase by its value in
// digits (see parseNumber). The phrase may span spaces and hyphens; the
// result takes the place (and hyphen link) of the phrase's first part.
func numbersToDigits(parts []part) []part {
	out := parts[:0] // in place: the write index never passes the read index
	for i := 0; i < len(parts); {
		if digits, end, ok := parseNumber(parts, i); ok {
			out = append(out, part{text: digits, linked: parts[i].linked})
			i = end
			continue
		}
		out = append(out, parts[i])
		i++
	}
	return out
}

// ageUnits maps the time units of age phrases (and their plurals and
// abbreviations) to the singular used in the joined token.
var ageUnits = map[string]string{
	"year": "year", "years": "year", "yr": "year", "yrs": "year",
	"month": "month", "months": "month", "mo": "month", "mos": "month",
	"week": "week", "weeks": "week", "wk": "week", "wks": "week",
	"day": "day", "days": "day",
	"hour": "hour", "hours": "hour", "hr": "hour", "hrs": "hour",
}

// isNumeral reports whether s is ASCII digits with at most one decimal point
// between digits ("4", "21", "1.5").
func isNumeral(s string) bool {
	if s == "" || !isASCIIDigit(s[0]) || !isASCIIDigit(s[len(s)-1]) {
		return false
	}
	dot := false
	for i := 0; i < len(s); i++ {
		switch {
		case isASCIIDigit(s[i]):
		case s[i] == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return true
}

// joinAgePhrases joins NUMBER UNIT old into the single token
// NUMBER_UNIT_old (Rogers et al. sec. 4: "Four month old would become
// 4_month_old"), whatever mix of spaces and hyphens separates the three
// parts. UNIT is one of ageUnits, written in the singular; "olds" (as in
// "4-year-olds") is accepted for "old". The joined token stands alone: it is
// unlinked from any hyphenated neighbours.
func joinAgePhrases(parts []part) []part {
	out := parts[:0] // in place
	for i := 0; i < len(parts); {
		if i+2 < len(parts) && isNumeral(parts[i].text) {
			unit := ageUnits[parts[i+1].text]
			old := parts[i+2].text
			if unit != "" && (old == "old" || old == "olds") {
				out = append(out, part{text: parts[i].text + "_" + unit + "_old"})
				i += 3
				if i < len(parts) {
					parts[i].linked = false
				}
				continue
			}
		}
		out = append(out, parts[i])
		i++
	}
	return out
}

// finish joins hyphen-linked parts into tokens, removes stop words and
// stems.
func (tk *tokenizer) finish(parts []part) []string {
	toks := make([]string, 0, len(parts))
	var b strings.Builder
	for i := 0; i < len(parts); {
		j := i + 1
		for j < len(parts) && parts[j].linked {
			j++
		}
		tok := parts[i].text
		if j > i+1 {
			b.Reset()
			b.WriteString(tok)
			for _, p := range parts[i+1 : j] {
				b.WriteByte('-')
				b.WriteString(p.text)
			}
			tok = b.String()
		}
		i = j
		if !tk.opts.KeepStopWords && smartStopWords[tok] {
			continue
		}
		if tk.opts.Stem && isStemmable(tok) {
			tok = tk.stem(tok)
		}
		toks = append(toks, tok)
	}
	return toks
}

// isStemmable reports whether tok is written in Latin letters (with
// apostrophes and hyphens): the English stemmer is applied only to such
// tokens, never to numbers, age tokens or other scripts.
func isStemmable(tok string) bool {
	letter := false
	for _, r := range tok {
		switch {
		case r == '\'' || r == '-':
		case unicode.Is(unicode.Latin, r):
			letter = true
		case unicode.IsMark(r):
		default:
			return false
		}
	}
	return letter
}
