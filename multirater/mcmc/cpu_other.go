//go:build !unix

package mcmc

import "time"

// ProcessCPU reports the process CPU time as unknown where getrusage is
// not available.
func ProcessCPU() (time.Duration, bool) { return 0, false }
