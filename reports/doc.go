// Package reports renders fit results for people and programs: the
// versioned JSON report document (`concord.report/v1`, described by the
// JSON Schema of SchemaJSON), the Excel workbook (excelize, streamed), CSV
// tables and plots (gonum/plot, PNG and SVG). See docs/reports.md.
//
// Build (or BuildFit, for a result file read by ReadFit) makes a Report of
// a fit result, optionally with the agreement analysis of the same labels
// (package raters) and the dataset (gold labels). The writers take an
// io.Writer so that HTTP handlers can stream them: WriteJSON, WriteXLSX,
// WriteItemsCSV, WriteRatersCSV, WriteLabelErrorsCSV (robust fits) and
// WritePlot; WriteAll writes them all into a directory. Review lists the
// labels to look at first (the flags and the least probable others) and
// Glossary explains every number; both are sheets of the workbook. A Report is not modified by the writers, so one report
// may be rendered by several goroutines at once.
//
// The reports read the classification model's per-item class
// distribution ("class_probs", "class") by its JSON name, so ordinal and
// classification results go through the same code; fields a model does
// not fill are left out of the report, and the sheets and plots that need
// them are replaced by a note or left out. Fits of bounded ratings
// (model.output "values") make reports of kind "values": no levels, items
// with a value on the rating scale, raters with a dispersion, their own
// Items, Raters and Flags sheets and the consensus and dispersion plots.
// Fits of the robust model are classification reports with every label's
// probability of being a labelling error (Report.LabelErrors, the Label
// errors sheet and CSV table), each rater's error rate (Rater.Epsilon, the
// error-rates plot), the log evidence and the plain/robust selection.
//
// Dependency direction: reports imports multirater, raters and
// annotations; it is imported by server and cmd/concord.
package reports
