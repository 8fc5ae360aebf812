// Package db implements the annotations Store interfaces with gorm: SQLite
// (embedded, the default; WAL, foreign keys and a busy timeout on) or
// PostgreSQL when the DSN starts with postgres://. It owns the schema and its
// migrations.
package db
