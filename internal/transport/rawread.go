//go:build linux && !race

package transport

import (
	"syscall"
	"unsafe"
)

// rawRead reads from fd, a non-blocking socket, without entering the
// runtime's system-call state (see "Reads that park" in spin.go).
func rawRead(fd uintptr, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawWrite writes to fd, a non-blocking socket, as rawRead reads.
func rawWrite(fd uintptr, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
