package textfeat

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Weighting is a term-weighting scheme. Whatever the scheme, every document
// vector is then scaled to unit L2 norm.
type Weighting string

const (
	// Count weights a term by its number of occurrences in the document
	// (the document-feature co-occurrence counts of Rogers et al. sec. 4).
	Count Weighting = "count"
	// Binary weights a term 1 if it occurs in the document.
	Binary Weighting = "binary"
	// TFIDF weights a term by count * idf with the smoothed inverse document
	// frequency idf(t) = ln((1 + n) / (1 + df(t))) + 1, where n is the number
	// of training documents and df(t) the number of them containing t
	// (scikit-learn's TfidfVectorizer with smooth_idf=True, norm="l2").
	TFIDF Weighting = "tfidf"
)

// Options are the settings of a Vectorizer. The zero value is the paper's
// featuriser: every term of the training documents (MinDF 1, no size limit),
// Count weighting, SMART stop words removed, no stemming, no bigrams.
// Each field's doc tag is its one line of help (the command-line flags of
// concord fit and eval are derived from it).
type Options struct {
	// MinDF keeps only terms that occur in at least MinDF training
	// documents. Zero means 1.
	MinDF int `json:"min_df" doc:"text: keep terms occurring in at least this many documents (default 1)"`
	// MaxFeatures, if positive, keeps only the MaxFeatures terms with the
	// largest total count over the training documents (after MinDF); ties
	// are broken by larger document frequency, then by byte order of the
	// term. Zero means no limit.
	MaxFeatures int `json:"max_features" doc:"text: keep at most this many terms, the most frequent (default 0: no limit)"`
	// Weighting is Count, Binary or TFIDF. Empty means Count.
	Weighting Weighting `json:"weighting" doc:"text: term weighting count, binary or tfidf (default count); vectors are then scaled to unit norm"`
	// Stem applies the Snowball (Porter2) English stemmer to tokens written
	// in Latin letters, after stop-word removal.
	Stem bool `json:"stem" doc:"text: Snowball (Porter2) English stemming"`
	// Bigrams adds the pairs of consecutive tokens as terms (see Terms).
	Bigrams bool `json:"bigrams" doc:"text: add word bigrams as terms"`
	// KeepStopWords disables removal of the SMART stop words.
	KeepStopWords bool `json:"keep_stop_words" doc:"text: keep the SMART stop words (e.g. for short columns such as a relation name: \"causes\" is a stop word)"`
}

// withDefaults returns o with zero fields replaced by their defaults.
func (o Options) withDefaults() Options {
	if o.MinDF == 0 {
		o.MinDF = 1
	}
	if o.Weighting == "" {
		o.Weighting = Count
	}
	return o
}

// Validate reports whether o is usable: MinDF and MaxFeatures must not be
// negative and Weighting must be empty, "count", "binary" or "tfidf".
func (o Options) Validate() error {
	if o.MinDF < 0 {
		return fmt.Errorf("textfeat: MinDF = %d, want >= 0", o.MinDF)
	}
	if o.MaxFeatures < 0 {
		return fmt.Errorf("textfeat: MaxFeatures = %d, want >= 0", o.MaxFeatures)
	}
	switch o.Weighting {
	case "", Count, Binary, TFIDF:
	default:
		return fmt.Errorf("textfeat: unknown weighting %q, want %q, %q or %q", o.Weighting, Count, Binary, TFIDF)
	}
	return nil
}

// A Vectorizer maps documents to unit-norm sparse bag-of-words vectors over a
// vocabulary fitted to training documents. Terms of new documents that are
// not in the vocabulary are ignored, so a document with no known term maps to
// the zero vector.
//
// A Vectorizer is made by Fit or restored by json.Unmarshal of a value
// saved with json.Marshal; it is immutable and safe for concurrent use.
type Vectorizer struct {
	opts  Options // with defaults applied
	nDocs int
	terms []string         // vocabulary in byte order; feature i is terms[i]
	df    []int            // document frequency of each term in training
	idf   []float64        // TFIDF only
	index map[string]int32 // term -> feature index
}

