//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package transport

import "syscall"

// peekFD peeks at fd without waiting.
func peekFD(fd uintptr, b []byte) (int, error) {
	n, _, err := syscall.Recvfrom(int(fd), b, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return n, err
}
