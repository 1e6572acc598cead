//go:build linux

package transport

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// pollConn reads a tracking connection's socket without blocking (see
// tracking_drain.go). It is the io.Reader of the connection's resp.Reader:
// Read returns os.ErrDeadlineExceeded when the socket holds nothing, after
// which resp.Reader resumes the value it was parsing on its next call.
type pollConn struct {
	nc net.Conn
	rc syscall.RawConn
	// mu is the read role: whoever holds it reads and parses. since is
	// when it was taken, on the package's monotonic clock (monoNow), 0
	// while it is free.
	mu    sync.Mutex
	since atomic.Int64

	// the state of one read, and the functions given to the runtime,
	// bound once so that reading allocates nothing
	readFn func(fd uintptr)
	peekFn func(fd uintptr) bool
	p      []byte
	n      int
	err    error
}

// newPollConn returns nil when nc exposes no descriptor (TLS).
func newPollConn(nc net.Conn) *pollConn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &pollConn{nc: nc, rc: rc}
	p.readFn = p.readOnce
	p.peekFn = p.peekOnce
	return p
}

// tryTake takes the read role if it is free.
func (p *pollConn) tryTake() bool {
	if !p.mu.TryLock() {
		return false
	}
	p.since.Store(monoNow())
	return true
}

// release gives the read role back.
func (p *pollConn) release() {
	p.since.Store(0)
	p.mu.Unlock()
}

// heldFor is how long the read role has been held, 0 when it is free.
func (p *pollConn) heldFor() time.Duration {
	t := p.since.Load()
	if t == 0 {
		return 0
	}
	return time.Duration(monoNow() - t)
}

// readOnce reads with a raw system call: the socket is non-blocking, so
// the call returns at once, and the runtime never sees the goroutine in a
// system call, so its processor is not handed to another goroutine
// meanwhile (which would leave the reader, holding the read role, queued
// behind the goroutines that keep the processors busy).
func (p *pollConn) readOnce(fd uintptr) {
	for {
		r, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p.p[0])), uintptr(len(p.p)))
		if errno == syscall.EINTR {
			continue
		}
		p.n, p.err = int(r), nil
		if errno != 0 {
			p.n, p.err = -1, errno
		}
		return
	}
}

// Read reads what the socket holds, without waiting. The read role must be
// held.
func (p *pollConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	p.p = b
	cerr := p.rc.Control(p.readFn)
	p.p = nil
	n, err := p.n, p.err
	p.n, p.err = 0, nil
	switch {
	case cerr != nil:
		return 0, cerr
	case err == syscall.EAGAIN:
		return 0, os.ErrDeadlineExceeded
	case err != nil:
		la := p.nc.LocalAddr()
		return 0, &net.OpError{Op: "read", Net: la.Network(), Source: la, Addr: p.nc.RemoteAddr(), Err: os.NewSyscallError("read", err)}
	case n <= 0:
		return 0, io.EOF
	}
	return n, nil
}

// peekOnce reports whether the socket is readable: data, end of stream or
// an error wait. It consumes nothing.
func (p *pollConn) peekOnce(fd uintptr) bool {
	var b [1]byte
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
			syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		return errno != syscall.EAGAIN
	}
}

// waitReadable parks until the socket is readable, without holding the
// read role, so that Poll may read meanwhile. It fails once the socket is
// closed.
func (p *pollConn) waitReadable() error {
	return p.rc.Read(p.peekFn)
}

// monoNow is a monotonic clock in nanoseconds, never 0.
func monoNow() int64 { return mono() + 1 }
