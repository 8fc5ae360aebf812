//go:build !unix

package server

import "os"

// processAlive cannot tell on this platform; fits of dead processes are
// recovered once their heartbeat is stale.
func processAlive(pid int) bool { return true }

// killedBy reports the signal that ended a process: never on this
// platform.
func killedBy(ps *os.ProcessState) (sig int, name string, ok bool) { return 0, "", false }
