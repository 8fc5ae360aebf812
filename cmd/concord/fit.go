package main

import (
	"context"

	"concord/annotations"
)

func runFit(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "fit", "--project NAME --model ordinal ...", "Fit a multi-rater model (not yet available).")
	fs.String("db", "concord.db", "database: a SQLite file path or a postgres:// DSN")
	if _, err := parseFlags(e, fs, args); err != nil {
		return err
	}
	return annotations.Errorf(annotations.EUNAVAILABLE, "fit is not yet available in this version")
}
