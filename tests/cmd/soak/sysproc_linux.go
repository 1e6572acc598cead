package main

import "syscall"

// sysProcAttr makes the server die with this program, even when it is
// killed without a chance to clean up.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
