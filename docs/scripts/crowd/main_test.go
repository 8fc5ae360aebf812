package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestTiedMajority: a tie of t labels that includes gold scores 1/t; a
// gold item without labels scores 0.
func TestTiedMajority(t *testing.T) {
	rows := [][3]string{
		{"a", "r1", "1"}, {"a", "r2", "1"}, {"a", "r3", "0"}, // majority 1: right
		{"b", "r1", "1"}, {"b", "r2", "0"}, // tie: 1/2
		{"c", "r1", "0"}, // wrong
	}
	gold := map[string]string{"a": "1", "b": "0", "c": "1", "d": "0"}
	if got, want := tiedMajority(rows, gold), 1.5/4; math.Abs(got-want) > 1e-12 {
		t.Errorf("tiedMajority = %v, want %v", got, want)
	}
}

func TestScoreMissingCountsWrong(t *testing.T) {
	got := score(map[string]string{"a": "x", "b": "y"}, map[string]string{"a": "x", "b": "x", "c": "x"})
	if want := 1.0 / 3; math.Abs(got-want) > 1e-12 {
		t.Errorf("score = %v, want %v", got, want)
	}
}

// TestRaterModel: a stated choice wins; without one, the confusion
// prior's hierarchy and number of communities.
func TestRaterModel(t *testing.T) {
	cases := []struct{ doc, want string }{
		{`{"model":{"confusion":{"hierarchy":"communities","communities":[{},{}]}}}`, "communities:2"},
		{`{"model":{"confusion":{"hierarchy":"pooled"}}}`, "pooled"},
		{`{"model":{"confusion":{"hierarchy":"pooled","rater_model":"one-coin"}}}`, "one-coin"},
		{`{"model":{"confusion":{"hierarchy":"pooled","rater_models":{"candidates":[{"name":"confusion"},{"name":"spammer","chosen":true}]}}}}`, "spammer"},
		{`{"items":[{"chosen":"x"}],"model":{}}`, "-"},
	}
	for _, c := range cases {
		var doc map[string]any
		if err := json.Unmarshal([]byte(c.doc), &doc); err != nil {
			t.Fatal(err)
		}
		if got := raterModel(doc); got != c.want {
			t.Errorf("raterModel(%s) = %q, want %q", c.doc, got, c.want)
		}
	}
}

func TestCrowdKitTable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ck.tsv")
	tsv := "# crowd-kit 1.4.1\ndataset\tmethod\taccuracy\tseconds\nd\tMV\t0.800000\t0.1\nd\tGLAD\t0.900000\t2\nd\tDS\t0.900000\t1\n"
	if err := os.WriteFile(p, []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	ck, err := readCrowdKit(p)
	if err != nil {
		t.Fatal(err)
	}
	if best, who := bestOf(ck["d"]); best != 0.9 || who != "DS" {
		t.Errorf("bestOf = %v %s, want 0.9 DS (the first of a tie in crowd-kit's order)", best, who)
	}
}

// TestDatasetsExtraDirs: the public sets first, then every subfolder with a
// ratings.csv of each further folder (beds, -extra), in folder order; a
// subfolder without ratings.csv and an empty folder name are skipped.
func TestDatasetsExtraDirs(t *testing.T) {
	root := t.TempDir()
	mk := func(dir string, ratings bool) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if ratings {
			if err := os.WriteFile(filepath.Join(dir, "ratings.csv"), []byte("item_id,rater_id,label\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	beds, real := filepath.Join(root, "beds"), filepath.Join(root, "real")
	mk(filepath.Join(beds, "b1"), true)
	mk(filepath.Join(beds, "notes"), false)
	mk(filepath.Join(real, "r2"), true)
	mk(filepath.Join(real, "r1"), true)
	got := datasets("/data", beds, "", real)
	want := append(append([]string{}, public...), "b1", "r1", "r2")
	if len(got) != len(want) {
		t.Fatalf("datasets: %d sets %v, want %d %v", len(got), got, len(want), want)
	}
	for i, d := range got {
		if d.name != want[i] {
			t.Errorf("datasets[%d] = %s, want %s", i, d.name, want[i])
		}
	}
	if got[len(got)-1].dir != filepath.Join(real, "r2") {
		t.Errorf("r2's folder = %s", got[len(got)-1].dir)
	}
}
