package annotations

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
)

// BuildDataset validates parsed labels against the scheme and returns the
// dataset in canonical form, or a *ProblemList with one Problem per defect
// (up to opts.MaxProblems), each naming the file (opts.Name, else p.Name),
// line or row, column and what was expected. Nothing partial is returned.
//
// An open binary scheme ("binary:pos=1") is completed from the data
// (Scheme.Complete). Each value is mapped to its canonical form with
// Scheme.Normalize; item and rater ids must be non-empty, without surrounding
// spaces or control characters and at most MaxNameLen bytes. An (item,
// rater) pair may occur once unless opts.Duplicates says otherwise:
// DuplicatesFirst keeps the first label of a pair in file order and counts
// the others in Dataset.Dropped, DuplicatesKeep keeps them all (in file
// order within the pair); the default refuses each repeat with a problem
// that names DuplicatesFlag. items (from an items file, in their order) are
// merged with p.Items (e.g. the task texts of a Label Studio export): the
// items file wins where both give a text, gold label or attribute.
//
// Labels are returned sorted by item id, then rater id (then file order),
// where ids that are integers come first in numeric order and the others
// follow in byte order, so that the result does not depend on the file's
// layout: reading a dataset back from any export gives an identical
// Dataset.
func BuildDataset(s Scheme, p *Parsed, items []Item, opts ReadOptions) (*Dataset, error) {
	ds, _, err := buildDataset(s, p, items, opts)
	return ds, err
}

// buildDataset is BuildDataset that also returns the labels' file order
// (Loaded.FileOrder).
func buildDataset(s Scheme, p *Parsed, items []Item, opts ReadOptions) (*Dataset, []int32, error) {
	if p == nil {
		panic("annotations: BuildDataset with a nil Parsed")
	}
	name := opts.Name
	if name == "" {
		name = p.Name
	}
	pl := &ProblemList{Max: opts.MaxProblems}
	add := func(pr Problem) {
		pr.File = name
		pl.Add(pr)
	}
	s, pr := datasetScheme(s, p)
	if pr != nil {
		add(*pr)
		return nil, nil, pl
	}
	b := &datasetBuilder{s: s, p: p, normCache: map[string]labelNorm{}, itemIdx: map[string]int32{}, raterIdx: map[string]int32{},
		kinds: map[string]raterKindAt{}, out: make([]Label, 0, len(p.Labels)), keys: make([]uint64, 0, len(p.Labels)), src: make([]int32, 0, len(p.Labels))}
	for i, rl := range p.Labels {
		b.label(i, rl)
	}
	order := sortOrder(b.keys, ranks(b.itemIDs), ranks(b.raterIDs))
	mode := opts.Duplicates.Mode()
	drop, dups := b.duplicates(order, mode)
	if mode == DuplicatesError && dups > 0 && len(p.Unused) > 0 {
		// A hint first, where a capped list still shows it.
		add(Problem{Msg: fmt.Sprintf("%d (item, rater) pairs repeat; the unused column(s) %s may tell these rows apart: keep one value with a row filter such as %s=VALUE",
			dups, quoteList(p.Unused), p.Unused[0])})
	}
	b.unknown.annotate(func(at int) *Problem { return &b.found[at].p }, s, p.Labels)
	slices.SortStableFunc(b.found, func(a, b located) int { return cmp.Compare(a.at, b.at) })
	for _, f := range b.found {
		add(f.p)
	}
	merged := mergeItems(items, p.Items, add)
	models := b.modelRaters(opts.ModelRaters, add)
	if pl.Len() > 0 {
		return nil, nil, pl
	}
	labels := b.out
	var fileOrder []int32
	if drop != nil {
		labels = make([]Label, 0, len(b.out)-dups)
		fileOrder = make([]int32, 0, len(b.out)-dups)
		// rank[i] is b.out[i]'s position among the labels kept.
		rank := make([]int32, len(b.out))
		kept := int32(0)
		for i := range b.out {
			rank[i] = kept
			if !drop[i] {
				kept++
			}
		}
		for _, i := range order {
			if !drop[i] {
				labels = append(labels, b.out[i])
				fileOrder = append(fileOrder, rank[i])
			}
		}
	} else if !slices.IsSorted(order) {
		labels = make([]Label, len(b.out))
		for j, i := range order {
			labels[j] = b.out[i]
		}
		fileOrder = order
	}
	if slices.IsSorted(fileOrder) {
		fileOrder = nil
	}
	return &Dataset{Scheme: s, Items: merged, Labels: labels, ModelRaters: models, Dropped: dups}, fileOrder, nil
}

