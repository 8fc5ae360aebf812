package textfeat

import (
	_ "embed"
	"slices"
	"strings"
)

// smartList is the SMART English stop-word list that Rogers et al. sec. 4
// cite: 571 entries, 570 distinct words ("would" is listed twice); see
// stopwords/README.md for its source and licence.
//
//go:embed stopwords/smart.txt
var smartList string

// StopListName identifies the embedded stop-word list; saved vectorizers
// record it.
const StopListName = "SMART-571"

// smartStopWords is the embedded list as a set. It is built once and never
// modified.
var smartStopWords = func() map[string]bool {
	words := strings.Fields(smartList)
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}()

// StopWords returns the 570 distinct words of the SMART stop-word list in
// byte order.
func StopWords() []string {
	words := make([]string, 0, len(smartStopWords))
	for w := range smartStopWords {
		words = append(words, w)
	}
	slices.Sort(words)
	return words
}

// IsStopWord reports whether the lower-case token w is in the SMART
// stop-word list.
func IsStopWord(w string) bool { return smartStopWords[w] }
