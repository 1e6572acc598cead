//go:build !linux

package harness

import "syscall"

// sysProcAttr has no parent-death signal outside Linux: a server may outlive
// a test binary that crashes.
func sysProcAttr() *syscall.SysProcAttr { return nil }
