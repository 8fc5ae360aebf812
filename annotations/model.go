package annotations

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Project is a set of items labelled by raters under one scheme.
type Project struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Scheme    Scheme    `json:"scheme"`
	CreatedAt time.Time `json:"created_at"`
}

// MaxNameLen bounds project names and item and rater ids.
const MaxNameLen = 200

// Validate checks the project's name and scheme.
func (p *Project) Validate() error {
	if err := validateID("project name", p.Name); err != nil {
		return err
	}
	if p.Scheme.Open() {
		return Errorf(EINVALID, "project %q: binary scheme %s must name both classes", p.Name, p.Scheme)
	}
	if err := p.Scheme.Validate(); err != nil {
		return Errorf(EINVALID, "project %q: %s", p.Name, ErrorMessage(err))
	}
	return nil
}

// ProjectSummary is a project with its counts.
type ProjectSummary struct {
	Project
	Items  int `json:"items"`
	Raters int `json:"raters"`
	Labels int `json:"labels"`
}

// Item is one thing that raters label. ID is the external id, unique in its
// project. Text is optional (it feeds the text kernel), Gold an optional
// reference label kept for evaluation only (never a model input), Covariates
// optional numeric features, Attrs any other columns of the items file, kept
// verbatim.
type Item struct {
	ID         string             `json:"id"`
	Text       string             `json:"text,omitempty"`
	Gold       string             `json:"gold,omitempty"`
	Covariates map[string]float64 `json:"covariates,omitempty"`
	Attrs      map[string]string  `json:"attrs,omitempty"`
}

// Validate checks the item's id and covariates.
func (it *Item) Validate() error {
	if err := validateID("item id", it.ID); err != nil {
		return err
	}
	if !utf8.ValidString(it.Text) {
		return Errorf(EINVALID, "item %q: text is not valid UTF-8", it.ID)
	}
	for k, v := range it.Covariates {
		if k == "" {
			return Errorf(EINVALID, "item %q: covariate with an empty name", it.ID)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Errorf(EINVALID, "item %q: covariate %q is %v (expected a finite number)", it.ID, k, v)
		}
	}
	return nil
}

// Rater is one person (or system) who labels items. ID is the external id,
// unique in its project.
type Rater struct {
	ID string `json:"id"`
}

// Label is one rater's label for one item. Value is the canonical value
// (Scheme.Normalize): a level code, or a number for bounded schemes. A rater
// has at most one label per item unless the labels were read or imported
// with DuplicatesKeep; repeated labels then follow each other in file order.
type Label struct {
	Item  string `json:"item_id"`
	Rater string `json:"rater_id"`
	Value string `json:"label"`
}

// Validate checks the ids and that the value belongs to the scheme (already
// in canonical form).
func (l *Label) Validate(s Scheme) error {
	if err := validateID("item id", l.Item); err != nil {
		return err
	}
	if err := validateID("rater id", l.Rater); err != nil {
		return err
	}
	v, err := s.Normalize(l.Value)
	if err != nil {
		return err
	}
	if v != l.Value {
		return Errorf(EINVALID, "label %q is not in canonical form %q", l.Value, v)
	}
	return nil
}

func validateID(what, id string) error {
	switch {
	case id == "":
		return Errorf(EINVALID, "empty %s", what)
	case strings.TrimSpace(id) != id:
		return Errorf(EINVALID, "%s %q has leading or trailing spaces", what, id)
	case !utf8.ValidString(id):
		return Errorf(EINVALID, "%s is not valid UTF-8", what)
	case len(id) > MaxNameLen:
		return Errorf(EINVALID, "%s is %d bytes long (at most %d)", what, len(id), MaxNameLen)
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return Errorf(EINVALID, "%s %q contains a control character", what, id)
		}
		if isNoncharacter(r) {
			// Not allowed in XML, so an XLSX export could not hold it.
			return Errorf(EINVALID, "%s %q contains the Unicode noncharacter %U", what, id, r)
		}
	}
	return nil
}

// isNoncharacter reports whether r is one of Unicode's 66 noncharacters
// (U+FDD0..U+FDEF and the last two code points of every plane).
func isNoncharacter(r rune) bool {
	return r >= 0xFDD0 && r <= 0xFDEF || r&0xFFFE == 0xFFFE
}

// Dataset is a project's content in memory: its scheme, items and labels.
// Items may include items nobody labelled (they are predicted) and need not
// include every labelled item (those have no text or covariates).
type Dataset struct {
	Scheme Scheme  `json:"scheme"`
	Items  []Item  `json:"items,omitempty"`
	Labels []Label `json:"labels"`
	// Dropped counts the repeated labels BuildDataset dropped under
	// DuplicatesFirst (not part of the data; not serialised).
	Dropped int `json:"-"`
}

// ItemIDs returns the ids of every item in the dataset, items-file order first,
// then labelled items not in the items file in order of first label.
func (d *Dataset) ItemIDs() []string {
	seen := make(map[string]bool, len(d.Items))
	var ids []string
	for _, it := range d.Items {
		if !seen[it.ID] {
			seen[it.ID] = true
			ids = append(ids, it.ID)
		}
	}
	for _, l := range d.Labels {
		if !seen[l.Item] {
			seen[l.Item] = true
			ids = append(ids, l.Item)
		}
	}
	return ids
}

// RaterIDs returns the rater ids in order of first label.
func (d *Dataset) RaterIDs() []string {
	seen := map[string]bool{}
	var ids []string
	for _, l := range d.Labels {
		if !seen[l.Rater] {
			seen[l.Rater] = true
			ids = append(ids, l.Rater)
		}
	}
	return ids
}
