package transport

import (
	"errors"
	"os"
	"runtime"
	"time"
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
// the read role (pollConn.tryTake), reads and dispatches everything the
// socket holds without blocking, and gives the role back. Poll lets any goroutine
// do the same between two cache hits: the store calls it at most every few
// tens of microseconds (cache.Config.Tick), so invalidations are applied
// by the very goroutines that keep the processors busy. Poll never waits:
// when another goroutine holds the role, that one is reading already.
//
// The role makes reads and parsing exclusive, so bytes are parsed in the
// order they arrived and replies keep their FIFO accounting, whoever reads
// them.
//
// A goroutine holding the role can lose its processor: the runtime
// preempts a goroutine that ran for 10 ms, wherever it is, and a hit that
// polls near the end of its time slice is preempted while it holds the
// role. The preempted goroutine joins the back of the run queue, behind
// the hitting goroutines, each of which runs its full 10 ms slice: with 32
// of them on 2 processors the role was measured held for up to 166 ms,
// and nobody could read meanwhile. So the time the role was taken is kept (pollConn.since),
// and a Poll that finds it held for longer than a drain takes
// (roleStuck) yields its processor: the hits that poll then move the run
// queue along quickly until the holder runs again and lets go. The read
// itself is a raw system call (pollConn.readOnce), during which the runtime
// cannot hand the goroutine's processor to another one: returning from an
// ordinary system call whose processor was taken meanwhile also leaves the
// goroutine at the back of the run queue.

// roleStuck is how long a drain may hold the read role before Poll takes
// its holder for descheduled and yields. A drain of what a tracking
// connection receives takes microseconds; a yield costs a few hundred
// nanoseconds, so a large reply that holds the role longer only costs a
// yield per Poll meanwhile.
const roleStuck = 50 * time.Microsecond

// Poll reads and applies, on the calling goroutine, what waits unread on
// the Mux's tracking connections (invalidations, and the replies that
// arrived with them), unless another goroutine is reading them at that
// moment. It never blocks on I/O and costs one non-blocking read system
// call per connection when nothing waits. When another goroutine has held
// a connection's read role for longer than a drain takes, Poll yields the
// processor (runtime.Gosched) so that the holder, most likely descheduled,
// runs again sooner. It does nothing for connections without
// Config.Tracking, and on platforms or sockets that cannot be read this
// way (see pollConn), whose reader goroutine reads as any other.
func (m *Mux) Poll() {
	yield := false
	for _, s := range m.slots {
		c := s.cur.Load()
		if c == nil || c.poll == nil {
			continue
		}
		if !c.poll.tryTake() {
			yield = yield || c.poll.heldFor() > roleStuck
			continue
		}
		c.drain()
		c.poll.release()
	}
	if yield {
		runtime.Gosched()
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
		if !c.poll.tryTake() {
			// Another goroutine reads; it drains the socket before
			// letting go. Lock would risk worse: a waiter that waited
			// long is handed the mutex directly, and would then hold it,
			// runnable but not running, while every hit's Poll gives up.
			runtime.Gosched()
			continue
		}
		ok := c.drain()
		c.poll.release()
		if !ok {
			return
		}
	}
}

// drain parses and dispatches every message the socket holds, reading
// without blocking; a message cut short is resumed by the next drain. It
// is called with the read role held, and returns false once the
// connection is broken.
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
