//go:build !unix

package server

import "os"

// killedBy reports the signal that ended a process: never on this
// platform.
func killedBy(ps *os.ProcessState) (sig int, name string, ok bool) { return 0, "", false }
