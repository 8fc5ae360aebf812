package main

import (
	"context"
	"encoding/json"
	goflag "flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"concord/analysis"
	"concord/annotations"
)

const nextHelp = `
Rank the items by what one more label would tell about their consensus:
which items to send out for labelling next. concord next fits the model as
concord fit does (every flag of concord fit is taken, e.g. --labels FILE
--scheme SPEC --model confusion, or --project NAME; the fit's summary goes
to stderr), or reads a fit already made (--fit FILE), and scores every item
of grades or classes with the fit's posteriors:

  information  the mutual information between the next label and the
               item's class, in bits (default)
  accuracy     the expected gain in the probability that the consensus is
               right (zero where no single label can change it)

averaged over who labels next: any rater (weighted by their share of the
labels) or the raters named by --pool. With the confusion model each
rater's confusion matrix is used; other models take each rater's
agreement with the consensus (one-coin). For a fit of classes both scores
are averaged with the same scores under the class-symmetric one-coin
model (every class equally likely, each rater right with their accuracy
averaged over the classes), so that an item is never taken as settled on
the strength of the fit's class proportions or of one class's labels
looking more reliable than another's: those are learnt from the labels
the ranking chose.

Output: the best --n items, a table, or with --json the concord.next/v1
document {"items": [{"id", "score", "why", ...}]}, best first; --csv writes
the items as a task list (id,score,consensus,prob,n_labels,why) for the
labelling tool.
`

// nextFlags are concord next's own flags; every other flag goes to concord
// fit. bool marks the flags without a value.
var nextFlags = map[string]bool{"n": false, "pool": false, "by": false, "json": true, "csv": true, "fit": false, "out": false}

func runNext(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "next", "(--labels FILE --scheme SPEC | --project NAME) [fit flags] | --fit FILE  [--n N] [--pool R1,R2] [--by information|accuracy] [--json|--csv] [--out FILE]", nextHelp)
	n := fs.Int("n", analysis.DefaultNextN, "items to list (0: every item)")
	pool := fs.String("pool", "", "raters who may label next, comma-separated (default: any rater, weighted by their share of the labels)")
	by := fs.String("by", analysis.NextByInformation, "score: information (bits about the class) or accuracy (expected gain in the consensus being right)")
	asJSON := fs.Bool("json", false, "write the concord.next/v1 JSON document")
	asCSV := fs.Bool("csv", false, "write the items as a CSV task list")
	fitFile := fs.String("fit", "", "rank the items of this fit result (written by concord fit --out) instead of fitting")
	out := fs.String("out", "-", `output file ("-": standard output)`)
	// Split the arguments: next's own flags, and the rest for concord fit.
	var own, fitArgs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "--help" || a == "-help" {
			fs.SetOutput(e.stdout)
			fs.Usage()
			fmt.Fprintln(e.stdout, "\nEvery flag of concord fit (concord fit --help) is taken too.")
			return goflag.ErrHelp
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		isBool, ours := nextFlags[name]
		if !strings.HasPrefix(a, "-") || !ours {
			fitArgs = append(fitArgs, a)
			continue
		}
		own = append(own, a)
		if !hasValue && !isBool && i+1 < len(args) {
			i++
			own = append(own, args[i])
		}
	}
	pos, err := parseFlags(e, fs, own)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return annotations.Errorf(annotations.EINVALID, "unexpected argument %q", pos[0])
	}
	if *asJSON && *asCSV {
		return annotations.Errorf(annotations.EINVALID, "give --json or --csv, not both")
	}
	if *n < 0 {
		return annotations.Errorf(annotations.EINVALID, "--n %d: expected 0 (every item) or more", *n)
	}
	path := *fitFile
	if path == "" {
		if len(fitArgs) == 0 {
			fs.Usage()
			return annotations.Errorf(annotations.EINVALID, "give the labels to fit (--labels FILE --scheme SPEC, or --project NAME) or a fit result (--fit FILE)")
		}
		dir, err := os.MkdirTemp("", "concord-next-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "fit.json")
		// The fit's summary goes to stderr: stdout is the ranking's.
		fe := *e
		fe.stdout = e.stderr
		if err := runFit(ctx, &fe, append(fitArgs, "--out", path)); err != nil {
			return err
		}
	} else if len(fitArgs) > 0 {
		return annotations.Errorf(annotations.EINVALID, "--fit %s ranks a fit already made: %q is a flag of the fit (give the fit flags without --fit to fit first)", *fitFile, fitArgs[0])
	}
	res, err := readFitResult(path)
	if err != nil {
		return err
	}
	o := analysis.NextOptions{N: *n, By: *by}
	if *n == 0 {
		o.N = -1
	}
	for _, r := range strings.Split(*pool, ",") {
		if r = strings.TrimSpace(r); r != "" {
			o.Pool = append(o.Pool, r)
		}
	}
	next, err := analysis.NextItems(res, o)
	if err != nil {
		return err
	}
	return writeTo(e, *out, func(w io.Writer) error {
		switch {
		case *asJSON:
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(next)
		case *asCSV:
			return next.WriteCSV(w)
		}
		printNext(w, next)
		return nil
	})
}

// printNext prints the ranking as a table.
func printNext(w io.Writer, next *analysis.NextResult) {
	fmt.Fprintf(w, "The %d of %d items to label next (by %s; who labels next: %s):\n", len(next.Items), next.Total, next.By, next.Pool)
	for i, it := range next.Items {
		fmt.Fprintf(w, "%4d  %-16s %.4f  %s\n", i+1, it.ID, it.Score, it.Why)
	}
	for _, n := range next.Notes {
		fmt.Fprintf(w, "Note: %s.\n", n)
	}
}
