package harness

import "syscall"

// sysProcAttr makes the kernel kill the server when the test binary dies,
// even by a panic or a signal, so no server outlives its test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
