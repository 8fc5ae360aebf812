package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"concord/analysis"
)

const judgeHelp = `
Can a model rater (an LLM judge, a classifier imported as one more rater)
replace a human rater? The alternative annotator test of Calderon, Reichart
& Dror (ACL 2025): leaving one human out at a time, the judge's label and
the left-out human's are each scored against the other humans' labels of
the item (nominal: the share equal to it; ordinal, bounded: minus the RMS
difference), and a one-sided paired t-test asks whether the human beats the
judge by less than --epsilon (the cost-benefit allowance: 0.2 for experts,
0.15 for skilled raters, 0.1 for crowd workers). The humans' p-values are
corrected by Benjamini-Yekutieli (--q); the judge passes when it wins
against at least half of the humans (winning rate omega >= 0.5). The
average advantage probability rho compares judges. Beside the test: each
rater's agreement with the majority of the others (the judge's with the
humans', each human's with the other humans'), with 95% Wilson intervals.

The judges are the raters named by --judges, or else those the labels mark
as models (an is_model or rater_kind column, --model-raters, or a project's
model raters); every rater that is neither a judge nor a model is a human.
The test wants 30 or more items per human (--min-instances) labelled by 2
or more humans.
`

func runJudge(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "judge", "(--project NAME | --labels FILE --scheme SPEC) [--judges R1,R2] [--epsilon 0.15] [--json]", judgeHelp)
	src := addSourceFlags(fs, sourceHelp{})
	judges := fs.String("judges", "", "the model raters to test, comma-separated (default: the raters the labels mark as models)")
	eps := fs.Float64("epsilon", analysis.DefaultJudgeEpsilon, "cost-benefit allowance: 0.2 experts, 0.15 skilled raters, 0.1 crowd workers")
	q := fs.Float64("q", analysis.DefaultJudgeQ, "false discovery rate of the Benjamini-Yekutieli correction")
	minHumans := fs.Int("min-humans", analysis.DefaultJudgeMinHumans, "fewest human labels an item of the test needs")
	minInstances := fs.Int("min-instances", analysis.DefaultJudgeMinInstances, "fewest items a human needs to be tested (the t-test wants 30)")
	asJSON := fs.Bool("json", false, "print the concord.judges/v1 JSON document")
	if err := parseNoArgs(e, fs, args, " (give the label file with --labels)"); err != nil {
		return err
	}
	if err := src.oneOf(); err != nil {
		return err
	}
	ds, source, err := src.load(ctx, e, "judge")
	if err != nil {
		return err
	}
	doc, err := analysis.JudgeReport(ds, analysis.JudgeOptions{Judges: splitList(*judges), Epsilon: *eps, Q: *q, MinHumans: *minHumans, MinInstances: *minInstances})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(doc.JSON())
	}
	printJudges(e.stdout, source, doc)
	return nil
}

func printJudges(w io.Writer, source string, doc *analysis.JudgeReportDoc) {
	fmt.Fprintf(w, "Alternative annotator test on %s (%s; epsilon %g, FDR %g; score: %s):\n", source, doc.Scheme, doc.Epsilon, doc.Q, doc.Score)
	for _, j := range doc.Judges {
		fmt.Fprintf(w, "\n%s: %s\n", j.Judge, j.Verdict)
		if len(j.Humans) > 0 {
			fmt.Fprintf(w, "  winning rate %.2f, average advantage probability %.3f, over %d items\n", j.WinningRate, j.AdvantageProb, j.Items)
			fmt.Fprintf(w, "  %-20s %6s %10s %10s %10s %8s\n", "left-out human", "items", "judge >=", "human >=", "p", "won")
			for _, h := range j.Humans {
				won := ""
				if h.Rejected {
					won = "yes"
				}
				fmt.Fprintf(w, "  %-20s %6d %10.3f %10.3f %10.3g %8s\n", h.Rater, h.Items, h.JudgeAdvantage, h.HumanAdvantage, h.PValue, won)
			}
		}
		if len(j.Skipped) > 0 {
			fmt.Fprintf(w, "  not tested (too few shared items): %v\n", j.Skipped)
		}
		printJudgeAgreement(w, "  agreement with the humans' majority:", j.Agreement)
	}
	fmt.Fprintf(w, "\nEach human's agreement with the majority of the other humans:\n")
	for _, h := range doc.Humans {
		printJudgeAgreement(w, fmt.Sprintf("  %-20s", h.Rater), h)
	}
	for _, n := range doc.Notes {
		fmt.Fprintf(w, "Note: %s.\n", n)
	}
}

func printJudgeAgreement(w io.Writer, label string, a analysis.JudgeAgreement) {
	if a.Items == 0 {
		fmt.Fprintf(w, "%s no item to compare\n", label)
		return
	}
	fmt.Fprintf(w, "%s %.3f [%.3f, %.3f] on %d items\n", label, a.Agreement, a.Q025, a.Q975, a.Items)
}
