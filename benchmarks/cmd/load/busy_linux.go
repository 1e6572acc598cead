//go:build linux

package main

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// pinThread binds the calling goroutine to its thread and the thread to
// the i-th CPU (modulo their number) that this process may run on, so
// that busy loop i keeps CPU i busy whatever the kernel's load balancer
// would prefer.
func pinThread(i int) error {
	runtime.LockOSThread()
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for cpu := range 1024 {
		if allowed.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	if len(cpus) == 0 {
		return fmt.Errorf("no CPU in this process's affinity mask")
	}
	var one unix.CPUSet
	one.Set(cpus[i%len(cpus)])
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return fmt.Errorf("sched_setaffinity: %w", err)
	}
	return nil
}
