package codec_test

import (
	"runtime"
	"syscall"
	"unsafe"
)

// threadCPU returns the CPU time of the calling OS thread in nanoseconds.
// Benchmarks report it beside wall time because the machines they run on are
// shared: time spent waiting for a CPU is not the codec's.
func threadCPU() int64 {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
