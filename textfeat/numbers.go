package textfeat

import "strconv"

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
	var (
		total, group int64
		last         = numNone
		lastScale    = int64(0) // smallest scale used so far; 0 = none
	)
	j := i
	for ; j < len(parts); j++ {
		t := parts[j].text
		if t == "and" {
			if last != numHundred && last != numScale {
				break
			}
			if j+1 >= len(parts) {
				break
			}
			nw, isNum := numberWords[parts[j+1].text]
			if !isNum || (nw.kind != numUnit && nw.kind != numTeen && nw.kind != numTens) {
				break
			}
			continue // "and" itself contributes nothing; last stays hundred/scale
		}
		w, isNum := numberWords[t]
		if !isNum {
			break
		}
		accept := false
		switch w.kind {
		case numUnit:
			accept = last == numNone || last == numTens || last == numHundred || last == numScale
			if accept {
				group += w.value
			}
		case numTeen, numTens:
			accept = last == numNone || last == numHundred || last == numScale
			if accept {
				group += w.value
			}
		case numHundred:
			switch last {
			case numNone:
				accept, group = true, 100
			case numUnit, numTeen, numTens:
				accept = group < 100
				if accept {
					group *= 100
				}
			}
		case numScale:
			if lastScale == 0 || w.value < lastScale {
				switch last {
				case numNone:
					accept, group = true, 1
				case numUnit, numTeen, numTens, numHundred:
					accept = true
				}
			}
			if accept {
				total += group * w.value
				group = 0
				lastScale = w.value
			}
		}
		if !accept {
			break
		}
		last = w.kind
	}
	if last == numTens && j < len(parts) && unitOrdinals[parts[j].text] {
		return "", i, false
	}
	return strconv.FormatInt(total+group, 10), j, true
}
