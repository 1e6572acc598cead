//go:build unix

package transport

import (
	"errors"
	"math"
	"syscall"
)

// openFileLimit returns the process's soft limit on open files, 0 when
// unknown or unlimited.
func openFileLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	cur := uint64(rl.Cur)
	if cur == 0 || cur > math.MaxInt32 {
		return 0
	}
	return int(cur)
}

// outOfDescriptors reports a dial that failed for want of a descriptor, a
// local port or socket memory in this process or host.
func outOfDescriptors(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.ENOBUFS)
}
