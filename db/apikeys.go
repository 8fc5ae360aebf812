package db

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"

	"gorm.io/gorm"

	"concord/annotations"
)

// apiKeyRow is a row of api_keys.
type apiKeyRow struct {
	ID        int64
	ProjectID int64
	Name      string
	Prefix    string
	Hash      []byte
	ReadOnly  bool
	CreatedAt time.Time
}

func (apiKeyRow) TableName() string { return "api_keys" }

func (r *apiKeyRow) key() annotations.APIKey {
	return annotations.APIKey{ID: r.ID, ProjectID: r.ProjectID, Name: r.Name, Prefix: r.Prefix, Hash: r.Hash, ReadOnly: r.ReadOnly, CreatedAt: utc(r.CreatedAt)}
}

// CreateAPIKey stores a key (its hash, never the secret) and sets its ID and
// CreatedAt. Name, Prefix and Hash are required (EINVALID); a name is unique
// within its project (ECONFLICT); the project must exist (ENOTFOUND).
func (d *DB) CreateAPIKey(ctx context.Context, k *annotations.APIKey) error {
	switch {
	case strings.TrimSpace(k.Name) == "":
		return annotations.Errorf(annotations.EINVALID, "API key: empty name")
	case cleanText(k.Name) != k.Name || strings.ContainsFunc(k.Name, unicode.IsControl):
		return annotations.Errorf(annotations.EINVALID, "API key: name %q is not printable text", k.Name)
	case cleanText(k.Prefix) != k.Prefix || strings.ContainsFunc(k.Prefix, unicode.IsControl):
		return annotations.Errorf(annotations.EINVALID, "API key %q: prefix is not printable text", k.Name)
	case len(k.Name) > annotations.MaxNameLen:
		return annotations.Errorf(annotations.EINVALID, "API key: name is %d bytes long (at most %d)", len(k.Name), annotations.MaxNameLen)
	case k.Prefix == "":
		return annotations.Errorf(annotations.EINVALID, "API key %q: empty prefix", k.Name)
	case len(k.Hash) == 0:
		return annotations.Errorf(annotations.EINVALID, "API key %q: empty hash", k.Name)
	}
	row := apiKeyRow{ProjectID: k.ProjectID, Name: k.Name, Prefix: k.Prefix, Hash: k.Hash, ReadOnly: k.ReadOnly, CreatedAt: now()}
	err := d.write(ctx, withProject(k.ProjectID, func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&apiKeyRow{}).Where("project_id = ? AND name = ?", k.ProjectID, k.Name).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return annotations.Errorf(annotations.ECONFLICT, "project %d already has an API key named %q", k.ProjectID, k.Name)
		}
		return tx.Create(&row).Error
	}))
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return annotations.Errorf(annotations.ECONFLICT, "project %d already has an API key named %q", k.ProjectID, k.Name)
	}
	if err != nil {
		return wrap(err, "create API key")
	}
	k.ID, k.CreatedAt = row.ID, row.CreatedAt
	return nil
}

// FindAPIKeyByPrefix returns the keys with this public prefix (usually one;
// none is not an error), for the caller to compare hashes in constant time.
func (d *DB) FindAPIKeyByPrefix(ctx context.Context, prefix string) ([]annotations.APIKey, error) {
	var rows []apiKeyRow
	if err := d.r.WithContext(ctx).Where("prefix = ?", prefix).Order("id").Find(&rows).Error; err != nil {
		return nil, wrap(err, "find API key")
	}
	out := make([]annotations.APIKey, len(rows))
	for i := range rows {
		out[i] = rows[i].key()
	}
	return out, nil
}

// ListAPIKeys returns the project's keys, oldest first.
func (d *DB) ListAPIKeys(ctx context.Context, projectID int64) ([]annotations.APIKey, error) {
	var rows []apiKeyRow
	err := d.read(ctx, withProject(projectID, func(tx *gorm.DB) error {
		return tx.Where("project_id = ?", projectID).Order("id").Find(&rows).Error
	}))
	if err != nil {
		return nil, wrap(err, "list API keys of project %d", projectID)
	}
	out := make([]annotations.APIKey, len(rows))
	for i := range rows {
		out[i] = rows[i].key()
	}
	return out, nil
}

// DeleteAPIKey removes the project's key id; ENOTFOUND when the project has
// no such key.
func (d *DB) DeleteAPIKey(ctx context.Context, projectID, id int64) error {
	err := d.write(ctx, func(tx *gorm.DB) error {
		res := tx.Exec("DELETE FROM api_keys WHERE id = ? AND project_id = ?", id, projectID)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return annotations.Errorf(annotations.ENOTFOUND, "API key %d of project %d not found", id, projectID)
		}
		return nil
	})
	return wrap(err, "delete API key %d", id)
}
