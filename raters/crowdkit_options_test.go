package raters

import (
	"fmt"
	"strings"
	"testing"
)

// crowdkitCase is one of make_reference_crowdkit_options.py's cases run
// here: the data, and the aggregator with the options a crowd-kit user
// sets.
type crowdkitCase struct {
	data string
	run  func(t *testing.T, r *Ratings, items, raters, cats []string, ref *caseRef) *Consensus
}

// caseRef holds what the reference says about a case's run: crowd-kit's
// EM iterations and KOS's start.
type caseRef struct {
	iterations int
	start      []float64
}

// fileLabels are the labels of a long file in the file's order (crowd-kit's
// data order).
func fileLabels(t *testing.T, path string, items, raters, cats []string) []Label {
	var out []Label
	for _, row := range readCSV(t, path) {
		out = append(out, Label{Item: indexOf(items, row["item_id"]), Rater: indexOf(raters, row["rater_id"]), Class: indexOf(cats, row["label"])})
	}
	return out
}

// goldOf reads a gold file (item_id, gold) into classes per item.
func goldOf(t *testing.T, path string, items, cats []string) []int {
	gold := make([]int, len(items))
	for i := range gold {
		gold[i] = -1
	}
	for _, row := range readCSV(t, path) {
		i, c := indexOf(items, row["item_id"]), indexOf(cats, row["gold"])
		if i < 0 || c < 0 {
			t.Fatalf("%s: item %q or class %q unknown", path, row["item_id"], row["gold"])
		}
		gold[i] = c
	}
	return gold
}

// initOf reads initial error matrices (rater, true, label, value).
func initOf(t *testing.T, path string, raters, cats []string) [][]float64 {
	k := len(cats)
	m := make([][]float64, len(raters))
	for _, row := range readCSV(t, path) {
		j := indexOf(raters, row["rater"])
		c, l := indexOf(cats, row["true"]), indexOf(cats, row["label"])
		if j < 0 || c < 0 || l < 0 {
			t.Fatalf("%s: %v", path, row)
		}
		if m[j] == nil {
			m[j] = make([]float64, k*k)
		}
		m[j][c*k+l] = parseF(t, row["value"])
	}
	return m
}

