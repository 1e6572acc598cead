package transport

// The Mux's upkeep: the monitor goroutine that pings idle connections and
// breaks stalled ones, and the slot, which holds one of the Mux's
// connections and redials it with backoff when it breaks.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// monitor pings idle connections and closes stalled ones.
func (m *Mux) monitor() {
	tick := min(m.cfg.HealthCheck, m.cfg.StallTimeout) / 4
	tick = max(tick, 5*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	type watch struct {
		c            *conn
		replies      uint64
		sends        uint64
		progress     time.Time
		lastActivity time.Time
	}
	watches := make([]watch, len(m.slots))
	for {
		select {
		case <-m.ctx.Done():
			return
		case now := <-t.C:
			for i, s := range m.slots {
				w := &watches[i]
				c := s.cur.Load()
				if c == nil {
					continue
				}
				if w.c != c {
					*w = watch{c: c, progress: now, lastActivity: now}
				}
				replies, sends := c.replies.Load(), c.sends.Load()
				if replies != w.replies || c.inflight.Load() == 0 {
					w.progress = now
				}
				if replies != w.replies || sends != w.sends {
					w.lastActivity = now
				}
				w.replies, w.sends = replies, sends
				if now.Sub(w.progress) >= m.cfg.StallTimeout {
					c.fail(fmt.Errorf("%w: no reply for %v", ErrStalled, now.Sub(w.progress).Round(time.Millisecond)))
					continue
				}
				if i >= m.routed && now.UnixNano()-s.used.Load() >= int64(m.cfg.LaneIdle) {
					s.retire(c)
					continue
				}
				if now.Sub(w.lastActivity) >= m.cfg.HealthCheck {
					c.sendPing()
					w.lastActivity = now
				}
			}
		}
	}
}

// slot holds one of the Mux's connections and redials it.
type slot struct {
	m   *Mux
	cur atomic.Pointer[conn]

	mu      sync.Mutex
	dialing bool
	everUp  bool // a connection was established once
	lastErr error
	changed chan struct{} // closed and replaced after every dial attempt
	// lostConn and restored are the outage to report to, and reported to,
	// Config.OnConnLost (events.go).
	lostConn *conn
	restored func(attempts int, err error)
	// used is when a batch lane was last chosen (unix nanoseconds).
	used atomic.Int64
	// win admits large writes to the connection (window.go).
	win window
}

// get returns the live connection, waiting for a dial when there is none.
// It returns at once, without waiting, the last dial error when that is
// permanent (a wrong password, ...); after one failed attempt when
// failFast is set, or when the slot never had a connection and ctx has no
// deadline (a wrong address in a new client must not hang a caller
// forever). Its errors match ErrNotSent.
func (s *slot) get(ctx context.Context, failFast bool) (*conn, error) {
	if c := s.cur.Load(); c != nil && !c.broken() {
		// A connection idle for a while is checked first: a close by the
		// server would otherwise fail the request with its outcome
		// unknown (idle.go).
		if !c.mayBeIdleClosed() || !c.idleClosed() {
			return c, nil
		}
	}
	_, bounded := ctx.Deadline()
	attempts := 0
	gone := s.m.gone.Load()
	for {
		s.mu.Lock()
		if s.m.closed.Load() {
			s.mu.Unlock()
			return nil, NotSent(ErrClosed)
		}
		if c := s.established(); c != nil {
			s.mu.Unlock()
			return c, nil
		}
		lastErr := s.lastErr
		if lastErr != nil && permanent(lastErr) {
			s.startDial()
			s.mu.Unlock()
			return nil, NotSent(lastErr)
		}
		// Fail fast: at once while the last attempt failed (the dial
		// loop is backing off, which can take seconds), else after the
		// attempt in progress.
		if (attempts > 0 || lastErr != nil) && failFast || attempts > 0 && !s.everUp && !bounded {
			s.startDial()
			s.mu.Unlock()
			return nil, unavailable(s.m.cfg.Addr, lastErr, nil)
		}
		s.startDial()
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
			attempts++
		case <-gone.ch:
			// The server no longer serves what the caller sends
			// (BreakStalled): it may route the request anew.
			return nil, NotSent(gone.cause)
		case <-ctx.Done():
			return nil, unavailable(s.m.cfg.Addr, lastErr, ctx.Err())
		case <-s.m.ctx.Done():
			return nil, NotSent(ErrClosed)
		}
	}
}