// datasetScheme returns the scheme of a dataset: an open scheme completed
// from the labels (the positive class in another case, "YES" for "yes",
// is the positive class, as Normalize will read it), checked; or the
// problem with it.
func datasetScheme(s Scheme, p *Parsed) (Scheme, *Problem) {
	if s.Open() {
		values := make([]string, 0, len(p.Labels))
		for _, l := range p.Labels {
			if !strings.EqualFold(strings.TrimSpace(l.Value), s.Positive) {
				values = append(values, l.Value)
			}
		}
		cs, err := s.Complete(values)
		if err != nil {
			return s, &Problem{Column: "label", Msg: ErrorMessage(err)}
		}
		s = cs
	}
	if err := s.Validate(); err != nil {
		return s, &Problem{Msg: "scheme " + s.String() + ": " + ErrorMessage(err)}
	}
	return s, nil
}

// labelNorm is a label value normalised by the scheme, or why it is not
// a label (levelErr: it is not a level of the scheme).
type labelNorm struct {
	v        string
	err      string
	levelErr bool
}

// located is a problem with the index of its raw label, so that those
// found while sorting (duplicates) come out in file order too.
type located struct {
	at int
	p  Problem
}

// datasetBuilder checks and indexes the raw labels of a dataset.
type datasetBuilder struct {
	s         Scheme
	p         *Parsed
	unknown   unknownLevels
	normCache map[string]labelNorm
	// Ids are validated when first seen; valid ones get an index.
	itemIdx, raterIdx map[string]int32
	itemIDs, raterIDs []string
	found             []located
	kinds             map[string]raterKindAt // rater id -> the first row that marked its kind
	// out are the valid labels; keys (item index << 32 | rater index) and
	// src (index in p.Labels) are per label of out.
	out  []Label
	keys []uint64
	src  []int32
}

func (b *datasetBuilder) note(at int, rl RawLabel, col, msg string) {
	b.found = append(b.found, located{at, Problem{Line: rl.Line, Row: rl.Row, Column: col, Msg: msg}})
}

// idIndex returns the index of an item or rater id, validating it when
// first seen; or why it is not valid.
func idIndex(idx map[string]int32, ids *[]string, what, id string) (int32, string) {
	if i, ok := idx[id]; ok {
		return i, ""
	}
	if err := validateID(what, id); err != nil {
		return -1, ErrorMessage(err)
	}
	i := int32(len(*ids))
	idx[id] = i
	*ids = append(*ids, id)
	return i, ""
}

// norm normalises a label value (cached).
func (b *datasetBuilder) norm(value string) labelNorm {
	if n, ok := b.normCache[value]; ok {
		return n
	}
	var n labelNorm
	v, err := b.s.Normalize(value)
	switch {
	case err != nil:
		n.err, n.levelErr = ErrorMessage(err), true
	case hasControl(v):
		n.err = fmt.Sprintf("label %q contains a control character or a Unicode noncharacter", v)
	default:
		n.v = v
	}
	if len(b.normCache) < 1<<20 {
		b.normCache[value] = n
	}
	return n
}