// TestCrowdKitOptions checks Zero-Based Skill, gold majority vote, KOS and
// Dawid-Skene with known true labels, initial error matrices (assign and
// addition) and a set number of iterations against crowd-kit 1.4.1 itself
// on its own test fixtures (testdata/reference_crowdkit_options.csv, made
// by make_reference_crowdkit_options.py): every label, and the class
// probabilities and skills to 1e-6 (crowd-kit floors error-matrix cells at
// 1e-10, concord at 1e-300), with the tie rule a crowd-kit user gets
// (TieFirst in sorted class order).
func TestCrowdKitOptions(t *testing.T) {
	skillOpts := SkillOptions{Ties: TieFirst}
	ds := func(gold, init string, add bool) func(t *testing.T, r *Ratings, items, raters, cats []string, ref *caseRef) *Consensus {
		return func(t *testing.T, r *Ratings, items, raters, cats []string, ref *caseRef) *Consensus {
			if ref.iterations == 0 {
				t.Fatal("no iteration count")
			}
			o := DSOptions{MaxIter: ref.iterations, Tol: 1e-300, Restarts: -1, InitialErrorAdd: add}
			if gold != "" {
				o.TrueClasses = goldOf(t, "testdata/"+gold, items, cats)
			}
			if init != "" {
				o.InitialError = initOf(t, "testdata/"+init, raters, cats)
			}
			c, err := DawidSkene(LabelsOf(r), r.Items, r.Raters, r.K, o)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	zbs := func(t *testing.T, r *Ratings, _, _, _ []string, _ *caseRef) *Consensus {
		c, err := ZeroBasedSkill(LabelsOf(r), r.Items, r.Raters, r.K, skillOpts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	goldMV := func(gold string) func(t *testing.T, r *Ratings, items, raters, cats []string, ref *caseRef) *Consensus {
		return func(t *testing.T, r *Ratings, items, _, cats []string, _ *caseRef) *Consensus {
			c, err := GoldMajorityVote(LabelsOf(r), r.Items, r.Raters, r.K, goldOf(t, "testdata/"+gold, items, cats), skillOpts)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	kos := func(data string) func(t *testing.T, r *Ratings, items, raters, cats []string, ref *caseRef) *Consensus {
		return func(t *testing.T, r *Ratings, items, raters, cats []string, ref *caseRef) *Consensus {
			o := skillOpts
			o.Reliabilities = ref.start
			c, err := KOS(fileLabels(t, "testdata/"+data, items, raters, cats), r.Items, r.Raters, r.K, o)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	cases := map[string]crowdkitCase{
		"zbs_toy":        {"crowdkit_toy.csv", zbs},
		"zbs_simple":     {"crowdkit_simple.csv", zbs},
		"gold_toy":       {"crowdkit_toy.csv", goldMV("crowdkit_toy_gold.csv")},
		"gold_simple":    {"crowdkit_simple.csv", goldMV("crowdkit_simple_gold.csv")},
		"kos_bool":       {"crowdkit_bool.csv", kos("crowdkit_bool.csv")},
		"kos_toy":        {"crowdkit_toy.csv", kos("crowdkit_toy.csv")},
		"ds_gold_toy":    {"crowdkit_toy.csv", ds("crowdkit_toy_gold.csv", "", false)},
		"ds_gold_simple": {"crowdkit_simple.csv", ds("crowdkit_simple_gold.csv", "", false)},
		"ds_assign_w2":   {"crowdkit_toy.csv", ds("", "crowdkit_init_assign_w2.csv", false)},
		"ds_addition_w2": {"crowdkit_toy.csv", ds("", "crowdkit_init_addition_w2.csv", true)},
		"ds_addition_t2": {"crowdkit_toy.csv", ds("", "crowdkit_init_addition_t2.csv", true)},
		"ds_iter2_toy":   {"crowdkit_toy.csv", ds("", "", false)},
	}
	type result struct {
		c                   *Consensus
		items, raters, cats []string
	}
	results := map[string]result{}
	checked := map[string]int{}
	rows := readCSV(t, "testdata/reference_crowdkit_options.csv")
	refs := map[string]*caseRef{}
	for _, ref := range rows {
		cr := refs[ref["case"]]
		if cr == nil {
			cr = &caseRef{}
			refs[ref["case"]] = cr
		}
		switch ref["field"] {
		case "iterations":
			cr.iterations = int(parseF(t, ref["value"]))
		case "reliability0":
			cr.start = append(cr.start, parseF(t, ref["value"]))
		}
	}
	for _, ref := range rows {
		name := ref["case"]
		tc, ok := cases[name]
		if !ok {
			t.Fatalf("unknown case %q", name)
		}
		if ref["kind"] == "fit" || ref["kind"] == "edge" {
			continue
		}
		res, ok := results[name]
		if !ok {
			r, items, raters, cats := longTable(readCSV(t, "testdata/"+tc.data), "item_id", "rater_id", "label")
			res = result{tc.run(t, r, items, raters, cats, refs[name]), items, raters, cats}
			results[name] = res
		}
		label := fmt.Sprintf("%s %s %s %s", name, ref["kind"], ref["id"], ref["field"])
		switch {
		case ref["kind"] == "item":
			it := res.c.Items[indexOf(res.items, ref["id"])]
			if ref["field"] == "label" {
				if it.Class < 0 || res.cats[it.Class] != ref["value"] {
					t.Errorf("%s: class %d, crowd-kit %s", label, it.Class, ref["value"])
				}
				break
			}
			c := indexOf(res.cats, strings.TrimPrefix(ref["field"], "prob:"))
			if want := parseF(t, ref["value"]); !near(it.Probs[c], want, 1e-6) {
				t.Errorf("%s: %.9g, crowd-kit %.9g", label, it.Probs[c], want)
			}
		case ref["kind"] == "rater" && ref["field"] == "skill":
			q := res.c.Raters[indexOf(res.raters, ref["id"])]
			if want := parseF(t, ref["value"]); !near(q.Skill, want, 1e-6) {
				t.Errorf("%s: %.9g, crowd-kit %.9g", label, q.Skill, want)
			}
		default:
			t.Fatalf("%s: unknown row", label)
		}
		checked[name]++
	}
	for name := range cases {
		if checked[name] == 0 {
			t.Errorf("case %s has no reference rows", name)
		}
	}
}
