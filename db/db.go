package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"concord/annotations"
)

// Options configure Open. The zero value is ready to use.
type Options struct {
	// Logger receives notes on schema migrations and recovered fits (at
	// Info level); nil discards them. Errors are returned, not logged.
	Logger *slog.Logger
}

// sqliteParams are the connection parameters of every SQLite connection
// (mattn/go-sqlite3 applies them on connect, so every pooled connection has
// them): WAL journal, foreign keys on, a 5 s busy timeout and
// synchronous=NORMAL (safe with WAL: a crash may lose the last commits, never
// consistency).
const sqliteParams = "_journal_mode=WAL&_foreign_keys=on&_busy_timeout=5000&_synchronous=NORMAL"

// The writer's transactions begin IMMEDIATE and it keeps a 128 MiB page
// cache (big imports); readers are read-only with 32 MiB each.
const (
	sqliteWriterParams = sqliteParams + "&_txlock=immediate&_cache_size=-131072"
	sqliteReaderParams = sqliteParams + "&_query_only=1&_cache_size=-32768"
)

// sqliteReaders bounds the read-only SQLite connections.
const sqliteReaders = 8

// DB is concord's storage: it implements annotations.Store on SQLite or
// PostgreSQL. It is safe for concurrent use.
//
// For SQLite a DB keeps two pools on the same file: one writer connection
// whose transactions begin IMMEDIATE (so writers queue in the pool instead of
// failing with SQLITE_BUSY, and read-then-write transactions never deadlock)
// and a pool of read-only connections that read WAL snapshots concurrently
// with the writer. An in-memory database has one connection for both.
type DB struct {
	w, r    *gorm.DB // writer and reader; the same for PostgreSQL and :memory:
	dialect dialect
	log     *slog.Logger
	pools   []*sql.DB
	jobs    riverJobs
}

var _ annotations.Store = (*DB)(nil)

// Open opens (creating if needed) the database named by dsn and brings its
// schema up to date. A dsn starting with postgres:// or postgresql:// is a
// PostgreSQL connection string; ":memory:" is a private in-memory SQLite
// database; anything else is a SQLite file path (or a file: URI) whose
// directory must exist.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	return open(ctx, dsn, opts, SchemaVersion)
}

