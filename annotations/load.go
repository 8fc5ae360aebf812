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
// spaces or control characters and at most MaxNameLen bytes; each (item,
// rater) pair may occur once. items (from an items file, in their order) are
// merged with p.Items (e.g. the task texts of a Label Studio export): the
// items file wins where both give a text or gold label.
//
// Labels are returned sorted by item id, then rater id, where ids that are
// integers come first in numeric order and the others follow in byte order,
// so that the result does not depend on the file's layout: reading a
// dataset back from any export gives an identical Dataset.
func BuildDataset(s Scheme, p *Parsed, items []Item, opts ReadOptions) (*Dataset, error) {
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
	if s.Open() {
		// The positive class in another case ("YES" for "yes") is the
		// positive class, as Normalize will read it.
		values := make([]string, 0, len(p.Labels))
		for _, l := range p.Labels {
			if !strings.EqualFold(strings.TrimSpace(l.Value), s.Positive) {
				values = append(values, l.Value)
			}
		}
		cs, err := s.Complete(values)
		if err != nil {
			add(Problem{Column: "label", Msg: ErrorMessage(err)})
			return nil, pl
		}
		s = cs
	}
	if err := s.Validate(); err != nil {
		add(Problem{Msg: "scheme " + s.String() + ": " + ErrorMessage(err)})
		return nil, pl
	}

	type norm struct {
		v   string
		err string
	}
	normCache := map[string]norm{}
	idErr := map[string]string{} // "i"+id or "r"+id -> message ("" when valid)
	checkID := func(kind byte, what, id string) string {
		key := string(kind) + id
		if m, ok := idErr[key]; ok {
			return m
		}
		m := ""
		if err := validateID(what, id); err != nil {
			m = ErrorMessage(err)
		}
		if len(idErr) < 1<<22 {
			idErr[key] = m
		}
		return m
	}
	itemIdx := map[string]int32{}
	raterIdx := map[string]int32{}
	var itemIDs, raterIDs []string
	seen := make(map[uint64]int32, len(p.Labels))
	type keyed struct {
		item, rater int32
		Label
	}
	out := make([]keyed, 0, len(p.Labels))
	dups := 0
	for i, rl := range p.Labels {
		ok := true
		if m := checkID('i', "item id", rl.Item); m != "" {
			add(Problem{Line: rl.Line, Row: rl.Row, Column: rl.ItemCol, Msg: m})
			ok = false
		}
		if m := checkID('r', "rater id", rl.Rater); m != "" {
			add(Problem{Line: rl.Line, Row: rl.Row, Column: rl.RaterCol, Msg: m})
			ok = false
		}
		n, cached := normCache[rl.Value]
		if !cached {
			v, err := s.Normalize(rl.Value)
			if err != nil {
				n.err = ErrorMessage(err)
			} else if hasControl(v) {
				n.err = fmt.Sprintf("label %q contains a control character", v)
			} else {
				n.v = v
			}
			if len(normCache) < 1<<20 {
				normCache[rl.Value] = n
			}
		}
		if n.err != "" {
			add(Problem{Line: rl.Line, Row: rl.Row, Column: rl.ValueCol, Msg: n.err})
			ok = false
		}
		if !ok {
			continue
		}
		ii, found := itemIdx[rl.Item]
		if !found {
			ii = int32(len(itemIDs))
			itemIdx[rl.Item] = ii
			itemIDs = append(itemIDs, rl.Item)
		}
		ri, found := raterIdx[rl.Rater]
		if !found {
			ri = int32(len(raterIDs))
			raterIdx[rl.Rater] = ri
			raterIDs = append(raterIDs, rl.Rater)
		}
		key := uint64(uint32(ii))<<32 | uint64(uint32(ri))
		if j, dup := seen[key]; dup {
			first := p.Labels[j]
			same := "another label"
			if fv := normCache[first.Value].v; fv == n.v {
				same = "the same label"
			}
			dups++
			add(Problem{Line: rl.Line, Row: rl.Row, Column: rl.RaterCol,
				Msg: fmt.Sprintf("duplicate label for item %q by rater %q: %s was given at %s", rl.Item, rl.Rater, same, where(first))})
			continue
		}
		seen[key] = int32(i)
		out = append(out, keyed{ii, ri, Label{Item: rl.Item, Rater: rl.Rater, Value: n.v}})
	}

	if dups > 0 && len(p.Unused) > 0 {
		// The hint goes first, where a capped list still shows it.
		hint := Problem{File: name, Msg: fmt.Sprintf("%d (item, rater) pairs repeat; the unused column(s) %s may tell these rows apart: keep one value with a row filter such as %s=VALUE",
			dups, quoteList(p.Unused), p.Unused[0])}
		if pl.Full() {
			pl.Problems = pl.Problems[:len(pl.Problems)-1]
			pl.Omitted++
		}
		pl.Problems = append([]Problem{hint}, pl.Problems...)
	}
	merged := mergeItems(items, p.Items, add)
	if pl.Len() > 0 {
		return nil, pl
	}

	itemRank := ranks(itemIDs)
	raterRank := ranks(raterIDs)
	slices.SortFunc(out, func(a, b keyed) int {
		if c := cmp.Compare(itemRank[a.item], itemRank[b.item]); c != 0 {
			return c
		}
		return cmp.Compare(raterRank[a.rater], raterRank[b.rater])
	})
	labels := make([]Label, len(out))
	for i := range out {
		labels[i] = out[i].Label
	}
	return &Dataset{Scheme: s, Items: merged, Labels: labels}, nil
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

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
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
		if j, ok := byID[it.ID]; ok {
			m := &merged[j]
			if m.Text == "" {
				m.Text = it.Text
			}
			if m.Gold == "" {
				m.Gold = it.Gold
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
func ranks(ids []string) []int32 {
	idx := make([]int32, len(ids))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return CompareIDs(ids[a], ids[b]) })
	r := make([]int32, len(ids))
	for pos, i := range idx {
		r[i] = int32(pos)
	}
	return r
}

// LoadOptions control LoadFiles.
type LoadOptions struct {
	ReadOptions
	// Scheme of the labels; nil infers it from the values (InferScheme).
	Scheme *Scheme
	// ItemsPath names an optional items file (see ReadItems).
	ItemsPath string
}

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
}

// LoadFiles reads a label file and an optional items file from disk and
// builds the dataset: the convenience behind `concord import`. Problems name
// each file by its path (unless opts.Name is set). With opts.Scheme nil the
// scheme is inferred from the label values and Loaded.Reason explains the
// choice; an open binary scheme is completed from the data. Problems in both
// files are reported together.
func LoadFiles(labelsPath string, opts LoadOptions) (*Loaded, error) {
	ro := opts.ReadOptions
	if ro.Name == "" {
		ro.Name = labelsPath
	}
	p, err := readFile(labelsPath, func(f *os.File) (*Parsed, error) { return ReadLabels(f, ro) })
	var items []Item
	var ierr error
	if opts.ItemsPath != "" {
		iro := ReadOptions{Name: opts.ItemsPath, TextColumns: ro.TextColumns, MaxProblems: ro.MaxProblems}
		items, ierr = readFile(opts.ItemsPath, func(f *os.File) ([]Item, error) { return ReadItems(f, iro) })
	}
	if err != nil || ierr != nil {
		return nil, joinProblems(ro.MaxProblems, err, ierr)
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
	ds, err := BuildDataset(s, p, items, ro)
	if err != nil {
		return nil, err
	}
	l.Dataset = ds
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

// joinProblems merges the problem lists of two files into one error, or
// returns the first error that is not a problem list.
func joinProblems(max int, errs ...error) error {
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
