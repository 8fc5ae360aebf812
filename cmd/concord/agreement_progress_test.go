package main

import (
	"context"
	"strings"
	"testing"
)

// TestAgreementProgress: on a terminal, concord agreement draws the
// bootstrap's progress bar with its ETA and closes it.
func TestAgreementProgress(t *testing.T) {
	e, _, errb := testEnv()
	e.tty = true
	code := run(context.Background(), e, []string{"agreement", "--labels", "testdata/agreement_sirt_k1.csv", "--scheme", "ordinal:0..3", "--where", "criterion=k1", "--bootstrap", "200", "--json"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if s := errb.String(); !strings.Contains(s, "bootstrap (200 replicates) [") || !strings.Contains(s, "bootstrap (200 replicates) done in") {
		t.Errorf("stderr: %q", s)
	}
}
