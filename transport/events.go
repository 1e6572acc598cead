package transport

import (
	"context"
	"net"

	"github.com/respire-go/respire/transport/resp"
)

// Connection events for tracing and logging. Config has one func field per
// event (OnDial, OnConnLost, OnGap), nil when unused; the transport calls
// them and knows nothing of who listens. They run on the transport's own
// goroutines, so they must return quickly and must not call back into the
// Mux.

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

// lost tells cfg.OnConnLost that c, the slot's established connection,
// broke. s.mu must be held; c.mu must not be.
func (s *slot) lost(c *conn) {
	on := s.m.cfg.OnConnLost
	if on == nil || s.restored != nil || s.m.closed.Load() {
		return
	}
	c.mu.Lock()
	cause := c.err
	c.mu.Unlock()
	s.restored = on(c.info.Addr, cause)
	if s.restored == nil {
		s.restored = func(int, error) {}
	}
}

// restoredAfter ends the outage that lost reported, if any: the slot has
// a connection again after attempts dials (err nil), or it stopped trying
// because the Mux closed (err ErrClosed).
func (s *slot) restoredAfter(attempts int, err error) {
	s.mu.Lock()
	done := s.restored
	s.restored = nil
	s.mu.Unlock()
	if done != nil {
		done(attempts, err)
	}
}

// gapOpened tells cfg.OnGap about a new gap marker of s, or one more
// message dropped into its open overflow gap (opened false). s.mu must not
// be held.
func (s *Subscription) gapOpened(g Gap, opened bool) {
	if on := s.hub.cfg.OnGap; on != nil {
		on(g, opened)
	}
}

// Open is the number of the Mux's connections that are established and
// not broken.
func (m *Mux) Open() int {
	n := 0
	for _, s := range m.slots {
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
