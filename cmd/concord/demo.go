package main

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"sort"
	"strings"

	"concord/annotations"
)

//go:embed demodata
var demoData embed.FS

// demoProject is one project that concord demo loads from the embedded data.
type demoProject struct {
	name        string
	scheme      string
	labels      string // path in demoData
	items       string // path in demoData, optional
	where       map[string]string
	textColumns []string
	about       string
}

func demoProjects() []demoProject {
	ps := []demoProject{{
		name:        "rte",
		scheme:      "binary:0,1,pos=1",
		labels:      "demodata/snow2008_rte/ratings.csv",
		items:       "demodata/snow2008_rte/items.csv",
		textColumns: []string{"text", "hypothesis"},
		about:       "Snow et al. 2008: does the hypothesis follow from the text? (AMT workers, expert gold kept)",
	}}
	for k := 1; k <= 5; k++ {
		c := fmt.Sprintf("k%d", k)
		ps = append(ps, demoProject{
			name:   "sirt-writing-" + c,
			scheme: "ordinal:0..3",
			labels: "demodata/sirt_writing_ratings1/ratings.csv",
			where:  map[string]string{"criterion": c},
			about:  "Austrian writing standards 2009, criterion " + c + " (essays scored 0-3)",
		})
	}
	return ps
}

const demoHelp = `
Load the bundled real datasets into the database (idempotently: a second run
adds nothing) and summarise each project:

  rte                 Snow et al. (2008) RTE: 800 text pairs, 10 AMT workers
                      each, binary, with text and expert gold
  sirt-writing-k1..k5 sirt data.ratings1: 135 essays scored 0-3 by 7 raters,
                      one project per rating criterion
`

func runDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "demo", "[--db PATH]", demoHelp)
	dsn := dbFlag(fs)
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return annotations.Errorf(annotations.EINVALID, "unexpected argument %q", pos[0])
	}
	st, err := openStore(ctx, e, *dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(e.stdout, "concord demo: database %s\n", *dsn)
	for _, dp := range demoProjects() {
		p, res, err := loadDemoProject(ctx, st, dp)
		if err != nil {
			return fmt.Errorf("demo project %s: %w", dp.name, err)
		}
		fmt.Fprintln(e.stdout)
		fmt.Fprintf(e.stdout, "== %s: %s\n", p.Name, dp.about)
		if res.LabelsAdded+res.ItemsAdded+res.LabelsReplaced == 0 {
			fmt.Fprintln(e.stdout, "   already loaded: nothing added")
		} else {
			fmt.Fprintf(e.stdout, "   loaded %d labels, %d items, %d raters\n", res.LabelsAdded, res.ItemsAdded, res.RatersAdded)
		}
		stats, err := st.Stats(ctx, p.ID)
		if err != nil {
			return err
		}
		printSummary(e.stdout, p, stats)
	}
	return nil
}

// loadDemoProject creates the project if needed and imports its embedded files.
func loadDemoProject(ctx context.Context, st annotationsStore, dp demoProject) (*annotations.Project, annotations.ImportResult, error) {
	var none annotations.ImportResult
	scheme, err := annotations.ParseScheme(dp.scheme)
	if err != nil {
		return nil, none, err
	}
	opts := annotations.ReadOptions{Name: dp.labels, Where: dp.where, TextColumns: dp.textColumns}
	raw, err := demoData.ReadFile(dp.labels)
	if err != nil {
		return nil, none, err
	}
	parsed, err := annotations.ReadLabels(bytes.NewReader(raw), opts)
	if err != nil {
		return nil, none, err
	}
	var items []annotations.Item
	if dp.items != "" {
		rawItems, err := demoData.ReadFile(dp.items)
		if err != nil {
			return nil, none, err
		}
		iopts := opts
		iopts.Name, iopts.Where = dp.items, nil
		if items, err = annotations.ReadItems(bytes.NewReader(rawItems), iopts); err != nil {
			return nil, none, err
		}
	}
	ds, err := annotations.BuildDataset(scheme, parsed, items, opts)
	if err != nil {
		return nil, none, err
	}
	p, err := st.FindProjectByName(ctx, dp.name)
	switch {
	case annotations.ErrorCode(err) == annotations.ENOTFOUND:
		p = &annotations.Project{Name: dp.name, Scheme: ds.Scheme}
		if err := st.CreateProject(ctx, p); err != nil {
			return nil, none, err
		}
	case err != nil:
		return nil, none, err
	case !p.Scheme.Equal(ds.Scheme):
		return nil, none, annotations.Errorf(annotations.ECONFLICT, "a project named %q with scheme %s already exists (the demo needs %s); use another --db", dp.name, p.Scheme, ds.Scheme)
	}
	res, err := st.Import(ctx, p.ID, ds, annotations.ImportOptions{})
	return p, res, err
}

// annotationsStore is what the demo needs of the database.
type annotationsStore interface {
	annotations.ProjectStore
	annotations.LabelStore
}

// printSummary prints a project's label statistics.
func printSummary(w io.Writer, p *annotations.Project, s *annotations.Stats) {
	fmt.Fprintf(w, "   scheme %s\n", p.Scheme)
	fmt.Fprintf(w, "   %d items (%d labelled), %d raters, %d labels, %.2f labels per labelled item\n",
		s.Items, s.LabelledItems, s.Raters, s.Labels, s.LabelsPerItem)

	type rc struct {
		id string
		n  int
	}
	var rs []rc
	for id, n := range s.PerRater {
		rs = append(rs, rc{id, n})
	}
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].n != rs[j].n {
			return rs[i].n > rs[j].n
		}
		return rs[i].id < rs[j].id
	})
	const show = 8
	var parts []string
	for i, r := range rs {
		if i == show {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", r.id, r.n))
	}
	more := ""
	if len(rs) > show {
		tail := rs[show:]
		more = fmt.Sprintf(", ... %d more raters with %d to %d labels", len(tail), tail[len(tail)-1].n, tail[0].n)
	}
	fmt.Fprintf(w, "   labels per rater: %s%s\n", strings.Join(parts, ", "), more)

	var dist []string
	order := p.Scheme.Codes()
	if !p.Scheme.Categorical() {
		order = nil
		for v := range s.Distribution {
			order = append(order, v)
		}
		sort.Strings(order)
	}
	for _, code := range order {
		n := s.Distribution[code]
		dist = append(dist, fmt.Sprintf("%s: %d (%.1f%%)", code, n, 100*float64(n)/float64(max(s.Labels, 1))))
	}
	fmt.Fprintf(w, "   label distribution: %s\n", strings.Join(dist, ", "))
}
