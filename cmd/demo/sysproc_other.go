//go:build !linux

package main

import "syscall"

// sysProcAttr: no parent-death signal outside Linux; the demo kills its
// server on every normal exit path.
func sysProcAttr() *syscall.SysProcAttr { return nil }
