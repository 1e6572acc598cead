package linkproxy

import (
	"syscall"
	"time"
)

// preciseSleeps asks the kernel to wake this thread within a microsecond
// of its sleeps' ends (the default timer slack is 50 µs, a fifth of a
// 0.25 ms one-way delay).
func preciseSleeps() {
	const prSetTimerSlack = 29
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1000, 0)
}

// sleepUntil blocks the calling thread (locked to it) until t, with
// nanosleep rather than the runtime's timers.
func sleepUntil(t time.Time) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(d.Nanoseconds())
		_ = syscall.Nanosleep(&ts, nil)
	}
}