// Fit builds the vocabulary of docs under opts and returns the Vectorizer and
// the vectors of docs (the same as TransformAll(docs) would give).
//
// Fit returns an error if opts is invalid, docs is empty, or no term is left
// in the vocabulary (for example when every document consists of stop
// words).
func Fit(docs []string, opts Options) (*Vectorizer, []Vector, error) {
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	if len(docs) == 0 {
		return nil, nil, errors.New("textfeat: no documents to fit")
	}
	opts = opts.withDefaults()
	// Tokenise in parallel; each goroutine counts the terms of its documents
	// (total occurrences and document frequency), and the counts are summed.
	terms := make([][]string, len(docs))
	var (
		mu      sync.Mutex
		workers []*fitWorker
	)
	parallelForWith(len(docs), func() *fitWorker {
		w := &fitWorker{tk: newCachingTokenizer(opts), stats: make(map[string]*termStat)}
		mu.Lock()
		workers = append(workers, w)
		mu.Unlock()
		return w
	}, func(w *fitWorker, i int) {
		terms[i] = w.tk.terms(docs[i])
		w.count(terms[i], i)
	})
	stats := workers[0].stats
	for _, w := range workers[1:] {
		for t, s := range w.stats {
			if m := stats[t]; m != nil {
				m.total += s.total
				m.df += s.df
			} else {
				stats[t] = s
			}
		}
	}
	type entry struct {
		term string
		*termStat
	}
	kept := make([]entry, 0, len(stats))
	for t, s := range stats {
		if s.df >= opts.MinDF {
			kept = append(kept, entry{t, s})
		}
	}
	if len(kept) == 0 {
		return nil, nil, fmt.Errorf("textfeat: empty vocabulary: no term occurs in at least %d of the %d documents (after stop-word removal)", opts.MinDF, len(docs))
	}
	if opts.MaxFeatures > 0 && len(kept) > opts.MaxFeatures {
		slices.SortFunc(kept, func(a, b entry) int {
			if c := cmp.Compare(b.total, a.total); c != 0 {
				return c
			}
			if c := cmp.Compare(b.df, a.df); c != 0 {
				return c
			}
			return cmp.Compare(a.term, b.term)
		})
		kept = kept[:opts.MaxFeatures]
	}
	slices.SortFunc(kept, func(a, b entry) int { return cmp.Compare(a.term, b.term) })

	v := &Vectorizer{
		opts:  opts,
		nDocs: len(docs),
		terms: make([]string, len(kept)),
		df:    make([]int, len(kept)),
	}
	for i, e := range kept {
		v.terms[i] = strings.Clone(e.term) // do not pin the documents' text
		v.df[i] = e.df
	}
	v.init()
	vecs := make([]Vector, len(docs))
	parallelFor(len(docs), func(i int) { vecs[i] = v.vectorize(terms[i]) })
	return v, vecs, nil
}

// termStat counts a term's occurrences in the training documents.
type termStat struct {
	total, df int
	last      int // the last document counted in df
}

// fitWorker is one goroutine's tokenizer and term counts in Fit.
type fitWorker struct {
	tk    *tokenizer
	stats map[string]*termStat
}

// count adds the terms of document d. A worker is handed documents in
// increasing order, so comparing with the last document counts df.
func (w *fitWorker) count(terms []string, d int) {
	for _, t := range terms {
		s := w.stats[t]
		if s == nil {
			s = &termStat{last: -1}
			w.stats[t] = s
		}
		s.total++
		if s.last != d {
			s.df++
			s.last = d
		}
	}
}

// init builds the index and the idf weights from terms, df and nDocs.
func (v *Vectorizer) init() {
	v.index = make(map[string]int32, len(v.terms))
	for i, t := range v.terms {
		v.index[t] = int32(i)
	}
	v.idf = nil
	if v.opts.Weighting == TFIDF {
		v.idf = make([]float64, len(v.terms))
		n := float64(v.nDocs + 1)
		for i, df := range v.df {
			v.idf[i] = math.Log(n/float64(df+1)) + 1
		}
	}
}

