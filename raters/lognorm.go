package raters

import "math"

// expNormalizeTo writes the probabilities exp(lp[c]) / sum_d exp(lp[d])
// into dst (len(lp)) and returns the log normaliser log sum_d exp(lp[d]),
// computed around the largest lp so that neither over- nor underflows: the
// E-step of Dawid-Skene, GLAD and MACE.
func expNormalizeTo(dst, lp []float64) float64 {
	m := math.Inf(-1)
	for _, v := range lp {
		m = math.Max(m, v)
	}
	s := 0.0
	for c, v := range lp {
		e := math.Exp(v - m)
		dst[c] = e
		s += e
	}
	for c := range dst {
		dst[c] /= s
	}
	return m + math.Log(s)
}
