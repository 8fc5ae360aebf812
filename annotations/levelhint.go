package annotations

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// unknownLevels gathers the label values that are not levels of the scheme
// while BuildDataset reads the labels, so that a value that repeats is
// reported once, with its count and where it occurs, and the first such
// problem says which labels the file holds and which scheme would take them
// all: "label "0" appears 37 times (lines 12, 27, 42, 43, 232 and 32 more);
// labels present: 0, 1, 2, 3; did you mean ordinal:0..3?".
type unknownLevels struct {
	byValue map[string]*unknownLevel
	order   []string // values in file order of their first occurrence
}

type unknownLevel struct {
	n     int
	at    int      // index of the first occurrence's problem among those found
	where []string // positions of the first few occurrences
	unit  string   // "line", "record" or "row"
}

// maxPositions is how many positions of a repeated value are listed.
const maxPositions = 5

// seen records an occurrence of the unknown label value v at raw label rl
// and reports whether it is the first (whose problem is then recorded as
// problem number at).
func (u *unknownLevels) seen(v string, rl RawLabel, at int) bool {
	if u.byValue == nil {
		u.byValue = map[string]*unknownLevel{}
	}
	unit, pos := position(rl)
	b := u.byValue[v]
	if b == nil {
		b = &unknownLevel{at: at, unit: unit}
		u.byValue[v] = b
		u.order = append(u.order, v)
	}
	b.n++
	if len(b.where) < maxPositions && pos != "" {
		b.where = append(b.where, pos)
	}
	return b.n == 1
}

// position is a raw label's place in its file, for lists of places.
func position(rl RawLabel) (unit, pos string) {
	switch {
	case rl.Line > 0:
		return "line", strconv.Itoa(rl.Line)
	case rl.Row > 0:
		return "row", strconv.Itoa(rl.Row)
	}
	return "", ""
}

// annotate adds the counts and the hint to the problems found (indexed as
// recorded by seen) when some unknown value repeats.
func (u *unknownLevels) annotate(found func(at int) *Problem, s Scheme, labels []RawLabel) {
	repeated := false
	for _, v := range u.order {
		repeated = repeated || u.byValue[v].n > 1
	}
	if !repeated {
		return
	}
	for _, v := range u.order {
		b := u.byValue[v]
		if b.n == 1 {
			continue
		}
		p := found(b.at)
		places := strings.Join(b.where, ", ")
		if more := b.n - len(b.where); more > 0 {
			places += fmt.Sprintf(" and %d more", more)
		}
		p.Msg += fmt.Sprintf("; label %q appears %d times (%ss %s)", v, b.n, b.unit, places)
	}
	p := found(u.byValue[u.order[0]].at)
	p.Msg += "; " + labelsPresent(s, labels)
}

// labelsPresent lists the distinct label values of a file and, when one
// scheme takes them all, suggests it: "labels present: 0, 1, 2, 3; did you
// mean ordinal:0..3?".
func labelsPresent(s Scheme, labels []RawLabel) string {
	distinct := map[string]bool{}
	values := make([]string, 0, len(labels))
	for _, l := range labels {
		v := strings.TrimSpace(l.Value)
		if v == "" {
			continue
		}
		distinct[v] = true
		values = append(values, v)
	}
	keys := make([]string, 0, len(distinct))
	for k := range distinct {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, CompareIDs)
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = k
		if _, err := strconv.ParseFloat(k, 64); err != nil {
			quoted[i] = strconv.Quote(k)
		}
	}
	list := strings.Join(quoted, ", ")
	if len(quoted) > 12 {
		list = fmt.Sprintf("%d distinct values: %s, ..., %s", len(quoted), strings.Join(quoted[:5], ", "), quoted[len(quoted)-1])
	}
	msg := "labels present: " + list
	inf, _, err := InferScheme(values)
	if err != nil || inf.String() == s.String() {
		return msg
	}
	for k := range distinct {
		if _, err := inf.Normalize(k); err != nil {
			return msg
		}
	}
	return msg + "; did you mean " + inf.String() + "?"
}
