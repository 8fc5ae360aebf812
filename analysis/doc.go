// Package analysis is concord's application layer: it sits between the
// domain (package annotations: projects, schemes, items, raters, labels) and
// the statistics (packages multirater, raters and, for text, textfeat), and
// turns one into the other.
//
// It maps a Dataset with its string ids and level codes to the plain integer
// indices, matrices and options the statistical packages take, runs them and
// maps the results back to ids and codes: Fit for the multi-rater models
// (FitSpec describes a fit completely and serialises to JSON, so that a fit
// can be queued, stored and repeated), and the agreement document for the
// rater analytics. Input problems come back as annotations errors (EINVALID
// with what was expected), so that the server and the command line can
// report them as they are.
//
// Repeated labels (a rater labelling one item more than once; present in a
// Dataset only when read or imported with --duplicates keep): every model
// counts each as one more observation, an independent likelihood term given
// the item's latent consensus and the rater's parameters; the agreement
// report, whose coefficients need one label per rater and item, uses each
// rater's first label of an item (Table) and says so in its notes.
//
// Dependency direction: analysis imports annotations, multirater, raters and
// textfeat; it is imported by server and cmd/concord, never by the domain or
// the statistics.
package analysis
