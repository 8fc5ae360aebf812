package textfeat

import (
	"bufio"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"concord/internal/testutil"
)

// -update rewrites the Go-produced inputs of the reference scripts
// (testdata/sklearn_input.json, testdata/nltk_words.txt). After it, rerun
// testdata/sklearn_tfidf.py and testdata/nltk_stem.py (see testdata/README.md).
var update = flag.Bool("update", false, "rewrite the inputs of the reference scripts in testdata")

// rteTexts reads the 200 RTE-1 texts of testdata/rte_texts.csv.
func rteTexts(t testing.TB) []string {
	t.Helper()
	recs := testutil.ReadCSV(t, filepath.Join("testdata", "rte_texts.csv"))
	if len(recs) != 201 || recs[0][1] != "text" {
		t.Fatalf("rte_texts.csv: %d records, header %q", len(recs), recs[0])
	}
	docs := make([]string, 0, 200)
	for _, r := range recs[1:] {
		docs = append(docs, r[1])
	}
	return docs
}

const rteTrain = 150 // documents 0..149 train, 150..199 held out

// extraTestDocs are appended to the held-out documents: an empty text, one
// of stop words only and one of words unseen in training; all three must map
// to the zero vector.
var extraTestDocs = []string{"", "The of and, it's which.", "Zyzzyva qwxz"}

// tokenSets are the tokenisation settings whose terms are handed to
// scikit-learn (which then only counts and weights).
var tokenSets = map[string]Options{
	"plain":        {},
	"stem_bigrams": {Stem: true, Bigrams: true},
}

type sklearnInput struct {
	Train     int                   `json:"train"`
	TokenSets map[string][][]string `json:"token_sets"`
}

type csrMatrix struct {
	Indptr  []int     `json:"indptr"`
	Indices []int     `json:"indices"`
	Data    []float64 `json:"data"`
}

type sklearnConfig struct {
	Name        string    `json:"name"`
	TokenSet    string    `json:"token_set"`
	Weighting   Weighting `json:"weighting"`
	MinDF       int       `json:"min_df"`
	MaxFeatures int       `json:"max_features"`
	Vocabulary  []string  `json:"vocabulary"`
	IDF         []float64 `json:"idf"`
	Train       csrMatrix `json:"train"`
	Test        csrMatrix `json:"test"`
}

func allDocs(t testing.TB) (train, test []string) {
	docs := rteTexts(t)
	return docs[:rteTrain], append(slices.Clone(docs[rteTrain:]), extraTestDocs...)
}