// open is Open with the schema brought to version target only (tests build
// old databases with it).
func open(ctx context.Context, dsn string, opts Options, target int) (*DB, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	gcfg := func() *gorm.Config {
		return &gorm.Config{
			// Every error is returned to the caller, who decides what to
			// tell the user; gorm itself logs nothing.
			Logger:                 logger.Discard,
			NowFunc:                now,
			SkipDefaultTransaction: true,
			TranslateError:         true,
		}
	}
	d := &DB{log: log}
	var err error
	var riverDSN string
	var memory bool
	switch {
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		d.dialect = postgresDialect
		d.w, err = gorm.Open(postgres.Open(dsn), gcfg())
		if err != nil {
			return nil, annotations.Errorf(annotations.EUNAVAILABLE, "db: cannot connect to PostgreSQL %s: %v", redact(dsn), err)
		}
		if err := d.addPool(d.w); err != nil {
			return nil, err
		}
		d.r = d.w
	default:
		d.dialect = sqliteDialect
		var wdsn, rdsn string
		wdsn, rdsn, memory, err = sqliteDSNs(dsn)
		if err != nil {
			return nil, err
		}
		riverDSN = wdsn
		if d.w, err = gorm.Open(sqlite.Open(wdsn), gcfg()); err != nil {
			return nil, sqliteOpenError(dsn, err)
		}
		if err := d.addPool(d.w); err != nil {
			return nil, err
		}
		d.pools[0].SetMaxOpenConns(1)
		d.pools[0].SetMaxIdleConns(1)
		d.pools[0].SetConnMaxLifetime(0)
		d.pools[0].SetConnMaxIdleTime(0)
		if memory {
			d.r = d.w
		} else {
			if d.r, err = gorm.Open(sqlite.Open(rdsn), gcfg()); err != nil {
				d.Close()
				return nil, sqliteOpenError(dsn, err)
			}
			if err := d.addPool(d.r); err != nil {
				d.Close()
				return nil, err
			}
			d.pools[1].SetMaxOpenConns(sqliteReaders)
			d.pools[1].SetMaxIdleConns(sqliteReaders)
		}
	}
	if err := d.pools[0].PingContext(ctx); err != nil {
		d.Close()
		if d.dialect == postgresDialect {
			return nil, annotations.Errorf(annotations.EUNAVAILABLE, "db: cannot connect to PostgreSQL %s: %v", redact(dsn), err)
		}
		return nil, sqliteOpenError(dsn, err)
	}
	if err := d.openRiver(riverDSN, memory); err != nil {
		d.Close()
		return nil, err
	}
	if err := d.migrate(ctx, target); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// sqliteDSNs returns the writer and reader DSNs for a SQLite path, file: URI
// or ":memory:".
func sqliteDSNs(dsn string) (w, r string, memory bool, err error) {
	switch {
	case dsn == "":
		return "", "", false, annotations.Errorf(annotations.EINVALID, "db: empty database path")
	case dsn == ":memory:":
		return "file::memory:?" + sqliteWriterParams, "", true, nil
	case strings.HasPrefix(dsn, "file:"):
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		memory = strings.Contains(dsn, ":memory:") || strings.Contains(dsn, "mode=memory")
		return dsn + sep + sqliteWriterParams, dsn + sep + sqliteReaderParams, memory, nil
	case strings.Contains(dsn, "?"):
		return "", "", false, annotations.Errorf(annotations.EINVALID, "db: SQLite path %q contains '?'; use a file: URI or another name", dsn)
	}
	dir := filepath.Dir(dsn)
	st, statErr := os.Stat(dir)
	switch {
	case errors.Is(statErr, os.ErrNotExist):
		return "", "", false, annotations.Errorf(annotations.EINVALID, "db: directory %q of database %q does not exist", dir, dsn)
	case statErr != nil:
		return "", "", false, annotations.Errorf(annotations.EINVALID, "db: database %q: %v", dsn, statErr)
	case !st.IsDir():
		return "", "", false, annotations.Errorf(annotations.EINVALID, "db: %q (the directory of database %q) is not a directory", dir, dsn)
	}
	if st, err := os.Stat(dsn); err == nil && st.IsDir() {
		return "", "", false, annotations.Errorf(annotations.EINVALID, "db: database path %q is a directory", dsn)
	}
	return dsn + "?" + sqliteWriterParams, dsn + "?" + sqliteReaderParams, false, nil
}

// sqliteOpenError explains the failures to open a SQLite file that are the
// user's to fix.
func sqliteOpenError(dsn string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "file is not a database"):
		return annotations.Errorf(annotations.EINVALID, "db: %q is not a SQLite database", dsn)
	case strings.Contains(msg, "unable to open database file"), strings.Contains(msg, "readonly database"):
		return annotations.Errorf(annotations.EINVALID, "db: cannot open %q for writing: %v", dsn, err)
	}
	return fmt.Errorf("db: open %s: %w", dsn, err)
}

// redact hides the password of a connection URL.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable DSN)"
	}
	return u.Redacted()
}

func (d *DB) addPool(g *gorm.DB) error {
	p, err := g.DB()
	if err != nil {
		return fmt.Errorf("db: %w", err)
	}
	d.pools = append(d.pools, p)
	return nil
}

