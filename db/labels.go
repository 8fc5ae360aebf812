package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"concord/annotations"
)

// itemRowData is the stored form of an item.
type itemRowData struct {
	ID         int64
	ExtID      string
	Text       string
	Gold       string
	Covariates string
	Attrs      string
}

func (r *itemRowData) item() (annotations.Item, error) {
	it := annotations.Item{ID: r.ExtID, Text: r.Text, Gold: r.Gold}
	if r.Covariates != "" {
		if err := json.Unmarshal([]byte(r.Covariates), &it.Covariates); err != nil {
			return it, fmt.Errorf("db: item %q: decode covariates: %w", r.ExtID, err)
		}
	}
	if r.Attrs != "" {
		if err := json.Unmarshal([]byte(r.Attrs), &it.Attrs); err != nil {
			return it, fmt.Errorf("db: item %q: decode attributes: %w", r.ExtID, err)
		}
	}
	return it, nil
}

// Dataset returns the project's scheme, every item (in insertion order,
// including items created for labels only) and every label, ordered by item
// (insertion order) and then rater (order of first appearance).
func (d *DB) Dataset(ctx context.Context, projectID int64) (*annotations.Dataset, error) {
	var ds *annotations.Dataset
	err := d.read(ctx, func(tx *gorm.DB) error {
		p, err := findProject(tx, projectID)
		if err != nil {
			return err
		}
		ds = &annotations.Dataset{Scheme: p.Scheme}
		conn := tx.Statement.ConnPool
		ph := d.ph(1)

		items := map[int64]string{}
		rows, err := conn.QueryContext(ctx, "SELECT id, ext_id, text, gold, covariates, attrs FROM items WHERE project_id = "+ph+" ORDER BY id", projectID)
		if err != nil {
			return fmt.Errorf("read items: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var r itemRowData
			if err := rows.Scan(&r.ID, &r.ExtID, &r.Text, &r.Gold, &r.Covariates, &r.Attrs); err != nil {
				return fmt.Errorf("read items: %w", err)
			}
			it, err := r.item()
			if err != nil {
				return err
			}
			items[r.ID] = r.ExtID
			ds.Items = append(ds.Items, it)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read items: %w", err)
		}
		rows.Close()

		raters := map[int64]string{}
		rows, err = conn.QueryContext(ctx, "SELECT id, ext_id, kind FROM raters WHERE project_id = "+ph, projectID)
		if err != nil {
			return fmt.Errorf("read raters: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var ext, kind string
			if err := rows.Scan(&id, &ext, &kind); err != nil {
				return fmt.Errorf("read raters: %w", err)
			}
			raters[id] = ext
			if kind == annotations.RaterModel {
				ds.ModelRaters = append(ds.ModelRaters, ext)
			}
		}
		slices.Sort(ds.ModelRaters)
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read raters: %w", err)
		}
		rows.Close()

		var n int
		if err := tx.Raw("SELECT COUNT(*) FROM labels WHERE project_id = ?", projectID).Scan(&n).Error; err != nil {
			return fmt.Errorf("count labels: %w", err)
		}
		ds.Labels = make([]annotations.Label, 0, n)
		values := map[string]string{} // interned label values
		rows, err = conn.QueryContext(ctx, "SELECT item_id, rater_id, value, prob FROM labels WHERE project_id = "+ph+" ORDER BY item_id, rater_id, seq", projectID)
		if err != nil {
			return fmt.Errorf("read labels: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var item, rater int64
			var v sql.RawBytes
			var prob float64
			if err := rows.Scan(&item, &rater, &v, &prob); err != nil {
				return fmt.Errorf("read labels: %w", err)
			}
			val, ok := values[string(v)]
			if !ok {
				val = string(v)
				values[val] = val
			}
			ds.Labels = append(ds.Labels, annotations.Label{Item: items[item], Rater: raters[rater], Value: val, Prob: prob})
		}
		return rows.Err()
	})
	if err != nil {
		return nil, wrap(err, "read dataset of project %d", projectID)
	}
	return ds, nil
}

// ph returns the n-th bind parameter for statements run on the connection
// directly.
func (d *DB) ph(n int) string {
	var b strings.Builder
	d.dialect.placeholder(&b, n)
	return b.String()
}

// labelWhere builds the WHERE clause of a label filter over labels l joined
// with items i and raters r.
func labelWhere(projectID int64, f annotations.LabelFilter) (string, []any) {
	where := []string{"l.project_id = ?"}
	args := []any{projectID}
	if f.Item != "" {
		where = append(where, "i.ext_id = ?")
		args = append(args, f.Item)
	}
	if f.Rater != "" {
		where = append(where, "r.ext_id = ?")
		args = append(args, f.Rater)
	}
	if f.Value != "" {
		where = append(where, "l.value = ?")
		args = append(args, f.Value)
	}
	return strings.Join(where, " AND "), args
}

const labelJoin = " FROM labels l JOIN items i ON i.id = l.item_id JOIN raters r ON r.id = l.rater_id"

// ListLabels returns the labels matching f, ordered like Dataset, and the
// number of all matching labels.
func (d *DB) ListLabels(ctx context.Context, projectID int64, f annotations.LabelFilter) ([]annotations.Label, int, error) {
	if err := checkPage(f.Page); err != nil {
		return nil, 0, err
	}
	var out []annotations.Label
	var total int
	err := d.read(ctx, withProject(projectID, func(tx *gorm.DB) error {
		where, args := labelWhere(projectID, f)
		if err := tx.Raw("SELECT COUNT(*)"+labelJoin+" WHERE "+where, args...).Scan(&total).Error; err != nil {
			return err
		}
		var rows []struct {
			Item, Rater, Value string
			Prob               float64
		}
		err := tx.Raw("SELECT i.ext_id AS item, r.ext_id AS rater, l.value, l.prob"+labelJoin+" WHERE "+where+
			" ORDER BY l.item_id, l.rater_id, l.seq"+d.dialect.limitOffset(f.Page), args...).Scan(&rows).Error
		if err != nil {
			return err
		}
		out = make([]annotations.Label, len(rows))
		for i, r := range rows {
			out[i] = annotations.Label{Item: r.Item, Rater: r.Rater, Value: r.Value, Prob: r.Prob}
		}
		return nil
	}))
	if err != nil {
		return nil, 0, wrap(err, "list labels of project %d", projectID)
	}
	return out, total, nil
}

// DeleteLabels removes the labels matching f (paging ignored) and returns how
// many went. Items and raters stay.
func (d *DB) DeleteLabels(ctx context.Context, projectID int64, f annotations.LabelFilter) (int, error) {
	var n int64
	err := d.write(ctx, withProject(projectID, func(tx *gorm.DB) error {
		where, args := labelWhere(projectID, f)
		res := tx.Exec("DELETE FROM labels WHERE id IN (SELECT l.id"+labelJoin+" WHERE "+where+")", args...)
		n = res.RowsAffected
		if res.Error != nil || n == 0 {
			return res.Error
		}
		return tx.Exec("UPDATE projects SET labels_version = labels_version + 1 WHERE id = ?", projectID).Error
	}))
	if err != nil {
		return 0, wrap(err, "delete labels of project %d", projectID)
	}
	return int(n), nil
}

// LabelsVersion returns the project's labels version (bumped by every
// import that changes something and every deletion of labels) and its
// number of labels, read in one snapshot, or ENOTFOUND.
func (d *DB) LabelsVersion(ctx context.Context, projectID int64) (int64, int, error) {
	var version int64
	var n int
	err := d.read(ctx, func(tx *gorm.DB) error {
		var row struct {
			ID            int64
			LabelsVersion int64
		}
		if err := tx.Raw("SELECT id, labels_version FROM projects WHERE id = ?", projectID).Scan(&row).Error; err != nil {
			return err
		}
		if row.ID == 0 {
			return annotations.Errorf(annotations.ENOTFOUND, "project %d not found", projectID)
		}
		version = row.LabelsVersion
		return tx.Raw("SELECT COUNT(*) FROM labels WHERE project_id = ?", projectID).Scan(&n).Error
	})
	if err != nil {
		return 0, 0, wrap(err, "read labels version of project %d", projectID)
	}
	return version, n, nil
}

// ListItems returns the items matching f in insertion order, with their
// label counts, and the number of all matching items. Query matches a
// substring of the id or text, case-insensitively.
func (d *DB) ListItems(ctx context.Context, projectID int64, f annotations.ItemFilter) ([]annotations.ItemSummary, int, error) {
	if err := checkPage(f.Page); err != nil {
		return nil, 0, err
	}
	where := []string{"i.project_id = ?"}
	args := []any{projectID}
	if f.Labelled != nil {
		if *f.Labelled {
			where = append(where, "EXISTS (SELECT 1 FROM labels l WHERE l.item_id = i.id)")
		} else {
			where = append(where, "NOT EXISTS (SELECT 1 FROM labels l WHERE l.item_id = i.id)")
		}
	}
	if f.Query != "" {
		like := d.dialect.like()
		pat := "%" + escapeLike(f.Query) + "%"
		where = append(where, "(i.ext_id "+like+" ? ESCAPE '\\' OR i.text "+like+" ? ESCAPE '\\')")
		args = append(args, pat, pat)
	}
	w := strings.Join(where, " AND ")
	var out []annotations.ItemSummary
	var total int
	err := d.read(ctx, withProject(projectID, func(tx *gorm.DB) error {
		if err := tx.Raw("SELECT COUNT(*) FROM items i WHERE "+w, args...).Scan(&total).Error; err != nil {
			return err
		}
		var rows []struct {
			ID                                   int64
			ExtID, Text, Gold, Covariates, Attrs string
			Labels                               int
		}
		err := tx.Raw("SELECT i.id, i.ext_id, i.text, i.gold, i.covariates, i.attrs, "+
			"(SELECT COUNT(*) FROM labels l WHERE l.item_id = i.id) AS labels FROM items i WHERE "+w+
			" ORDER BY i.id"+d.dialect.limitOffset(f.Page), args...).Scan(&rows).Error
		if err != nil {
			return err
		}
		out = make([]annotations.ItemSummary, len(rows))
		for k, r := range rows {
			data := itemRowData{ID: r.ID, ExtID: r.ExtID, Text: r.Text, Gold: r.Gold, Covariates: r.Covariates, Attrs: r.Attrs}
			it, err := data.item()
			if err != nil {
				return err
			}
			out[k] = annotations.ItemSummary{Item: it, Labels: r.Labels}
		}
		return nil
	}))
	if err != nil {
		return nil, 0, wrap(err, "list items of project %d", projectID)
	}
	return out, total, nil
}

// escapeLike escapes the LIKE wildcards of s with a backslash.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ListRaters returns the raters in order of first appearance with their
// label counts, and the number of raters.
func (d *DB) ListRaters(ctx context.Context, projectID int64, p annotations.Page) ([]annotations.RaterSummary, int, error) {
	if err := checkPage(p); err != nil {
		return nil, 0, err
	}
	var out []annotations.RaterSummary
	var total int
	err := d.read(ctx, withProject(projectID, func(tx *gorm.DB) error {
		if err := tx.Raw("SELECT COUNT(*) FROM raters WHERE project_id = ?", projectID).Scan(&total).Error; err != nil {
			return err
		}
		var rows []struct {
			ExtID  string
			Kind   string
			Labels int
		}
		err := tx.Raw("SELECT r.ext_id, r.kind, (SELECT COUNT(*) FROM labels l WHERE l.rater_id = r.id) AS labels "+
			"FROM raters r WHERE r.project_id = ? ORDER BY r.id"+d.dialect.limitOffset(p), projectID).Scan(&rows).Error
		if err != nil {
			return err
		}
		out = make([]annotations.RaterSummary, len(rows))
		for i, r := range rows {
			out[i] = annotations.RaterSummary{Rater: annotations.Rater{ID: r.ExtID}, Labels: r.Labels}
			if r.Kind == annotations.RaterModel {
				out[i].Kind = annotations.RaterModel // humans keep the empty kind
			}
		}
		return nil
	}))
	if err != nil {
		return nil, 0, wrap(err, "list raters of project %d", projectID)
	}
	return out, total, nil
}

// Stats summarises the project's labels. LabelsPerItem is the mean number of
// labels of a labelled item.
func (d *DB) Stats(ctx context.Context, projectID int64) (*annotations.Stats, error) {
	st := &annotations.Stats{PerRater: map[string]int{}, Distribution: map[string]int{}}
	err := d.read(ctx, withProject(projectID, func(tx *gorm.DB) error {
		var counts struct{ Items, Raters, Labels, Labelled, WithText, WithCov int }
		err := tx.Raw(`SELECT
			(SELECT COUNT(*) FROM items WHERE project_id = ?) AS items,
			(SELECT COUNT(*) FROM raters WHERE project_id = ?) AS raters,
			(SELECT COUNT(*) FROM labels WHERE project_id = ?) AS labels,
			(SELECT COUNT(DISTINCT item_id) FROM labels WHERE project_id = ?) AS labelled,
			(SELECT COUNT(*) FROM items WHERE project_id = ? AND text <> '') AS with_text,
			(SELECT COUNT(*) FROM items WHERE project_id = ? AND covariates NOT IN ('', '{}', 'null')) AS with_cov`,
			projectID, projectID, projectID, projectID, projectID, projectID).Scan(&counts).Error
		if err != nil {
			return err
		}
		st.Items, st.Raters, st.Labels, st.LabelledItems = counts.Items, counts.Raters, counts.Labels, counts.Labelled
		st.ItemsWithText, st.ItemsWithCovariates = counts.WithText, counts.WithCov
		if st.LabelledItems > 0 {
			st.LabelsPerItem = float64(st.Labels) / float64(st.LabelledItems)
		}
		var perRater []struct {
			ExtID string
			N     int
		}
		err = tx.Raw(`SELECT r.ext_id, COUNT(l.id) AS n FROM raters r LEFT JOIN labels l ON l.rater_id = r.id
			WHERE r.project_id = ? GROUP BY r.id, r.ext_id`, projectID).Scan(&perRater).Error
		if err != nil {
			return err
		}
		for _, r := range perRater {
			st.PerRater[r.ExtID] = r.N
		}
		var dist []struct {
			Value string
			N     int
		}
		err = tx.Raw("SELECT value, COUNT(*) AS n FROM labels WHERE project_id = ? GROUP BY value", projectID).Scan(&dist).Error
		if err != nil {
			return err
		}
		for _, v := range dist {
			st.Distribution[v.Value] = v.N
		}
		return nil
	}))
	if err != nil {
		return nil, wrap(err, "statistics of project %d", projectID)
	}
	return st, nil
}
