package transport

import (
	"context"
	"net"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Connection events for tracing and logging. Config has one func field per
// event (OnDial, OnConnLost, OnGap), nil when unused; the transport calls
// them and knows nothing of who listens. They run on the transport's own
// goroutines (OnDial and OnConnLost without its locks; OnGap under the pub/sub
// hub's), so they must return quickly and must not call back into the
// transport.

// dialObserved is dial with cfg.OnDial told before and after.
func dialObserved(ctx context.Context, cfg *Config) (nc net.Conn, rd *resp.Reader, info ConnInfo, err error) {
	done := cfg.OnDial(cfg.Addr)
	quiet := *cfg
	quiet.OnDial = nil
	nc, rd, info, err = dial(ctx, &quiet)
	if done != nil {
		done(info, err)
	}
	return nc, rd, info, err
}

// lost records that c, the slot's established connection, broke, for the
// dial loop to report to cfg.OnConnLost outside the lock. s.mu must be
// held.
func (s *slot) lost(c *conn) {
	if s.m.cfg.OnConnLost != nil && s.restored == nil && !s.m.closed.Load() {
		s.lostConn = c
	}
}

// reportLost tells cfg.OnConnLost about the outage lost recorded, if any.
// The dial loop calls it before dialing, without s.mu held.
func (s *slot) reportLost() {
	s.mu.Lock()
	c := s.lostConn
	s.lostConn = nil
	s.mu.Unlock()
	if c == nil {
		return
	}
	c.mu.Lock()
	cause := c.err
	c.mu.Unlock()
	done := s.m.cfg.OnConnLost(c.info.Addr, cause)
	if done == nil {
		done = func(int, error) {}
	}
	s.mu.Lock()
	s.restored = done
	s.mu.Unlock()
}

// takeRestored returns the end of the outage reported, or a func that does
// nothing, and forgets it. s.mu must be held.
func (s *slot) takeRestored() func(attempts int, err error) {
	done := s.restored
	s.restored = nil
	if done == nil {
		return func(int, error) {}
	}
	return done
}

// restoredAfter ends the outage reported, if any, when the dial loop
// stops because the Mux closed (err ErrClosed).
func (s *slot) restoredAfter(attempts int, err error) {
	s.mu.Lock()
	done := s.takeRestored()
	s.mu.Unlock()
	done(attempts, err)
}

// gapOpened tells cfg.OnGap about a new gap marker of s, or one more
// message dropped into its open overflow gap (opened false). s.mu must not
// be held.
func (s *Subscription) gapOpened(g Gap, opened bool) {
	if on := s.hub.cfg.OnGap; on != nil {
		on(g, opened)
	}
}

// Open is the number of the Mux's routed connections (Config.Connections)
// that are established and not broken.
func (m *Mux) Open() int { return openIn(m.slots[:m.routed]) }

// OpenLanes is the number of the Mux's batch lanes (Config.BatchLanes)
// that are established and not broken.
func (m *Mux) OpenLanes() int { return openIn(m.slots[m.routed:]) }

// Redial starts, without waiting, a dial for each routed connection that
// is not established (none runs while no call needs the connection): for
// a caller that goes elsewhere meanwhile and wants this server back.
func (m *Mux) Redial() {
	for _, s := range m.slots[:m.routed] {
		if c := s.cur.Load(); c != nil && !c.broken() {
			continue
		}
		s.mu.Lock()
		if s.established() == nil {
			s.startDial()
		}
		s.mu.Unlock()
	}
}

func openIn(slots []*slot) int {
	n := 0
	for _, s := range slots {
		if c := s.cur.Load(); c != nil && !c.broken() {
			n++
		}
	}
	return n
}

// Connected reports whether the hub holds an established connection.
func (h *PubSub) Connected() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur != nil
}
