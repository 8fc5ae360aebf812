// Package annotations is concord's domain: projects, their label schemes, the
// items raters label, the raters, the labels themselves and the fits run on
// them, together with the Store interfaces that the db package implements.
//
// It also owns getting labels in and out of files: the parsers for every import
// format (CSV/TSV long and wide, XLSX, JSON, JSON Lines, Label Studio and
// doccano exports), the writers for every export format, and validation that
// reports each problem with its file, line or row, column and what was
// expected.
//
// The package imports nothing else of concord's; every other package may
// import it.
package annotations
