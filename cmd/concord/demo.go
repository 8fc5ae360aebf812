package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"concord/analysis"
	"concord/annotations"
	"concord/multirater"
	"concord/raters"
	"concord/reports"

	"concord/server"

	"gonum.org/v1/gonum/stat"
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
	// fit, when set, is the model concord demo fits to the project.
	fit *analysis.FitSpec
}

func demoProjects() []demoProject {
	var ps []demoProject
	for k := 1; k <= 5; k++ {
		c := fmt.Sprintf("k%d", k)
		dp := demoProject{
			name:   "sirt-writing-" + c,
			scheme: "ordinal:0..3",
			labels: "demodata/sirt_writing_ratings1/ratings.csv",
			where:  map[string]string{"criterion": c},
			about:  "Austrian writing standards 2009, criterion " + c + " (essays scored 0-3)",
		}
		if k == 1 {
			// The ordinal model's defaults: EP, the noise model chosen by
			// the penalised evidence.
			dp.fit = &analysis.FitSpec{Model: analysis.ModelOrdinal, Seed: 1}
		}
		ps = append(ps, dp)
	}
	return append(ps, demoProject{
		name:        "snow-valence",
		scheme:      "bounded:-100..100",
		labels:      "demodata/snow2008_affect/ratings.csv",
		items:       "demodata/snow2008_affect/items.csv",
		textColumns: []string{"headline"},
		about:       "Snow et al. 2008: valence of news headlines on a -100..100 slider (10 AMT workers each, expert scores kept)",
		// The bounded model's defaults: EP, the likelihood (beta or
		// normal), the dispersions (per rater or shared) and the kernel
		// (text or identity) chosen by held-out ratings; seconds.
		fit: &analysis.FitSpec{Model: analysis.ModelBounded, Seed: 1},
	}, demoProject{
		name:        "rte",
		scheme:      "binary:0,1,pos=1",
		labels:      "demodata/snow2008_rte/ratings.csv",
		items:       "demodata/snow2008_rte/items.csv",
		textColumns: []string{"text", "hypothesis"},
		about:       "Snow et al. 2008: does the hypothesis follow from the text? (AMT workers, expert gold kept)",
		// The identity kernel: the raters' labels alone (the text kernel is
		// for concord fit --kernel text). 4 x 1000 draws converge here.
		fit: &analysis.FitSpec{Model: analysis.ModelClassification, Kernel: "identity", Samples: 1000, Burnin: 500, Seed: 1},
	})
}

const demoHelp = `
Load the bundled real datasets into the database (idempotently: a second run
adds nothing), summarise each project, fit the models, write the reports and
serve the dashboard until interrupted:

  rte                 Snow et al. (2008) RTE: 800 text pairs, 10 AMT workers
                      each, binary, with text and expert gold; fitted with
                      the multi-rater classification model
  sirt-writing-k1..k5 sirt data.ratings1: 135 essays scored 0-3 by 7 raters,
                      one project per rating criterion; k1 is fitted with
                      the multi-rater ordinal model (EP; the raters' noise
                      model chosen by the evidence; in seconds)
  snow-valence        Snow et al. (2008) affect: 100 headlines rated for
                      valence on a -100..100 slider by 10 AMT workers each,
                      with expert scores; fitted with the bounded-ratings
                      model (EP; likelihood, dispersions and kernel
                      chosen by held-out ratings; in seconds)

Fits already done with the same settings are reused. The fit results
(NAME-fit.json, for concord report --fit and concord predict --fit) and the
reports (JSON, XLSX, CSV, plots) go to --reports. The dashboard is served on
--addr (a free port when that one is taken); --no-serve stops after the
reports.
`

