package multirater

import "encoding/json"

// Features records what a fit's kernel was computed from, so that new items
// can be predicted without refitting: the cross-covariances k(x_new, x_n)
// between a new item and the fitted items need the fitted items' features,
// and a text kernel needs the text featuriser (vocabulary and settings) too.
// Rows follow FitResult.Items. The application fills it after a fit; the
// samplers never read it. Documented in docs/fit-schema.md ("features").
type Features struct {
	// Covariates names the numeric covariates read by the kernel's
	// covariate terms (linear, rbf), in column order, and X[n] holds item
	// n's values. Both are empty when the kernel reads no covariates.
	Covariates []string    `json:"covariates,omitempty"`
	X          [][]float64 `json:"x,omitempty"`
	// Categorical names the items-file columns read as categories: their
	// one-hot indicators are among Covariates as "COLUMN=VALUE" (0 or 1,
	// never standardised).
	Categorical []string `json:"categorical,omitempty"`
	// Standardize, when present, says that X holds z-scores: covariate j
	// was centred by Means[j] and divided by SDs[j] (the fitted items' mean
	// and sd; a constant covariate has SD 0 and z-score 0), and new items'
	// covariates are transformed the same way.
	Standardize *Standardization `json:"standardize,omitempty"`
	// Text is the fitted text featuriser as the application saved it
	// (concord: a textfeat.Vectorizer, with its settings, vocabulary and
	// document frequencies); multirater does not interpret it. Empty when
	// the kernel has no text term.
	Text json.RawMessage `json:"text,omitempty"`
	// Terms[n] is item n's bag of words over that vocabulary: feature
	// indices and occurrence counts. With the featuriser's weighting and
	// unit-norm scaling it gives back the item's text vector exactly, at a
	// fraction of the size of the text or of the floating-point vector.
	Terms []TermCounts `json:"terms,omitempty"`
	// TextColumns are the featurisers and bags of words of the texts of
	// other items-file columns that the kernel reads (concord's
	// text:COLUMN terms), in the kernel's order; Text and Terms above are
	// the item text's.
	TextColumns []ColumnText `json:"text_columns,omitempty"`
}

// ColumnText is the text featuriser and the items' bags of words of one
// items-file column (see Features.Text and Features.Terms).
type ColumnText struct {
	Column string          `json:"column"`
	Text   json.RawMessage `json:"text"`
	Terms  []TermCounts    `json:"terms"`
}

// TermCounts is a document's bag of words: feature I[k] occurs N[k] times.
// I is strictly increasing and every N[k] is positive; an empty document has
// no entries.
type TermCounts struct {
	I []int32 `json:"i,omitempty"`
	N []int32 `json:"n,omitempty"`
}

// Standardization is the z-scoring of the covariates (Features.Standardize).
type Standardization struct {
	Means []float64 `json:"means"`
	SDs   []float64 `json:"sds"`
}

// Z returns the z-score of value v of covariate j (0 for a constant
// covariate).
func (s *Standardization) Z(j int, v float64) float64 {
	if s.SDs[j] == 0 {
		return 0
	}
	return (v - s.Means[j]) / s.SDs[j]
}
