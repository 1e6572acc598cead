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

// peeker is alive for one connection, checked often: its raw connection
// and callback are made once, so that a check does not allocate. Its
// caller serializes checks, and makes them only while nothing else reads
// the socket.
type peeker struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool
	ok  bool
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

func (p *peeker) peek(fd uintptr) bool {
	_, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	p.ok = errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK)
	return true
}

// alive is the package's alive for p's connection.
func (p *peeker) alive() bool {
	p.ok = false
	err := p.rc.Read(p.fn)
	return err == nil && p.ok
}
