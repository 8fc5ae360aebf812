package textfeat

import (
	"bytes"
	"encoding/json"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func checkVector(t *testing.T, name string, v Vector, dim int) {
	t.Helper()
	if msg := v.check(); msg != "" {
		t.Fatalf("%s: %s", name, msg)
	}
	if n := len(v.Idx); n > 0 && int(v.Idx[n-1]) >= dim {
		t.Fatalf("%s: index %d >= vocabulary size %d", name, v.Idx[n-1], dim)
	}
	if norm := v.Norm(); len(v.Idx) > 0 && math.Abs(norm-1) > 1e-14 {
		t.Fatalf("%s: norm %.17g, want 1", name, norm)
	}
	for _, x := range v.Val {
		if !(x > 0) {
			t.Fatalf("%s: non-positive value %v", name, x)
		}
	}
}

func TestFitUnitNorm(t *testing.T) {
	docs := rteTexts(t)
	for _, opts := range []Options{
		{}, {Weighting: Binary}, {Weighting: TFIDF}, {Weighting: TFIDF, Stem: true, Bigrams: true, MinDF: 2},
		{KeepStopWords: true, MaxFeatures: 100},
	} {
		v, vecs, err := Fit(docs, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(vecs) != len(docs) {
			t.Fatalf("%+v: %d vectors for %d documents", opts, len(vecs), len(docs))
		}
		empty := 0
		for i, x := range vecs {
			checkVector(t, docs[i], x, v.Len())
			if x.NNZ() == 0 {
				empty++
			}
		}
		// Every text has a term of its own unless MinDF or MaxFeatures prune.
		if opts.MaxFeatures == 0 && opts.MinDF <= 1 && empty > 0 {
			t.Errorf("%+v: %d empty vectors", opts, empty)
		}
		// The vectors Fit returns are exactly those TransformAll gives.
		again := v.TransformAll(docs)
		for i := range vecs {
			if !slices.Equal(vecs[i].Idx, again[i].Idx) || !slices.Equal(vecs[i].Val, again[i].Val) {
				t.Fatalf("%+v: Fit and TransformAll differ on document %d", opts, i)
			}
		}
	}
}

func TestIdenticalTexts(t *testing.T) {
	docs := rteTexts(t)
	v, _, err := Fit(docs, Options{Weighting: TFIDF, Bigrams: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range [][]string{
		{docs[3], docs[3], strings.ToUpper(docs[3]), "  " + docs[3] + " !!"},
		{"Café prices rose sharply", "CAFE\u0301 prices rose sharply.", "café, prices; rose -- sharply"},
		{"Four month old", "4-month-old", "four-month old", "4 months old"},
	} {
		want := v.Transform(group[0])
		for _, doc := range group[1:] {
			got := v.Transform(doc)
			if !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) {
				t.Errorf("Transform(%q) = %v, want that of %q, %v", doc, got, group[0], want)
			}
		}
	}
}

func TestStopWordsNotInVocabulary(t *testing.T) {
	docs := rteTexts(t)
	v, _, err := Fit(docs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range v.Vocabulary() {
		if IsStopWord(term) {
			t.Errorf("stop word %q in the vocabulary", term)
		}
	}
	if _, ok := v.Index("the"); ok {
		t.Error(`"the" in the vocabulary`)
	}
	kept, _, err := Fit(docs, Options{KeepStopWords: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"the", "of", "it's"} {
		if _, ok := kept.Index(w); !ok {
			t.Errorf("KeepStopWords: %q missing from the vocabulary", w)
		}
	}
	if kept.Len() <= v.Len() {
		t.Errorf("KeepStopWords vocabulary %d terms, default %d", kept.Len(), v.Len())
	}
}

// Corpus with known statistics: total count (df) apple 3 (3), banana 2 (2),
// cherry 1 (1), date 3 (1), elder 1 (1); "the" is a stop word.
var fruit = []string{"apple banana cherry", "Apple, banana.", "the apple date date date", "elder"}

func TestVocabularyLimits(t *testing.T) {
	for _, test := range []struct {
		opts Options
		want []string
	}{
		{Options{}, []string{"apple", "banana", "cherry", "date", "elder"}},
		{Options{MinDF: 2}, []string{"apple", "banana"}},
		{Options{MinDF: 3}, []string{"apple"}},
		// apple and date tie on total count 3; apple has the larger df.
		{Options{MaxFeatures: 1}, []string{"apple"}},
		{Options{MaxFeatures: 2}, []string{"apple", "date"}},
		{Options{MaxFeatures: 3}, []string{"apple", "banana", "date"}},
		// cherry and elder tie on count and df; byte order decides.
		{Options{MaxFeatures: 4}, []string{"apple", "banana", "cherry", "date"}},
		{Options{MaxFeatures: 9}, []string{"apple", "banana", "cherry", "date", "elder"}},
		{Options{MinDF: 2, MaxFeatures: 1}, []string{"apple"}},
		{Options{KeepStopWords: true, MinDF: 1, MaxFeatures: 6}, []string{"apple", "banana", "cherry", "date", "elder", "the"}},
	} {
		v, _, err := Fit(fruit, test.opts)
		if err != nil {
			t.Fatalf("%+v: %v", test.opts, err)
		}
		if got := v.Vocabulary(); !slices.Equal(got, test.want) {
			t.Errorf("%+v: vocabulary %q, want %q", test.opts, got, test.want)
		}
	}
}

func TestWeighting(t *testing.T) {
	// Document 2, "the apple date date date": apple once, date three times.
	idf := func(df int) float64 { return math.Log(5/float64(df+1)) + 1 } // n = 4 documents
	for _, test := range []struct {
		w    Weighting
		want []float64 // apple, date before normalisation
	}{
		{Count, []float64{1, 3}},
		{"", []float64{1, 3}},
		{Binary, []float64{1, 1}},
		{TFIDF, []float64{idf(3), 3 * idf(1)}},
	} {
		v, vecs, err := Fit(fruit, Options{Weighting: test.w})
		if err != nil {
			t.Fatal(err)
		}
		got := vecs[2]
		if !slices.Equal(got.Idx, []int32{0, 3}) {
			t.Fatalf("%q: indices %v, want [0 3]", test.w, got.Idx)
		}
		norm := math.Hypot(test.want[0], test.want[1])
		for k := range got.Val {
			if want := test.want[k] / norm; math.Abs(got.Val[k]-want) > 1e-15 {
				t.Errorf("%q: value %d = %.17g, want %.17g", test.w, k, got.Val[k], want)
			}
		}
		if test.w == TFIDF {
			want := []float64{idf(3), idf(2), idf(1), idf(1), idf(1)}
			if got := v.IDF(); !slices.Equal(got, want) {
				t.Errorf("IDF() = %v, want %v", got, want)
			}
		} else if v.IDF() != nil {
			t.Errorf("%q: IDF() = %v, want nil", test.w, v.IDF())
		}
		if got := v.DocFreq(); !slices.Equal(got, []int{3, 2, 1, 1, 1}) {
			t.Errorf("DocFreq() = %v", got)
		}
		if v.NumDocs() != 4 {
			t.Errorf("NumDocs() = %d", v.NumDocs())
		}
	}
}

func TestEmptyDocuments(t *testing.T) {
	docs := []string{"fever and cough", "", "the of and", "cough"}
	v, vecs, err := Fit(docs, Options{Weighting: TFIDF})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 2} {
		if vecs[i].NNZ() != 0 || vecs[i].Norm() != 0 {
			t.Errorf("document %d %q: %v, want the zero vector", i, docs[i], vecs[i])
		}
	}
	for _, doc := range []string{"", "unseen words only", "!!!"} {
		if x := v.Transform(doc); x.NNZ() != 0 {
			t.Errorf("Transform(%q) = %v, want the zero vector", doc, x)
		}
	}
	// Idf counts every training document, empty ones included (n = 4).
	if got, want := v.IDF()[0], math.Log(5.0/3)+1; got != want { // cough, df 2
		t.Errorf("idf(cough) = %v, want %v", got, want)
	}
}

func TestFitErrors(t *testing.T) {
	for _, test := range []struct {
		docs []string
		opts Options
		msg  string
	}{
		{nil, Options{}, "no documents"},
		{[]string{"the of", ""}, Options{}, "empty vocabulary"},
		{fruit, Options{MinDF: 4}, "empty vocabulary"},
		{fruit, Options{MinDF: -1}, "MinDF"},
		{fruit, Options{MaxFeatures: -1}, "MaxFeatures"},
		{fruit, Options{Weighting: "bm25"}, "unknown weighting"},
		{fruit, Options{Weighting: "TFIDF"}, "unknown weighting"},
	} {
		v, vecs, err := Fit(test.docs, test.opts)
		if err == nil || !strings.Contains(err.Error(), test.msg) || v != nil || vecs != nil {
			t.Errorf("Fit(%q, %+v) = %v, %v, %v; want error containing %q", test.docs, test.opts, v, vecs, err, test.msg)
		}
	}
}

func TestUnfittedPanics(t *testing.T) {
	var v Vectorizer
	for name, f := range map[string]func(){
		"Transform":  func() { v.Transform("x") },
		"Len":        func() { v.Len() },
		"Marshal":    func() { json.Marshal(&v) },
		"nil Len":    func() { (*Vectorizer)(nil).Len() },
		"Vocabulary": func() { v.Vocabulary() },
	} {
		if !panics(f) {
			t.Errorf("%s on an unfitted Vectorizer did not panic", name)
		}
	}
}

func panics(f func()) (p bool) {
	defer func() { p = recover() != nil }()
	f()
	return false
}

func TestJSONRoundTrip(t *testing.T) {
	train, test := allDocs(t)
	for _, opts := range []Options{{}, {Weighting: TFIDF, Stem: true, Bigrams: true, MinDF: 2, MaxFeatures: 500}, {Weighting: Binary, KeepStopWords: true}} {
		v, _, err := Fit(train, opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var w Vectorizer
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		if w.Options() != v.Options() || !slices.Equal(w.Vocabulary(), v.Vocabulary()) ||
			!slices.Equal(w.IDF(), v.IDF()) || !slices.Equal(w.DocFreq(), v.DocFreq()) || w.NumDocs() != v.NumDocs() {
			t.Fatalf("%+v: round trip changed the vectorizer", opts)
		}
		for _, doc := range append(slices.Clone(test), train[:10]...) {
			a, c := v.Transform(doc), w.Transform(doc)
			if !slices.Equal(a.Idx, c.Idx) || !slices.Equal(a.Val, c.Val) {
				t.Fatalf("%+v: restored vectorizer featurises %q differently", opts, doc)
			}
		}
		b2, err := json.Marshal(&w)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Errorf("%+v: second marshal differs", opts)
		}
	}
}

func TestUnmarshalErrors(t *testing.T) {
	v, _, err := Fit(fruit, Options{Weighting: TFIDF, Stem: true})
	if err != nil {
		t.Fatal(err)
	}
	good, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, test := range []struct{ data, msg string }{
		{`[]`, "cannot unmarshal"},
		{`{"format":"x"}`, "format"},
		{edit(func(m map[string]any) { m["version"] = 2 }), "version 2"},
		{edit(func(m map[string]any) { m["tokenizer_version"] = 0 }), "tokenizer version"},
		{edit(func(m map[string]any) { m["stop_words"] = "NLTK" }), "stop list"},
		{edit(func(m map[string]any) { delete(m, "stemmer") }), "stemmer"},
		{edit(func(m map[string]any) { m["options"].(map[string]any)["weighting"] = "bm25" }), "weighting"},
		{edit(func(m map[string]any) { m["options"].(map[string]any)["min_df"] = -2 }), "MinDF"},
		{edit(func(m map[string]any) { m["num_docs"] = 0 }), "num_docs"},
		{edit(func(m map[string]any) { m["terms"] = []string{} }), "no terms"},
		{edit(func(m map[string]any) { m["doc_freq"] = []int{1} }), "doc_freq values"},
		{edit(func(m map[string]any) { m["doc_freq"] = []int{3, 2, 1, 1, 5} }), "doc_freq[4]"},
		{edit(func(m map[string]any) { m["doc_freq"] = []int{3, 0, 1, 1, 1} }), "doc_freq[1]"},
		{edit(func(m map[string]any) { m["terms"] = []string{"appl", "banana", "banana", "date", "elder"} }), "strictly increasing"},
		{edit(func(m map[string]any) { m["terms"] = []string{"", "banana", "cherri", "date", "elder"} }), "empty"},
	} {
		w := *v
		if err := json.Unmarshal([]byte(test.data), &w); err == nil || !strings.Contains(err.Error(), test.msg) {
			t.Errorf("Unmarshal(%s) = %v, want error containing %q", test.data, err, test.msg)
		}
		if !slices.Equal(w.Vocabulary(), v.Vocabulary()) || w.Options() != v.Options() {
			t.Errorf("failed Unmarshal(%s) changed the vectorizer", test.data)
		}
	}
}

// TestHeldOut fits on 150 real texts and featurises 50 held-out ones: only
// the training vocabulary is used, unseen words are ignored, and each
// held-out vector equals the normalised counts of its known terms.
func TestHeldOut(t *testing.T) {
	train, test := allDocs(t)
	v, _, err := Fit(train, Options{})
	if err != nil {
		t.Fatal(err)
	}
	vocab := v.Vocabulary()
	unseen := 0
	for i, doc := range test {
		x := v.Transform(doc)
		checkVector(t, doc, x, v.Len())
		counts := map[string]float64{}
		for _, term := range Terms(doc, Options{}) {
			if _, ok := v.Index(term); ok {
				counts[term]++
			} else {
				unseen++
			}
		}
		if len(counts) != x.NNZ() {
			t.Fatalf("held-out %d: %d known terms, %d nonzeros", i, len(counts), x.NNZ())
		}
		var ss float64
		for _, c := range counts {
			ss += c * c
		}
		for k, idx := range x.Idx {
			want := counts[vocab[idx]] / math.Sqrt(ss)
			if math.Abs(x.Val[k]-want) > 1e-15 {
				t.Fatalf("held-out %d, term %q: %v, want %v", i, vocab[idx], x.Val[k], want)
			}
		}
	}
	if unseen < 100 {
		t.Errorf("only %d unseen term occurrences in the held-out texts: test too weak", unseen)
	}
}

// TestFitDeterministic checks that the parallel Fit gives the same
// vocabulary, document frequencies and vectors whatever the number of
// goroutines.
func TestFitDeterministic(t *testing.T) {
	docs := rteTexts(t)
	opts := Options{Weighting: TFIDF, Bigrams: true, Stem: true, MaxFeatures: 700}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	ref, refVecs, err := Fit(docs, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		v, vecs, err := Fit(docs, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v.Vocabulary(), ref.Vocabulary()) || !slices.Equal(v.DocFreq(), ref.DocFreq()) {
			t.Fatalf("GOMAXPROCS(%d) changes the vocabulary", procs)
		}
		for i := range vecs {
			if !slices.Equal(vecs[i].Idx, refVecs[i].Idx) || !slices.Equal(vecs[i].Val, refVecs[i].Val) {
				t.Fatalf("GOMAXPROCS(%d) changes vector %d", procs, i)
			}
		}
	}
}
