// Package db implements the annotations Store interfaces with gorm: SQLite
// (embedded, the default; WAL, foreign keys and a busy timeout on) or
// PostgreSQL when the DSN starts with postgres://. It owns the schema and its
// migrations.
//
// # Schema
//
//	projects     id, name (unique), scheme (JSON), created_at, labels_version (bumped by every write
//	             that changes the project's items or labels: LabelsVersion)
//	items        id, project_id, ext_id (unique per project), text, gold, covariates (JSON), attrs (JSON)
//	raters       id, project_id, ext_id (unique per project)
//	labels       id, project_id, item_id, rater_id, value, seq; unique (item_id, rater_id, seq):
//	             seq numbers the repeated labels of a pair (--duplicates keep) from 0
//	fits         id, project_id, model, spec (JSON), seed, status, progress, eta_seconds, max_rhat,
//	             message, cancel_requested, attempts, worker, created_at, started_at, finished_at,
//	             heartbeat_at (no longer written), job_id (its River job)
//	fit_results  fit_id, result (BLOB/bytea; apart from fits so that listings never load results)
//	api_keys     id, project_id, name (unique per project), prefix (indexed), hash, read_only, created_at
//	workers      name, queues, concurrency, started_at, seen_at: the worker processes alive (river.go)
//	river_*      River's tables (its own migrations, run by Open after concord's)
//
// Every table hangs off projects with ON DELETE CASCADE (labels through
// their items and raters). Times are stored in
// UTC with microsecond resolution. Item and rater ids are the external ids
// of the label files; the integer ids are internal, and their order is the
// order of first appearance (Dataset and the listings sort by them).
//
// # Migrations
//
// The schema is a list of numbered steps of plain SQL per dialect
// (migrate.go), recorded in schema_migrations (version, name, applied_at).
// Open applies the missing steps in order, in one transaction (under an
// advisory lock on PostgreSQL, so that processes starting together take
// turns), and refuses a database whose version is newer than the build's.
// Released steps are never edited; a schema change is a new step.
//
// # Concurrency
//
// SQLite: one writer connection whose transactions begin IMMEDIATE (writers
// queue in the pool; other processes wait on the busy timeout) and a pool of
// read-only connections that read WAL snapshots alongside it. PostgreSQL: one
// pool; imports lock their project row, so several concord processes can
// share the database. Background jobs (fits) are River's (river.go): River
// gets its own one-connection handle on a SQLite file (riversqlite) and the
// pool on PostgreSQL (riverdatabasesql); a fit's job is inserted in the
// transaction that stores the fit.
//
// # Import
//
// Import validates the whole dataset in memory, then writes in one
// transaction with batched multi-row statements (bind-parameter limits of
// each dialect respected), mapping external ids to row ids in memory and
// reading the stored labels of the project once, so that a million labels
// load in seconds and re-importing the same data writes nothing.
package db