// established returns the slot's connection, nil when there is none or it
// broke (then forgotten, and its loss recorded). s.mu must be held.
func (s *slot) established() *conn {
	c := s.cur.Load()
	if c != nil && c.broken() {
		s.cur.Store(nil)
		s.lost(c)
		return nil
	}
	return c
}

// drop forgets a broken connection.
func (s *slot) drop(c *conn) {
	s.mu.Lock()
	if s.cur.Load() == c {
		s.cur.Store(nil)
		s.lost(c)
		s.startDial()
	}
	s.mu.Unlock()
}

// startDial starts the dial loop unless it runs. s.mu must be held.
func (s *slot) startDial() {
	if s.dialing || s.m.closed.Load() {
		return
	}
	s.dialing = true
	s.m.wg.Add(1)
	go func() { defer s.m.wg.Done(); s.dialLoop() }()
}

func (s *slot) dialLoop() {
	m := s.m
	delay := newRetryDelay(&m.cfg)
	defer delay.stop()
	s.reportLost()
	cfg := m.cfg
	if id := m.nodeID.Load(); id != nil {
		cfg.NodeID = *id
	}
	cuts := 0 // handshakes broken by the network in a row, see cutShort
	for attempt := 1; ; attempt++ {
		nc, rd, info, err := dial(m.ctx, &cfg)
		s.mu.Lock()
		if err == nil {
			if m.closed.Load() {
				s.dialing = false
				s.mu.Unlock()
				_ = nc.Close()
				s.restoredAfter(attempt, ErrClosed)
				return
			}
			m.info.Store(&info)
			c := newConn(&m.cfg, nc, rd, info, &m.wg, s.drop)
			s.cur.Store(c)
			s.lastErr = nil
			s.everUp = true
			s.dialing = false
			close(s.changed)
			s.changed = make(chan struct{})
			restored := s.takeRestored()
			s.mu.Unlock()
			if cr := m.cfg.Credentials; cr != nil && cr.generation() != info.authGen {
				// A rotation ran between the handshake and now, and
				// may not have seen c. Refused, c keeps the
				// credentials it has, as a rotation leaves it.
				if _, user, pass := cr.current(); pass != "" {
					_ = c.reauth(m.ctx, resp.AppendCommand(nil, authArgs(user, pass)...))
				}
			}
			if m.cfg.OnConnect != nil {
				m.cfg.OnConnect(info)
			}
			restored(attempt, nil)
			return
		}
		s.lastErr = err
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()

		grow := true
		switch {
		case !cutShort(err):
			cuts = 0
		case cuts < maxCutsHeld:
			cuts++
			grow = false
			if cuts == 1 {
				// The first of them: dialed again at once.
				continue
			}
		}
		if !delay.waitThen(m.ctx.Done(), grow) {
			s.mu.Lock()
			s.dialing = false
			s.mu.Unlock()
			s.restoredAfter(attempt, ErrClosed)
			return
		}
	}
}

// maxCutsHeld is how many handshakes broken by the network in a row leave
// the redial delay where it is (cutShort).
const maxCutsHeld = 8

// cutShort reports whether a dial failed because the network broke a
// connection that was established, in the middle of its handshake (a
// reset, an end of stream): the server was there a moment ago and is
// likely there again, as when a flapping link or a proxy resets every
// connection now and then. The first such failure is dialed again at
// once, and up to maxCutsHeld of them in a row do not double the delay
// before the next attempt: doubled, a few resets landing on handshakes
// made a slot wait seconds while the server answered, and the callers
// waiting for it reached their deadlines (issue 31: 102 of 106 failed
// GETs under resets every 30 ms on a busy machine). A refused or
// timed-out dial and an error reply from the server double it as always,
// and so do handshakes broken more often in a row (a proxy in front of a
// server that is down).
func cutShort(err error) bool {
	var he *HandshakeError
	if !errors.As(err, &he) || permanent(err) {
		return false
	}
	var se *ServerError
	if errors.As(err, &se) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var oe *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &oe) && (oe.Op == "read" || oe.Op == "write")
}
