package lik

// Shift is a bounded likelihood seen through a bias: p(y | f + B), a
// rater's additive bias on the latent (probit) scale. Its parameters are
// L's followed by B; the derivatives in B are those in f.
type Shift struct {
	L Bounded
	B float64
}

// Name is L's name.
func (s *Shift) Name() string { return s.L.Name() }

// LogLik is L's at f + B.
func (s *Shift) LogLik(y, f float64) (lp, d1, d2, d3 float64) { return s.L.LogLik(y, f+s.B) }

// Tilted is L's with the cavity mean shifted by B.
func (s *Shift) Tilted(y, mu, s2 float64) (logZ, d1, d2 float64) { return s.L.Tilted(y, mu+s.B, s2) }

// Mean is L's at f + B.
func (s *Shift) Mean(f float64) float64 { return s.L.Mean(f + s.B) }

// CDF is L's at f + B.
func (s *Shift) CDF(y, f float64) float64 { return s.L.CDF(y, f+s.B) }

// NumParams is L's plus one.
func (s *Shift) NumParams() int { return s.L.NumParams() + 1 }

// ParamsTo sets dst to L's parameters followed by B.
func (s *Shift) ParamsTo(dst []float64) []float64 {
	n := s.L.NumParams()
	s.L.ParamsTo(dst[:n])
	dst[n] = s.B
	return dst
}

// SetParams sets L's parameters and B.
func (s *Shift) SetParams(p []float64) {
	n := s.L.NumParams()
	s.L.SetParams(p[:n])
	s.B = p[n]
}

// LogLikGradTo sets the gradients of LogLik's lp, d1 and d2 in L's
// parameters and B.
func (s *Shift) LogLikGradTo(dlp, dd1, dd2 []float64, y, f float64) {
	n := s.L.NumParams()
	s.L.LogLikGradTo(dlp[:n], dd1[:n], dd2[:n], y, f+s.B)
	_, d1, d2, d3 := s.L.LogLik(y, f+s.B)
	dlp[n], dd1[n], dd2[n] = d1, d2, d3
}

// TiltedGradTo sets dst to the gradient of Tilted's log Z in L's
// parameters and B.
func (s *Shift) TiltedGradTo(dst []float64, y, mu, s2 float64) []float64 {
	n := s.L.NumParams()
	s.L.TiltedGradTo(dst[:n], y, mu+s.B, s2)
	_, d1, _ := s.L.Tilted(y, mu+s.B, s2)
	dst[n] = d1
	return dst
}
