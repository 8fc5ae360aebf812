package mcmc

import (
	"fmt"
	"strings"
)

// Sampler selects the Markov chain of ordinal.Fit.
type Sampler int

// ParseSampler reads "default" or "paper" ("" means default).
func ParseSampler(s string) (Sampler, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "default":
		return DefaultSampler, nil
	case "paper":
		return PaperSampler, nil
	}
	return 0, fmt.Errorf("unknown sampler %q (expected default or paper)", s)
}

func (s Sampler) String() string {
	switch s {
	case DefaultSampler:
		return "default"
	case PaperSampler:
		return "paper"
	}
	return fmt.Sprintf("Sampler(%d)", int(s))
}

const (
	// DefaultSampler adds to the paper's Gibbs sweep moves that leave the
	// same posterior invariant but mix much faster (see ordinal.Fit).
	DefaultSampler Sampler = iota
	// PaperSampler is the plain Gibbs sampler of Rogers et al. appendix
	// A.1, kept for fidelity.
	PaperSampler
)
