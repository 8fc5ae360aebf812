package annotations

import (
	"errors"
	"strings"
	"testing"
)

// A label file without a header line (issue 36 item 10): its first row was
// read as a wide table's header and every later row failed with messages
// about unknown levels "r1" and raters "1". The reader now says that the
// header looks like data, once, at line 1; a real wide table whose rater
// is named like a label is still read.
func TestHeaderlessFileSaysSo(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"long form without header", "a1,r1,1\na2,r1,2\na1,r2,2\na2,r2,1\n", `this line ("a1", "r1", "1") was read as the header and looks like data: "r1", the name of column 2, is also a value of that column (line 2)`},
		{"a wide table", "essay,r1,r2\ne1,1,2\ne2,2,2\n", ""},
		{"a wide table, a rater named 2", "item_id,1,2\ne1,1,2\ne2,2,2\n", ""},
	} {
		p, err := ReadLabels(strings.NewReader(tc.in), ReadOptions{Name: "f.csv"})
		var pl *ProblemList
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.As(err, &pl) || len(pl.Problems) != 1 || !strings.Contains(pl.Problems[0].Msg, tc.want) || pl.Problems[0].Line != 1):
			t.Errorf("%s: %v (parsed %v); want one problem at line 1 containing %q", tc.name, err, p, tc.want)
		}
	}
}