// Close closes the database.
func (d *DB) Close() error {
	var errs []error
	for _, p := range d.pools {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// Ping checks that the database answers (for readiness probes).
func (d *DB) Ping(ctx context.Context) error {
	for _, p := range d.pools {
		if err := p.PingContext(ctx); err != nil {
			return annotations.Errorf(annotations.EUNAVAILABLE, "database unavailable: %v", err)
		}
	}
	return nil
}

// Dialect returns "sqlite" or "postgres".
func (d *DB) Dialect() string { return string(d.dialect) }

// dialect is the SQL flavour of the database.
type dialect string

const (
	sqliteDialect   dialect = "sqlite"
	postgresDialect dialect = "postgres"
)

// maxParams is the number of bind parameters one statement may carry
// (SQLite's SQLITE_MAX_VARIABLE_NUMBER, PostgreSQL's 16-bit count).
func (g dialect) maxParams() int {
	if g == postgresDialect {
		return 65535
	}
	return 32766
}

// placeholder returns the n-th (1-based) bind parameter.
func (g dialect) placeholder(b *strings.Builder, n int) {
	if g == postgresDialect {
		fmt.Fprintf(b, "$%d", n)
		return
	}
	b.WriteByte('?')
}

// limitOffset returns the LIMIT/OFFSET clause for a page.
func (g dialect) limitOffset(p annotations.Page) string {
	switch {
	case p.Limit > 0 && p.Offset > 0:
		return fmt.Sprintf(" LIMIT %d OFFSET %d", p.Limit, p.Offset)
	case p.Limit > 0:
		return fmt.Sprintf(" LIMIT %d", p.Limit)
	case p.Offset > 0 && g == sqliteDialect:
		return fmt.Sprintf(" LIMIT -1 OFFSET %d", p.Offset)
	case p.Offset > 0:
		return fmt.Sprintf(" OFFSET %d", p.Offset)
	}
	return ""
}

// like returns the case-insensitive LIKE operator.
func (g dialect) like() string {
	if g == postgresDialect {
		return "ILIKE"
	}
	return "LIKE"
}

func checkPage(p annotations.Page) error {
	if p.Offset < 0 || p.Limit < 0 {
		return annotations.Errorf(annotations.EINVALID, "page offset and limit must not be negative (got offset %d, limit %d)", p.Offset, p.Limit)
	}
	return nil
}

// now is the time stamp of stored events: UTC, microseconds (the resolution
// PostgreSQL keeps), so that times read back equal the times written.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// utc normalises a time read from the database.
func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// write runs fn in a write transaction. On SQLite the transaction begins
// IMMEDIATE on the single writer connection.
func (d *DB) write(ctx context.Context, fn func(tx *gorm.DB) error) error {
	return d.w.WithContext(ctx).Transaction(fn)
}

// read runs fn in a read-only transaction that sees one snapshot of the
// database.
func (d *DB) read(ctx context.Context, fn func(tx *gorm.DB) error) error {
	if d.dialect == postgresDialect {
		return d.r.WithContext(ctx).Transaction(fn, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	}
	return d.r.WithContext(ctx).Transaction(fn)
}

// wrap gives an unexpected database error its context; domain errors pass
// through unchanged.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var ae *annotations.Error
	if errors.As(err, &ae) {
		return err
	}
	var pl *annotations.ProblemList
	if errors.As(err, &pl) {
		return err
	}
	return fmt.Errorf("db: "+format+": %w", append(args, err)...)
}

// translate maps a driver error to gorm's portable errors (duplicate key,
// foreign key violation) for statements run outside gorm's callbacks.
func (d *DB) translate(err error) error {
	if err == nil {
		return nil
	}
	if t, ok := d.w.Dialector.(gorm.ErrorTranslator); ok {
		if te := t.Translate(err); te != err {
			return fmt.Errorf("%w (%v)", te, err)
		}
	}
	return err
}

// Redact hides the password of a PostgreSQL connection URL (for logs and
// messages); a SQLite path is returned as it is.
func Redact(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return redact(dsn)
	}
	return dsn
}

// insertID runs the INSERT statement ins (args) and sets *id to the new
// row's id.
func insertID(d *DB, tx *gorm.DB, ins string, args []any, id *int64) error {
	if d.dialect == postgresDialect {
		return tx.Raw(ins+" RETURNING id", args...).Scan(id).Error
	}
	if err := tx.Exec(ins, args...).Error; err != nil {
		return err
	}
	return tx.Raw("SELECT last_insert_rowid()").Scan(id).Error
}
