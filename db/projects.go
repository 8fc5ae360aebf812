package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"concord/annotations"
)

// projectRow is a row of projects.
type projectRow struct {
	ID        int64
	Name      string
	Scheme    string // JSON of annotations.Scheme
	CreatedAt time.Time
}

func (projectRow) TableName() string { return "projects" }

func (r *projectRow) project() (*annotations.Project, error) {
	var s annotations.Scheme
	if err := json.Unmarshal([]byte(r.Scheme), &s); err != nil {
		return nil, fmt.Errorf("db: project %d: decode scheme: %w", r.ID, err)
	}
	return &annotations.Project{ID: r.ID, Name: r.Name, Scheme: s, CreatedAt: utc(r.CreatedAt)}, nil
}

// CreateProject stores a new project and sets its ID and CreatedAt. An
// invalid project is EINVALID; a taken name is ECONFLICT.
func (d *DB) CreateProject(ctx context.Context, p *annotations.Project) error {
	if err := p.Validate(); err != nil {
		return err
	}
	scheme, err := json.Marshal(p.Scheme)
	if err != nil {
		return fmt.Errorf("db: encode scheme: %w", err)
	}
	row := projectRow{Name: p.Name, Scheme: string(scheme), CreatedAt: now()}
	err = d.write(ctx, func(tx *gorm.DB) error { return createProjectTx(tx, p.Name, &row) })
	if errors.Is(err, gorm.ErrDuplicatedKey) { // a concurrent create won
		return annotations.Errorf(annotations.ECONFLICT, "project %q already exists", p.Name)
	}
	if err != nil {
		return wrap(err, "create project %q", p.Name)
	}
	p.ID, p.CreatedAt = row.ID, row.CreatedAt
	return nil
}

// createProjectTx inserts the project row in tx, ECONFLICT when the name
// is taken.
func createProjectTx(tx *gorm.DB, name string, row *projectRow) error {
	var n int64
	if err := tx.Model(&projectRow{}).Where("name = ?", name).Count(&n).Error; err != nil {
		return err
	}
	if n > 0 {
		return annotations.Errorf(annotations.ECONFLICT, "project %q already exists", name)
	}
	return tx.Create(row).Error
}

// FindProjectByID returns the project, or ENOTFOUND.
func (d *DB) FindProjectByID(ctx context.Context, id int64) (*annotations.Project, error) {
	return findProject(d.r.WithContext(ctx), id)
}

// findProject reads a project in tx (or any handle), ENOTFOUND if missing.
func findProject(tx *gorm.DB, id int64) (*annotations.Project, error) {
	var row projectRow
	err := tx.Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, annotations.Errorf(annotations.ENOTFOUND, "project %d not found", id)
	}
	if err != nil {
		return nil, wrap(err, "find project %d", id)
	}
	return row.project()
}

// FindProjectByName returns the project named name, or ENOTFOUND.
func (d *DB) FindProjectByName(ctx context.Context, name string) (*annotations.Project, error) {
	var row projectRow
	err := d.r.WithContext(ctx).Where("name = ?", name).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, annotations.Errorf(annotations.ENOTFOUND, "project %q not found", name)
	}
	if err != nil {
		return nil, wrap(err, "find project %q", name)
	}
	return row.project()
}

// ListProjects returns every project with its counts, by name.
func (d *DB) ListProjects(ctx context.Context) ([]annotations.ProjectSummary, error) {
	var rows []struct {
		ID                    int64
		Name, Scheme          string
		CreatedAt             time.Time
		Items, Raters, Labels int
	}
	err := d.r.WithContext(ctx).Raw(`SELECT p.id, p.name, p.scheme, p.created_at,
		(SELECT COUNT(*) FROM items i WHERE i.project_id = p.id) AS items,
		(SELECT COUNT(*) FROM raters r WHERE r.project_id = p.id) AS raters,
		(SELECT COUNT(*) FROM labels l WHERE l.project_id = p.id) AS labels
		FROM projects p ORDER BY p.name`).Scan(&rows).Error
	if err != nil {
		return nil, wrap(err, "list projects")
	}
	out := make([]annotations.ProjectSummary, len(rows))
	for i, r := range rows {
		row := projectRow{ID: r.ID, Name: r.Name, Scheme: r.Scheme, CreatedAt: r.CreatedAt}
		p, err := row.project()
		if err != nil {
			return nil, err
		}
		out[i] = annotations.ProjectSummary{Project: *p, Items: r.Items, Raters: r.Raters, Labels: r.Labels}
	}
	return out, nil
}

// DeleteProject removes the project with its items, raters, labels, fits
// and keys, or returns ENOTFOUND.
func (d *DB) DeleteProject(ctx context.Context, id int64) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		// The schema cascades; deleting the big tables child-first is
		// faster than letting each item row cascade to its labels.
		for _, table := range []string{"labels", "items", "raters"} {
			if err := tx.Exec("DELETE FROM "+table+" WHERE project_id = ?", id).Error; err != nil {
				return fmt.Errorf("delete %s: %w", table, err)
			}
		}
		res := tx.Exec("DELETE FROM projects WHERE id = ?", id)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return annotations.Errorf(annotations.ENOTFOUND, "project %d not found", id)
		}
		return nil
	})
	return wrap(err, "delete project %d", id)
}

// lockProject checks that the project exists inside a write transaction and,
// on PostgreSQL, locks its row so that concurrent writers to one project
// (imports) take turns. SQLite write transactions are exclusive already.
func (d *DB) lockProject(tx *gorm.DB, id int64) (*annotations.Project, error) {
	if d.dialect != postgresDialect {
		return findProject(tx, id)
	}
	var row projectRow
	err := tx.Raw("SELECT id, name, scheme, created_at FROM projects WHERE id = ? FOR UPDATE", id).Scan(&row).Error
	if err != nil {
		return nil, wrap(err, "lock project %d", id)
	}
	if row.ID == 0 {
		return nil, annotations.Errorf(annotations.ENOTFOUND, "project %d not found", id)
	}
	return row.project()
}

// projectExists returns ENOTFOUND when the project does not exist.
func projectExists(tx *gorm.DB, id int64) error {
	var n int64
	if err := tx.Raw("SELECT COUNT(*) FROM projects WHERE id = ?", id).Scan(&n).Error; err != nil {
		return wrap(err, "find project %d", id)
	}
	if n == 0 {
		return annotations.Errorf(annotations.ENOTFOUND, "project %d not found", id)
	}
	return nil
}

// withProject is fn, the body of a transaction on project id's rows, run
// once the project exists (ENOTFOUND otherwise):
// d.read(ctx, withProject(id, fn)).
func withProject(id int64, fn func(tx *gorm.DB) error) func(tx *gorm.DB) error {
	return func(tx *gorm.DB) error {
		if err := projectExists(tx, id); err != nil {
			return err
		}
		return fn(tx)
	}
}
