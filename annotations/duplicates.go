package annotations

import "strings"

// Duplicates says what reading and importing do with repeated labels: more
// than one label of one rater for one item, as crowdsourcing exports often
// hold (a worker shown the same item twice).
type Duplicates string

const (
	// DuplicatesError refuses repeated labels, naming each with its
	// position (the default; "" means it too).
	DuplicatesError Duplicates = "error"
	// DuplicatesFirst keeps the first label of each (item, rater) pair in
	// file order and drops the others, counting them.
	DuplicatesFirst Duplicates = "first"
	// DuplicatesKeep keeps every label: repeated labels are separate
	// observations (the crowd case). The models count each as one more
	// likelihood term; the agreement coefficients that need one label per
	// rater and item use the first (see package analysis).
	DuplicatesKeep Duplicates = "keep"
)

// DuplicatesFlag is how messages name the setting: the command-line flag,
// and the field "duplicates" of the API's label uploads.
const DuplicatesFlag = "--duplicates keep|first"

// ParseDuplicates reads a Duplicates setting: "keep", "first", "error" or ""
// (error), case-insensitively.
func ParseDuplicates(s string) (Duplicates, error) {
	switch d := Duplicates(strings.ToLower(strings.TrimSpace(s))); d {
	case "", DuplicatesError:
		return DuplicatesError, nil
	case DuplicatesFirst, DuplicatesKeep:
		return d, nil
	}
	return "", Errorf(EINVALID, "duplicates %q: expected keep, first or error", s)
}

// Mode returns d with "" read as DuplicatesError.
func (d Duplicates) Mode() Duplicates {
	if d == "" {
		return DuplicatesError
	}
	return d
}

// duplicateHint ends every message about a repeated label.
const duplicateHint = " (accept repeated labels with " + DuplicatesFlag + `, or "duplicates" in the API)`

// Repeats returns the number of labels that repeat an (item, rater) pair
// seen before them: 0 unless the dataset was read with DuplicatesKeep.
func (d *Dataset) Repeats() int {
	type pair struct{ item, rater string }
	seen := make(map[pair]bool, len(d.Labels))
	n := 0
	for _, l := range d.Labels {
		k := pair{l.Item, l.Rater}
		if seen[k] {
			n++
		}
		seen[k] = true
	}
	return n
}
