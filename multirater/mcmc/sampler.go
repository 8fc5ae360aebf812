package mcmc

import "concord/multirater"

// Sampler selects the Markov chain of ordinal.Fit.
type Sampler int

// ParseSampler reads "default" or "paper" ("" means default).
func ParseSampler(s string) (Sampler, error) { return samplers().Parse(s) }

func (s Sampler) String() string { return samplers().String(s) }

// samplers is the table of the Sampler names.
func samplers() multirater.Enum[Sampler] {
	return multirater.Enum[Sampler]{Type: "Sampler", Names: []string{"default", "paper"}, Lenient: true,
		Unknown: "unknown sampler %q (expected default or paper)"}
}

const (
	// DefaultSampler adds to the paper's Gibbs sweep moves that leave the
	// same posterior invariant but mix much faster (see ordinal.Fit).
	DefaultSampler Sampler = iota
	// PaperSampler is the plain Gibbs sampler of Rogers et al. appendix
	// A.1, kept for fidelity.
	PaperSampler
)
