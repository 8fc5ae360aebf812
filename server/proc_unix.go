//go:build unix

package server

import (
	"os"
	"syscall"
)

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
