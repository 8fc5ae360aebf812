package annotations

import (
	"errors"
	"fmt"
	"strings"
)

// Error codes: the one error vocabulary of concord. The server maps each code
// to an HTTP status exactly once; the CLI prints the message.
const (
	ECONFLICT     = "conflict"      // the request conflicts with stored state (e.g. a different label for an existing (item, rater))
	EINTERNAL     = "internal"      // a bug or an unexpected failure
	EINVALID      = "invalid"       // the input is malformed or breaks a rule
	ENOTFOUND     = "not_found"     // the named thing does not exist (or is not visible to the caller)
	EUNAUTHORIZED = "unauthorized"  // no or bad credentials
	EFORBIDDEN    = "forbidden"     // credentials valid but not allowed to do this
	ETOOLARGE     = "too_large"     // the input exceeds a size limit
	ETOOMANY      = "too_many"      // a quota is used up (e.g. the fits a project may have queued); retry later
	EUNAVAILABLE  = "not_available" // the feature is not available in this build or state
)

// Error is a domain error with a machine-readable code and a message meant
// for the user.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error, and "" for nil. A *ProblemList is EINVALID.
func ErrorCode(err error) string {
	code, _ := describe(err)
	return code
}

// ErrorMessage returns the user-facing message of err: the message of the
// first *Error or *ProblemList in its chain, or "internal error" for anything
// else, so that internals never leak to users.
func ErrorMessage(err error) string {
	_, msg := describe(err)
	return msg
}

// describe returns the code (ErrorCode) and the user-facing message
// (ErrorMessage) of err.
func describe(err error) (code, msg string) {
	if err == nil {
		return "", ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code, e.Message
	}
	var pl *ProblemList
	if errors.As(err, &pl) {
		return EINVALID, pl.Error()
	}
	return EINTERNAL, "internal error"
}

// Problem is one defect found in an input file: where it is and what was
// expected there. Line is 1-based for text formats (CSV, JSON Lines, JSON where
// known); Row is 1-based for spreadsheet rows (XLSX) and records (JSON arrays);
// Column names the column, field or JSON path. Zero values mean "not
// applicable".
type Problem struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Row    int    `json:"row,omitempty"`
	Column string `json:"column,omitempty"`
	Msg    string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
	}
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.Row > 0 {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		fmt.Fprintf(&b, "row %d", p.Row)
	}
	if p.Column != "" {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "column %q", p.Column)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// DefaultMaxProblems is the number of problems a ProblemList keeps before it
// only counts further ones.
const DefaultMaxProblems = 100

// ProblemList collects the problems of one input, up to a cap, and is the
// error returned when an input is rejected. The zero value is ready to use
// with the cap DefaultMaxProblems.
type ProblemList struct {
	Problems []Problem `json:"problems"`
	// Omitted counts problems found after the cap was reached.
	Omitted int `json:"omitted,omitempty"`
	// Max is the cap; zero means DefaultMaxProblems.
	Max int `json:"-"`
}

// Add records a problem, or counts it as omitted when the cap is reached.
func (l *ProblemList) Add(p Problem) {
	max := l.Max
	if max <= 0 {
		max = DefaultMaxProblems
	}
	if len(l.Problems) >= max {
		l.Omitted++
		return
	}
	l.Problems = append(l.Problems, p)
}

// Full reports whether the cap has been reached, so that a parser may stop.
func (l *ProblemList) Full() bool {
	max := l.Max
	if max <= 0 {
		max = DefaultMaxProblems
	}
	return len(l.Problems) >= max
}

// Len returns the number of problems recorded, including omitted ones.
func (l *ProblemList) Len() int { return len(l.Problems) + l.Omitted }

// Err returns l as an error if it holds any problem, and nil otherwise.
func (l *ProblemList) Err() error {
	if l == nil || l.Len() == 0 {
		return nil
	}
	return l
}

func (l *ProblemList) Error() string {
	var b strings.Builder
	n := l.Len()
	if n == 1 {
		b.WriteString("1 problem:")
	} else {
		fmt.Fprintf(&b, "%d problems:", n)
	}
	for _, p := range l.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	if l.Omitted > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more", l.Omitted)
	}
	return b.String()
}
