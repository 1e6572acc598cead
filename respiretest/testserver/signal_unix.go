//go:build unix

package testserver

import (
	"os"
	"syscall"
)

// The signals of Terminate, Pause and Resume.
var (
	sigTerm os.Signal = syscall.SIGTERM
	sigStop os.Signal = syscall.SIGSTOP
	sigCont os.Signal = syscall.SIGCONT
)
