package main

import "syscall"

// sysProcAttr makes the kernel kill the demo's server when the demo dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
