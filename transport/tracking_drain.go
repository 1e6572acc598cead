package transport

import (
	"errors"
	"os"
	"runtime"
)

// Reading a tracking connection from the cache's hit path.
//
// A cached read that hits sends nothing and waits on nothing, so a process
// whose goroutines only hit keeps every processor busy without ever
// blocking. The reader goroutine of the tracking connection is then woken
// by the network poller only when the scheduler gets round to it (the
// runtime looks for network events when a processor runs out of work, and
// at most every 10 ms from its monitor thread), and it then waits in line
// behind the busy goroutines: invalidations were measured applied 100 ms
// and more after the write, with 32 goroutines hitting on 2 processors.
//
// So on a tracking connection (Linux, a socket with a descriptor: TCP or
// Unix, no TLS) the reader goroutine does not park inside a read. It waits
// for the socket to become readable without reading (a peek), then takes
// the read role (pollConn.mu), reads and dispatches everything the socket
// holds without blocking, and gives the role back. Poll lets any goroutine
// do the same between two cache hits: the store calls it at most every few
// tens of microseconds (cache.Config.Tick), so invalidations are applied
// by the very goroutines that keep the processors busy. Poll never waits:
// when another goroutine holds the role, that one is reading already.
//
// The role makes reads and parsing exclusive, so bytes are parsed in the
// order they arrived and replies keep their FIFO accounting, whoever reads
// them.

// Poll reads and applies, on the calling goroutine, what waits unread on
// the Mux's tracking connections (invalidations, and the replies that
// arrived with them), unless another goroutine is reading them at that
// moment. It never blocks on I/O and costs one non-blocking read system
// call per connection when nothing waits. It does nothing for connections
// without Config.Tracking, and on platforms or sockets that cannot be read
// this way (see pollConn), whose reader goroutine reads as any other.
func (m *Mux) Poll() {
	for _, s := range m.slots {
		c := s.cur.Load()
		if c == nil || c.poll == nil || !c.poll.mu.TryLock() {
			continue
		}
		c.drain()
		c.poll.mu.Unlock()
	}
}

// pollLoop is the reader goroutine of a connection with c.poll: it waits
// until the socket is readable, then drains it under the read role.
func (c *conn) pollLoop() {
	for {
		if err := c.poll.waitReadable(); err != nil {
			c.fail(err)
			return
		}
		if !c.poll.mu.TryLock() {
			// Another goroutine reads; it drains the socket before
			// letting go. Lock would risk worse: a waiter that waited
			// long is handed the mutex directly, and would then hold it,
			// runnable but not running, while every hit's Poll gives up.
			runtime.Gosched()
			continue
		}
		ok := c.drain()
		c.poll.mu.Unlock()
		if !ok {
			return
		}
	}
}

// drain parses and dispatches every message the socket holds, reading
// without blocking; a message cut short is resumed by the next drain. It
// is called with c.poll.mu held, and returns false once the connection is
// broken.
func (c *conn) drain() bool {
	for {
		m, err := c.rd.Next()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				// Nothing more to read now (see pollConn.Read).
				return true
			}
			c.fail(err)
			return false
		}
		if _, ok := c.dispatch(m); !ok {
			return false
		}
	}
}