// label checks raw label i and keeps it when its ids and value are valid.
func (b *datasetBuilder) label(i int, rl RawLabel) {
	ok := true
	ii, m := idIndex(b.itemIdx, &b.itemIDs, "item id", rl.Item)
	if m != "" {
		b.note(i, rl, rl.ItemCol, m)
		ok = false
	}
	ri, m := idIndex(b.raterIdx, &b.raterIDs, "rater id", rl.Rater)
	if m != "" {
		b.note(i, rl, rl.RaterCol, m)
		ok = false
	}
	n := b.norm(rl.Value)
	if n.err != "" {
		// A value that is not a level is reported at its first
		// occurrence, with its count (unknown.annotate).
		if !n.levelErr || b.unknown.seen(rl.Value, rl, len(b.found)) {
			b.note(i, rl, rl.ValueCol, n.err)
		}
		ok = false
	}
	prob, pok := b.probKind(i, rl)
	if !ok || !pok {
		return
	}
	b.out = append(b.out, Label{Item: rl.Item, Rater: rl.Rater, Value: n.v, Prob: prob})
	b.keys = append(b.keys, uint64(uint32(ii))<<32|uint64(uint32(ri)))
	b.src = append(b.src, int32(i))
}

// probKind reads the probability and rater kind of raw label i (0 for no
// probability); ok is false where either is not valid.
func (b *datasetBuilder) probKind(i int, rl RawLabel) (prob float64, ok bool) {
	ok = true
	if rl.Prob != "" {
		pv, err := strconv.ParseFloat(rl.Prob, 64)
		if err != nil || !(pv > 0 && pv <= 1) {
			b.note(i, rl, rl.ProbCol, fmt.Sprintf("probability %q is not a number in (0, 1] (expected the rater's probability of the label given, or an empty cell)", rl.Prob))
			ok = false
		}
		prob = pv
	}
	if rl.Kind != "" {
		model, known := parseRaterKind(rl.Kind)
		if !known {
			b.note(i, rl, rl.KindCol, fmt.Sprintf("rater kind %q is not one of model, human, true, false, yes, no, 1, 0", rl.Kind))
			ok = false
		} else if prev, seen := b.kinds[rl.Rater]; seen && prev.model != model {
			b.note(i, rl, rl.KindCol, fmt.Sprintf("rater %q is marked %s here and %s at %s (a rater is either a model or a human)", rl.Rater, kindName(model), kindName(prev.model), where(prev.at)))
			ok = false
		} else if !seen {
			b.kinds[rl.Rater] = raterKindAt{model: model, at: rl}
		}
	}
	return prob, ok
}

// modelRaters returns the model raters, sorted: those the file marks a
// model and those named (with ModelsFlag), each of which must have labels
// and not be marked human.
func (b *datasetBuilder) modelRaters(named []string, add func(Problem)) []string {
	var models []string
	for id, k := range b.kinds {
		if k.model {
			models = append(models, id)
		}
	}
	for _, id := range named {
		if _, ok := b.raterIdx[id]; !ok {
			add(Problem{Column: ModelsFlag, Msg: fmt.Sprintf("model rater %q, named with %s, has no label in the file (raters: %s)", id, flagHint(ModelsFlag, "model_raters", "A,B"), quoteList(firstN(b.raterIDs, 20)))})
			continue
		}
		if k, seen := b.kinds[id]; seen && !k.model {
			add(Problem{Line: k.at.Line, Row: k.at.Row, Column: k.at.KindCol, Msg: fmt.Sprintf("rater %q is named a model with %s and marked human here", id, ModelsFlag)})
			continue
		}
		models = append(models, id)
	}
	slices.Sort(models)
	return slices.Compact(models)
}

// raterKindAt is a rater's kind as first marked in a file, with where.
type raterKindAt struct {
	model bool
	at    RawLabel
}

// parseRaterKind reads a rater-kind cell: model (model, llm, machine, true,
// yes, y, 1) or human (human, person, false, no, n, 0), case-insensitively.
func parseRaterKind(s string) (model, known bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "model", "llm", "machine", "true", "yes", "y", "1":
		return true, true
	case "human", "person", "false", "no", "n", "0":
		return false, true
	}
	return false, false
}

