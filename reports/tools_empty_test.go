package reports

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// The annotation tools' formats refuse a fit that would give them nothing
// (issue 36 item 8): an auc fit ranks items and labels none (it wrote "[]",
// an empty file or a header alone, with exit 0).
func TestToolFormatsRefuseRankings(t *testing.T) {
	rep := aucCase(t).rep
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"labelstudio", func(b *bytes.Buffer) error {
			return WriteLabelStudio(b, rep, ToolOptions{FromName: "label", ToName: "text"})
		}},
		{"doccano", func(b *bytes.Buffer) error { return WriteDoccano(b, rep, ToolOptions{}) }},
		{"crowdkit", func(b *bytes.Buffer) error { return WriteCrowdKit(b, rep, ToolOptions{}) }},
	} {
		var b bytes.Buffer
		err := tc.write(&b)
		if err == nil || !strings.Contains(err.Error(), "ranks items by a score") || !strings.Contains(err.Error(), "--format json, xlsx or csv") {
			t.Errorf("%s of an auc fit: %v (wrote %q); want a refusal that names the formats that hold scores", tc.name, err, b.String())
		}
		if b.Len() != 0 {
			t.Errorf("%s of an auc fit wrote %q before refusing", tc.name, b.String())
		}
	}
}

// A bounded fit's crowd-kit table has each item's predictive sd where a
// class fit has the consensus's probability (it had an empty prob column).
func TestCrowdKitValuesHaveSD(t *testing.T) {
	rep := liveBoundedCase(t).rep
	recs := writtenCSV(t, func(b *bytes.Buffer) error { return WriteCrowdKit(b, rep, ToolOptions{}) })
	if len(recs) < 2 || strings.Join(recs[0], ",") != "task,label,sd" {
		t.Fatalf("table %q: want the header task,label,sd and rows", recs)
	}
	for _, r := range recs[1:] {
		v, err1 := strconv.ParseFloat(r[1], 64)
		sd, err2 := strconv.ParseFloat(r[2], 64)
		if err1 != nil || err2 != nil || !(sd > 0) || v < 0 || v > 100 {
			t.Errorf("row %q: want a value in [0, 100] and a positive sd", r)
		}
	}
}
