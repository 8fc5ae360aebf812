package annotations

import (
	"math"
	"slices"
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
// unique in its project. Kind is RaterHuman ("" reads as human) or
// RaterModel: an LLM judge or classifier, whose labels may carry a
// probability (Label.Prob) and which the judge report sets beside the humans.
type Rater struct {
	ID   string `json:"id"`
	Kind string `json:"kind,omitempty"`
}

// The rater kinds.
const (
	RaterHuman = "human"
	RaterModel = "model"
)

// Label is one rater's label for one item. Value is the canonical value
// (Scheme.Normalize): a level code, or a number for bounded schemes. A rater
// has at most one label per item unless the labels were read or imported
// with DuplicatesKeep; repeated labels then follow each other in file order.
//
// Prob is the rater's probability of the label given, in (0, 1], where the
// file carried one (a model rater's confidence); 0 means none, and the
// label is hard evidence. The consensus models read a label with Prob p as
// soft evidence: the distribution q with q(given) = p and (1-p)/(K-1) on
// each other class, passed through the rater's own reliability model.
type Label struct {
	Item  string  `json:"item_id"`
	Rater string  `json:"rater_id"`
	Value string  `json:"label"`
	Prob  float64 `json:"prob,omitempty"`
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
	if err := CheckProb(l.Prob); err != nil {
		return err
	}
	return nil
}

// CheckProb checks a label's probability: 0 (none) or a number in (0, 1].
func CheckProb(p float64) error {
	if p == 0 || (p > 0 && p <= 1) {
		return nil
	}
	return Errorf(EINVALID, "probability %v is not in (0, 1] (expected the rater's probability of the label given, or none)", p)
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
	// ModelRaters lists the raters marked as models (Rater.Kind
	// RaterModel), sorted; every other rater is human.
	ModelRaters []string `json:"model_raters,omitempty"`
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

// IsModel reports whether the rater is marked as a model.
func (d *Dataset) IsModel(rater string) bool {
	_, ok := slices.BinarySearch(d.ModelRaters, rater)
	return ok
}

// HasProbs reports whether any label carries a probability.
func (d *Dataset) HasProbs() bool {
	for i := range d.Labels {
		if d.Labels[i].Prob != 0 {
			return true
		}
	}
	return false
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
