package main

import (
	"context"

	"concord/annotations"
)

func runServe(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "serve", "[--addr :8080] [--db PATH]", "Run the REST API and dashboard (not yet available).")
	fs.String("addr", ":8080", "listen address")
	fs.String("db", "concord.db", "database: a SQLite file path or a postgres:// DSN")
	if _, err := parseFlags(e, fs, args); err != nil {
		return err
	}
	return annotations.Errorf(annotations.EUNAVAILABLE, "serve is not yet available in this version")
}
