package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"concord/annotations"
)

// conflictExamples is how many conflicting labels an ECONFLICT error names.
const conflictExamples = 5

// smallImportItems is the number of stored items below which Import reads
// the stored labels of those items only instead of the project's.
const smallImportItems = 2000

// labelRef is one label of an import, by dense item and rater index.
type labelRef struct {
	item, rater int32
	value       string
}

func pairKey(item, rater int32) uint64 { return uint64(uint32(item))<<32 | uint64(uint32(rater)) }

// importInput is a validated dataset: distinct items and raters with dense
// indices, and the labels referring to them.
type importInput struct {
	items    []string
	itemIdx  map[string]int32
	itemData []*annotations.Item // the items-file entry of each item, or nil
	raters   []string
	raterIdx map[string]int32
	labels   []labelRef
	pair     map[uint64]int32 // (item, rater) -> index in labels
}

// prepareImport validates ds against the project's scheme without touching
// the database. Every problem is reported (up to the ProblemList cap).
func prepareImport(s annotations.Scheme, ds *annotations.Dataset) (*importInput, error) {
	var probs annotations.ProblemList
	add := func(format string, args ...any) { probs.Add(annotations.Problem{Msg: fmt.Sprintf(format, args...)}) }
	in := &importInput{
		itemIdx:  make(map[string]int32, len(ds.Items)+len(ds.Labels)/4),
		raterIdx: make(map[string]int32),
		labels:   make([]labelRef, len(ds.Labels)),
		pair:     make(map[uint64]int32, len(ds.Labels)),
	}
	firstItem := map[string]int{}
	for i := range ds.Items {
		it := &ds.Items[i]
		if err := it.Validate(); err != nil {
			add("item %d (%q): %s", i+1, it.ID, annotations.ErrorMessage(err))
			continue
		}
		if j, dup := firstItem[it.ID]; dup {
			add("item %d: item %q is listed twice (also item %d)", i+1, it.ID, j+1)
			continue
		}
		firstItem[it.ID] = i
		in.itemIdx[it.ID] = int32(len(in.items))
		in.items = append(in.items, it.ID)
		in.itemData = append(in.itemData, it)
	}
	values := map[string]error{}
	for i, l := range ds.Labels {
		ii, iok := in.itemIdx[l.Item]
		ri, rok := in.raterIdx[l.Rater]
		if !iok || !rok {
			// First sight of an id: check the whole label once.
			if err := l.Validate(s); err != nil {
				add("label %d (item %q, rater %q): %s", i+1, l.Item, l.Rater, annotations.ErrorMessage(err))
				continue
			}
			if !iok {
				ii = int32(len(in.items))
				in.itemIdx[l.Item] = ii
				in.items = append(in.items, l.Item)
				in.itemData = append(in.itemData, nil)
			}
			if !rok {
				ri = int32(len(in.raters))
				in.raterIdx[l.Rater] = ri
				in.raters = append(in.raters, l.Rater)
			}
		}
		verr, seen := values[l.Value]
		if !seen {
			verr = checkValue(s, l.Value)
			values[l.Value] = verr
		}
		if verr != nil {
			add("label %d (item %q, rater %q): %s", i+1, l.Item, l.Rater, annotations.ErrorMessage(verr))
			continue
		}
		k := pairKey(ii, ri)
		if j, dup := in.pair[k]; dup {
			add("label %d: item %q, rater %q is labelled twice (also label %d)", i+1, l.Item, l.Rater, j+1)
			continue
		}
		in.pair[k] = int32(i)
		in.labels[i] = labelRef{item: ii, rater: ri, value: l.Value}
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	return in, nil
}

// checkValue accepts a label value in the scheme's canonical form.
func checkValue(s annotations.Scheme, v string) error {
	c, err := s.Normalize(v)
	if err != nil {
		return err
	}
	if c != v {
		return annotations.Errorf(annotations.EINVALID, "label %q is not in canonical form %q", v, c)
	}
	return nil
}

// label states during an import.
const (
	labelNew uint8 = iota
	labelUnchanged
	labelReplace
)

// Import writes a validated dataset into the project in one transaction; see
// annotations.LabelStore. Labels are checked against the project's scheme
// (ds.Scheme is not consulted) and must be in canonical form; an (item,
// rater) pair may occur once. Items are upserted: an items-file entry's
// non-empty fields (text, gold, covariates, attrs) replace the stored ones,
// empty fields keep them; every labelled item and every rater is created if
// new. A label equal to the stored one is unchanged; a different one is an
// ECONFLICT error naming examples, unless opts.Replace. Nothing is written
// when anything is rejected.
func (d *DB) Import(ctx context.Context, projectID int64, ds *annotations.Dataset, opts annotations.ImportOptions) (annotations.ImportResult, error) {
	var res annotations.ImportResult
	if ds == nil {
		return res, annotations.Errorf(annotations.EINVALID, "no dataset to import")
	}
	p, err := d.FindProjectByID(ctx, projectID)
	if err != nil {
		return res, err
	}
	// Validation needs no lock: a project's scheme never changes.
	in, err := prepareImport(p.Scheme, ds)
	if err != nil {
		return res, err
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(int, int) {}
	}
	total := len(ds.Labels)
	progress(0, total)
	err = d.write(ctx, func(tx *gorm.DB) error {
		if _, err := d.lockProject(tx, projectID); err != nil {
			return err
		}
		res = annotations.ImportResult{}
		return d.importTx(ctx, tx, projectID, in, opts.Replace, &res, func(done int) { progress(done, total) })
	})
	if err != nil {
		return annotations.ImportResult{}, wrap(err, "import into project %d", projectID)
	}
	progress(total, total)
	return res, nil
}

// storedItem is the stored state of an item named in an import.
type storedItem struct {
	row                           int64
	text, gold, covariates, attrs string
}

func (d *DB) importTx(ctx context.Context, tx *gorm.DB, projectID int64, in *importInput, replace bool, res *annotations.ImportResult, progress func(int)) error {
	b := d.bulk(ctx, tx)
	conn := tx.Statement.ConnPool

	// Stored items and raters named by the import.
	itemRow := make([]int64, len(in.items))
	var stored []storedItem // by item index, when the import has items-file entries
	withData := false
	for _, it := range in.itemData {
		if it != nil {
			withData = true
			break
		}
	}
	q := "SELECT id, ext_id FROM items WHERE project_id = " + b.ph1()
	if withData {
		q = "SELECT id, ext_id, text, gold, covariates, attrs FROM items WHERE project_id = " + b.ph1()
		stored = make([]storedItem, len(in.items))
	}
	rowItem := map[int64]int32{}
	if err := b.run(nil, q, []any{projectID}, true, func(r *sql.Rows) error {
		var s storedItem
		var ext sql.RawBytes
		dst := []any{&s.row, &ext}
		if withData {
			dst = append(dst, &s.text, &s.gold, &s.covariates, &s.attrs)
		}
		if err := r.Scan(dst...); err != nil {
			return err
		}
		if i, ok := in.itemIdx[string(ext)]; ok {
			itemRow[i] = s.row
			rowItem[s.row] = i
			if withData {
				stored[i] = s
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read items: %w", err)
	}
	raterRow := make([]int64, len(in.raters))
	rowRater := map[int64]int32{}
	if err := b.run(nil, "SELECT id, ext_id FROM raters WHERE project_id = "+b.ph1(), []any{projectID}, true, func(r *sql.Rows) error {
		var id int64
		var ext sql.RawBytes
		if err := r.Scan(&id, &ext); err != nil {
			return err
		}
		if i, ok := in.raterIdx[string(ext)]; ok {
			raterRow[i] = id
			rowRater[id] = i
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read raters: %w", err)
	}

	// Stored labels of the import's (item, rater) pairs.
	state := make([]uint8, len(in.labels))
	var replaceRows []int64
	var conflicts []int // label indices, in order
	var storedValue map[int]string
	if len(rowItem) > 0 && len(rowRater) > 0 {
		storedValue = map[int]string{}
		scan := func(r *sql.Rows) error {
			var id, item, rater int64
			var v sql.RawBytes
			if err := r.Scan(&id, &item, &rater, &v); err != nil {
				return err
			}
			ii, ok1 := rowItem[item]
			ri, ok2 := rowRater[rater]
			if !ok1 || !ok2 {
				return nil
			}
			li, ok := in.pair[pairKey(ii, ri)]
			if !ok {
				return nil
			}
			if in.labels[li].value == string(v) {
				state[li] = labelUnchanged
				return nil
			}
			state[li] = labelReplace
			replaceRows = append(replaceRows, id)
			storedValue[int(li)] = string(v)
			return nil
		}
		var err error
		if len(rowItem) <= smallImportItems {
			ids := make([]int64, 0, len(rowItem))
			for row := range rowItem {
				ids = append(ids, row)
			}
			_, err = b.inList("SELECT id, item_id, rater_id, value FROM labels WHERE item_id IN", "", ids, scan)
		} else {
			err = b.run(nil, "SELECT id, item_id, rater_id, value FROM labels WHERE project_id = "+b.ph1(), []any{projectID}, true, scan)
		}
		if err != nil {
			return fmt.Errorf("read labels: %w", err)
		}
	}
	for i, s := range state {
		switch s {
		case labelUnchanged:
			res.LabelsUnchanged++
		case labelReplace:
			conflicts = append(conflicts, i)
		}
	}
	if len(conflicts) > 0 && !replace {
		return conflictError(in, conflicts, storedValue)
	}
	res.LabelsReplaced = len(conflicts)
	res.LabelsAdded = len(in.labels) - res.LabelsUnchanged - res.LabelsReplaced

	// Items: insert new ones, update changed ones.
	var newItems []int32
	type itemUpdate struct {
		row                           int64
		text, gold, covariates, attrs string
	}
	var updates []itemUpdate
	for i := range in.items {
		data := in.itemData[i]
		if itemRow[i] == 0 {
			newItems = append(newItems, int32(i))
			continue
		}
		if data == nil {
			continue
		}
		s := stored[i]
		u := itemUpdate{row: s.row, text: s.text, gold: s.gold, covariates: s.covariates, attrs: s.attrs}
		if data.Text != "" {
			u.text = data.Text
		}
		if data.Gold != "" {
			u.gold = data.Gold
		}
		if len(data.Covariates) > 0 {
			u.covariates = encodeMap(data.Covariates)
		}
		if len(data.Attrs) > 0 {
			u.attrs = encodeMap(data.Attrs)
		}
		if u.text != s.text || u.gold != s.gold || u.covariates != s.covariates || u.attrs != s.attrs {
			updates = append(updates, u)
		}
	}
	err := b.insert("items", []string{"project_id", "ext_id", "text", "gold", "covariates", "attrs"}, len(newItems),
		func(k int, dst []any) {
			i := newItems[k]
			dst[0], dst[1] = projectID, in.items[i]
			dst[2], dst[3], dst[4], dst[5] = "", "", "", ""
			if it := in.itemData[i]; it != nil {
				dst[2], dst[3] = it.Text, it.Gold
				if len(it.Covariates) > 0 {
					dst[4] = encodeMap(it.Covariates)
				}
				if len(it.Attrs) > 0 {
					dst[5] = encodeMap(it.Attrs)
				}
			}
		}, "id, ext_id", func(r *sql.Rows) error {
			var id int64
			var ext sql.RawBytes
			if err := r.Scan(&id, &ext); err != nil {
				return err
			}
			itemRow[in.itemIdx[string(ext)]] = id
			return nil
		}, nil)
	if err != nil {
		return err
	}
	res.ItemsAdded = len(newItems)
	if len(updates) > 0 {
		var s strings.Builder
		s.WriteString("UPDATE items SET text = ")
		for i, col := range []string{"", ", gold = ", ", covariates = ", ", attrs = ", " WHERE id = "} {
			s.WriteString(col)
			b.dialect.placeholder(&s, i+1)
		}
		stmt, err := conn.PrepareContext(ctx, s.String())
		if err != nil {
			return fmt.Errorf("prepare item update: %w", err)
		}
		defer stmt.Close()
		for _, u := range updates {
			if _, err := stmt.ExecContext(ctx, u.text, u.gold, u.covariates, u.attrs, u.row); err != nil {
				return fmt.Errorf("update item: %w", err)
			}
		}
	}
	res.ItemsUpdated = len(updates)

	// Raters.
	var newRaters []int32
	for i := range in.raters {
		if raterRow[i] == 0 {
			newRaters = append(newRaters, int32(i))
		}
	}
	err = b.insert("raters", []string{"project_id", "ext_id"}, len(newRaters),
		func(k int, dst []any) { dst[0], dst[1] = projectID, in.raters[newRaters[k]] },
		"id, ext_id", func(r *sql.Rows) error {
			var id int64
			var ext sql.RawBytes
			if err := r.Scan(&id, &ext); err != nil {
				return err
			}
			raterRow[in.raterIdx[string(ext)]] = id
			return nil
		}, nil)
	if err != nil {
		return err
	}
	res.RatersAdded = len(newRaters)

	// Labels: replaced ones go and come back with their new value.
	if len(replaceRows) > 0 {
		if _, err := b.inList("DELETE FROM labels WHERE id IN", "", replaceRows, nil); err != nil {
			return fmt.Errorf("delete replaced labels: %w", err)
		}
	}
	write := make([]int32, 0, res.LabelsAdded+res.LabelsReplaced)
	for i, s := range state {
		if s != labelUnchanged {
			write = append(write, int32(i))
		}
	}
	return b.insert("labels", []string{"project_id", "item_id", "rater_id", "value"}, len(write),
		func(k int, dst []any) {
			l := &in.labels[write[k]]
			dst[0], dst[1], dst[2], dst[3] = projectID, itemRow[l.item], raterRow[l.rater], l.value
		}, "", nil, func(done int) { progress(res.LabelsUnchanged + done) })
}

// ph1 returns the first bind parameter of a statement.
func (b *bulk) ph1() string {
	if b.dialect == postgresDialect {
		return "$1"
	}
	return "?"
}

// conflictError describes labels that differ from the stored ones.
func conflictError(in *importInput, conflicts []int, stored map[int]string) error {
	var s strings.Builder
	if len(conflicts) == 1 {
		s.WriteString("1 label differs from the stored label")
	} else {
		fmt.Fprintf(&s, "%d labels differ from the stored labels", len(conflicts))
	}
	s.WriteString(" (nothing was written; import with replace to overwrite them): ")
	for k, i := range conflicts[:min(len(conflicts), conflictExamples)] {
		if k > 0 {
			s.WriteString("; ")
		}
		l := in.labels[i]
		fmt.Fprintf(&s, "item %q, rater %q: stored %q, new %q", in.items[l.item], in.raters[l.rater], stored[i], l.value)
	}
	if n := len(conflicts) - conflictExamples; n > 0 {
		fmt.Fprintf(&s, "; and %d more", n)
	}
	return annotations.Errorf(annotations.ECONFLICT, "%s", s.String())
}

// encodeMap encodes covariates or attributes as JSON (keys sorted).
func encodeMap[V any](m map[string]V) string {
	b, err := json.Marshal(m)
	if err != nil {
		// Item.Validate rejects non-finite covariates; strings always encode.
		panic("db: encode item map: " + err.Error())
	}
	return string(b)
}
