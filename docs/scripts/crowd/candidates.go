package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"concord/annotations"
)

// candidateModels are the rater models that --rater-model forces, in the
// order of the candidate table; the default (auto) is fitted besides. graded
// fits only ordered grades (an ordinal scheme, inferred from integer
// labels): "-" elsewhere.
var candidateModels = []string{"one-coin", "confusion", "communities", "spammer", "graded", "subtypes"}

// candidateBaselines are the concord aggregators of the candidate table
// (package raters) besides majority vote with ties split.
var candidateBaselines = []string{"dawid_skene", "one_coin", "mace"}

// candidateRun is the candidate table (issue 29 gap 1): for every bed of
// every folder in dirs (one folder per generator seed, written by
// go run ./docs/scripts/crowd/gen -seed S -out DIR), the accuracy of each
// rater model forced, of the default choice (auto) and the model it chose,
// majority vote of every label with ties counted 1/t (tiedMajority, the
// check's reference), and concord's DS, one-coin DS and MACE; then
// whether the default is at least majority vote on every bed and seed.
func candidateRun(cfg config, dirs []string, want map[string]bool) {
	fmt.Printf("concord %s; every rater model forced (--rater-model M) and the default (auto)\n", describeBuild())
	fmt.Printf("MV: majority vote of every label, ties counted 1/t; ds, 1coin, mace: package raters (every label)\n\n")
	width := nameWidth(dirs, want)
	fmt.Printf("%-*s %-8s", width, "bed", "folder")
	for _, m := range candidateModels {
		fmt.Printf(" %11s", m)
	}
	fmt.Printf(" %7s %-12s %7s", "auto", "chosen", "MV")
	for _, b := range candidateBaselines {
		fmt.Printf(" %7s", trunc(b, 7))
	}
	fmt.Printf(" %6s %s\n", "auto-MV", ">=MV")
	pass, total := 0, 0
	var below []string
	for _, dir := range dirs {
		tag := filepath.Base(dir)
		for _, d := range datasets("", dir) {
			if len(want) > 0 && !want[d.name] {
				continue
			}
			ok, line := candidateRow(cfg, d, tag, width)
			fmt.Println(line)
			total++
			pass += b2i(ok)
			if !ok {
				below = append(below, d.name+"@"+tag)
			}
		}
	}
	fmt.Printf("\nthe default at least majority vote (ties 1/t) on %d of %d bed-seed pairs", pass, total)
	if len(below) > 0 {
		fmt.Printf("; below on %s", strings.Join(below, ", "))
	}
	fmt.Printf("\n")
}

// nameWidth is the width of the table's first column: the longest name of
// the datasets run (real sets' names are longer than the beds'), at least 20.
func nameWidth(dirs []string, want map[string]bool) int {
	w := 20
	for _, d := range datasets("", dirs...) {
		if len(want) == 0 || want[d.name] {
			w = max(w, len(d.name))
		}
	}
	return w
}

// candidateRow fits one bed with every rater model and the default and
// returns whether the default is at least majority vote, and the table's
// line.
func candidateRow(cfg config, d dataset, tag string, width int) (bool, string) {
	ratings := filepath.Join(d.dir, "ratings.csv")
	gold, err := readGold(filepath.Join(d.dir, "items.csv"))
	if err != nil {
		fail(fmt.Errorf("%s: %v", d.name, err))
	}
	rows, err := readRatings(ratings)
	if err != nil {
		fail(fmt.Errorf("%s: %v", d.name, err))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s %-8s", width, d.name, trunc(tag, 8))
	for _, m := range candidateModels {
		c := cfg
		c.fitArgs = append(append([]string{}, cfg.fitArgs...), "--rater-model", m)
		o := fitConcord(c, ratings, gold)
		if o.err != nil && m == "graded" && strings.Contains(o.err.Error(), "needs ordered grades") {
			fmt.Fprintf(&b, " %11s", "-")
			continue
		}
		fmt.Fprintf(&b, " %11s", accText(o))
	}
	auto := fitConcord(cfg, ratings, gold)
	mv := tiedMajority(rows, gold)
	fmt.Fprintf(&b, " %7s %-12s %7.4f", accText(auto), trunc(auto.model, 12), mv)
	ld, err := annotations.LoadFiles(ratings, annotations.LoadOptions{
		ReadOptions: annotations.ReadOptions{Duplicates: annotations.DuplicatesKeep}})
	if err != nil {
		fail(fmt.Errorf("%s: %v", d.name, err))
	}
	for _, a := range candidateBaselines {
		acc, _, err := baseline(ld.Dataset, gold, a)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s@%s: %s: %v\n", d.name, tag, a, err)
			fmt.Fprintf(&b, " %7s", "FAIL")
			continue
		}
		fmt.Fprintf(&b, " %7.4f", acc)
	}
	ok := auto.err == nil && auto.acc >= mv-tol
	fmt.Fprintf(&b, " %+7.4f %s", auto.acc-mv, yes(ok))
	return ok, b.String()
}

// accText is a fit's accuracy, or FAIL.
func accText(o fitOutcome) string {
	if o.err != nil {
		fmt.Fprintf(os.Stderr, "concord fit: %v\n", o.err)
		return "FAIL"
	}
	return fmt.Sprintf("%.4f", o.acc)
}
