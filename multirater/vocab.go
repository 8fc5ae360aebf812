package multirater

import (
	"fmt"
	"strings"
	"time"
)

// Rating is one observed rating: rater Rater gave item Item the level with
// index Level (0 is the lowest level). Item and Rater index the id lists of
// the data.
type Rating struct {
	Item, Rater, Level int
}

// Enum is the table of an enumeration's names, in the order of its values
// 0, 1, ...: the one place its String and Parse functions read.
type Enum[E ~int] struct {
	// Type names the type in the text of a value outside the table:
	// "Sampler(7)".
	Type string
	// Names are the values' names; Aliases are more names of some.
	Names   []string
	Aliases map[string]E
	// Lenient parsing ignores case and surrounding space and reads "" as
	// the first value (the default).
	Lenient bool
	// Unknown is the format of the error on a name not in the table, with
	// the name (%q) as its one argument.
	Unknown string
}

// String returns e's name, or Type(e) for a value outside the table.
func (t Enum[E]) String(e E) string {
	if e >= 0 && int(e) < len(t.Names) {
		return t.Names[e]
	}
	return fmt.Sprintf("%s(%d)", t.Type, int(e))
}

// Parse returns the value named s.
func (t Enum[E]) Parse(s string) (E, error) {
	name := s
	if t.Lenient {
		if name = strings.ToLower(strings.TrimSpace(s)); name == "" {
			return 0, nil
		}
	}
	for i, n := range t.Names {
		if n == name {
			return E(i), nil
		}
	}
	if e, ok := t.Aliases[name]; ok {
		return e, nil
	}
	return 0, fmt.Errorf(t.Unknown, s)
}

// Unmarshal sets *e to the value named b (Parse), for UnmarshalText.
func (t Enum[E]) Unmarshal(b []byte, e *E) error {
	v, err := t.Parse(string(b))
	if err == nil {
		*e = v
	}
	return err
}

// Identifiability says how the scale and location of the latent scale are
// pinned down (Rogers et al. sec. 2.1.1).
type Identifiability int

// ParseIdentifiability reads "weak", "strong" or "both" ("" means weak).
func ParseIdentifiability(s string) (Identifiability, error) { return identifiabilities().Parse(s) }

func (i Identifiability) String() string { return identifiabilities().String(i) }

func identifiabilities() Enum[Identifiability] {
	return Enum[Identifiability]{Type: "Identifiability", Names: []string{"weak", "strong", "both"}, Lenient: true,
		Unknown: "unknown identifiability %q (expected weak, strong or both)"}
}

const (
	// Weak fixes no parameter; the proper priors on precisions and
	// thresholds make the posterior identifiable.
	Weak Identifiability = iota
	// Strong fixes the reference rater's precision at 1 and first
	// threshold at 0. The other parameters get vague proper priors by
	// default (Lambda = 0.1, SigmaB = 10): the paper's "fixed"
	// configuration used improper ones (Gamma(0, 0), flat thresholds), which
	// leave the posterior improper (a rater whose labels are consistent
	// with the consensus can have an unbounded precision, and flat
	// thresholds let a rater's scale grow without bound).
	Strong
	// Both fixes the reference rater as Strong does and keeps the
	// informative priors of Weak (the paper's recommendation, sec. 3.1).
	Both
)

// Defaults every model family shares.
const (
	// DefaultFlagThreshold is the posterior predictive probability below
	// which a label is flagged.
	DefaultFlagThreshold = 0.05
	// DefaultKeepDraws bounds the joint posterior draws kept in a result.
	DefaultKeepDraws = 500
	// DefaultMaxRhat and DefaultMinESS are the convergence limits of an
	// MCMC fit's verdict (split R-hat below, bulk ESS at least).
	DefaultMaxRhat = 1.01
	DefaultMinESS  = 400
)

// DataError is a problem with the data of a fit, as opposed to a caller's
// mistake (which panics): no ratings, a rating given twice, a rater without
// ratings, an unknown reference rater, a kernel matrix that is not positive
// semidefinite. Msg says what is wrong without the package prefix, for
// users; Error adds it. Use errors.As to tell a DataError from other
// failures.
type DataError struct {
	Msg string
}

func (e *DataError) Error() string { return "multirater: " + e.Msg }

// DataErrorf returns a *DataError with the formatted message.
func DataErrorf(format string, args ...any) error {
	return &DataError{Msg: fmt.Sprintf(format, args...)}
}

// Progress reports how far a fit has got. The samplers call the progress
// callback about twice a second while sampling, once when the chains are done
// and once when the result is ready.
type Progress struct {
	// Fraction of the work done, 0..1.
	Fraction float64
	// Elapsed is the time since the fit started; ETA estimates the time
	// left (0 when unknown).
	Elapsed time.Duration
	ETA     time.Duration
	// MaxRhat is the current maximum split R-hat of the rater precisions
	// over the draws kept so far (0 until every chain has kept 8 draws).
	MaxRhat float64
	// Phase is "burn-in", "sampling", "summarising" or "done".
	Phase string
}

// CandidateProgress is the progress callback of candidate k (from 0) of a
// model choice among total candidates that started at start: it passes
// the candidate's progress to report as the choice's (the fraction
// (k + f) / total, the time since start) and names its "done" phase after
// the candidate. It is nil when report is.
func CandidateProgress(report func(Progress), k, total int, start time.Time, name string) func(Progress) {
	if report == nil {
		return nil
	}
	return func(p Progress) {
		p.Fraction = (float64(k) + p.Fraction) / float64(total)
		p.Elapsed = time.Since(start)
		if p.Phase == "done" {
			p.Phase = "candidate " + name
		}
		report(p)
	}
}
