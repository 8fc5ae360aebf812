package db

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"concord/annotations"
)

// The conformance tests run every store test against SQLite (a temporary
// file) and, when CONCORD_TEST_POSTGRES_DSN is set, against PostgreSQL (a
// fresh schema per test). With CONCORD_REQUIRE_POSTGRES=1 a missing DSN fails
// the tests instead of skipping PostgreSQL, so that CI cannot pass without
// it. db/testdata/start-postgres.sh starts a local server.
const (
	postgresDSNEnv     = "CONCORD_TEST_POSTGRES_DSN"
	requirePostgresEnv = "CONCORD_REQUIRE_POSTGRES"
)

// backend opens fresh, empty databases of one kind.
type backend struct {
	name string
	// dsn returns the DSN of a fresh database, removed when tb ends.
	dsn func(tb testing.TB) string
}

func (b backend) open(tb testing.TB) *DB {
	tb.Helper()
	return openDSN(tb, b.dsn(tb))
}

func openDSN(tb testing.TB, dsn string) *DB {
	tb.Helper()
	d, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		tb.Fatalf("Open(%s): %v", dsn, err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

var sqliteBackend = backend{name: "sqlite", dsn: func(tb testing.TB) string {
	return filepath.Join(tb.TempDir(), "concord.db")
}}

// backends returns the backends to test: SQLite always, PostgreSQL when
// configured (and failing tb when it is required but not configured).
func backends(tb testing.TB) []backend {
	tb.Helper()
	bs := []backend{sqliteBackend}
	base := os.Getenv(postgresDSNEnv)
	if base == "" {
		if os.Getenv(requirePostgresEnv) == "1" {
			tb.Fatalf("%s=1 but %s is not set: the PostgreSQL store tests cannot run (start a server with db/testdata/start-postgres.sh)", requirePostgresEnv, postgresDSNEnv)
		}
		return bs
	}
	return append(bs, backend{name: "postgres", dsn: func(tb testing.TB) string { return postgresSchema(tb, base) }})
}

// postgresSchema creates a schema of its own for one test and returns a DSN
// whose search_path points at it; the schema is dropped when tb ends.
func postgresSchema(tb testing.TB, base string) string {
	tb.Helper()
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		tb.Fatalf("connect to PostgreSQL (%s): %v", postgresDSNEnv, err)
	}
	sqlDB, _ := admin.DB()
	tb.Cleanup(func() { sqlDB.Close() })
	name := "concord_test_" + strings.ToLower(rand.Text()[:12])
	if err := admin.Exec("CREATE SCHEMA " + name).Error; err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		if err := admin.Exec("DROP SCHEMA " + name + " CASCADE").Error; err != nil {
			tb.Errorf("drop schema %s: %v", name, err)
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + name
}

// forEachBackend runs fn as a subtest per backend.
func forEachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { fn(t, b) })
	}
}

// forEachStore runs fn as a subtest on a fresh store of every configured
// backend.
func forEachStore(t *testing.T, fn func(t *testing.T, ctx context.Context, d *DB)) {
	forEachBackend(t, func(t *testing.T, b backend) { fn(t, context.Background(), b.open(t)) })
}

// TestPostgresConfigured makes the PostgreSQL requirement visible as a test
// of its own.
func TestPostgresConfigured(t *testing.T) {
	bs := backends(t)
	if len(bs) == 1 {
		t.Skipf("%s not set: PostgreSQL store tests skipped", postgresDSNEnv)
	}
}

