// Command concord is the multi-rater annotation analytics tool: it imports
// labels, fits the multi-rater models, reports and serves the results.
//
// Usage:
//
//	concord <command> [flags] [args]
//
// Run "concord help" for the list of commands and "concord <command> --help"
// for each command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/term"

	"concord/annotations"
)

// env is what a command may touch of the outside world. Commands never use
// os.Stdout and friends directly, so that tests can run them.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// tty reports whether stderr is a terminal (progress bars) and
	// interactive whether stdin is one (confirmation prompts).
	tty         bool
	interactive bool
	log         *slog.Logger
	getenv      func(string) string
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"import", "import a label file (and an items file) into a project", runImport},
		{"export", "export a project's labels as CSV (long or wide) or XLSX", runExport},
		{"projects", "list, create or delete projects", runProjects},
		{"demo", "load the bundled real datasets and summarise them", runDemo},
		{"fit", "fit a multi-rater model to a project or to label files", runFit},
		{"predict", "predict new items from a fit result without refitting", runPredict},
		{"next", "rank the items by what one more label would tell: which to label next", runNext},
		{"eval", "cross-validate a model against majority and single-rater baselines", runEval},
		{"serve", "run the REST API and dashboard", runServe},
		{"worker", "run background jobs (fits) from a shared database, without the API", runWorker},
		{"fit-worker", "internal: runs one fit for concord serve", runFitWorker},
		{"agreement", "agreement coefficients and baseline aggregators", runAgreement},
		{"judge", "can a model rater (an LLM judge) replace a human? the alternative annotator test", runJudge},
		{"report", "render a fit result as a JSON report, Excel workbook, CSV tables or plots", runReport},
		{"version", "print the version", runVersion},
	}
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	e := &env{
		stdin:       os.Stdin,
		stdout:      os.Stdout,
		stderr:      os.Stderr,
		tty:         term.IsTerminal(int(os.Stderr.Fd())),
		interactive: term.IsTerminal(int(os.Stdin.Fd())),
		log:         slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		getenv:      os.Getenv,
	}
	code := run(ctx, e, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			return run(ctx, e, []string{args[1], "--help"})
		}
		usage(e.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		}
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Ctrl-C or SIGTERM (main's signal.NotifyContext, whose
			// cause names the signal): the work stopped at its next
			// check and its result was not written.
			fmt.Fprintf(e.stderr, "concord %s: cancelled (%v) before it finished; its output was not written\n", c.name, context.Cause(ctx))
			return 1
		}
		fmt.Fprintf(e.stderr, "concord %s: %s\n", c.name, userMessage(err))
		return 1
	}
	fmt.Fprintf(e.stderr, "concord: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return 2
}

// errUsage marks an error whose message the flag package already printed.
var errUsage = errors.New("usage")

// userMessage renders an error for the terminal: domain errors and problem
// lists as they are, anything else with its full chain (the CLI user is the
// operator, so internal detail helps).
func userMessage(err error) string {
	var pl *annotations.ProblemList
	if errors.As(err, &pl) {
		return pl.Error()
	}
	return err.Error()
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "concord: multi-rater annotation analytics")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: concord <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "concord <command> --help" for a command's flags.`)
}

// newFlags returns a flag set for a subcommand that prints its usage to e's
// stderr (stdout for --help).
func newFlags(e *env, name, synopsis, description string) *flag.FlagSet {
	fs := flag.NewFlagSet("concord "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: concord %s %s\n\n", name, synopsis)
		if description != "" {
			fmt.Fprintln(w, strings.TrimSpace(description))
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "Flags:")
		fs.PrintDefaults()
	}
	return fs
}

// parseNoArgs is parseFlags for a command that takes no positional
// argument: one is refused, the message followed by hint (if any).
func parseNoArgs(e *env, fs *flag.FlagSet, args []string, hint string) error {
	return parseNone(e, fs, args, hint, false)
}

// parseNoArgsUsage is parseNoArgs for a command that prints its usage
// before refusing a positional argument.
func parseNoArgsUsage(e *env, fs *flag.FlagSet, args []string, hint string) error {
	return parseNone(e, fs, args, hint, true)
}

func parseNone(e *env, fs *flag.FlagSet, args []string, hint string, usage bool) error {
	pos, err := parseFlags(e, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		if usage {
			fs.Usage()
		}
		return annotations.Errorf(annotations.EINVALID, "unexpected argument %q%s", pos[0], hint)
	}
	return nil
}

// parseArgs is parseFlags for a command that needs positional arguments:
// without any it prints its usage and refuses with the message missing.
func parseArgs(e *env, fs *flag.FlagSet, args []string, missing string) ([]string, error) {
	pos, err := parseFlags(e, fs, args)
	if err == nil && len(pos) == 0 {
		fs.Usage()
		err = annotations.Errorf(annotations.EINVALID, "%s", missing)
	}
	return pos, err
}

// parseFlags parses args allowing flags after positional arguments ("concord
// import ratings.csv --project x") and returns the positional arguments.
// --help prints the usage to stdout and returns flag.ErrHelp.
func parseFlags(e *env, fs *flag.FlagSet, args []string) ([]string, error) {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fs.SetOutput(e.stdout)
			fs.Usage()
			return nil, flag.ErrHelp
		}
	}
	var pos []string
	// The flag package would print its error and the whole usage; a
	// mistyped flag gets its error, the flag meant and a pointer to --help.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	defer fs.SetOutput(out)
	for {
		if err := fs.Parse(args); err != nil {
			fmt.Fprintf(out, "%s: %s\n", fs.Name(), flagError(fs, err))
			fmt.Fprintf(out, "Run \"%s --help\" for its flags.\n", fs.Name())
			return nil, errUsage
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func runVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "", "Print concord's version.")
	if _, err := parseFlags(e, fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "concord %s\n", version)
	return nil
}

// flagError words a flag parsing error, suggesting the flag meant for an
// unknown one: "unknown flag --sample (did you mean --samples?)".
func flagError(fs *flag.FlagSet, err error) string {
	name, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !unknown {
		return strings.ReplaceAll(err.Error(), " flag -", " flag --")
	}
	name = strings.TrimLeft(name, "-")
	msg := "unknown flag --" + name
	if s := suggestFlags(fs, name); len(s) > 0 {
		msg += " (did you mean " + orJoin(s) + "?)"
	}
	return msg
}

// suggestFlags returns the flags of fs that the unknown flag name was
// probably meant to be: those it is a prefix of or that are a prefix of it
// (--sample, --samples-per-chain), those that differ only in dashes,
// underscores and case (--sigma_b), and otherwise those within a small edit
// distance (--seeed). At most three, closest first.
func suggestFlags(fs *flag.FlagSet, name string) []string {
	norm := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "", ".", "").Replace(s))
	}
	n := norm(name)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	fs.VisitAll(func(f *flag.Flag) {
		// Distances in half steps: a missing or extra plural s is the
		// commonest slip (--sample for --samples) and ranks first.
		fn := norm(f.Name)
		d := editDistance(n, fn)
		switch {
		case fn == n:
			d = 0
		case fn == n+"s" || n == fn+"s":
			d = 1
		case len(n) >= 3 && (strings.HasPrefix(fn, n) || strings.HasPrefix(n, fn)):
			d = 2 * min(d, 1)
		case d > max(1, min(len(n), len(fn))/4):
			return
		default:
			d *= 2
		}
		cs = append(cs, cand{"--" + f.Name, d})
	})
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for _, c := range cs {
		if len(out) == 3 || c.d > cs[0].d+2 {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// orJoin joins words as "a", "a or b", "a, b or c".
func orJoin(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