func runDemo(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "demo", "[--db PATH] [--addr HOST:PORT] [--reports DIR] [--no-serve]", demoHelp)
	dsn := dbFlag(fs)
	addr := fs.String("addr", "127.0.0.1:8080", "dashboard listen address")
	reportDir := fs.String("reports", "concord-reports", "directory for the reports of the demo's fits")
	noServe := fs.Bool("no-serve", false, "stop after the fits and reports instead of serving the dashboard")
	noFit := fs.Bool("no-fit", false, "only load and summarise the data (implies --no-serve)")
	adminToken := fs.String("admin-token", "", "dashboard admin token (default $CONCORD_ADMIN_TOKEN, or generated)")
	if err := parseNoArgs(e, fs, args, ""); err != nil {
		return err
	}
	st, err := openStore(ctx, e, *dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(e.stdout, "concord demo: database %s\n", *dsn)
	type loadedProject struct {
		demoProject
		p *annotations.Project
	}
	var loaded []loadedProject
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
		loaded = append(loaded, loadedProject{dp, p})
	}
	if *noFit {
		return nil
	}

	// The demo's fits run on the server's workers, so that the dashboard
	// shows them like any other fit.
	token := *adminToken
	if token == "" {
		token = e.getenv("CONCORD_ADMIN_TOKEN")
	}
	if token == "" {
		token = server.RandomToken()
	}
	fitCmd, err := fitWorkerCommand()
	if err != nil {
		fitCmd = nil // run fits in this process
	}
	// Their chains fan out as under concord serve (the same result).
	cfg := server.Config{Addr: *addr, AdminToken: token, FitCommand: fitCmd, FanOutChains: true, Version: version}
	srv, err := server.New(cfg, st, e.log)
	if err != nil {
		return err
	}
	if err := srv.Listen(); err != nil {
		// The port is taken (say by another concord): use a free one.
		cfg.Addr = "127.0.0.1:0"
		if srv, err = server.New(cfg, st, e.log); err != nil {
			return err
		}
		if err := srv.Listen(); err != nil {
			return err
		}
	}
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx) }()

	for _, lp := range loaded {
		if lp.fit == nil {
			continue
		}
		fmt.Fprintln(e.stdout)
		fmt.Fprintf(e.stdout, "== %s: %s model\n", lp.p.Name, lp.fit.Model)
		res, err := demoFit(ctx, e, srv, lp.p, *lp.fit)
		if err != nil {
			stopServing()
			<-served
			return fmt.Errorf("demo fit of %s: %w", lp.p.Name, err)
		}
		printFitSummary(e.stdout, res, 10)
		paths, rep, ds, err := demoReport(ctx, st, lp.p, res, *reportDir)
		if err != nil {
			stopServing()
			<-served
			return fmt.Errorf("demo report of %s: %w", lp.p.Name, err)
		}
		if sum := rep.Summary; sum.GoldItems > 0 && !math.IsNaN(float64(sum.GoldAccuracy)) {
			fmt.Fprintf(e.stdout, "The consensus agrees with the expert gold label on %.1f%% of %d items (majority vote: %.1f%%, ties counted as half).\n",
				100*float64(sum.GoldAccuracy), sum.GoldItems, 100*reports.MajorityGoldAccuracy(rep))
		}
		if cons, mean, n := valueGoldCorrelation(res, ds); n > 0 {
			fmt.Fprintf(e.stdout, "The consensus value correlates with the expert scores at r = %.3f over %d items (the raters' mean: r = %.3f).\n", cons, n, mean)
		}
		fmt.Fprintf(e.stdout, "Reports of %s:\n", lp.p.Name)
		plotDir, plots := "", 0
		for _, path := range paths {
			if dir := filepath.Dir(path); strings.HasSuffix(dir, "-plots") {
				plotDir = dir
				if strings.HasSuffix(path, ".png") {
					plots++
				}
				continue
			}
			if strings.HasSuffix(path, demoFitSuffix) {
				fmt.Fprintf(e.stdout, "  %s (the fit result, for concord report --fit and concord predict --fit)\n", path)
				continue
			}
			fmt.Fprintf(e.stdout, "  %s\n", path)
		}
		if plots > 0 {
			fmt.Fprintf(e.stdout, "  %s%c (%d plots, PNG and SVG)\n", plotDir, filepath.Separator, plots)
		}
	}

	if *noServe {
		stopServing()
		return ignoreCanceled(<-served)
	}
	fmt.Fprintln(e.stdout)
	fmt.Fprintf(e.stdout, "Dashboard: %s\n", srv.URL())
	fmt.Fprintf(e.stdout, "Open it logged in as admin (single-use link): %s\n", srv.LoginURL())
	fmt.Fprintf(e.stdout, "Admin token for the API (Authorization: Bearer ...): %s\n", token)
	fmt.Fprintln(e.stdout, "Serving until interrupted (Ctrl-C).")
	return ignoreCanceled(<-served)
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// demoFit returns the result of a done fit of project p with spec, reusing
// one made earlier with the same settings, or queues a new one on the
// server's workers and follows it to the end.
func demoFit(ctx context.Context, e *env, srv *server.Server, p *annotations.Project, spec analysis.FitSpec) (*multirater.FitResult, error) {
	f, err := srv.FindOrStartFit(ctx, p.ID, spec)
	if err != nil {
		return nil, err
	}
	if f.Status == annotations.FitDone {
		fmt.Fprintf(e.stdout, "Reusing fit %d, made %s with the same settings (delete it to refit):\n", f.ID, f.FinishedAt.Local().Format("2006-01-02 15:04"))
	} else {
		full := spec.WithDefaults()
		if full.Engine == multirater.EngineGibbs {
			fmt.Fprintf(e.stdout, "Fit %d: %s model, %d chains x %d draws after %d burn-in sweeps, seed %d (running in the background; the dashboard shows it too)\n",
				f.ID, full.Model, full.Chains, full.Samples, max(full.Burnin, 0), full.Seed)
		} else {
			fmt.Fprintf(e.stdout, "Fit %d: %s model by %s, hyperparameters by maximising the evidence, seed %d (running in the background; the dashboard shows it too)\n",
				f.ID, full.Model, engineName(full.Engine), full.Seed)
		}
		bar := newProgressBar(e, "fit")
		f, err = srv.WaitFit(ctx, f, 200*time.Millisecond, func(f *annotations.Fit) {
			note := ""
			if f.MaxRhat > 0 {
				note = fmt.Sprintf("max R-hat %.3f", f.MaxRhat)
			}
			bar.Set(f.Progress, note)
		})
		bar.Done()
		if err != nil {
			return nil, err
		}
	}
	return srv.ReadFitResult(ctx, f.ID)
}