// TestSklearnTFIDF compares weights and normalisation with scikit-learn's
// CountVectorizer / TfidfVectorizer fed the same terms (testdata/
// sklearn_tfidf.py, output in testdata/sklearn_output.json).
func TestSklearnTFIDF(t *testing.T) {
	train, test := allDocs(t)
	all := append(slices.Clone(train), test...)
	in := sklearnInput{Train: len(train), TokenSets: map[string][][]string{}}
	for name, opts := range tokenSets {
		terms := make([][]string, len(all))
		for i, d := range all {
			terms[i] = Terms(d, opts)
		}
		in.TokenSets[name] = terms
	}
	inPath := filepath.Join("testdata", "sklearn_input.json")
	if *update {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(inPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: now run testdata/sklearn_tfidf.py", inPath)
	}
	var saved sklearnInput
	testutil.ReadJSON(t, inPath, &saved)
	for name, terms := range in.TokenSets {
		for i := range terms {
			if !slices.Equal(terms[i], saved.TokenSets[name][i]) {
				t.Fatalf("token set %s, document %d: terms changed since sklearn_input.json was written "+
					"(bump TokenizerVersion if intended, rerun with -update and the script):\n got %q\nwant %q",
					name, i, terms[i], saved.TokenSets[name][i])
			}
		}
	}

	var out struct {
		Sklearn string          `json:"sklearn"`
		Configs []sklearnConfig `json:"configs"`
	}
	testutil.ReadJSON(t, filepath.Join("testdata", "sklearn_output.json"), &out)
	if len(out.Configs) < 5 {
		t.Fatalf("sklearn_output.json has %d configurations, want 5", len(out.Configs))
	}
	const tol = 1e-12
	for _, c := range out.Configs {
		opts := tokenSets[c.TokenSet]
		opts.Weighting, opts.MinDF, opts.MaxFeatures = c.Weighting, c.MinDF, c.MaxFeatures
		v, got, err := Fit(train, opts)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !slices.Equal(v.Vocabulary(), c.Vocabulary) {
			t.Errorf("%s: vocabulary differs: %d terms, sklearn %d", c.Name, v.Len(), len(c.Vocabulary))
			continue
		}
		if c.Weighting == TFIDF {
			for i, w := range v.IDF() {
				if math.Abs(w-c.IDF[i]) > tol {
					t.Errorf("%s: idf[%q] = %.17g, sklearn %.17g", c.Name, c.Vocabulary[i], w, c.IDF[i])
				}
			}
		}
		compareCSR(t, c.Name+" train", got, c.Train, tol)
		compareCSR(t, c.Name+" held-out", v.TransformAll(test), c.Test, tol)
	}
}

func compareCSR(t *testing.T, name string, got []Vector, want csrMatrix, tol float64) {
	t.Helper()
	if len(got) != len(want.Indptr)-1 {
		t.Fatalf("%s: %d vectors, sklearn %d rows", name, len(got), len(want.Indptr)-1)
	}
	for i, v := range got {
		lo, hi := want.Indptr[i], want.Indptr[i+1]
		if len(v.Idx) != hi-lo {
			t.Errorf("%s: row %d has %d entries, sklearn %d", name, i, len(v.Idx), hi-lo)
			continue
		}
		for k := range v.Idx {
			if int(v.Idx[k]) != want.Indices[lo+k] || math.Abs(v.Val[k]-want.Data[lo+k]) > tol {
				t.Errorf("%s: row %d entry %d = (%d, %.17g), sklearn (%d, %.17g)",
					name, i, k, v.Idx[k], v.Val[k], want.Indices[lo+k], want.Data[lo+k])
			}
		}
	}
}

// TestNLTKStem compares stemming with NLTK's SnowballStemmer("english")
// (Porter2) on testdata/nltk_words.txt: the distinct tokens of the RTE texts
// plus the special cases of the Porter2 definition (testdata/nltk_stem.py,
// output in testdata/nltk_stems.tsv).
func TestNLTKStem(t *testing.T) {
	wordsPath := filepath.Join("testdata", "nltk_words.txt")
	if *update {
		seen := map[string]bool{}
		var words []string
		add := func(w string) {
			if !seen[w] && isStemmable(w) {
				seen[w] = true
				words = append(words, w)
			}
		}
		for _, d := range rteTexts(t) {
			for _, w := range Tokenize(d, Options{KeepStopWords: true}) {
				add(w)
			}
		}
		// Porter2's exceptional forms and suffix classes.
		for _, w := range strings.Fields(`skis skies dying lying tying idly gently ugly early only singly
			sky news howe atlas cosmos bias andes inning innings outing outings canning cannings
			herring herrings earring earrings proceed exceed succeed generate generates generated
			generously general communism communication arsenal gener commun arsen
			consign consigned consigning consignment consist consisted consistency consistent
			knack knackered knackeries knacks knag knave knaves knavish kneaded kneading knee
			kneel kneeled kneeling kneels knees knell knelt knew knick knif knife
			caresses ponies ties caress cats feed agreed plastered bled motoring sing
			conflated troubled sized hopping tanned falling hissing fizzed failing filing
			happy relational conditional rational valenci hesitanci digitizer conformabli
			radicalli differentli vileli analogousli vietnamization predication operator
			feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti
			triplicate formative formalize electriciti electrical hopeful goodness revival
			allowance inference airliner gyroscopic adjustable defensible irritant
			replacement adjustment dependent adoption homologou communism activate angulariti
			homologous effective bowdlerize probate rate cease controll roll
			café naïve résumé façade coöperate`) {
			add(w)
		}
		if err := os.WriteFile(wordsPath, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d words): now run testdata/nltk_stem.py", wordsPath, len(words))
	}
	f, err := os.Open(filepath.Join("testdata", "nltk_stems.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		word, want, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			t.Fatalf("nltk_stems.tsv line %d: no tab", n+1)
		}
		n++
		got := Tokenize(word, Options{Stem: true, KeepStopWords: true})
		if len(got) != 1 || got[0] != want {
			t.Errorf("stem(%q) = %q, NLTK %q", word, got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("nltk_stems.tsv has %d words, want >= 1000", n)
	}
}