// code asserts the annotations error code of err.
func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := annotations.ErrorCode(err); got != code {
		tb.Fatalf("error code %q, want %q (error: %v)", got, code, err)
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// seededFit creates a fit of model "m" with spec {"seed": seed} in project
// and returns its id.
func seededFit(ctx context.Context, t *testing.T, d *DB, project int64, seed int) int64 {
	t.Helper()
	return createFit(ctx, t, d, specFit(project, `{"seed":%d}`, seed))
}

// specFit is a fit of model "m" in project whose spec is format filled in
// with args.
func specFit(project int64, format string, args ...any) *annotations.Fit {
	return &annotations.Fit{ProjectID: project, Model: "m", Spec: json.RawMessage(fmt.Sprintf(format, args...))}
}

// createFit stores f and returns its id.
func createFit(ctx context.Context, t *testing.T, d *DB, f *annotations.Fit) int64 {
	t.Helper()
	must(t, d.CreateFit(ctx, f))
	return f.ID
}

// retrying returns the options of the workers of the retry tests: three at
// once, two attempts a job, polling fast.
func retrying() annotations.WorkerOptions {
	return annotations.WorkerOptions{Name: "w", Concurrency: 3, MaxAttempts: 2, PollInterval: 20 * time.Millisecond, StaleAfter: time.Hour}
}

// startWorkers runs d's workers with opts and run until the returned stop,
// which waits for them to end and fails the test on their error.
func startWorkers(ctx context.Context, t *testing.T, d *DB, opts annotations.WorkerOptions, run annotations.FitRunner) (stop func()) {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- d.RunWorkers(wctx, opts, run)
	}()
	return func() {
		cancel()
		must(t, <-done)
	}
}

// waitEnded polls find for each of ids every 10 ms until every one has
// ended (a terminal status), 2 minutes at most, and returns them by id;
// what names them in the failure.
func waitEnded[T any](ctx context.Context, t *testing.T, what string, find func(context.Context, int64) (T, error), status func(T) annotations.FitStatus, ids ...int64) map[int64]T {
	t.Helper()
	ended := map[int64]T{}
	for deadline := time.Now().Add(2 * time.Minute); len(ended) < len(ids); time.Sleep(10 * time.Millisecond) {
		for _, id := range ids {
			v, err := find(ctx, id)
			must(t, err)
			if status(v).Terminal() {
				ended[id] = v
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ended: %v", what, ended)
		}
	}
	return ended
}

func newProject(tb testing.TB, d *DB, name, scheme string) *annotations.Project {
	tb.Helper()
	p := &annotations.Project{Name: name, Scheme: annotations.MustParseScheme(scheme)}
	must(tb, d.CreateProject(context.Background(), p))
	return p
}

// makeDataset builds a deterministic ordinal 1..5 dataset: nItems items
// ("i0", "i1", ...), each labelled by perItem of nRaters raters ("r0", ...).
func makeDataset(nItems, nRaters, perItem int) *annotations.Dataset {
	ds := &annotations.Dataset{Scheme: annotations.MustParseScheme("ordinal:1..5")}
	ds.Labels = make([]annotations.Label, 0, nItems*perItem)
	raters := make([]string, nRaters)
	for r := range raters {
		raters[r] = "r" + strconv.Itoa(r)
	}
	for i := 0; i < nItems; i++ {
		item := "i" + strconv.Itoa(i)
		for j := 0; j < perItem; j++ {
			r := (i + j*7) % nRaters
			ds.Labels = append(ds.Labels, annotations.Label{Item: item, Rater: raters[r], Value: strconv.Itoa(1 + (i*3+r)%5)})
		}
	}
	return ds
}

// tableCounts returns the rows of every project-owned table for a project.
func tableCounts(tb testing.TB, d *DB, projectID int64) map[string]int {
	tb.Helper()
	out := map[string]int{}
	for _, table := range []string{"items", "raters", "labels", "fits", "api_keys"} {
		var n int
		must(tb, d.r.Raw("SELECT COUNT(*) FROM "+table+" WHERE project_id = ?", projectID).Scan(&n).Error)
		out[table] = n
	}
	var n int
	must(tb, d.r.Raw("SELECT COUNT(*) FROM fit_results r JOIN fits f ON f.id = r.fit_id WHERE f.project_id = ?", projectID).Scan(&n).Error)
	out["fit_results"] = n
	return out
}

func sameCounts(a, b map[string]int) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}