// demoReport writes the fit result (NAME-fit.json, what concord report
// and predict read with --fit) and the reports of a demo fit (with the
// agreement analysis of the project's labels) into dir, the fit result
// first.
func demoReport(ctx context.Context, st annotations.Store, p *annotations.Project, res *multirater.FitResult, dir string) ([]string, *reports.Report, *annotations.Dataset, error) {
	ds, err := st.Dataset(ctx, p.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	ag, err := analysis.Agreement(ctx, ds, raters.Options{Bootstrap: 200, Seed: 1})
	if err != nil {
		return nil, nil, nil, err
	}
	rep, err := reports.Build(*p, res, ag.Report, ds)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, nil, err
	}
	fitPath := filepath.Join(dir, reports.FileBase(rep)+demoFitSuffix)
	if err := writeFitFile(fitPath, res); err != nil {
		return nil, nil, nil, err
	}
	paths, err := reports.WriteAll(dir, rep)
	return append([]string{fitPath}, paths...), rep, ds, err
}

// demoFitSuffix ends the names of the fit results that concord demo writes
// next to the reports.
const demoFitSuffix = "-fit.json"

// valueGoldCorrelation returns, for a fit with a consensus value per item
// (bounded ratings) and items with numeric gold scores, the Pearson
// correlation of the consensus value with the gold scores, that of the
// raters' mean, and the number of items compared (0 when the fit has no
// values or fewer than 3 items have gold scores).
func valueGoldCorrelation(res *multirater.FitResult, ds *annotations.Dataset) (cons, mean float64, n int) {
	gold := make(map[string]float64)
	for _, it := range ds.Items {
		if g, err := strconv.ParseFloat(it.Gold, 64); err == nil && it.Gold != "" {
			gold[it.ID] = g
		}
	}
	sum := make(map[string][2]float64)
	for _, l := range ds.Labels {
		if v, err := strconv.ParseFloat(l.Value, 64); err == nil {
			s := sum[l.Item]
			sum[l.Item] = [2]float64{s[0] + v, s[1] + 1}
		}
	}
	var c, m, g []float64
	for _, it := range res.Items {
		gv, ok := gold[it.ID]
		s := sum[it.ID]
		if it.Value == nil || !ok || s[1] == 0 {
			continue
		}
		c = append(c, it.Value.Mean)
		m = append(m, s[0]/s[1])
		g = append(g, gv)
	}
	if len(g) < 3 {
		return 0, 0, 0
	}
	return stat.Correlation(c, g, nil), stat.Correlation(m, g, nil), len(g)
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
