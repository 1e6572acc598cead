//go:build linux

package main

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestPinThread: a pinned busy loop's thread may run on one CPU only, the
// i-th of those the process may use (modulo their number).
func TestPinThread(t *testing.T) {
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Skipf("sched_getaffinity: %v", err)
	}
	for _, i := range []int{0, 1, allowed.Count()} {
		done := make(chan unix.CPUSet, 1)
		go func() {
			// The thread is not given back to the runtime's pool:
			// returning while locked ends it.
			if err := pinThread(i); err != nil {
				t.Error(err)
			}
			var got unix.CPUSet
			if err := unix.SchedGetaffinity(0, &got); err != nil {
				t.Error(err)
			}
			done <- got
		}()
		got := <-done
		if got.Count() != 1 {
			t.Fatalf("pinThread(%d): the thread may run on %d CPUs, want 1", i, got.Count())
		}
		n := 0
		for cpu := range 1024 {
			if allowed.IsSet(cpu) {
				if n == i%allowed.Count() && !got.IsSet(cpu) {
					t.Fatalf("pinThread(%d): not bound to CPU %d, the %d-th allowed", i, cpu, n)
				}
				n++
			}
		}
	}
}
