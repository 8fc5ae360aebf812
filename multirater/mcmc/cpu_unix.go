//go:build unix

package mcmc

import (
	"syscall"
	"time"
)

// ProcessCPU returns the CPU time (user + system) the process has used so
// far, every thread together, and whether it is known.
func ProcessCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
