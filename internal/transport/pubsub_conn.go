package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// run keeps a connection up until ctx ends: at Close, or when no
// subscription is left.
func (h *PubSub) run(ctx context.Context) {
	delay := newRetryDelay(&h.cfg)
	defer delay.stop()
	for {
		nc, rd, info, err := dial(ctx, &h.cfg)
		dialed := err == nil
		if dialed {
			delay.reset()
			err = h.serve(ctx, nc, rd, info)
		}
		if ctx.Err() != nil {
			return
		}
		h.mu.Lock()
		h.lastErr = err
		if !dialed {
			close(h.dialFailed)
			h.dialFailed = make(chan struct{})
		}
		h.mu.Unlock()
		if !delay.wait(ctx.Done()) {
			return
		}
	}
}

// serve restores the subscriptions on a new connection and reads from it
// until it breaks.
func (h *PubSub) serve(ctx context.Context, nc net.Conn, rd *resp.Reader, info ConnInfo) error {
	c := &psConn{nc: nc, rd: rd, proto: info.Protocol, kick: make(chan struct{}, 1), dead: make(chan struct{})}
	h.mu.Lock()
	if ctx.Err() != nil {
		// Closed, or nothing left to subscribe to, while dialing.
		h.mu.Unlock()
		_ = nc.Close()
		return ErrClosed
	}
	h.cur = c
	h.lastErr = nil
	h.everUp = true
	if cr := h.cfg.Credentials; cr != nil && c.proto == 3 {
		if gen, user, pass := cr.current(); gen != info.authGen && pass != "" {
			// A rotation ran since the handshake and may not have
			// seen c: AUTH goes first, before the subscriptions.
			h.sendLocked(c, &psCmd{verb: psAuth, done: make(chan *ServerError, 1)}, "AUTH", authArgs(user, pass)[1:]...)
		}
	}
	for k := range h.topics {
		var chunk []*topic
		for _, t := range h.topics[k] {
			chunk = append(chunk, t)
			if len(chunk) == subscribeChunk {
				h.sendSubLocked(c, Kind(k), chunk)
				chunk = nil
			}
		}
		if len(chunk) > 0 {
			h.sendSubLocked(c, Kind(k), chunk)
		}
	}
	h.mu.Unlock()

	h.wg.Add(1)
	go func() { defer h.wg.Done(); h.writeLoop(c) }()
	rd.Reset(&idleReader{nc: nc, idle: h.cfg.HealthCheck, stall: h.cfg.StallTimeout, onIdle: func() { h.ping(c) }})
	var err error
	for {
		var m resp.Msg
		if m, err = rd.Next(); err != nil {
			break
		}
		if err = h.handle(c, m); err != nil {
			break
		}
	}
	if errors.Is(err, net.ErrClosed) && ctx.Err() != nil {
		err = ErrClosed
	}
	h.lost(c, err)
	return err
}

// lost forgets a broken connection: every topic needs subscribing again,
// and every subscription that was receiving is owed a gap marker.
func (h *PubSub) lost(c *psConn, err error) {
	now := time.Now()
	h.mu.Lock()
	if c.cause != nil {
		err = c.cause
	}
	for cmd, ok := c.pending.pop(); ok; cmd, ok = c.pending.pop() {
		if cmd.verb == psAuth {
			cmd.done <- nil // the next connection asks the provider
		}
	}
	c.pending = ring[*psCmd]{}
	if h.cur != c {
		// Retired on purpose (no subscription left, or Close): nothing
		// of the hub's state belongs to it any more.
		h.mu.Unlock()
		close(c.dead)
		_ = c.nc.Close()
		return
	}
	h.cur = nil
	for k := range h.topics {
		for _, t := range h.topics[k] {
			if !t.confirmed {
				continue
			}
			t.confirmed = false
			t.ready = make(chan struct{})
			for _, s := range t.subs {
				if !s.lost {
					s.lost, s.lostAt, s.lostErr = true, now, err
				}
			}
		}
	}
	lostHook := h.hooks.Lost
	h.mu.Unlock()
	close(c.dead)
	_ = c.nc.Close()
	if lostHook != nil {
		lostHook(err)
	}
}

// reauth sends AUTH on the live connection, behind the commands pending
// on it, and waits for the answer. In RESP2 a subscribed connection takes
// no AUTH: it keeps its credentials until it is dialed again.
func (h *PubSub) reauth(ctx context.Context, user, pass string) error {
	h.mu.Lock()
	c := h.cur
	if c == nil || c.proto != 3 {
		h.mu.Unlock()
		return nil
	}
	cmd := &psCmd{verb: psAuth, done: make(chan *ServerError, 1)}
	h.sendLocked(c, cmd, "AUTH", authArgs(user, pass)[1:]...)
	h.mu.Unlock()
	select {
	case se := <-cmd.done:
		if se != nil {
			return authError(h.cfg.Addr, se)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *PubSub) ping(c *psConn) {
	h.mu.Lock()
	if h.cur == c {
		h.sendLocked(c, &psCmd{verb: psPing}, "PING")
	}
	h.mu.Unlock()
}

func (h *PubSub) writeLoop(c *psConn) {
	var spare []byte
	for {
		select {
		case <-c.kick:
		case <-c.dead:
			return
		}
		h.mu.Lock()
		buf := c.wbuf
		c.wbuf = spare[:0]
		h.mu.Unlock()
		if len(buf) == 0 {
			continue
		}
		if _, err := c.nc.Write(buf); err != nil {
			// The reader finds the connection closed and reconnects.
			_ = c.nc.Close()
			return
		}
		if cap(buf) <= keepBuf {
			spare = buf
		}
	}
}

// idleReader reads from a pub/sub connection, which may rightly stay
// silent for long: after idle without a byte it has a PING sent, and fails
// with ErrStalled when stall passes without an answer.
type idleReader struct {
	nc          net.Conn
	idle, stall time.Duration
	onIdle      func()
}

func (r *idleReader) Read(p []byte) (int, error) {
	pinged := false
	for {
		wait := r.idle
		if pinged {
			wait = r.stall
		}
		_ = r.nc.SetReadDeadline(time.Now().Add(wait))
		n, err := r.nc.Read(p)
		var ne net.Error
		if n > 0 || err == nil || !errors.As(err, &ne) || !ne.Timeout() {
			return n, err
		}
		if pinged {
			return 0, fmt.Errorf("%w: no reply to PING for %v", ErrStalled, r.stall)
		}
		pinged = true
		r.onIdle()
	}
}
