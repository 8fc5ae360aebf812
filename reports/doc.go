// Package reports renders fit results for people and programs: the versioned
// JSON report document, the Excel workbook (excelize) and plots (gonum/plot,
// PNG and SVG).
package reports
