//go:build unix

package respiretest

import (
	"os"
	"syscall"
)

// Stopping and continuing a process, for Node.Stop and Node.Continue.
var (
	sigStop os.Signal = syscall.SIGSTOP
	sigCont os.Signal = syscall.SIGCONT
)
