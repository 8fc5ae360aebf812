package textfeat

import (
	"slices"
	"strconv"
)

// Number words (English short scale). Rogers et al. sec. 4 convert "all
// numbers to digits"; these tables and parseNumber implement that for
// cardinal number words.

type numKind uint8

const (
	numNone    numKind = iota
	numUnit            // one..nine
	numTeen            // ten..nineteen
	numTens            // twenty..ninety
	numHundred         // hundred
	numScale           // thousand, million, billion, trillion
	numZero            // zero
)

type numWord struct {
	kind  numKind
	value int64
}

var numberWords = map[string]numWord{
	"zero": {numZero, 0},
	"one":  {numUnit, 1}, "two": {numUnit, 2}, "three": {numUnit, 3}, "four": {numUnit, 4},
	"five": {numUnit, 5}, "six": {numUnit, 6}, "seven": {numUnit, 7}, "eight": {numUnit, 8},
	"nine": {numUnit, 9},
	"ten":  {numTeen, 10}, "eleven": {numTeen, 11}, "twelve": {numTeen, 12}, "thirteen": {numTeen, 13},
	"fourteen": {numTeen, 14}, "fifteen": {numTeen, 15}, "sixteen": {numTeen, 16},
	"seventeen": {numTeen, 17}, "eighteen": {numTeen, 18}, "nineteen": {numTeen, 19},
	"twenty": {numTens, 20}, "thirty": {numTens, 30}, "forty": {numTens, 40}, "fifty": {numTens, 50},
	"sixty": {numTens, 60}, "seventy": {numTens, 70}, "eighty": {numTens, 80}, "ninety": {numTens, 90},
	"hundred":  {numHundred, 100},
	"thousand": {numScale, 1e3}, "million": {numScale, 1e6}, "billion": {numScale, 1e9},
	"trillion": {numScale, 1e12},
}

// unitOrdinals are the ordinal words first..ninth. Ordinal words are never
// converted (see package documentation); a tens word directly followed by
// one of these ("twenty-first", "twenty first") is a compound ordinal and is
// left as words too.
var unitOrdinals = map[string]bool{
	"first": true, "second": true, "third": true, "fourth": true, "fifth": true,
	"sixth": true, "seventh": true, "eighth": true, "ninth": true,
}

// parseNumber reads the longest well-formed cardinal number phrase starting
// at parts[i] and returns its value in digits and the index just after it.
// ok is false if parts[i] does not start a number phrase, or if the phrase
// ends in a tens word followed by first..ninth (a compound ordinal).
//
// Grammar (each step is one part; parts may be joined by spaces or hyphens):
//
//	number = "zero" | group { scale [ "and" ] group } [ scale ]
//	group  = small | [ small ] "hundred" [ "and" ] [ small ]
//	small  = unit | teen | tens [ unit ]
//
// with scales strictly decreasing (thousand after million, ...). "and" is
// accepted only after "hundred" or a scale word and before a unit, teen or
// tens word: "one hundred and five" = 105. A word that cannot continue the
// phrase ends it, so "one two" is two numbers, 1 and 2.
func parseNumber(parts []part, i int) (digits string, end int, ok bool) {
	w, isNum := numberWords[parts[i].text]
	if !isNum {
		return "", i, false
	}
	if w.kind == numZero {
		return "0", i + 1, true
	}
	var n numberPhrase
	j := i
	for ; j < len(parts); j++ {
		if parts[j].text == "and" {
			if !n.andContinues(parts, j) {
				break
			}
			continue // "and" itself contributes nothing; last stays hundred/scale
		}
		w, isNum := numberWords[parts[j].text]
		if !isNum || !n.add(w) {
			break
		}
	}
	if n.last == numTens && j < len(parts) && unitOrdinals[parts[j].text] {
		return "", i, false
	}
	return strconv.FormatInt(n.total+n.group, 10), j, true
}

// numFollows lists, for each kind of number word, the kinds of word it may
// follow in a phrase (numNone: it starts the phrase): the grammar of
// parseNumber. Zero starts a phrase of its own and follows nothing.
var numFollows = map[numKind][]numKind{
	numUnit:    {numNone, numTens, numHundred, numScale},
	numTeen:    {numNone, numHundred, numScale},
	numTens:    {numNone, numHundred, numScale},
	numHundred: {numNone, numUnit, numTeen, numTens},
	numScale:   {numNone, numUnit, numTeen, numTens, numHundred},
}

// numberPhrase is the value of a number phrase read so far: the completed
// scale groups (total), the group being read, the kind of the last word
// and the smallest scale used (0 for none).
type numberPhrase struct {
	total, group int64
	last         numKind
	lastScale    int64
}

// add continues the phrase with w, or returns false when w cannot continue
// it: a word of a kind that may not follow the last, "hundred" after a
// group of a hundred or more, or a scale not below the last one.
func (n *numberPhrase) add(w numWord) bool {
	if !slices.Contains(numFollows[w.kind], n.last) {
		return false
	}
	switch w.kind {
	case numUnit, numTeen, numTens:
		n.group += w.value
	case numHundred:
		switch {
		case n.last == numNone:
			n.group = 100
		case n.group >= 100:
			return false
		default:
			n.group *= 100
		}
	case numScale:
		if n.lastScale != 0 && w.value >= n.lastScale {
			return false
		}
		if n.last == numNone {
			n.group = 1
		}
		n.total += n.group * w.value
		n.group = 0
		n.lastScale = w.value
	}
	n.last = w.kind
	return true
}

// andContinues reports whether the "and" at parts[j] continues the phrase:
// after "hundred" or a scale word, before a unit, teen or tens word.
func (n *numberPhrase) andContinues(parts []part, j int) bool {
	if n.last != numHundred && n.last != numScale || j+1 >= len(parts) {
		return false
	}
	nw, isNum := numberWords[parts[j+1].text]
	return isNum && (nw.kind == numUnit || nw.kind == numTeen || nw.kind == numTens)
}
