//go:build !linux

package testserver

import "syscall"

// sysProcAttr: only Linux can tie the server's life to the test binary's.
func sysProcAttr() *syscall.SysProcAttr { return nil }
