package db

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"concord/annotations"
)

// TestSQLitePragmas checks the connection settings on the writer and on
// several reader connections at once (each pooled connection must have them).
func TestSQLitePragmas(t *testing.T) {
	ctx := context.Background()
	d := sqliteBackend.open(t)
	want := map[string]string{"journal_mode": "wal", "foreign_keys": "1", "busy_timeout": "5000", "synchronous": "1"}
	for name, i := range map[string]int{"writer": 0, "reader": 1} {
		pool := d.pools[i]
		var conns []*sql.Conn
		for k := 0; k < 3 && (name == "reader" || k == 0); k++ {
			c, err := pool.Conn(ctx)
			must(t, err)
			conns = append(conns, c)
		}
		for k, c := range conns {
			for pragma, v := range want {
				var got string
				must(t, c.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got))
				if got != v {
					t.Errorf("%s connection %d: PRAGMA %s = %s, want %s", name, k, pragma, got, v)
				}
			}
			c.Close()
		}
	}
	// Readers cannot write.
	if err := d.r.Exec("CREATE TABLE x (y INTEGER)").Error; err == nil {
		t.Error("reader connection accepted a write")
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(notDB, []byte("not a database, just some text that is long enough to look like a header"), 0o644))
	cases := []struct {
		dsn, code, msg string
	}{
		{notDB, annotations.EINVALID, "is not a SQLite database"},
		{filepath.Join(dir, "missing", "c.db"), annotations.EINVALID, "does not exist"},
		{dir, annotations.EINVALID, "is a directory"},
		{filepath.Join(dir, "a?b.db"), annotations.EINVALID, "'?'"},
		{"", annotations.EINVALID, "empty"},
		{"postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", annotations.EUNAVAILABLE, "PostgreSQL"},
	}
	for _, c := range cases {
		_, err := Open(ctx, c.dsn, Options{})
		if annotations.ErrorCode(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Open(%q) = %v (code %q), want code %q mentioning %q", c.dsn, err, annotations.ErrorCode(err), c.code, c.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("Open created the missing directory")
	}
}

// TestMemory: ":memory:" is one private database shared by every use of the
// handle, and usable from several goroutines.
func TestMemory(t *testing.T) {
	ctx := context.Background()
	d := openDSN(t, ":memory:")
	other := openDSN(t, ":memory:")
	p := newProject(t, d, "m", "ordinal:1..5")
	if list, err := other.ListProjects(ctx); err != nil || len(list) != 0 {
		t.Fatalf("second in-memory database sees %v, %v", list, err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			ds := makeDataset(20, 3, 2)
			for i := range ds.Labels {
				ds.Labels[i].Rater += string(rune('a' + g))
			}
			if _, err := d.Import(ctx, p.ID, ds, annotations.ImportOptions{}); err != nil {
				t.Error(err)
			}
			if _, err := d.Stats(ctx, p.ID); err != nil {
				t.Error(err)
			}
		}(g)
	}
	wg.Wait()
	st, err := d.Stats(ctx, p.ID)
	must(t, err)
	if st.Labels != 4*40 || st.Raters != 12 || st.Items != 20 {
		t.Errorf("stats %+v", st)
	}
}
