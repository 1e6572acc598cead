package transport

import (
	"syscall"
	"unsafe"
)

// peekFD peeks at fd without waiting and without entering the runtime's
// system-call state (see "Reads that park" in spin.go). MSG_PEEK leaves
// the byte in the socket, so the race detector has nothing to learn.
func peekFD(fd uintptr, b []byte) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)),
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
