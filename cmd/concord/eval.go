package main

import (
	"flag"

	"concord/analysis"
	"concord/textfeat"
)

// kernelFlags are the kernel-input flags shared by fit and eval: which
// numeric columns the covariate kernels read, which items-file columns make
// the text, and the text featuriser's settings (Rogers et al. sec. 4
// defaults).
type kernelFlags struct {
	covariates  *string
	textColumns *string
	minDF       *int
	maxFeatures *int
	weighting   *string
	stem        *bool
	bigrams     *bool
}

func addKernelFlags(fs *flag.FlagSet) *kernelFlags {
	return &kernelFlags{
		covariates:  fs.String("covariates", "", `numeric item columns read by the linear and rbf kernel terms: none, all, or col,col (default: all numeric columns for a kernel without text; with a text term they must be named, so that a column such as a score derived from the labels is never used unasked)`),
		textColumns: fs.String("text-columns", "", "items-file columns joined into the item text (default: text)"),
		minDF:       fs.Int("min-df", 0, "text: keep terms occurring in at least this many documents (default 1)"),
		maxFeatures: fs.Int("max-features", 0, "text: keep at most this many terms, the most frequent (default 0: no limit)"),
		weighting:   fs.String("weighting", "", "text: term weighting count, binary or tfidf (default count); vectors are then scaled to unit norm"),
		stem:        fs.Bool("stem", false, "text: Snowball (Porter2) English stemming"),
		bigrams:     fs.Bool("bigrams", false, "text: add word bigrams as terms"),
	}
}

// apply sets the kernel-input fields of spec.
func (k *kernelFlags) apply(spec *analysis.FitSpec) {
	spec.Covariates = *k.covariates
	spec.Text = textfeat.Options{MinDF: *k.minDF, MaxFeatures: *k.maxFeatures, Weighting: textfeat.Weighting(*k.weighting), Stem: *k.stem, Bigrams: *k.bigrams}
}
