package raters

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The peer conformance cases (testdata/peers/cases.json, written by
// testdata/peers/make_cases.py from the peers' own test suites): each
// case is one test of a peer (crowd-kit, irrCAC, statsmodels, NLTK,
// fast-krippendorff, scikit-learn, pingouin) with its input, the options
// a user of that peer would set, the peer's expected numbers and its
// tolerance. A case concord cannot express has not_expressible (why); a
// case that differs by a definition has differs (why), and must still
// differ, so that the table stays true.
type peerCase struct {
	Peer           string      `json:"peer"`
	ID             string      `json:"id"`
	Source         string      `json:"source"`
	Input          peerInput   `json:"input"`
	Options        peerOptions `json:"options"`
	Checks         []peerCheck `json:"checks"`
	NotExpressible string      `json:"not_expressible"`
	Differs        string      `json:"differs"`
}

// peerInput is a case's data: raw labels (item, rater, value triples;
// values numbers or strings, categories their order, all of them when
// given), a two-rater contingency table or per-item category counts.
// File names a file of testdata instead: a table or counts CSV (a header
// row and a label column), or long labels (item_id, rater_id, label) of
// which Dataset keeps the rows of one dataset; Labels then adds labels.
type peerInput struct {
	Kind       string      `json:"kind"`
	Labels     [][]any     `json:"labels"`
	Categories []any       `json:"categories"`
	Table      [][]float64 `json:"table"`
	Counts     [][]float64 `json:"counts"`
	File       string      `json:"file"`
	Dataset    string      `json:"dataset"`
	// Gold are known classes of some items (item -> label), crowd-kit's
	// gold (Options.Gold).
	Gold map[string]any `json:"gold"`
	// Overlap, when > 0, makes the labels of crowd-kit's
	// test_dawid_skene_overlap: raters 0..Overlap-1 each label items 0, 1,
	// 2, "yes" unless (rater - item) % 3 == 0 (Python's modulo, never
	// negative), in its order (rater by rater).
	Overlap int `json:"overlap"`
}

// load reads File into the input, or makes Overlap's labels.
func (in *peerInput) load(t *testing.T) {
	for p := 0; p < in.Overlap; p++ {
		for i := 0; i < 3; i++ {
			v := "yes"
			if ((p-i)%3+3)%3 == 0 {
				v = "no"
			}
			in.Labels = append(in.Labels, []any{strconv.Itoa(i), strconv.Itoa(p), v})
		}
	}
	if in.File == "" {
		return
	}
	path := "testdata/" + in.File
	switch in.Kind {
	case "table":
		in.Table = readMatrix(t, path)
	case "counts":
		in.Counts = readMatrix(t, path)
	case "labels":
		var labels [][]any
		for _, r := range readCSV(t, path) {
			if in.Dataset != "" && r["dataset"] != in.Dataset {
				continue
			}
			var v any = r["label"]
			if x, err := strconv.ParseFloat(r["label"], 64); err == nil {
				v = x
			}
			labels = append(labels, []any{r["item_id"], r["rater_id"], v})
		}
		in.Labels = append(labels, in.Labels...)
	}
}

// peerOptions are concord's options of a case (Options or TableOptions).
type peerOptions struct {
	Level         string      `json:"level"`
	CI            string      `json:"ci"`
	Weights       []string    `json:"weights"`
	WeightMatrix  [][]float64 `json:"weight_matrix"`
	Values        []float64   `json:"values"`
	ConfLevel     float64     `json:"conf_level"`
	Null          float64     `json:"null"`
	CompleteCases bool        `json:"complete_cases"`
	Only          string      `json:"only"`
	Ties          string      `json:"ties"`
	// RandomStart is M-MSR's and KOS's start (concord agreement
	// --random-start; crowd-kit's users: crowdkit), from Seed (0, as
	// --random-start crowdkit's default seed and crowd-kit's
	// random_state).
	RandomStart string `json:"random_start"`
	Seed        uint64 `json:"seed"`
	// The aggregators' options (crowd-kit's n_iter, tol, n_restarts,
	// method; Dawid-Skene's true labels).
	DSIter       int     `json:"ds_iter"`
	DSTol        float64 `json:"ds_tol"`
	DSGold       bool    `json:"ds_gold"`
	GLADIter     int     `json:"glad_iter"`
	GLADTol      float64 `json:"glad_tol"`
	MACEIter     int     `json:"mace_iter"`
	MACERestarts int     `json:"mace_restarts"`
	MACEEM       bool    `json:"mace_em"`
}

// peerCheck compares one number of concord's report (its JSON document,
// at Path: keys and list indices joined by dots) with the peer's Want:
// |got - want| <= Tol + Rtol |want| (numpy's assert_allclose;
// assert_almost_equal(decimal=d) is Tol 1.5e-d), or, with Round, the
// value rounded to Round digits equals Want (the peer's round(x, d) ==
// want). A list element is named by its index or by its "id" (an item's
// or rater's row of an aggregator). Scale multiplies concord's number first (0.5: a one-sided
// p-value from the two-sided one when z > 0).
type peerCheck struct {
	Path string `json:"path"`
	// WantLabel, if not empty, is the label (a string) expected at Path.
	WantLabel string   `json:"want_label"`
	Want      float64  `json:"want"`
	Tol       float64  `json:"tol"`
	Rtol      float64  `json:"rtol"`
	Round     *int     `json:"round"`
	Scale     *float64 `json:"scale"`
}

func (c peerCheck) ok(got float64) bool {
	if c.Scale != nil {
		got *= *c.Scale
	}
	if c.Round != nil {
		p := math.Pow(10, float64(*c.Round))
		return math.Round(got*p)/p == c.Want
	}
	return math.Abs(got-c.Want) <= c.Tol+c.Rtol*math.Abs(c.Want)
}

func readPeerCases(t *testing.T) []peerCase {
	t.Helper()
	b, err := os.ReadFile("testdata/peers/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []peerCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// runPeerCase analyses a case's input with its options and returns the
// report as its JSON document.
func runPeerCase(pc peerCase) (map[string]any, error) {
	o := pc.Options
	ci, err := ParseCIKind(o.CI)
	if err != nil {
		return nil, err
	}
	var ws []Weights
	for _, n := range o.Weights {
		w, err := ParseWeights(n)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	var rep *Report
	switch pc.Input.Kind {
	case "table", "counts":
		to := TableOptions{Weights: ws, WeightMatrix: o.WeightMatrix, Values: o.Values, ConfLevel: o.ConfLevel, CI: ci, Null: o.Null}
		if pc.Input.Kind == "table" {
			rep, err = AnalyzeTable(pc.Input.Table, to)
		} else {
			rep, err = AnalyzeCounts(pc.Input.Counts, to)
		}
	case "labels":
		var pr *peerData
		if pr, err = peerRatings(pc.Input, o.Level); err != nil {
			return nil, err
		}
		ties := TieFrequent
		if o.Ties != "" {
			if ties, err = ParseTieRule(o.Ties); err != nil {
				return nil, err
			}
		}
		start := StartConcord
		if o.RandomStart != "" {
			if start, err = ParseRandomStart(o.RandomStart); err != nil {
				return nil, err
			}
		}
		only := o.Only
		if only == "" {
			only = OnlyCoefficients
		}
		rep, err = Analyze(pr.r, Options{Level: pr.level, Bootstrap: -1, ItemNames: pr.items, RaterNames: pr.raters, CategoryNames: pr.cats, Only: only, CI: ci, Null: o.Null, Seed: o.Seed, RandomStart: start, ConfLevel: o.ConfLevel,
			Weights: ws, WeightMatrix: o.WeightMatrix, Ties: ties, ICC: ICCOptions{CompleteCasesOnly: o.CompleteCases},
			Gold: pr.gold, DSGold: o.DSGold, DS: DSOptions{MaxIter: o.DSIter, Tol: o.DSTol},
			GLAD: GLADOptions{MaxIter: o.GLADIter, Tol: o.GLADTol}, MACE: MACEOptions{MaxIter: o.MACEIter, Restarts: o.MACERestarts, EM: o.MACEEM}})
	default:
		return nil, fmt.Errorf("unknown input kind %q", pc.Input.Kind)
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	return doc, json.Unmarshal(b, &doc)
}

// peerData are a case's raw labels as Ratings, with the names of the
// items, raters and categories, and the gold classes (nil: none).
type peerData struct {
	r                   *Ratings
	level               Level
	items, raters, cats []string
	gold                []int
}

// peerRatings builds the Ratings of raw labels: categorical (nominal,
// ordinal) on the categories given or the sorted distinct values,
// continuous (interval, ratio) on the values.
func peerRatings(in peerInput, levelName string) (*peerData, error) {
	level := Level(-1)
	for l, n := range levelNames {
		if n == levelName {
			level = Level(l)
		}
	}
	if level < 0 {
		return nil, fmt.Errorf("unknown level %q", levelName)
	}
	items, raters := map[string]int{}, map[string]int{}
	pd := &peerData{level: level}
	key := func(v any) string { return fmt.Sprint(v) }
	for _, l := range in.Labels {
		if _, ok := items[key(l[0])]; !ok {
			items[key(l[0])] = len(items)
			pd.items = append(pd.items, key(l[0]))
		}
		if _, ok := raters[key(l[1])]; !ok {
			raters[key(l[1])] = len(raters)
			pd.raters = append(pd.raters, key(l[1]))
		}
	}
	if level == Interval || level == Ratio {
		r := NewRatings(len(items), len(raters), 0)
		for _, l := range in.Labels {
			v, ok := l[2].(float64)
			if !ok {
				return nil, fmt.Errorf("%s data need numbers, have %v", level, l[2])
			}
			r.Add(items[key(l[0])], raters[key(l[1])], v)
		}
		pd.r = r
		return pd, nil
	}
	cats := in.Categories
	if cats == nil {
		seen := map[string]bool{}
		for _, l := range in.Labels {
			if !seen[key(l[2])] {
				seen[key(l[2])] = true
				cats = append(cats, l[2])
			}
		}
		sort.Slice(cats, func(i, j int) bool {
			a, aok := cats[i].(float64)
			b, bok := cats[j].(float64)
			if aok && bok {
				return a < b
			}
			return key(cats[i]) < key(cats[j])
		})
	}
	index := map[string]int{}
	var values []float64
	for k, c := range cats {
		index[key(c)] = k
		pd.cats = append(pd.cats, key(c))
		if v, ok := c.(float64); ok && values != nil || ok && k == 0 {
			values = append(values, v)
		} else {
			values = nil
		}
	}
	r := NewRatings(len(items), len(raters), len(cats))
	if len(values) == len(cats) {
		r.Values = values
	}
	for _, l := range in.Labels {
		k, ok := index[key(l[2])]
		if !ok {
			return nil, fmt.Errorf("label %v is not one of the categories %v", l[2], cats)
		}
		r.Add(items[key(l[0])], raters[key(l[1])], float64(k))
	}
	pd.r = r
	if in.Gold != nil {
		pd.gold = make([]int, len(items))
		for i := range pd.gold {
			pd.gold[i] = -1
		}
		for it, g := range in.Gold {
			i, iok := items[it]
			k, kok := index[key(g)]
			if !iok || !kok {
				return nil, fmt.Errorf("gold %v of item %s: no such item or class", g, it)
			}
			pd.gold[i] = k
		}
	}
	return pd, nil
}

// lookup follows a dotted path (keys; list indices or the "id" of a list
// element) in a JSON document.
func lookup(doc any, path string) any {
	x := doc
	for _, p := range strings.Split(path, ".") {
		switch v := x.(type) {
		case map[string]any:
			x = v[p]
		case []any:
			x = nil
			if i, err := strconv.Atoi(p); err == nil && i >= 0 && i < len(v) {
				x = v[i]
				break
			}
			for _, e := range v {
				if m, ok := e.(map[string]any); ok && m["id"] == p {
					x = e
				}
			}
		default:
			return nil
		}
	}
	return x
}

// peerTally counts a peer's cases.
type peerTally struct {
	cases, expressible, agree int
	differ                    []string
}

// TestPeerCases replays the peers' own test cases against the library and
// prints the table per peer (cases, expressible, agree, differ and why;
// go test -run TestPeerCases -v ./raters/). Every expressible case must
// agree within its peer's tolerance unless it documents why it differs by
// definition, and such a case must still differ.
func TestPeerCases(t *testing.T) {
	cases := readPeerCases(t)
	tally := map[string]*peerTally{}
	var peers []string
	ids := map[string]bool{}
	for _, pc := range cases {
		if ids[pc.Peer+"/"+pc.ID] {
			t.Errorf("case %s/%s twice", pc.Peer, pc.ID)
		}
		ids[pc.Peer+"/"+pc.ID] = true
		pt := tally[pc.Peer]
		if pt == nil {
			pt = &peerTally{}
			tally[pc.Peer] = pt
			peers = append(peers, pc.Peer)
		}
		pt.cases++
		if pc.NotExpressible != "" {
			if len(pc.Checks) != 0 && pc.Input.Kind != "" {
				t.Errorf("%s/%s: not expressible but has an input and checks", pc.Peer, pc.ID)
			}
			continue
		}
		pt.expressible++
		if len(pc.Checks) == 0 {
			t.Errorf("%s/%s: no checks", pc.Peer, pc.ID)
			continue
		}
		pc.Input.load(t)
		doc, err := runPeerCase(pc)
		var bad []string
		if err != nil {
			bad = append(bad, err.Error())
		} else {
			for _, c := range pc.Checks {
				x := lookup(doc, c.Path)
				if c.WantLabel != "" {
					if got := fmt.Sprint(x); got != c.WantLabel {
						bad = append(bad, fmt.Sprintf("%s: concord %s, %s %s", c.Path, got, pc.Peer, c.WantLabel))
					}
					continue
				}
				got, ok := x.(float64)
				if !ok {
					bad = append(bad, c.Path+": not in the report")
				} else if !c.ok(got) {
					bad = append(bad, fmt.Sprintf("%s: concord %.10g, %s %.10g", c.Path, got, pc.Peer, c.Want))
				}
			}
		}
		switch {
		case len(bad) == 0 && pc.Differs == "":
			pt.agree++
		case len(bad) == 0:
			t.Errorf("%s/%s agrees now but is listed as differing (%s): drop its differs", pc.Peer, pc.ID, pc.Differs)
		case pc.Differs == "":
			if len(bad) > 4 {
				bad = append(bad[:4], fmt.Sprintf("and %d more", len(bad)-4))
			}
			t.Errorf("%s/%s (%s): %s", pc.Peer, pc.ID, pc.Source, strings.Join(bad, "; "))
			pt.differ = append(pt.differ, pc.ID+": "+strings.Join(bad, "; "))
		default:
			pt.differ = append(pt.differ, pc.ID+": "+pc.Differs)
		}
	}
	total := peerTally{}
	t.Logf("%-18s %6s %12s %6s %6s", "peer", "cases", "expressible", "agree", "differ")
	for _, p := range peers {
		pt := tally[p]
		t.Logf("%-18s %6d %12d %6d %6d", p, pt.cases, pt.expressible, pt.agree, len(pt.differ))
		for _, d := range pt.differ {
			t.Logf("    differs: %s", d)
		}
		total.cases += pt.cases
		total.expressible += pt.expressible
		total.agree += pt.agree
		total.differ = append(total.differ, pt.differ...)
	}
	t.Logf("%-18s %6d %12d %6d %6d", "all", total.cases, total.expressible, total.agree, len(total.differ))
	for _, pc := range cases {
		if pc.NotExpressible != "" {
			t.Logf("not expressible: %s/%s: %s", pc.Peer, pc.ID, pc.NotExpressible)
		}
	}
}
