//go:build linux && race

package transport

import "syscall"

// rawRead reads from fd with syscall.Read, which tells the race detector
// that the read wrote p and follows the writes that sent the bytes: a raw
// system call would hide both and could make it report races that are
// not there.
func rawRead(fd uintptr, p []byte) (int, error) {
	n, err := syscall.Read(int(fd), p)
	if n < 0 {
		n = 0
	}
	return n, err
}

// rawWrite writes to fd with syscall.Write, for the same reason.
func rawWrite(fd uintptr, p []byte) (int, error) {
	n, err := syscall.Write(int(fd), p)
	if n < 0 {
		n = 0
	}
	return n, err
}
