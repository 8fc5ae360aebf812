package kernel

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kernel specifications name the covariance function of the Gaussian-process
// prior on the latent consensus (Rogers et al. sec. 2.2). Besides the kernels
// of ParseKernel on numeric covariates (identity, linear,
// rbf:gamma=G), a term can be
//
//   - text: the linear kernel x_i^T x_j on the items' unit-norm bag-of-words
//     vectors (Rogers et al. sec. 4 and 5, the paper's choice for documents);
//   - text:COLUMN: the same on the text of another items-file column (one
//     kept with the item, not joined into its text), with a featuriser of its
//     own: summing such terms ("text:title+text:body") keeps the columns'
//     words apart, so that a word in one column is a different feature from
//     the same word in another, and gives each column an equal weight (each
//     vector has unit norm);
//   - text-rbf:gamma=G: the RBF kernel exp(-G |x_i - x_j|^2) on the same
//     vectors (gamma 1 when omitted).
//
// Terms are summed ("text+rbf:gamma=0.5" adds an RBF on numeric covariates to
// the text kernel; "text+identity" adds an item-specific effect). Each text
// (the item text, or a column) has a featuriser (textfeat) fitted to the
// fitted items' texts with the FitSpec.Text options, and saved in the fit
// result with every item's bag of words, so that new documents are
// featurised identically.
//
// Zero rows. The linear text kernel is singular (rank at most the vocabulary
// size, and duplicate texts give equal rows), which the samplers handle: they
// never invert C. An item whose document has no vocabulary term (no text,
// only stop words, or only words below min_df), or whose covariates are all
// zero under the linear kernel, would have a zero row and column: a prior
// variance of 0 that pins its consensus at 0 whatever its labels say. Such an
// item (C_nn = 0, so its whole row is 0) gets C_nn = 1 instead: the identity
// kernel's prior (Johnson's model) for an item about which the features say
// nothing, with the prior variance of a unit-norm document. New items are
// treated the same way when predicted (prior variance 1, no covariance).

// Want is what a kernel specification may be, for error messages.
const Want = `expected identity, linear, rbf:gamma=G, rbf (gamma learnt by ep/laplace), ard, const:V, const (learnt), white:V, white (learnt), text, text:COLUMN, text-rbf:gamma=G or a sum such as "text+rbf:gamma=0.5"`

// TermKind is the kind of one term of a kernel sum.
type TermKind int

const (
	CovTerm     TermKind = iota // a Kernel on numeric covariates (or identity)
	TextTerm                    // linear kernel on text vectors
	TextRBFTerm                 // RBF kernel on text vectors
)

// Term is one term of a kernel specification.
type Term struct {
	Kind   TermKind
	Column string  // TextTerm: the items-file column, "" for the item text
	Gamma  float64 // TextRBFTerm
	Cov    Kernel  // CovTerm
	// Learn marks a covariate term whose hyperparameters are to be learnt
	// by the evidence (rbf without gamma, ard without gammas; Cov is then a
	// Hyper at its starting point). Engines that do not learn use Cov as
	// it is: rbf with gamma 1.
	Learn bool
}

// String returns the term in the grammar of ParseSpec.
func (t Term) String() string {
	switch t.Kind {
	case TextTerm:
		if t.Column != "" {
			return "text:" + t.Column
		}
		return "text"
	case TextRBFTerm:
		return "text-rbf:gamma=" + strconv.FormatFloat(t.Gamma, 'g', -1, 64)
	}
	return t.Cov.String()
}

// Spec is a parsed kernel specification: a sum of terms.
type Spec []Term

// ParseSpec reads a kernel specification (see Want): the one grammar of
// concord's kernels, for covariates and texts alike.
func ParseSpec(spec string) (Spec, error) {
	s := strings.TrimSpace(spec)
	if s == "" {
		return nil, fmt.Errorf("empty kernel specification (%s)", Want)
	}
	var ks Spec
	for _, raw := range strings.Split(s, "+") {
		t := strings.TrimSpace(raw)
		name, args, hasArgs := strings.Cut(t, ":")
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "text":
			col := strings.TrimSpace(args)
			if hasArgs && (col == "" || strings.Contains(col, "=")) {
				return nil, fmt.Errorf("kernel %q: expected text or text:COLUMN, the name of an items-file column (the featuriser settings are separate: min_df, max_features, weighting, stem, bigrams; use text-rbf:gamma=G for an RBF on the text vectors)", spec)
			}
			for _, o := range ks {
				if o.Kind == TextTerm && o.Column == col {
					return nil, fmt.Errorf("kernel %q: term %s is given twice", spec, Term{Kind: TextTerm, Column: col})
				}
			}
			ks = append(ks, Term{Kind: TextTerm, Column: col})
		case "text-rbf":
			g := 1.0
			if hasArgs {
				key, val, ok := strings.Cut(args, "=")
				if !ok || !strings.EqualFold(strings.TrimSpace(key), "gamma") {
					return nil, fmt.Errorf("kernel %q: text-rbf parameter %q: expected gamma=G", spec, args)
				}
				v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
				if err != nil || !(v > 0) || math.IsInf(v, 1) {
					return nil, fmt.Errorf("kernel %q: text-rbf gamma %q must be a positive number", spec, strings.TrimSpace(val))
				}
				g = v
			}
			ks = append(ks, Term{Kind: TextRBFTerm, Gamma: g})
		case "identity", "linear", "rbf", "ard", "const", "white":
			k, err := parseCovTerm(t)
			if err != nil {
				return nil, fmt.Errorf("kernel %q: %s", spec, err)
			}
			_, hyper := k.(Hyper)
			ks = append(ks, Term{Kind: CovTerm, Cov: k, Learn: hyper && !hasArgs})
		case "":
			return nil, fmt.Errorf("kernel %q: empty term (%s)", spec, Want)
		default:
			return nil, fmt.Errorf("kernel %q: unknown kernel %q (%s)", spec, strings.TrimSpace(name), Want)
		}
	}
	return ks, nil
}

// String returns the specification in the grammar of ParseSpec.
func (ks Spec) String() string {
	parts := make([]string, len(ks))
	for i, t := range ks {
		parts[i] = t.String()
	}
	return strings.Join(parts, "+")
}

// Text reports whether a term reads the item texts.
func (ks Spec) Text() bool {
	for _, t := range ks {
		if t.Kind != CovTerm {
			return true
		}
	}
	return false
}

// TextColumns returns the texts the terms read, in order of first use: ""
// for the item text, else an items-file column.
func (ks Spec) TextColumns() []string {
	var out []string
	for _, t := range ks {
		col := t.Column
		if t.Kind == CovTerm || slices.Contains(out, col) {
			continue
		}
		out = append(out, col)
	}
	return out
}

// Covariates reports whether a term reads numeric covariates.
func (ks Spec) Covariates() bool {
	for _, t := range ks {
		if t.Kind == CovTerm && t.Cov.Covariates() {
			return true
		}
	}
	return false
}

// Identity reports whether the kernel is the identity alone (C = I, which
// the samplers take as a nil covariance).
func (ks Spec) Identity() bool {
	if len(ks) != 1 || ks[0].Kind != CovTerm {
		return false
	}
	_, ok := ks[0].Cov.(Identity)
	return ok
}