func (v *Vectorizer) mustBeFitted() {
	if v == nil || v.index == nil {
		panic("textfeat: Vectorizer not made by Fit or json.Unmarshal")
	}
}

// Transform returns the unit-norm vector of doc, featurised exactly as the
// training documents were. Terms outside the vocabulary are ignored; if none
// is left the result is the zero vector (Idx and Val empty).
func (v *Vectorizer) Transform(doc string) Vector {
	v.mustBeFitted()
	return v.vectorize(Terms(doc, v.opts))
}

// TransformAll returns the vectors of docs, computed in parallel.
func (v *Vectorizer) TransformAll(docs []string) []Vector {
	v.mustBeFitted()
	vecs := make([]Vector, len(docs))
	parallelForWith(len(docs), func() *tokenizer { return newCachingTokenizer(v.opts) },
		func(tk *tokenizer, i int) { vecs[i] = v.vectorize(tk.terms(docs[i])) })
	return vecs
}

// vectorize weights and normalises a document's terms.
func (v *Vectorizer) vectorize(terms []string) Vector {
	idx := make([]int32, 0, len(terms))
	for _, t := range terms {
		if k, ok := v.index[t]; ok {
			idx = append(idx, k)
		}
	}
	if len(idx) == 0 {
		return Vector{}
	}
	slices.Sort(idx)
	n := 0
	for i := range idx {
		if i == 0 || idx[i] != idx[i-1] {
			n++
		}
	}
	out := Vector{Idx: make([]int32, 0, n), Val: make([]float64, 0, n)}
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && idx[j] == idx[i] {
			j++
		}
		var w float64
		switch v.opts.Weighting {
		case Count:
			w = float64(j - i)
		case Binary:
			w = 1
		case TFIDF:
			w = float64(j-i) * v.idf[idx[i]]
		}
		out.Idx = append(out.Idx, idx[i])
		out.Val = append(out.Val, w)
		i = j
	}
	norm := out.Norm()
	for k := range out.Val {
		out.Val[k] /= norm
	}
	return out
}

// Options returns the vectorizer's options with defaults filled in.
func (v *Vectorizer) Options() Options { v.mustBeFitted(); return v.opts }

// Len returns the number of features (the vocabulary size).
func (v *Vectorizer) Len() int { v.mustBeFitted(); return len(v.terms) }

// Vocabulary returns the terms in feature order (byte order); feature i of a
// Vector is Vocabulary()[i]. Bigrams are two tokens joined by a space.
func (v *Vectorizer) Vocabulary() []string { v.mustBeFitted(); return slices.Clone(v.terms) }

// Index returns the feature index of term, and whether it is in the
// vocabulary.
func (v *Vectorizer) Index(term string) (int, bool) {
	v.mustBeFitted()
	k, ok := v.index[term]
	return int(k), ok
}

// NumDocs returns the number of training documents.
func (v *Vectorizer) NumDocs() int { v.mustBeFitted(); return v.nDocs }

// DocFreq returns the training document frequency of each feature.
func (v *Vectorizer) DocFreq() []int { v.mustBeFitted(); return slices.Clone(v.df) }

// IDF returns the idf weight of each feature for TFIDF weighting (see
// TFIDF), and nil for the other weightings.
func (v *Vectorizer) IDF() []float64 { v.mustBeFitted(); return slices.Clone(v.idf) }

// TokenizerVersion identifies the tokenisation and normalisation rules. It
// changes whenever a change to them would featurise some text differently; a
// vectorizer saved under another version is refused.
const TokenizerVersion = 1

// Identifiers of the saved form.
const (
	jsonFormat  = "concord/textfeat.Vectorizer"
	jsonVersion = 1
	stemmerName = "snowball-english (github.com/kljensen/snowball)"
)

