package transport

import (
	"errors"
	"time"
)

// Connections closed while idle.
//
// A server, a proxy or a load balancer may close a connection that carries
// nothing: Redis's own `timeout`, CLIENT KILL, a restart, an idle reaper in
// a middlebox. On a direct connection (the default read mode, direct.go)
// nothing reads the socket while nothing is pending, and even a connection
// with a reader of its own may not have run it yet when the next command
// comes. A command written on such a connection would fail after the
// write, its outcome unknown, although the server closed the connection
// before the command existed.
//
// So a connection that has read nothing for idleCheckAfter and has nothing
// in flight is checked before a request is written on it: one non-blocking
// peek at the socket (peeker), made under c.mu so that no request is
// queued meanwhile. A close found there breaks the connection with every
// request still unsent, and the request goes to a new connection. A
// connection that is busy, or was read from less than idleCheckAfter ago,
// is not checked: a lone caller in a loop, whose next command follows its
// last reply within microseconds, pays no system call for this, and a
// connection with replies in flight would see a close through them anyway.
//
// What is left is a close in the last idleCheckAfter before a command, or
// between the peek and the write: a window of microseconds, which closes
// for idleness (a server's timeout, a proxy's idle reaper) can never fall
// in, since they follow an idle period far longer than that.

// idleCheckAfter is how long a connection must have read nothing, with
// nothing in flight, for the next request to check it first. It is short
// enough that a close made by another connection's command (CLIENT KILL)
// is found by a command sent as soon as that one returns, and long enough
// that a sequential caller's next command, written right after its reply
// was read, is not checked.
const idleCheckAfter = 20 * time.Microsecond

// monoBase anchors mono: time.Since of a time with a monotonic reading
// reads the monotonic clock alone.
var monoBase = time.Now()

// mono returns a monotonic clock reading in nanoseconds.
func mono() int64 { return int64(time.Since(monoBase)) }

// mayBeIdleClosed reports whether c should be checked (idleClosed) before
// a request is written on it: nothing in flight, nothing read for
// idleCheckAfter.
func (c *conn) mayBeIdleClosed() bool {
	return c.peek != nil && c.inflight.Load() == 0 && mono()-c.lastRead.Load() >= int64(idleCheckAfter)
}

// idleClosed reports whether c, with nothing pending, was closed by its
// peer, and then fails it. On a direct connection bytes waiting to be read
// while nothing is pending count as closed too: they are a reply nobody
// asked for, or a TLS close alert; on a connection with a reader of its
// own they are a push the reader is about to take. It costs one
// non-blocking system call.
func (c *conn) idleClosed() bool {
	if c.peek == nil {
		return false
	}
	c.mu.Lock()
	if c.pending.size > 0 || c.reading || c.err != nil {
		c.mu.Unlock()
		return false
	}
	st := c.peek.state()
	closed := st == peekClosed || st == peekData && c.direct
	if !closed {
		c.lastRead.Store(mono())
	}
	c.mu.Unlock()
	if closed {
		c.fail(errClosedIdle)
	}
	return closed
}

// What a peek at an idle socket found.
const (
	peekEmpty  = iota // nothing to read: open
	peekData          // bytes to read
	peekClosed        // end of stream or an error: closed by the peer
)

// errClosedIdle is the cause of a connection found closed while idle;
// errLaneIdle that of a lane closed for want of use.
var (
	errClosedIdle = errors.New("closed by the server while idle")
	errLaneIdle   = errors.New("batch lane unused")
)
