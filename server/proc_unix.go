//go:build unix

package server

import (
	"errors"
	"os"
	"syscall"
)

// processAlive reports whether a process with this pid exists on this host.
func processAlive(pid int) bool {
	if pid <= 0 {
		return true // unknown: assume alive
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// killedBy reports the signal that ended a process, if a signal did.
func killedBy(ps *os.ProcessState) (sig int, name string, ok bool) {
	if ps == nil {
		return 0, "", false
	}
	ws, isWS := ps.Sys().(syscall.WaitStatus)
	if !isWS || !ws.Signaled() {
		return 0, "", false
	}
	return int(ws.Signal()), ws.Signal().String(), true
}