type vectorizerJSON struct {
	Format           string   `json:"format"`
	Version          int      `json:"version"`
	TokenizerVersion int      `json:"tokenizer_version"`
	StopWords        string   `json:"stop_words"`
	Stemmer          string   `json:"stemmer,omitempty"`
	Options          Options  `json:"options"`
	NumDocs          int      `json:"num_docs"`
	Terms            []string `json:"terms"`
	DocFreq          []int    `json:"doc_freq"`
}

// MarshalJSON saves the settings and the fitted vocabulary (terms, their
// training document frequencies and the number of training documents; idf
// weights are recomputed from these on loading).
func (v *Vectorizer) MarshalJSON() ([]byte, error) {
	v.mustBeFitted()
	j := vectorizerJSON{
		Format:           jsonFormat,
		Version:          jsonVersion,
		TokenizerVersion: TokenizerVersion,
		StopWords:        StopListName,
		Options:          v.opts,
		NumDocs:          v.nDocs,
		Terms:            v.terms,
		DocFreq:          v.df,
	}
	if v.opts.Stem {
		j.Stemmer = stemmerName
	}
	return json.Marshal(j)
}

// UnmarshalJSON restores a vectorizer saved by MarshalJSON. It returns an
// error, leaving v unchanged, if the data are malformed or were saved by an
// incompatible version (another tokenizer version, stop list or stemmer).
func (v *Vectorizer) UnmarshalJSON(data []byte) error {
	var j vectorizerJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return fmt.Errorf("textfeat: vectorizer: %w", err)
	}
	switch {
	case j.Format != jsonFormat:
		return fmt.Errorf("textfeat: vectorizer: format %q, want %q", j.Format, jsonFormat)
	case j.Version != jsonVersion:
		return fmt.Errorf("textfeat: vectorizer: version %d, want %d", j.Version, jsonVersion)
	case j.TokenizerVersion != TokenizerVersion:
		return fmt.Errorf("textfeat: vectorizer: saved with tokenizer version %d, this build has %d: refit", j.TokenizerVersion, TokenizerVersion)
	case j.StopWords != StopListName:
		return fmt.Errorf("textfeat: vectorizer: stop list %q, want %q", j.StopWords, StopListName)
	case j.Options.Stem && j.Stemmer != stemmerName:
		return fmt.Errorf("textfeat: vectorizer: stemmer %q, want %q", j.Stemmer, stemmerName)
	}
	if err := j.Options.Validate(); err != nil {
		return fmt.Errorf("textfeat: vectorizer: %w", err)
	}
	if j.NumDocs < 1 {
		return fmt.Errorf("textfeat: vectorizer: num_docs = %d, want >= 1", j.NumDocs)
	}
	if len(j.Terms) == 0 {
		return errors.New("textfeat: vectorizer: no terms")
	}
	if len(j.Terms) > math.MaxInt32 {
		return fmt.Errorf("textfeat: vectorizer: %d terms, too many", len(j.Terms))
	}
	if len(j.DocFreq) != len(j.Terms) {
		return fmt.Errorf("textfeat: vectorizer: %d doc_freq values for %d terms", len(j.DocFreq), len(j.Terms))
	}
	for i, t := range j.Terms {
		if t == "" {
			return fmt.Errorf("textfeat: vectorizer: terms[%d] is empty", i)
		}
		if i > 0 && t <= j.Terms[i-1] {
			return fmt.Errorf("textfeat: vectorizer: terms[%d] = %q not after %q (terms must be strictly increasing)", i, t, j.Terms[i-1])
		}
		if df := j.DocFreq[i]; df < 1 || df > j.NumDocs {
			return fmt.Errorf("textfeat: vectorizer: doc_freq[%d] = %d, want 1..%d", i, df, j.NumDocs)
		}
	}
	*v = Vectorizer{
		opts:  j.Options.withDefaults(),
		nDocs: j.NumDocs,
		terms: j.Terms,
		df:    j.DocFreq,
	}
	v.init()
	return nil
}
