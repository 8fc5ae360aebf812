//go:build !unix

package mcmc

import "time"

// processCPU reports the process CPU time as unknown where getrusage is
// not available.
func processCPU() (time.Duration, bool) { return 0, false }
