package annotations

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
