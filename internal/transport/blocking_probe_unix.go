//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package transport

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// alive reports whether an idle connection is still open: the peer has
// neither closed it nor sent anything (an idle connection is owed nothing).
// It peeks at the socket without blocking and without consuming a byte.
func alive(nc net.Conn) bool {
	p := newPeeker(nc)
	return p == nil || p.alive()
}

// peeker looks at one connection's socket without blocking and without
// consuming a byte, checked often: its raw connection and callback are
// made once, so that a check does not allocate. Its caller serializes
// checks. It works through RawConn.Control, which takes no read lock, so
// that a connection whose reader goroutine is parked in a read can be
// checked too.
type peeker struct {
	rc  syscall.RawConn
	fn  func(fd uintptr)
	st  int
	buf [1]byte
}

// newPeeker returns nil when nc exposes no descriptor.
func newPeeker(nc net.Conn) *peeker {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &peeker{rc: rc}
	p.fn = p.peek
	return p
}

func (p *peeker) peek(fd uintptr) {
	for {
		n, err := peekFD(fd, p.buf[:])
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK):
			p.st = peekEmpty
		case err == nil && n > 0:
			p.st = peekData
		default: // end of stream, a reset, any other error
			p.st = peekClosed
		}
		return
	}
}

// state peeks at the socket: peekEmpty, peekData or peekClosed (also when
// the descriptor is closed already).
func (p *peeker) state() int {
	p.st = peekClosed
	if err := p.rc.Control(p.fn); err != nil {
		return peekClosed
	}
	return p.st
}

// alive reports whether an idle connection that is owed nothing is open
// with nothing to read.
func (p *peeker) alive() bool { return p.state() == peekEmpty }
