//go:build unix

package main

import (
	"syscall"
	"time"
)

// usage is what getrusage says about this process (all its threads).
type usage struct {
	cpu time.Duration // user plus system CPU time
	// csw counts context switches, voluntary (a thread blocked: a futex
	// sleep, a blocking system call) and involuntary (preempted).
	csw int64
}

func selfUsage() usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return usage{}
	}
	return usage{
		cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		csw: int64(ru.Nvcsw + ru.Nivcsw),
	}
}
