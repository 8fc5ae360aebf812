package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitInterrupted: a fit whose context main's signal handler cancelled
// (its cause names the signal, as signal.NotifyContext's does) exits 1
// with a message naming the signal and writes no result file; without a
// signal the same fit writes it.
func TestFitInterrupted(t *testing.T) {
	for _, engine := range [][]string{{"--engine", "ep"}, {"--engine", "gibbs", "--samples", "50", "--burnin", "50"}} {
		for _, interrupted := range []bool{true, false} {
			out := filepath.Join(t.TempDir(), "out.json")
			args := append([]string{"fit", "--labels", "testdata/fit_toy_ratings.csv", "--scheme", "ordinal:1..5", "--out", out}, engine...)
			ctx, cancel := context.WithCancelCause(context.Background())
			if interrupted {
				cancel(errors.New("interrupt signal received"))
			}
			e, _, errb := testEnv()
			code := run(ctx, e, args)
			cancel(nil)
			_, statErr := os.Stat(out)
			switch {
			case interrupted && (code != 1 || !strings.Contains(errb.String(), "cancelled (interrupt signal received)") || statErr == nil):
				t.Errorf("%s, interrupted: exit %d, stderr %q, result written %t", engine, code, errb, statErr == nil)
			case !interrupted && (code != 0 || statErr != nil):
				t.Errorf("%s: exit %d, stderr %q, %v", engine, code, errb, statErr)
			}
		}
	}
}
