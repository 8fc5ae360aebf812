package annotations

import "fmt"

// Format names a label file format.
type Format string

// The label file formats. FormatAuto detects the format from the content (and
// the file name where the content is ambiguous).
const (
	FormatAuto        Format = "auto"
	FormatCSVLong     Format = "csv-long"
	FormatCSVWide     Format = "csv-wide"
	FormatXLSX        Format = "xlsx"
	FormatJSON        Format = "json"
	FormatJSONL       Format = "jsonl"
	FormatLabelStudio Format = "labelstudio"
	FormatDoccano     Format = "doccano"
)

// ReadOptions control reading a label or items file. The zero value reads
// with format detection and default limits.
type ReadOptions struct {
	// Format of the file; "" or FormatAuto detects it.
	Format Format
	// Name is the file name used in problem reports.
	Name string
	// Sheet selects an XLSX sheet by name; "" means the first sheet.
	Sheet string
	// Where keeps only the rows of a long-form table whose column (named
	// case-insensitively) equals the value, e.g. {"criterion": "k1"} for a
	// file that holds several rating criteria.
	Where map[string]string
	// TextColumns names the items-file columns whose values are joined (with
	// a newline) into the item text; nil means the column "text".
	TextColumns []string
	// MaxProblems caps the problems reported; 0 means DefaultMaxProblems.
	MaxProblems int
	// Duplicates says what BuildDataset does with repeated labels of one
	// rater for one item: refuse them ("" or DuplicatesError), keep the
	// first (DuplicatesFirst) or keep them all (DuplicatesKeep).
	Duplicates Duplicates
	// ItemCol, RaterCol and LabelCol name the item id, rater id and label
	// columns of a table (CSV, TSV, XLSX) or the fields of JSON records,
	// matched like the aliases (case-insensitively, spaces and hyphens as
	// underscores); "" means the aliases decide. Naming one makes a table
	// long form. LabelCol also picks the control of a Label Studio export
	// (its from_name, the column named after the control in JSON-MIN and
	// CSV exports).
	ItemCol, RaterCol, LabelCol string
	// Rater names the rater of records that name none: a doccano export
	// file (one per annotator, without an annotator field) or a table
	// without a rater column. "" takes the file name (without its
	// extension) for a doccano file, and leaves a table's rater column
	// required.
	Rater string
	// ProbCol names the column (or JSON field) holding each label's
	// probability, in (0, 1]; "" means the aliases decide (prob,
	// probability, confidence). An empty cell is a label without one.
	ProbCol string
	// ModelRaters marks raters as models (LLM judges, classifiers) besides
	// those a rater-kind column marks (is_model, rater_kind, rater_type:
	// model/human, true/false, yes/no, 1/0). Each must be a rater of the file.
	ModelRaters []string
}

// ColumnFlags are how messages name ItemCol, RaterCol, LabelCol and Rater:
// the command-line flags, with the API's form fields.
const (
	ItemColFlag  = "--item-col"
	RaterColFlag = "--rater-col"
	LabelColFlag = "--label-col"
	RaterFlag    = "--rater"
	ProbColFlag  = "--prob-col"
	ModelsFlag   = "--model-raters"
	TextColsFlag = "--text-columns"
)

// flagHint names a setting for messages: the command-line flag and the
// API's form field.
func flagHint(flag, field, arg string) string {
	return fmt.Sprintf("%s %s (%q in the API)", flag, arg, field)
}

// RawLabel is one label as read from a file, before validation against a
// scheme, with where it came from.
type RawLabel struct {
	Item  string
	Rater string
	Value string
	// Line is the 1-based text line (CSV, JSON Lines, and JSON where known);
	// Row the 1-based spreadsheet row or JSON array record.
	Line int
	Row  int
	// Columns the three values came from (header names, or JSON paths).
	ItemCol, RaterCol, ValueCol string
	// Prob is the probability cell ("" when none) and Kind the rater-kind
	// cell ("" when none), with their columns.
	Prob, Kind       string
	ProbCol, KindCol string
}

// Parsed is the content of a label file before validation.
type Parsed struct {
	// Format is the format read (detected or given).
	Format Format
	Name   string
	Labels []RawLabel
	// Items carries what the label file says about items (e.g. the task
	// text of a Label Studio or doccano export).
	Items []Item
	// Unused lists the columns that were present but not used, so that the
	// CLI can point at them (e.g. a "criterion" column that calls for
	// ReadOptions.Where).
	Unused []string
}
