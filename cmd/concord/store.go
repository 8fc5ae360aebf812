package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"concord/annotations"
	"concord/db"
)

// defaultDB is the database used when --db is not given.
const defaultDB = "concord.db"

func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", defaultDB, "database: a SQLite file path, or a postgres:// DSN")
}

// openStore opens the database named by dsn.
func openStore(ctx context.Context, e *env, dsn string) (*db.DB, error) {
	if dsn == "" {
		dsn = defaultDB
	}
	return db.Open(ctx, dsn, db.Options{Logger: e.log})
}

// whereFlag collects repeated --where COLUMN=VALUE filters.
type whereFlag map[string]string

func (w whereFlag) String() string {
	var parts []string
	for k, v := range w {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

func (w whereFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("expected COLUMN=VALUE, got %q", s)
	}
	w[strings.TrimSpace(k)] = strings.TrimSpace(v)
	return nil
}

// listFlag parses a comma-separated list.
func splitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// findProject looks a project up by name with a helpful error.
func findProject(ctx context.Context, st annotations.ProjectStore, name string) (*annotations.Project, error) {
	if name == "" {
		return nil, annotations.Errorf(annotations.EINVALID, "--project is required")
	}
	p, err := st.FindProjectByName(ctx, name)
	if annotations.ErrorCode(err) == annotations.ENOTFOUND {
		return nil, annotations.Errorf(annotations.ENOTFOUND, "no project named %q (see concord projects list)", name)
	}
	return p, err
}
