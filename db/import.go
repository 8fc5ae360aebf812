package db

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"concord/annotations"
)

// conflictExamples is how many conflicting labels an ECONFLICT error names.
const conflictExamples = 5

// smallImportItems is the number of stored items below which Import reads
// the stored labels of those items only instead of the project's.
const smallImportItems = 2000

// labelRef is one label of an import, by dense item and rater index; seq
// numbers the labels of one (item, rater) pair from 0 (repeated labels,
// --duplicates keep).
type labelRef struct {
	item, rater int32
	seq         int32
	value       string
	prob        float64
}

// importInput is a validated dataset: distinct items and raters with dense
// indices, and the labels referring to them.
type importInput struct {
	items    []string
	itemIdx  map[string]int32
	itemData []*annotations.Item // the items-file entry of each item, or nil
	raters   []string
	raterIdx map[string]int32
	// model[r] is set for the raters the import marks as models.
	model  []bool
	labels []labelRef
	// The labels grouped by item and sorted by rater within an item:
	// byItem[start[i]:start[i+1]] are the label indices of item i. Cheaper
	// than a map of (item, rater) pairs for a million labels.
	start  []int32
	byItem []int32
}

// find returns the index of the label seq of (item, rater), or -1.
func (in *importInput) find(item, rater, seq int32) int32 {
	g := in.byItem[in.start[item]:in.start[item+1]]
	lo, hi := 0, len(g)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if in.labels[g[m]].rater < rater {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if k := lo + int(seq); seq >= 0 && k < len(g) && in.labels[g[k]].rater == rater && in.labels[g[k]].seq == seq {
		return g[k]
	}
	return -1
}

// group fills start and byItem, numbers the labels of each (item, rater)
// pair (seq) and returns the pairs labelled more than once, as (first,
// repeat) label indices ordered by the repeat.
func (in *importInput) group() [][2]int32 {
	in.start = make([]int32, len(in.items)+1)
	for _, l := range in.labels {
		in.start[l.item+1]++
	}
	for i := range in.items {
		in.start[i+1] += in.start[i]
	}
	in.byItem = make([]int32, len(in.labels))
	next := append([]int32(nil), in.start[:len(in.items)]...)
	for i, l := range in.labels {
		in.byItem[next[l.item]] = int32(i)
		next[l.item]++
	}
	var dups [][2]int32
	for i := range in.items {
		g := in.byItem[in.start[i]:in.start[i+1]]
		if len(g) < 2 {
			continue
		}
		// Stable: within a rater, label indices stay in order.
		slices.SortStableFunc(g, func(a, b int32) int { return cmp.Compare(in.labels[a].rater, in.labels[b].rater) })
		first := g[0]
		for k := 1; k < len(g); k++ {
			if in.labels[g[k]].rater != in.labels[first].rater {
				first = g[k]
				continue
			}
			in.labels[g[k]].seq = in.labels[g[k-1]].seq + 1
			dups = append(dups, [2]int32{first, g[k]})
		}
	}
	slices.SortFunc(dups, func(a, b [2]int32) int { return cmp.Compare(a[1], b[1]) })
	return dups
}

// prepareImport validates ds against the project's scheme without touching
// the database. Every problem is reported (up to the ProblemList cap).
// Repeated labels of a pair are numbered when keep is set and are problems
// otherwise.
func prepareImport(s annotations.Scheme, ds *annotations.Dataset, keep bool) (*importInput, error) {
	var probs annotations.ProblemList
	add := func(format string, args ...any) { probs.Add(annotations.Problem{Msg: fmt.Sprintf(format, args...)}) }
	in := &importInput{
		itemIdx:  make(map[string]int32, len(ds.Items)+len(ds.Labels)/4),
		raterIdx: make(map[string]int32),
		labels:   make([]labelRef, len(ds.Labels)),
	}
	firstItem := map[string]int{}
	for i := range ds.Items {
		it := &ds.Items[i]
		if err := it.Validate(); err != nil {
			add("item %d (%q): %s", i+1, it.ID, annotations.ErrorMessage(err))
			continue
		}
		if field := nulField(it); field != "" {
			add("item %d (%q): %s contains a NUL byte", i+1, it.ID, field)
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
		if err := annotations.CheckProb(l.Prob); err != nil {
			add("label %d (item %q, rater %q): %s", i+1, l.Item, l.Rater, annotations.ErrorMessage(err))
			continue
		}
		in.labels[i] = labelRef{item: ii, rater: ri, value: l.Value, prob: l.Prob}
	}
	in.model = make([]bool, len(in.raters))
	for _, m := range ds.ModelRaters {
		ri, ok := in.raterIdx[m]
		if !ok {
			add("model rater %q has no label in the import", m)
			continue
		}
		in.model[ri] = true
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	for _, d := range in.group() {
		if keep {
			break
		}
		l := ds.Labels[d[1]]
		add("label %d: item %q, rater %q is labelled twice (also label %d; accept repeated labels with %s)", d[1]+1, l.Item, l.Rater, d[0]+1, annotations.DuplicatesFlag)
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	return in, nil
}

// nulField names the first field of it holding a NUL byte, which
// PostgreSQL cannot store in text, or returns "".
func nulField(it *annotations.Item) string {
	nul := func(s string) bool { return strings.IndexByte(s, 0) >= 0 }
	switch {
	case nul(it.Text):
		return "text"
	case nul(it.Gold):
		return "gold"
	}
	for k := range it.Covariates {
		if nul(k) {
			return fmt.Sprintf("covariate name %q", k)
		}
	}
	for k, v := range it.Attrs {
		if nul(k) || nul(v) {
			return fmt.Sprintf("attribute %q", k)
		}
	}
	return ""
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
// rater) pair may occur once unless opts.Duplicates is DuplicatesKeep (all
// are stored, numbered by seq in dataset order) or DuplicatesFirst (the
// first is imported, the others counted in ImportResult.DuplicatesDropped).
// With repeats the labels of a pair are matched with the stored ones by
// position: the k-th label of a pair is unchanged, a conflict or new as the
// stored k-th label is equal, different or absent. Items are upserted: an items-file entry's
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
	ds, dropped := applyDuplicates(ds, opts.Duplicates)
	in, err := prepareImport(p.Scheme, ds, opts.Duplicates.Mode() == annotations.DuplicatesKeep)
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
		res = annotations.ImportResult{DuplicatesDropped: dropped}
		if err := d.importTx(ctx, tx, projectID, in, opts.Replace, &res, func(done int) { progress(done, total) }); err != nil {
			return err
		}
		return bumpLabelsVersion(tx, projectID, res)
	})
	if err != nil {
		return annotations.ImportResult{}, wrap(err, "import into project %d", projectID)
	}
	progress(total, total)
	return res, nil
}

// ImportNew creates the project p and imports ds into it in one
// transaction (annotations.LabelStore): a failed or killed import leaves no
// empty project behind.
func (d *DB) ImportNew(ctx context.Context, p *annotations.Project, ds *annotations.Dataset, opts annotations.ImportOptions) (annotations.ImportResult, error) {
	var res annotations.ImportResult
	if ds == nil {
		return res, annotations.Errorf(annotations.EINVALID, "no dataset to import")
	}
	if err := p.Validate(); err != nil {
		return res, err
	}
	ds, dropped := applyDuplicates(ds, opts.Duplicates)
	in, err := prepareImport(p.Scheme, ds, opts.Duplicates.Mode() == annotations.DuplicatesKeep)
	if err != nil {
		return res, err
	}
	scheme, err := json.Marshal(p.Scheme)
	if err != nil {
		return res, fmt.Errorf("db: encode scheme: %w", err)
	}
	progress := opts.Progress
	if progress == nil {
		progress = func(int, int) {}
	}
	total := len(ds.Labels)
	progress(0, total)
	row := projectRow{Name: p.Name, Scheme: string(scheme), CreatedAt: now()}
	err = d.write(ctx, func(tx *gorm.DB) error {
		if err := createProjectTx(tx, p.Name, &row); err != nil {
			return err
		}
		res = annotations.ImportResult{DuplicatesDropped: dropped}
		if err := d.importTx(ctx, tx, row.ID, in, opts.Replace, &res, func(done int) { progress(done, total) }); err != nil {
			return err
		}
		return bumpLabelsVersion(tx, row.ID, res)
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return annotations.ImportResult{}, annotations.Errorf(annotations.ECONFLICT, "project %q already exists", p.Name)
	}
	if err != nil {
		return annotations.ImportResult{}, wrap(err, "import into new project %q", p.Name)
	}
	p.ID, p.CreatedAt = row.ID, row.CreatedAt
	progress(total, total)
	return res, nil
}

// bumpLabelsVersion moves the project's labels version on (LabelsVersion)
// in an import's transaction when the import changed anything.
func bumpLabelsVersion(tx *gorm.DB, projectID int64, res annotations.ImportResult) error {
	if res.ItemsAdded+res.ItemsUpdated+res.RatersAdded+res.LabelsAdded+res.LabelsReplaced+res.ModelsMarked == 0 {
		return nil
	}
	if err := tx.Exec("UPDATE projects SET labels_version = labels_version + 1 WHERE id = ?", projectID).Error; err != nil {
		return fmt.Errorf("update labels version: %w", err)
	}
	return nil
}

// applyDuplicates keeps the first label of each (item, rater) pair of ds in
// its order under DuplicatesFirst and returns the dataset with the number
// dropped, those BuildDataset dropped (ds.Dropped) included; other settings
// return ds and ds.Dropped.
func applyDuplicates(ds *annotations.Dataset, mode annotations.Duplicates) (*annotations.Dataset, int) {
	if mode.Mode() != annotations.DuplicatesFirst {
		return ds, ds.Dropped
	}
	type pair struct{ item, rater string }
	seen := make(map[pair]bool, len(ds.Labels))
	labels := make([]annotations.Label, 0, len(ds.Labels))
	for _, l := range ds.Labels {
		k := pair{l.Item, l.Rater}
		if !seen[k] {
			seen[k] = true
			labels = append(labels, l)
		}
	}
	if len(labels) == len(ds.Labels) {
		return ds, ds.Dropped
	}
	c := *ds
	c.Labels = labels
	return &c, ds.Dropped + len(ds.Labels) - len(labels)
}

// storedItem is the stored state of an item named in an import.
type storedItem struct {
	row                           int64
	text, gold, covariates, attrs string
}

func (d *DB) importTx(ctx context.Context, tx *gorm.DB, projectID int64, in *importInput, replace bool, res *annotations.ImportResult, progress func(int)) error {
	r := &importRun{b: d.bulk(ctx, tx), in: in, projectID: projectID, res: res,
		itemRow: make([]int64, len(in.items)), raterRow: make([]int64, len(in.raters)), state: make([]uint8, len(in.labels))}
	if err := r.readStored(); err != nil {
		return err
	}
	if err := r.readStoredLabels(); err != nil {
		return err
	}
	for i, s := range r.state {
		switch s {
		case labelUnchanged:
			res.LabelsUnchanged++
		case labelReplace:
			r.conflicts = append(r.conflicts, i)
		}
	}
	if len(r.conflicts) > 0 && !replace {
		return conflictError(in, r.conflicts, r.storedValue)
	}
	res.LabelsReplaced = len(r.conflicts)
	res.LabelsAdded = len(in.labels) - res.LabelsUnchanged - res.LabelsReplaced
	if err := r.writeItems(); err != nil {
		return err
	}
	if err := r.writeRaters(); err != nil {
		return err
	}
	return r.writeLabels(progress)
}

// importRun is one import into a project, in one transaction: what is
// stored of the import's items, raters and labels, then what it writes.
type importRun struct {
	b         *bulk
	in        *importInput
	projectID int64
	res       *annotations.ImportResult
	// itemRow and raterRow are the database ids of the import's items and
	// raters (0: not stored yet); stored the stored state of the items
	// when the import has items-file entries; rowItem and rowRater map
	// the stored rows back.
	itemRow, raterRow []int64
	stored            []storedItem
	rowItem, rowRater rowIndex
	// state is each label's (new, unchanged, replace); conflicts the
	// labels that replace a stored value (storedValue, by label index).
	state       []uint8
	conflicts   []int
	storedValue map[int]string
	// mark are the stored human raters the import marks as models.
	mark []int64
}

// readStored reads the stored items and raters the import names.
func (r *importRun) readStored() error {
	b, in := r.b, r.in
	withData := slices.ContainsFunc(in.itemData, func(it *annotations.Item) bool { return it != nil })
	q := "SELECT id, ext_id FROM items WHERE project_id = " + b.d.ph(1)
	if withData {
		q = "SELECT id, ext_id, text, gold, covariates, attrs FROM items WHERE project_id = " + b.d.ph(1)
		r.stored = make([]storedItem, len(in.items))
	}
	if err := b.run(nil, q, []any{r.projectID}, true, func(rows *sql.Rows) error {
		var s storedItem
		var ext sql.RawBytes
		dst := []any{&s.row, &ext}
		if withData {
			dst = append(dst, &s.text, &s.gold, &s.covariates, &s.attrs)
		}
		if err := rows.Scan(dst...); err != nil {
			return err
		}
		if i, ok := in.itemIdx[string(ext)]; ok {
			r.itemRow[i] = s.row
			r.rowItem.add(s.row, i)
			if withData {
				r.stored[i] = s
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read items: %w", err)
	}
	if err := b.run(nil, "SELECT id, ext_id, kind FROM raters WHERE project_id = "+b.d.ph(1), []any{r.projectID}, true, func(rows *sql.Rows) error {
		var id int64
		var ext, kind sql.RawBytes
		if err := rows.Scan(&id, &ext, &kind); err != nil {
			return err
		}
		if i, ok := in.raterIdx[string(ext)]; ok {
			r.raterRow[i] = id
			r.rowRater.add(id, i)
			if in.model[i] && string(kind) != annotations.RaterModel {
				r.mark = append(r.mark, id)
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read raters: %w", err)
	}
	return nil
}

// readStoredLabels reads the stored labels of the import's (item, rater)
// pairs and sets each label's state.
func (r *importRun) readStoredLabels() error {
	b, in := r.b, r.in
	if r.rowItem.len() == 0 || r.rowRater.len() == 0 {
		return nil
	}
	r.rowItem.build()
	r.rowRater.build()
	r.storedValue = map[int]string{}
	scan := func(rows *sql.Rows) error {
		var item, rater int64
		var seq int32
		var v sql.RawBytes
		var prob float64
		if err := rows.Scan(&item, &rater, &seq, &v, &prob); err != nil {
			return err
		}
		ii, ri := r.rowItem.get(item), r.rowRater.get(rater)
		if ii < 0 || ri < 0 {
			return nil
		}
		li := in.find(ii, ri, seq)
		if li < 0 {
			return nil
		}
		if in.labels[li].value == string(v) && in.labels[li].prob == prob {
			r.state[li] = labelUnchanged
			return nil
		}
		r.state[li] = labelReplace
		r.storedValue[int(li)] = labelString(string(v), prob)
		return nil
	}
	var err error
	if r.rowItem.len() <= smallImportItems {
		err = b.queryIn("SELECT item_id, rater_id, seq, value, prob FROM labels WHERE item_id IN", r.rowItem.rows, scan)
	} else {
		err = b.run(nil, "SELECT item_id, rater_id, seq, value, prob FROM labels WHERE project_id = "+b.d.ph(1), []any{r.projectID}, true, scan)
	}
	if err != nil {
		return fmt.Errorf("read labels: %w", err)
	}
	return nil
}

// itemUpdate is the new state of a stored item.
type itemUpdate struct {
	row                           int64
	text, gold, covariates, attrs string
}

// itemChanges returns the items to insert (by index) and the stored items
// whose items-file entry changes them.
func (r *importRun) itemChanges() (newItems []int32, updates []itemUpdate) {
	in := r.in
	for i := range in.items {
		data := in.itemData[i]
		if r.itemRow[i] == 0 {
			newItems = append(newItems, int32(i))
			continue
		}
		if data == nil {
			continue
		}
		s := r.stored[i]
		u := itemUpdate(s)
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
		if u != itemUpdate(s) {
			updates = append(updates, u)
		}
	}
	return newItems, updates
}

// writeItems inserts the new items and updates the changed ones.
func (r *importRun) writeItems() error {
	b, in := r.b, r.in
	newItems, updates := r.itemChanges()
	err := b.insert("items", []column{{"project_id", "bigint"}, {"ext_id", "text"}, {"text", "text"}, {"gold", "text"}, {"covariates", "text"}, {"attrs", "text"}}, len(newItems),
		func(k int, dst []any) {
			i := newItems[k]
			dst[0], dst[1] = r.projectID, in.items[i]
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
		}, "id, ext_id", r.storeRow(r.itemRow, in.itemIdx), nil)
	if err != nil {
		return err
	}
	r.res.ItemsAdded = len(newItems)
	err = b.updateFromValues("items", "text = v.column2, gold = v.column3, covariates = v.column4, attrs = v.column5", "items.id = v.column1",
		[]string{"bigint", "text", "text", "text", "text"}, len(updates), func(k int, dst []any) {
			u := &updates[k]
			dst[0], dst[1], dst[2], dst[3], dst[4] = u.row, u.text, u.gold, u.covariates, u.attrs
		})
	if err != nil {
		return fmt.Errorf("update items: %w", err)
	}
	r.res.ItemsUpdated = len(updates)
	return nil
}

// storeRow returns the reader of an insert's returned (id, ext_id) rows,
// which records each id in rows by the import's index of its ext_id.
func (r *importRun) storeRow(rows []int64, idx map[string]int32) func(*sql.Rows) error {
	return func(sr *sql.Rows) error {
		var id int64
		var ext sql.RawBytes
		if err := sr.Scan(&id, &ext); err != nil {
			return err
		}
		rows[idx[string(ext)]] = id
		return nil
	}
}

// writeRaters inserts the new raters.
func (r *importRun) writeRaters() error {
	in := r.in
	var newRaters []int32
	for i := range in.raters {
		if r.raterRow[i] == 0 {
			newRaters = append(newRaters, int32(i))
		}
	}
	err := r.b.insert("raters", []column{{"project_id", "bigint"}, {"ext_id", "text"}, {"kind", "text"}}, len(newRaters),
		func(k int, dst []any) {
			dst[0], dst[1], dst[2] = r.projectID, in.raters[newRaters[k]], annotations.RaterHuman
			if in.model[newRaters[k]] {
				dst[2] = annotations.RaterModel
			}
		},
		"id, ext_id", r.storeRow(r.raterRow, in.raterIdx), nil)
	if err != nil {
		return err
	}
	r.res.RatersAdded = len(newRaters)
	err = r.b.updateFromValues("raters", "kind = v.column2", "raters.id = v.column1", []string{"bigint", "text"}, len(r.mark),
		func(k int, dst []any) { dst[0], dst[1] = r.mark[k], annotations.RaterModel })
	if err != nil {
		return fmt.Errorf("mark model raters: %w", err)
	}
	r.res.ModelsMarked = len(r.mark)
	return nil
}

// writeLabels replaces changed values in place and inserts the new labels,
// reporting the labels written (with the unchanged ones) to progress.
func (r *importRun) writeLabels(progress func(int)) error {
	b, in, res := r.b, r.in, r.res
	itemRow, raterRow := r.itemRow, r.raterRow
	err := b.updateFromValues("labels", "value = v.column3, prob = v.column5", "labels.item_id = v.column1 AND labels.rater_id = v.column2 AND labels.seq = v.column4",
		[]string{"bigint", "bigint", "text", "bigint", "double precision"}, len(r.conflicts), func(k int, dst []any) {
			l := &in.labels[r.conflicts[k]]
			dst[0], dst[1], dst[2], dst[3], dst[4] = itemRow[l.item], raterRow[l.rater], l.value, int64(l.seq), l.prob
		})
	if err != nil {
		return fmt.Errorf("replace labels: %w", err)
	}
	write := make([]int32, 0, res.LabelsAdded)
	for i, s := range r.state {
		if s == labelNew {
			write = append(write, int32(i))
		}
	}
	// Parameters are boxed once per item, rater and distinct value rather
	// than once per label: a million labels would otherwise allocate
	// millions of interface values.
	var (
		pid      any = r.projectID
		itemBox      = make([]any, len(in.items))
		raterBox     = make([]any, len(in.raters))
		valueBox     = map[string]any{}
	)
	seqBox := []any{int64(0)}
	return b.insert("labels", []column{{"project_id", "bigint"}, {"item_id", "bigint"}, {"rater_id", "bigint"}, {"value", "text"}, {"seq", "bigint"}, {"prob", "double precision"}}, len(write),
		func(k int, dst []any) {
			l := &in.labels[write[k]]
			if itemBox[l.item] == nil {
				itemBox[l.item] = itemRow[l.item]
			}
			if raterBox[l.rater] == nil {
				raterBox[l.rater] = raterRow[l.rater]
			}
			v, ok := valueBox[l.value]
			if !ok {
				v = l.value
				valueBox[l.value] = v
			}
			for int(l.seq) >= len(seqBox) {
				seqBox = append(seqBox, int64(len(seqBox)))
			}
			dst[0], dst[1], dst[2], dst[3], dst[4], dst[5] = pid, itemBox[l.item], raterBox[l.rater], v, seqBox[l.seq], l.prob
		}, "", nil, func(done int) { progress(res.LabelsUnchanged + done) })
}

// rowIndex maps the database ids of stored rows to the dense indices of an
// import: a slice over the id range when the ids are dense enough (they
// mostly are: a project's rows are inserted in batches), a map otherwise.
type rowIndex struct {
	rows  []int64
	idx   []int32
	min   int64
	dense []int32 // index+1 by id-min; 0 = absent
	m     map[int64]int32
}

func (x *rowIndex) add(row int64, i int32) {
	x.rows = append(x.rows, row)
	x.idx = append(x.idx, i)
}

func (x *rowIndex) len() int { return len(x.rows) }

func (x *rowIndex) build() {
	if len(x.rows) == 0 {
		return
	}
	lo, hi := slices.Min(x.rows), slices.Max(x.rows)
	if span := hi - lo + 1; span <= 4*int64(len(x.rows))+1024 {
		x.min, x.dense = lo, make([]int32, span)
		for k, r := range x.rows {
			x.dense[r-lo] = x.idx[k] + 1
		}
		return
	}
	x.m = make(map[int64]int32, len(x.rows))
	for k, r := range x.rows {
		x.m[r] = x.idx[k]
	}
}

// get returns the index of row, or -1.
func (x *rowIndex) get(row int64) int32 {
	if x.dense != nil {
		if k := row - x.min; k >= 0 && k < int64(len(x.dense)) {
			return x.dense[k] - 1
		}
		return -1
	}
	if i, ok := x.m[row]; ok {
		return i
	}
	return -1
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
		fmt.Fprintf(&s, "item %q, rater %q: stored %s, new %s", in.items[l.item], in.raters[l.rater], stored[i], labelString(l.value, l.prob))
	}
	if n := len(conflicts) - conflictExamples; n > 0 {
		fmt.Fprintf(&s, "; and %d more", n)
	}
	return annotations.Errorf(annotations.ECONFLICT, "%s", s.String())
}

// labelString describes a label's value, with its probability when it has
// one, for conflict messages: "1" or "1" (p 0.8).
func labelString(v string, prob float64) string {
	if prob == 0 {
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("%q (p %g)", v, prob)
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
