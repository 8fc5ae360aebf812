package db

import (
	"context"
	"reflect"
	"testing"
	"time"

	"concord/annotations"
)

func TestMigrationsAreOrdered(t *testing.T) {
	if len(migrations) != SchemaVersion {
		t.Fatalf("%d migrations, SchemaVersion %d", len(migrations), SchemaVersion)
	}
	for i, m := range migrations {
		sqlite, postgres := m.statements(sqliteDialect), m.statements(postgresDialect)
		if m.Version != i+1 || m.Name == "" || len(sqlite) == 0 || len(postgres) == 0 {
			t.Errorf("migration %d: version %d, name %q, %d SQLite and %d PostgreSQL statements", i, m.Version, m.Name, len(sqlite), len(postgres))
		}
	}
}

// TestMigrationUpgrade builds a database as the first schema version left
// it, with data written by plain SQL, and opens it with this build: the
// missing steps run and the data stays intact and usable.
func TestMigrationUpgrade(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn := b.dsn(t)
		old, err := open(ctx, dsn, Options{}, 1)
		must(t, err)
		if v, err := old.Version(ctx); err != nil || v != 1 {
			t.Fatalf("old database at version %d, %v", v, err)
		}
		var n int
		if err := old.r.Raw("SELECT COUNT(*) FROM fits").Scan(&n).Error; err == nil {
			t.Fatal("version 1 database already has the fits table")
		}
		created := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		for _, s := range []struct {
			q    string
			args []any
		}{
			{"INSERT INTO projects (id, name, scheme, created_at) VALUES (?, ?, ?, ?)", []any{7, "legacy", `{"kind":"ordinal","levels":[{"code":"1"},{"code":"2"},{"code":"3"}]}`, created}},
			{"INSERT INTO items (id, project_id, ext_id, text, covariates) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)", []any{1, 7, "doc-1", "old text", `{"words":12}`, 2, 7, "doc-2", "", ""}},
			{"INSERT INTO raters (id, project_id, ext_id) VALUES (?, ?, ?), (?, ?, ?)", []any{1, 7, "ann", 2, 7, "bob"}},
			{"INSERT INTO labels (project_id, item_id, rater_id, value) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?)", []any{7, 1, 1, "3", 7, 1, 2, "2", 7, 2, 2, "1"}},
		} {
			must(t, old.w.Exec(s.q, s.args...).Error)
		}
		if b.name == "postgres" {
			// Rows inserted with explicit ids leave the identities behind.
			for _, table := range []string{"projects", "items", "raters"} {
				must(t, old.w.Exec("SELECT setval(pg_get_serial_sequence('"+table+"', 'id'), (SELECT MAX(id) FROM "+table+"))").Error)
			}
		}
		must(t, old.Close())

		d := openDSN(t, dsn)
		v, err := d.Version(ctx)
		must(t, err)
		if v != SchemaVersion {
			t.Fatalf("upgraded to version %d, want %d", v, SchemaVersion)
		}
		var steps []struct {
			Version   int
			Name      string
			AppliedAt time.Time
		}
		must(t, d.r.Raw("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").Scan(&steps).Error)
		if len(steps) != SchemaVersion || steps[0].Name != migrations[0].Name || steps[len(steps)-1].AppliedAt.IsZero() {
			t.Errorf("schema_migrations = %+v", steps)
		}

		p, err := d.FindProjectByName(ctx, "legacy")
		must(t, err)
		if p.ID != 7 || !p.CreatedAt.Equal(created) || !p.Scheme.Equal(annotations.MustParseScheme("ordinal:1..3")) {
			t.Errorf("legacy project %+v", p)
		}
		ds, err := d.Dataset(ctx, p.ID)
		must(t, err)
		wantItems := []annotations.Item{{ID: "doc-1", Text: "old text", Covariates: map[string]float64{"words": 12}}, {ID: "doc-2"}}
		wantLabels := []annotations.Label{{Item: "doc-1", Rater: "ann", Value: "3"}, {Item: "doc-1", Rater: "bob", Value: "2"}, {Item: "doc-2", Rater: "bob", Value: "1"}}
		if !reflect.DeepEqual(ds.Items, wantItems) || !reflect.DeepEqual(ds.Labels, wantLabels) {
			t.Errorf("legacy data read back as %+v / %+v", ds.Items, ds.Labels)
		}
		// The upgraded database works: import, fits and keys.
		res, err := d.Import(ctx, p.ID, &annotations.Dataset{Labels: append(wantLabels, annotations.Label{Item: "doc-3", Rater: "ann", Value: "2"})}, annotations.ImportOptions{})
		must(t, err)
		if res.LabelsUnchanged != 3 || res.LabelsAdded != 1 || res.ItemsAdded != 1 {
			t.Errorf("import into upgraded database: %+v", res)
		}
		// Legacy labels are the first of their pair: a repeat imported
		// with --duplicates keep comes after it (migration 4).
		res, err = d.Import(ctx, p.ID, &annotations.Dataset{Labels: []annotations.Label{wantLabels[0], {Item: "doc-1", Rater: "ann", Value: "1"}}},
			annotations.ImportOptions{Duplicates: annotations.DuplicatesKeep})
		must(t, err)
		if res.LabelsUnchanged != 1 || res.LabelsAdded != 1 {
			t.Errorf("repeat into upgraded database: %+v", res)
		}
		ds, err = d.Dataset(ctx, p.ID)
		must(t, err)
		if len(ds.Labels) != 5 || ds.Labels[0] != wantLabels[0] || ds.Labels[1] != (annotations.Label{Item: "doc-1", Rater: "ann", Value: "1"}) {
			t.Errorf("after the repeat: %v", ds.Labels)
		}
		must(t, d.CreateFit(ctx, &annotations.Fit{ProjectID: p.ID, Model: "m"}))
		must(t, d.CreateAPIKey(ctx, &annotations.APIKey{ProjectID: p.ID, Name: "k", Prefix: "p", Hash: []byte{1}}))

		// Opening again is a no-op.
		must(t, d.Close())
		d = openDSN(t, dsn)
		if v, _ := d.Version(ctx); v != SchemaVersion {
			t.Errorf("version after reopening: %d", v)
		}
	})
}

// TestNewerSchemaRefused: a database written by a newer concord is not
// touched.
func TestNewerSchemaRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn := b.dsn(t)
		d := openDSN(t, dsn)
		must(t, d.w.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", SchemaVersion+1, "from the future", now()).Error)
		must(t, d.Close())
		_, err := Open(ctx, dsn, Options{})
		wantCode(t, err, annotations.EUNAVAILABLE)
	})
}
