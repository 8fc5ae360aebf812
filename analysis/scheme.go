package analysis

import (
	"concord/annotations"
)

// CheckScheme reports whether model suits a project's scheme (see
// Model.CheckScheme): the ordinal model needs an ordinal scheme, the
// classification model a nominal or binary one with at least two classes.
// The server checks it before it queues a fit, so that a mismatch is a 400,
// not a failed fit. "" is the default model.
func CheckScheme(model string, s annotations.Scheme) error {
	if model == "" {
		model = ModelOrdinal
	}
	m, err := LookupModel(model)
	if err != nil {
		return err
	}
	return m.CheckScheme(s)
}
