package analysis

import (
	"strings"

	"concord/annotations"
)

// CheckScheme reports whether model suits a project's scheme: the ordinal
// model needs an ordinal scheme, the classification model a nominal or
// binary one with at least two classes. The server checks it before it
// queues a fit, so that a mismatch is a 400, not a failed fit.
func CheckScheme(model string, s annotations.Scheme) error {
	switch strings.ToLower(model) {
	case "", ModelOrdinal:
		if s.Kind != annotations.Ordinal {
			return annotations.Errorf(annotations.EINVALID, "the ordinal model needs an ordinal scheme; the scheme is %s (use model classification for nominal and binary labels)", s)
		}
	case ModelClassification:
		if s.Kind != annotations.Nominal && s.Kind != annotations.Binary {
			return annotations.Errorf(annotations.EINVALID, "the classification model needs a nominal or binary scheme; the scheme is %s (use model ordinal for ordinal labels)", s)
		}
		if s.K() < 2 {
			return annotations.Errorf(annotations.EINVALID, "the classification model needs at least 2 classes; the scheme %s has %d", s, s.K())
		}
	default:
		return annotations.Errorf(annotations.EINVALID, "unknown model %q (expected ordinal or classification)", model)
	}
	return nil
}
