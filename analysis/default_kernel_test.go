package analysis

import (
	"testing"

	"concord/annotations"
	"concord/textfeat"
)

// TestDefaultKernelFor: without a kernel, a fit uses the items' texts
// (kernel text) except a classification or robust fit whose items are all
// labelled, which takes the labels alone (identity; on the demo's RTE
// project the text kernel's default classification fit did not converge,
// and the robust one ran for over 20 minutes); text featuriser settings ask for
// the texts; concord eval, which predicts held-out items, uses them too.
func TestDefaultKernelFor(t *testing.T) {
	rte := rteSample(t) // binary, every item labelled, texts
	withUnlabelled := *rte
	withUnlabelled.Items = append(append([]annotations.Item(nil), rte.Items...), annotations.Item{ID: "new", Text: "a new text pair"})
	noText := *rte
	noText.Items = nil
	for _, tc := range []struct {
		name string
		ds   *annotations.Dataset
		spec FitSpec
		want string
	}{
		{"classification, every item labelled", rte, FitSpec{Model: ModelClassification}, "identity"},
		{"classification, an item to predict", &withUnlabelled, FitSpec{Model: ModelClassification}, "text"},
		{"classification with text settings", rte, FitSpec{Model: ModelClassification, Text: textfeat.Options{Stem: true}}, "text"},
		{"classification, kernel named", rte, FitSpec{Model: ModelClassification, Kernel: "text"}, "text"},
		{"classification, no texts", &noText, FitSpec{Model: ModelClassification}, "identity"},
		{"robust, every item labelled", rte, FitSpec{Model: ModelRobust}, "identity"},
		{"robust, an item to predict", &withUnlabelled, FitSpec{Model: ModelRobust}, "text"},
		{"ordinal (essays, every item labelled)", asapSample(t), FitSpec{}, "text"},
	} {
		if got := tc.spec.ForData(tc.ds).Kernel; got != tc.want {
			t.Errorf("%s: kernel %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := (EvalSpec{Fit: FitSpec{Model: ModelClassification}}).ForData(rte).Fit.Kernel; got != "text" {
		t.Errorf("eval of a classification model: kernel %q, want text (held-out items are predicted from their texts)", got)
	}
	if k, why := DefaultKernelFor(ModelClassification, 800, 0); k != "identity" || why == "" {
		t.Errorf("DefaultKernelFor(classification, 800 texts, 0 unlabelled) = %q, %q", k, why)
	}
}
