// Package textfeat turns item texts into normalised bag-of-words vectors as in
// Rogers et al. sec. 4: Unicode-aware tokenisation, lower-casing, stop-word
// removal, number words to digits, age phrases joined into one token, a
// vocabulary, sparse vectors scaled to unit L2 norm, and kernels between them.
// It imports nothing of concord's.
package textfeat
