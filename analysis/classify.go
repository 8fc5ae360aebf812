package analysis

import (
	"concord/annotations"
	"concord/multirater/classify"
)

// Precision settings of the classification model (FitSpec.Precisions).
const (
	PrecisionsInferred  = "inferred"
	PrecisionsFixed     = "fixed"
	PrecisionsFixedFull = "fixed-full"
)

// ClassData maps a nominal or binary dataset to the classification
// sampler's input: items in ds.ItemIDs order (items-file order, then
// labelled items not in the items file; items nobody labelled are kept and
// predicted), raters in order of first label, classes in scheme order. It
// does not set the covariance.
func ClassData(ds *annotations.Dataset) (*classify.Data, error) {
	m, _ := LookupModel(ModelClassification)
	if err := m.CheckScheme(ds.Scheme); err != nil {
		return nil, err
	}
	data := &classify.Data{
		ItemIDs:  ds.ItemIDs(),
		RaterIDs: ds.RaterIDs(),
		Classes:  ds.Scheme.Codes(),
	}
	var err error
	data.Labels, data.Repeats, err = indexRatings(ds, data.ItemIDs, data.RaterIDs, "class")
	if err != nil {
		return nil, err
	}
	return data, nil
}
