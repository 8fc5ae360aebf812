package annotations

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestRepeatedUnknownLevelSummarised: labels 0-3 read with the scheme
// ordinal:1..4 give one problem for the value 0, with its count, the first
// lines, the labels present and the scheme that takes them, instead of one
// problem per line; a value that occurs once is reported as before.
func TestRepeatedUnknownLevelSummarised(t *testing.T) {
	var b strings.Builder
	b.WriteString("item_id,rater_id,label\n")
	zeros := 0
	for i := range 60 {
		v := i % 4
		if i%5 == 0 {
			v = 0
		}
		if v == 0 {
			zeros++
		}
		fmt.Fprintf(&b, "i%d,r%d,%d\n", i, i%3, v)
	}
	b.WriteString("i99,r1,7\n")
	opts := ReadOptions{Name: "scores.csv"}
	p, err := ReadLabels(strings.NewReader(b.String()), opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = BuildDataset(MustParseScheme("ordinal:1..4"), p, nil, opts)
	var pl *ProblemList
	if !errors.As(err, &pl) {
		t.Fatalf("error %v, want a problem list", err)
	}
	if len(pl.Problems) != 2 {
		t.Fatalf("%d problems, want 2 (the repeated 0 once, the single 7):\n%s", len(pl.Problems), pl)
	}
	first, second := pl.Problems[0], pl.Problems[1]
	want := fmt.Sprintf(`unknown level "0" for scheme ordinal:1..4 (expected one of 1, 2, 3, 4); label "0" appears %d times (lines 2, 6, 7, 10, 12 and %d more); labels present: 0, 1, 2, 3, 7; did you mean ordinal:0..7?`, zeros, zeros-5)
	if first.Line != 2 || first.Column != "label" || first.Msg != want {
		t.Errorf("first problem %+v,\nwant line 2, column label, %q", first, want)
	}
	if second.Line != 62 || second.Msg != `unknown level "7" for scheme ordinal:1..4 (expected one of 1, 2, 3, 4)` {
		t.Errorf("second problem %+v", second)
	}

	// Without the stray 7 the suggestion is the scale of the labels 0-3.
	p.Labels = p.Labels[:len(p.Labels)-1]
	_, err = BuildDataset(MustParseScheme("ordinal:1..4"), p, nil, opts)
	if !errors.As(err, &pl) || len(pl.Problems) != 1 {
		t.Fatalf("error %v, want one problem", err)
	}
	if msg := pl.Problems[0].Msg; !strings.HasSuffix(msg, "; labels present: 0, 1, 2, 3; did you mean ordinal:0..3?") {
		t.Errorf("problem %q does not end with the labels present and the suggestion", msg)
	}

	// The count is that of the whole file, beyond the problem cap.
	opts.MaxProblems = 3
	_, err = BuildDataset(MustParseScheme("ordinal:1..4"), p, nil, opts)
	if !errors.As(err, &pl) || len(pl.Problems) != 1 || !strings.Contains(pl.Problems[0].Msg, fmt.Sprintf("appears %d times", zeros)) {
		t.Errorf("with a cap of 3: %v", err)
	}
}

// TestSchemeDashRange: "0-3" in a scheme spec is answered with "0..3".
func TestSchemeDashRange(t *testing.T) {
	for spec, want := range map[string]string{
		"ordinal:0-3":      "did you mean ordinal:0..3?",
		"ordinal: 1 - 5":   "did you mean ordinal: 1..5?",
		"ordinal:-2-2":     "did you mean ordinal:-2..2?",
		"bounded:0-100":    "did you mean bounded:0..100?",
		"bounded:-100-100": "did you mean bounded:-100..100?",
	} {
		_, err := ParseScheme(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseScheme(%q): %v, want %q", spec, err, want)
		}
	}
	// Dashes that are not ranges stay level names.
	for _, spec := range []string{"nominal:a-b,c", "ordinal:low,mid-high,top", "nominal:1-0,0-1"} {
		if _, err := ParseScheme(spec); err != nil {
			t.Errorf("ParseScheme(%q): %v", spec, err)
		}
	}
}
