package testserver

import "syscall"

// sysProcAttr kills the server when the program that started it dies without its
// cleanups (a panic in another goroutine, a timeout, SIGKILL).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