func kindName(model bool) string {
	if model {
		return RaterModel
	}
	return RaterHuman
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// duplicates finds the labels that repeat an (item, rater) pair, in the
// sorted order (where the labels of a pair are adjacent, the first in the
// file first): under DuplicatesFirst it marks all but the first to drop
// (by index in out), under DuplicatesError it reports them; it returns how
// many there are.
func (b *datasetBuilder) duplicates(order []int32, mode Duplicates) (drop []bool, dups int) {
	keys, out, p := b.keys, b.out, b.p
	for j := 1; j < len(order) && mode != DuplicatesKeep; j++ {
		x, y := order[j-1], order[j]
		if keys[x] != keys[y] {
			continue
		}
		if mode == DuplicatesFirst {
			if drop == nil {
				drop = make([]bool, len(out))
			}
			drop[y] = true
			dups++
			continue
		}
		first := j - 1
		for first > 0 && keys[order[first-1]] == keys[y] {
			first--
		}
		f, l := out[order[first]], out[y]
		same := "another label"
		if f.Value == l.Value {
			same = "the same label"
		}
		rl := p.Labels[b.src[y]]
		b.note(int(b.src[y]), rl, rl.RaterCol, fmt.Sprintf("duplicate label for item %q by rater %q: %s was given at %s"+duplicateHint,
			l.Item, l.Rater, same, where(p.Labels[b.src[order[first]]])))
		dups++
	}
	return drop, dups
}

// where describes the position of a raw label for messages.
func where(l RawLabel) string {
	switch {
	case l.Line > 0 && l.Row > 0:
		return fmt.Sprintf("record %d (line %d)", l.Row, l.Line)
	case l.Line > 0:
		return fmt.Sprintf("line %d", l.Line)
	case l.Row > 0:
		return fmt.Sprintf("row %d", l.Row)
	}
	return "an earlier position"
}

// hasControl reports whether s holds a control character or a Unicode
// noncharacter, which label values may not (an XLSX export could not hold
// them).
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || isNoncharacter(r) {
			return true
		}
	}
	return false
}

