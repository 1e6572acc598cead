package transport

import "time"

// Batch lanes.
//
// A batch is a full write by itself, so batches gain little from sharing a
// connection with others, and lose much: one connection's replies are
// parsed by one goroutine at a time, each batch's caller waits behind the
// replies of the batches written before it (parsing them when it holds the
// read role), and the server writes at most 64 KiB to one client per turn
// of its event loop. Several goroutines running batches at once therefore
// get more from a connection each, as with a pool, where each caller
// writes its batch and reads its replies itself.
//
// So a Mux keeps, besides its routed connections, up to Config.BatchLanes
// lanes: connections that only batches use, and only when the connection
// their route names already has requests in flight. Such a batch goes to
// the first lane with nothing in flight (its caller then reads its replies
// directly, as a lone caller does), or, when every lane is busy, to the
// least loaded connection. Lanes are dialed one at a time, in the
// background, when a batch finds every open lane busy; until a lane is up
// batches share the routed connection as before, so no caller waits for a
// dial. An open lane is kept alive by the health check like any other
// connection of the Mux, and breaks, reconnects, reports events and counts
// in Stats as they do, until no batch has chosen it for Config.LaneIdle:
// then it is closed (without an event: it is not an outage), and dialed
// again when batches need it.
//
// Commands of one goroutine keep their order: a batch's Exec returns after
// all its replies, so what the caller sends next is sent after them,
// whichever connection carries it. Concurrent callers have no order
// between them on any connection.

// Large replies. The server writes at most 64 KiB to one client per turn
// of its event loop, so a reply of a megabyte takes many turns, and every
// reply queued behind it on its connection waits for all of them. While a
// connection carries large replies (one among its last largeWindow), a
// read-only command (Request.ReadOnly) that finds it busy takes a lane as
// a batch would. Writes always keep their routed connection, so that
// writes to one key stay in order even when a caller gave up waiting for
// one of them.

// largeWindow is how many replies after a large one a connection counts
// as carrying large replies.
const largeWindow = 64

// largeLane returns the slot for a read-only command routed to s: a lane
// while s is busy with large replies, s otherwise.
func (m *Mux) largeLane(s *slot) *slot {
	c := s.cur.Load()
	if c == nil || len(m.slots) == m.routed {
		return s
	}
	at := c.largeAt.Load()
	if at == 0 || c.replies.Load()-at >= largeWindow {
		return s
	}
	return m.pickLane(s)
}

// minLaneBatch is the smallest batch that takes a lane: a batch of a few
// commands is cheap to read behind others and is best written with them.
const minLaneBatch = 8

// lane returns the slot for a batch of n requests routed to s: s unless it
// is busy and a lane is less so.
func (m *Mux) lane(s *slot, n int) *slot {
	if len(m.slots) == m.routed || n < minLaneBatch {
		return s
	}
	return m.pickLane(s)
}

// pickLane returns s while it has nothing in flight, else the first idle
// lane, else the least loaded of s and the open lanes; it starts dialing
// a lane when none is idle.
func (m *Mux) pickLane(s *slot) *slot {
	c := s.cur.Load()
	if c == nil || c.broken() {
		return s
	}
	load := c.inflight.Load()
	if load == 0 {
		return s
	}
	best, cold := s, (*slot)(nil)
	for _, l := range m.slots[m.routed:] {
		lc := l.cur.Load()
		if lc == nil || lc.broken() {
			if cold == nil {
				cold = l
			}
			continue
		}
		n := lc.inflight.Load()
		if n == 0 && !(lc.mayBeIdleClosed() && lc.idleClosed()) {
			l.used.Store(time.Now().UnixNano())
			return l
		}
		if n < load {
			best, load = l, n
		}
	}
	if cold != nil {
		cold.warm()
	}
	if best != s {
		best.used.Store(time.Now().UnixNano())
	}
	return best
}

// warm starts dialing the slot's connection in the background unless it
// is open or being dialed.
func (s *slot) warm() {
	s.mu.Lock()
	if c := s.cur.Load(); c == nil || c.broken() {
		s.used.Store(time.Now().UnixNano())
		s.startDial()
	}
	s.mu.Unlock()
}

// retire closes the lane's connection c, which nobody chose for
// Config.LaneIdle, unless it is in use; the lane stays empty until batches
// need it again.
func (s *slot) retire(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur.Load() == c && c.retireIdle() {
		s.cur.Store(nil)
	}
}
