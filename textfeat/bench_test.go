package textfeat

import (
	"fmt"
	"testing"

	"concord/internal/testutil"

	"gonum.org/v1/gonum/mat"
)

// Benchmarks read real text from the shared data folder and skip when it is
// absent (the unit tests never need it).
const (
	asapEssays     = "../../shared/data/asap_essay_set7_two_raters/items.csv" // 1,569 essays, ~170 words
	debianPackages = "../../shared/data/debian_package_descriptions/data.csv" // 3,674 descriptions
)

// sharedTexts returns the "text" column of a CSV file in /work/shared/data.
func sharedTexts(b *testing.B, path string) []string {
	b.Helper()
	recs := testutil.SharedCSV(b, path)
	col := -1
	for j, h := range recs[0] {
		if h == "text" {
			col = j
		}
	}
	if col < 0 {
		b.Fatalf("%s: no text column", path)
	}
	texts := make([]string, 0, len(recs)-1)
	for _, r := range recs[1:] {
		texts = append(texts, r[col])
	}
	return texts
}

// cycle returns n documents, repeating texts as needed.
func cycle(texts []string, n int) ([]string, int64) {
	docs := make([]string, n)
	var bytes int64
	for i := range docs {
		docs[i] = texts[i%len(texts)]
		bytes += int64(len(docs[i]))
	}
	return docs, bytes
}

// BenchmarkFit featurises n ASAP essays (set 7, repeated past 1,569): tokenise,
// build the vocabulary and the unit-norm tf-idf vectors.
func BenchmarkFit(b *testing.B) {
	essays := sharedTexts(b, asapEssays)
	for _, n := range []int{100, 1000, 10000} {
		docs, bytes := cycle(essays, n)
		for _, opts := range []struct {
			name string
			o    Options
		}{
			{"tfidf", Options{Weighting: TFIDF}},
			{"tfidf+stem+bigrams", Options{Weighting: TFIDF, Stem: true, Bigrams: true, MinDF: 2}},
		} {
			b.Run(fmt.Sprintf("%s/docs=%d", opts.name, n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(bytes)
				for b.Loop() {
					if _, _, err := Fit(docs, opts.o); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkTransformAll featurises n essays with a vectorizer fitted on all
// 1,569.
func BenchmarkTransformAll(b *testing.B) {
	essays := sharedTexts(b, asapEssays)
	v, _, err := Fit(essays, Options{Weighting: TFIDF})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{100, 1000, 10000} {
		docs, bytes := cycle(essays, n)
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(bytes)
			for b.Loop() {
				v.TransformAll(docs)
			}
		})
	}
}

// kernelVectors returns the tf-idf vectors of the Debian package descriptions
// over a vocabulary of exactly 20,000 terms (unigrams and bigrams, the most
// frequent kept).
func kernelVectors(b *testing.B) []Vector {
	texts := sharedTexts(b, debianPackages)
	v, vecs, err := Fit(texts, Options{Weighting: TFIDF, Bigrams: true, MaxFeatures: 20000})
	if err != nil {
		b.Fatal(err)
	}
	if v.Len() != 20000 {
		b.Fatalf("vocabulary of %d terms, want 20,000", v.Len())
	}
	return vecs
}

func meanNNZ(vecs []Vector) float64 {
	var s int
	for _, x := range vecs {
		s += x.NNZ()
	}
	return float64(s) / float64(len(vecs))
}

// BenchmarkLinearKernel builds the N x N linear kernel of N documents over a
// 20,000-term vocabulary. The reference, measured in the same run, is the
// upper triangle by N(N+1)/2 sparse dot products (Vector.Dot) on one core.
func BenchmarkLinearKernel(b *testing.B) {
	vecs := kernelVectors(b)
	for _, n := range []int{250, 500, 1000, 2000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			k := mat.NewSymDense(n, nil)
			b.ReportAllocs()
			for b.Loop() {
				LinearKernelTo(k, vecs[:n])
			}
			b.ReportMetric(meanNNZ(vecs[:n]), "nnz/doc")
		})
		b.Run(fmt.Sprintf("reference=pairwise-dot/N=%d", n), func(b *testing.B) {
			k := mat.NewSymDense(n, nil)
			b.ReportAllocs()
			for b.Loop() {
				for i := range n {
					for j := i; j < n; j++ {
						k.SetSym(i, j, vecs[i].Dot(vecs[j]))
					}
				}
			}
		})
	}
}

// BenchmarkCrossKernel builds the kernel of 500 new documents against N
// training documents.
func BenchmarkCrossKernel(b *testing.B) {
	vecs := kernelVectors(b)
	test := vecs[len(vecs)-500:]
	for _, n := range []int{500, 2000} {
		b.Run(fmt.Sprintf("500xN=%d", n), func(b *testing.B) {
			c := mat.NewDense(len(test), n, nil)
			b.ReportAllocs()
			for b.Loop() {
				CrossKernelTo(c, test, vecs[:n])
			}
		})
	}
}

// BenchmarkRBFKernel builds the N x N RBF kernel (the linear kernel plus an
// exp per entry).
func BenchmarkRBFKernel(b *testing.B) {
	vecs := kernelVectors(b)
	for _, n := range []int{500, 2000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			k := mat.NewSymDense(n, nil)
			b.ReportAllocs()
			for b.Loop() {
				RBFKernelTo(k, vecs[:n], 1)
			}
		})
	}
}