// normText turns CRLF line ends into LF, as reading CSV does, so that texts
// read from any format survive a CSV round trip unchanged.
func normText(s string) string {
	if strings.Contains(s, "\r\n") {
		return strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

// mergeItems merges the items of an items file with those a label file
// describes; the items file's text and gold label win.
func mergeItems(file, fromLabels []Item, add func(Problem)) []Item {
	if len(file) == 0 && len(fromLabels) == 0 {
		return nil
	}
	merged := make([]Item, 0, len(file)+len(fromLabels))
	byID := make(map[string]int, len(file)+len(fromLabels))
	for _, it := range file {
		it.Text = normText(it.Text)
		if err := it.Validate(); err != nil {
			add(Problem{Column: "item_id", Msg: "items file: " + ErrorMessage(err)})
			continue
		}
		if _, dup := byID[it.ID]; dup {
			add(Problem{Column: "item_id", Msg: fmt.Sprintf("items file: item %q is listed twice", it.ID)})
			continue
		}
		byID[it.ID] = len(merged)
		merged = append(merged, it)
	}
	for _, it := range fromLabels {
		it.Text = normText(it.Text)
		if j, ok := byID[it.ID]; ok {
			m := &merged[j]
			if m.Text == "" {
				m.Text = it.Text
			}
			if m.Gold == "" {
				m.Gold = it.Gold
			}
			for k, v := range it.Attrs {
				if _, ok := m.Attrs[k]; !ok {
					if m.Attrs == nil {
						m.Attrs = map[string]string{}
					}
					m.Attrs[k] = v
				}
			}
			continue
		}
		if err := it.Validate(); err != nil {
			add(Problem{Msg: ErrorMessage(err)})
			continue
		}
		byID[it.ID] = len(merged)
		merged = append(merged, it)
	}
	return merged
}

// CompareIDs orders item and rater ids: ids that are integers first, in
// numeric order, then the others in byte order (ties between integers such
// as "01" and "1" broken by byte order). It is the order of Dataset labels
// returned by BuildDataset.
func CompareIDs(a, b string) int {
	ai, aok := intID(a)
	bi, bok := intID(b)
	switch {
	case aok && bok:
		if c := cmp.Compare(ai, bi); c != 0 {
			return c
		}
	case aok:
		return -1
	case bok:
		return 1
	}
	return strings.Compare(a, b)
}

func intID(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && !(i == 0 && s[i] == '-' && len(s) > 1) {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// ranks returns, for each id, its position in CompareIDs order.
func ranks(ids []string) []uint32 {
	type key struct {
		n     int64
		isInt bool
		i     int32
	}
	ks := make([]key, len(ids))
	for i, id := range ids {
		n, ok := intID(id)
		ks[i] = key{n, ok, int32(i)}
	}
	slices.SortFunc(ks, func(a, b key) int {
		switch {
		case a.isInt && b.isInt:
			if c := cmp.Compare(a.n, b.n); c != 0 {
				return c
			}
		case a.isInt:
			return -1
		case b.isInt:
			return 1
		}
		return strings.Compare(ids[a.i], ids[b.i])
	})
	r := make([]uint32, len(ids))
	for pos, k := range ks {
		r[k.i] = uint32(pos)
	}
	return r
}

// sortOrder returns the permutation that sorts labels by item rank, then
// rater rank, then position; keys hold each label's item and rater index
// (item << 32 | rater).
func sortOrder(keys []uint64, itemRank, raterRank []uint32) []int32 {
	type entry struct {
		k uint64
		i int32
	}
	es := make([]entry, len(keys))
	sorted := true
	for i, k := range keys {
		es[i] = entry{uint64(itemRank[k>>32])<<32 | uint64(raterRank[uint32(k)]), int32(i)}
		if i > 0 && es[i].k < es[i-1].k {
			sorted = false
		}
	}
	if !sorted {
		slices.SortFunc(es, func(a, b entry) int {
			if c := cmp.Compare(a.k, b.k); c != 0 {
				return c
			}
			return cmp.Compare(a.i, b.i)
		})
	}
	order := make([]int32, len(es))
	for j, e := range es {
		order[j] = e.i
	}
	return order
}

// LoadOptions control LoadFiles.
type LoadOptions struct {
	ReadOptions
	// Scheme of the labels; nil infers it from the values (InferScheme).
	Scheme *Scheme
	// ItemsPath names an optional items file (see ReadItems).
	ItemsPath string
	// Progress, when set, is called as the label files are read with the
	// bytes read so far and the files' total size, so that reading a big
	// file shows progress with an ETA.
	Progress func(done, total int64)
}

// progressFile counts the bytes read from a file for LoadOptions.Progress;
// Stat keeps the size known to the readers (inputSize).
type progressFile struct {
	f     *os.File
	done  *int64
	total int64
	fn    func(done, total int64)
}

func (p *progressFile) Read(b []byte) (int, error) {
	n, err := p.f.Read(b)
	*p.done += int64(n)
	p.fn(*p.done, p.total)
	return n, err
}

func (p *progressFile) Stat() (fs.FileInfo, error) { return p.f.Stat() }

// Loaded is what LoadFiles read.
type Loaded struct {
	Dataset *Dataset
	// Format is the label file's format (as detected or given).
	Format Format
	// Inferred is set when the scheme was inferred; Reason says why it was
	// chosen, for the user to confirm.
	Inferred bool
	Reason   string
	// Unused lists the label file's columns that were not used.
	Unused []string
	// FileOrder, when not nil, gives the order of Dataset.Labels (sorted
	// by item and rater) in the file: Labels[x] was the FileOrder[x]-th
	// of the labels kept (0-based), a permutation of 0..len(Labels)-1;
	// nil means Labels are in the file's order. Only what depends on the
	// data's row order uses it: crowd-kit's random starts (concord
	// agreement --random-start crowdkit, raters.Options.DataOrder).
	FileOrder []int32
}

// LoadFiles reads a label file and an optional items file from disk and
// builds the dataset: the convenience behind `concord import`. Problems name
// each file by its path (unless opts.Name is set). With opts.Scheme nil the
// scheme is inferred from the label values and Loaded.Reason explains the
// choice; an open binary scheme is completed from the data. Problems in both
// files are reported together.
func LoadFiles(labelsPath string, opts LoadOptions) (*Loaded, error) {
	return LoadFileList([]string{labelsPath}, opts)
}

// LoadFileList is LoadFiles for several label files read as one (e.g. the
// per-annotator files of a doccano export): each is read on its own, named
// by its path in problems, with the rater of records that name none taken
// from opts.Rater or the file's name, and their labels and items are put
// together. Problems in every file are reported together.
func LoadFileList(paths []string, opts LoadOptions) (*Loaded, error) {
	if len(paths) == 0 {
		return nil, Errorf(EINVALID, "no label file")
	}
	ro := opts.ReadOptions
	if ro.Name == "" {
		ro.Name = strings.Join(paths, " + ")
	}
	var p *Parsed
	var errs []error
	var done, total int64
	if opts.Progress != nil {
		for _, path := range paths {
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
				total += fi.Size()
			}
		}
	}
	for _, path := range paths {
		fo := opts.ReadOptions
		if fo.Name == "" || len(paths) > 1 {
			fo.Name = path
		}
		fp, err := readFile(path, func(f *os.File) (*Parsed, error) {
			if opts.Progress != nil {
				return ReadLabels(&progressFile{f: f, done: &done, total: total, fn: opts.Progress}, fo)
			}
			return ReadLabels(f, fo)
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if p == nil {
			p = fp
		} else {
			if fp.Format != p.Format {
				p.Format = FormatAuto // a mix of formats
			}
			fp.Format = p.Format
			mergeParsed(p, fp)
		}
	}
	var err error
	if len(errs) > 0 {
		err = JoinProblems(ro.MaxProblems, errs...)
	}
	var items []Item
	var ierr error
	if opts.ItemsPath != "" {
		iro := ReadOptions{Name: opts.ItemsPath, TextColumns: ro.TextColumns, MaxProblems: ro.MaxProblems}
		items, ierr = readFile(opts.ItemsPath, func(f *os.File) ([]Item, error) { return ReadItems(f, iro) })
	}
	if err != nil || ierr != nil {
		return nil, JoinProblems(ro.MaxProblems, err, ierr)
	}
	l := &Loaded{Format: p.Format, Unused: p.Unused}
	var s Scheme
	if opts.Scheme != nil {
		s = *opts.Scheme
	} else {
		values := make([]string, len(p.Labels))
		for i, lb := range p.Labels {
			values[i] = lb.Value
		}
		inf, reason, err := InferScheme(values)
		if err != nil {
			return nil, Errorf(EINVALID, "%s: %s", ro.Name, ErrorMessage(err))
		}
		s, l.Inferred, l.Reason = inf, true, reason
	}
	ds, order, err := buildDataset(s, p, items, ro)
	if err != nil {
		return nil, err
	}
	l.Dataset, l.FileOrder = ds, order
	return l, nil
}

func readFile[T any](path string, read func(*os.File) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return zero, Errorf(ENOTFOUND, "%s: no such file", path)
		}
		return zero, Errorf(EINVALID, "cannot open %s: %v", path, err)
	}
	defer f.Close()
	return read(f)
}

// JoinProblems merges the problem lists of several files (a label file
// and its items file) into one error of at most max problems (0: the
// default), or returns the first error that is not a problem list; nil
// when every error is nil.
func JoinProblems(max int, errs ...error) error {
	all := &ProblemList{Max: max}
	for _, err := range errs {
		if err == nil {
			continue
		}
		var pl *ProblemList
		if !errors.As(err, &pl) {
			return err
		}
		for _, p := range pl.Problems {
			all.Add(p)
		}
		all.Omitted += pl.Omitted
	}
	return all.Err()
}
