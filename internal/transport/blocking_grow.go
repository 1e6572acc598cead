package transport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// How the blocking pool grows and shrinks.
//
// Every connection the pool answers for holds one claim, counted against
// Size: an idle connection, and each call from the moment it passes the
// bound until it gives its connection back (dialing it, waiting for a
// dial, holding it). A call that finds no idle connection and Size claims
// taken fails at once with ErrPoolExhausted.
//
// Dials are limited to maxPoolDials at once, so that a thousand callers
// arriving together do not open a thousand sockets in the same instant
// (the server's accept backlog, a proxy's or a firewall's rate limit);
// the others wait in line, in order, and take a connection that a call
// gives back meanwhile, or the next free dial. A dial that fails is tried
// again after a backoff (Config.MinBackoff to MaxBackoff) when the
// failure looks like the server being full rather than gone: it refused
// the client ("max number of clients reached"), the process ran out of
// descriptors or ports, or other connections of the pool are in use. A
// server that cannot be reached is waited for as the Mux waits for a
// reconnect: until the caller's context ends unless Config.FailFast, and
// not at all for a caller without a deadline while the server was never
// reached. Throughout, a call whose context ends returns an error that
// matches the context's error.
//
// A connection given back healthy goes to the first waiting call, or to
// the idle list. A timer closes the connections idle for Config.PoolIdle,
// oldest first, as long as more than PoolKeepIdle are idle.

// maxPoolDials bounds a pool's dials in flight.
const maxPoolDials = 32

// poolWaiter is a call waiting in line for a connection or a dial.
type poolWaiter struct {
	ready chan struct{} // closed once d or dial is set
	// takesDial is false for a call waiting out its backoff after a
	// failed dial: it takes a connection given back, not a dial.
	takesDial bool
	d         *Dedicated // a connection given to it, busy
	dial      bool       // a dial given to it, counted in dialing
}

// get returns a connection for the caller's exclusive use, counted busy:
// an idle one, one given back while the caller waited, or a new one. ctx
// is the caller's context, cctx the one that Close also ends.
func (p *BlockingPool) get(ctx, cctx context.Context) (*Dedicated, error) {
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		return nil, ErrClosed
	case len(p.idle) > 0:
		// The idle connection's claim becomes the caller's.
		d := p.popIdleLocked()
		p.mu.Unlock()
		if d = p.checked(cctx, d); d != nil {
			return d, nil
		}
	case p.claims >= p.size:
		p.mu.Unlock()
		return nil, p.exhausted()
	default:
		p.claims++
		p.mu.Unlock()
	}
	return p.obtain(ctx, cctx)
}

// popIdleLocked takes the idle connection used last, counted busy.
func (p *BlockingPool) popIdleLocked() *Dedicated {
	n := len(p.idle)
	d := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	p.markBusyLocked(d)
	return d
}

// obtain is get for a caller that holds a claim, which it gives up on
// error.
func (p *BlockingPool) obtain(ctx, cctx context.Context) (*Dedicated, error) {
	var delay *retryDelay
	var lastErr error
	for {
		d, err := p.next(cctx)
		if err != nil {
			return nil, p.endErr(ctx, cctx, err, lastErr)
		}
		if d != nil {
			if d = p.checked(cctx, d); d != nil {
				return d, nil
			}
			continue
		}
		// The caller has a dial.
		d, err = DialDedicated(cctx, p.cfg)
		p.mu.Lock()
		p.endDialLocked()
		if err == nil {
			if p.closed {
				p.claims--
				p.mu.Unlock()
				d.Close()
				return nil, ErrClosed
			}
			p.everUp = true
			p.markBusyLocked(d)
			p.mu.Unlock()
			return d, nil
		}
		if cctx.Err() != nil && lastErr != nil {
			// The dial the context cut short says less than the one
			// before it.
			p.claims--
			p.mu.Unlock()
			return nil, p.endErr(ctx, cctx, cctx.Err(), lastErr)
		}
		lastErr = err
		if !p.retryable(cctx, err) {
			p.claims--
			p.mu.Unlock()
			return nil, p.dialErr(ctx, cctx, err)
		}
		// Wait out a backoff, unless a call gives a connection back
		// first.
		w := p.waitLocked(false)
		p.mu.Unlock()
		if delay == nil {
			delay = newRetryDelay(&p.cfg)
		}
		t := time.NewTimer(delay.advance())
		d, err = p.await(cctx, w, t.C)
		t.Stop()
		if err != nil {
			return nil, p.endErr(ctx, cctx, err, lastErr)
		}
		if d != nil {
			if d = p.checked(cctx, d); d != nil {
				return d, nil
			}
		}
	}
}

// next gives a caller that holds a claim an idle connection, or one given
// back while it waited in line, or else a dial (nil, nil).
func (p *BlockingPool) next(cctx context.Context) (*Dedicated, error) {
	p.mu.Lock()
	switch {
	case p.closed:
		p.claims--
		p.mu.Unlock()
		return nil, ErrClosed
	case len(p.idle) > 0:
		d := p.popIdleLocked()
		p.claims-- // the caller's claim covers it
		p.mu.Unlock()
		return d, nil
	case p.dialing < maxPoolDials:
		p.dialing++
		p.mu.Unlock()
		return nil, nil
	}
	w := p.waitLocked(true)
	p.mu.Unlock()
	return p.await(cctx, w, nil)
}

// checked returns d if it is usable; else it closes d and returns nil,
// the caller keeping its claim.
func (p *BlockingPool) checked(cctx context.Context, d *Dedicated) *Dedicated {
	if p.usable(cctx, d) {
		return d
	}
	p.drop(d)
	return nil
}

// usable reports whether a connection that was idle may carry the next
// command: still open (a connection the server closed while it was idle,
// on a restart or a client timeout, would fail the command for nothing,
// and a blocking command is usually not safe to repeat), to the address
// the pool dials now, with the current credentials.
func (p *BlockingPool) usable(ctx context.Context, d *Dedicated) bool {
	return alive(d.nc) && !p.stale(d) && p.upToDate(ctx, d)
}

// drop closes a connection a call took and found unusable; the call keeps
// its claim, to dial another.
func (p *BlockingPool) drop(d *Dedicated) {
	p.mu.Lock()
	delete(p.busy, d)
	p.mu.Unlock()
	d.Close()
}

func (p *BlockingPool) markBusyLocked(d *Dedicated) {
	p.busy[d] = struct{}{}
	p.busyMax = max(p.busyMax, len(p.busy))
}

// waitLocked puts a waiter at the end of the line.
func (p *BlockingPool) waitLocked(takesDial bool) *poolWaiter {
	w := &poolWaiter{ready: make(chan struct{}), takesDial: takesDial}
	p.waiters = append(p.waiters, w)
	return w
}

// await waits until w is given a connection or a dial, or timer fires, or
// cctx ends. It returns the connection given, nil for a dial or the
// timer, and cctx's error when it ended, after giving back what w was
// given and the caller's claim.
func (p *BlockingPool) await(cctx context.Context, w *poolWaiter, timer <-chan time.Time) (*Dedicated, error) {
	select {
	case <-w.ready:
	case <-timer:
	case <-cctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.d == nil && !w.dial {
		p.unwaitLocked(w)
	}
	if err := cctx.Err(); err != nil {
		switch {
		case w.d != nil:
			// The connection goes on to the next in line, or idle; with
			// it the caller's claim.
			delete(p.busy, w.d)
			p.giveLocked(w.d)
		case w.dial:
			p.endDialLocked()
			p.claims--
		default:
			p.claims--
		}
		return nil, err
	}
	return w.d, nil
}

// unwaitLocked takes w out of the line.
func (p *BlockingPool) unwaitLocked(w *poolWaiter) {
	for i, x := range p.waiters {
		if x == w {
			p.waiters = slices.Delete(p.waiters, i, i+1)
			break
		}
	}
	if len(p.waiters) == 0 {
		p.waiters = nil
	}
}

// giveLocked takes a healthy connection that a call no longer needs, with
// that call's claim: to the first call in line, whose own claim then
// covers it, else to the idle list.
func (p *BlockingPool) giveLocked(d *Dedicated) {
	if p.closed {
		p.claims--
		d.Close()
		return
	}
	if len(p.waiters) > 0 {
		w := p.waiters[0]
		p.waiters[0] = nil
		p.waiters = p.waiters[1:]
		if len(p.waiters) == 0 {
			p.waiters = nil
		}
		p.claims--
		w.d = d
		p.markBusyLocked(d)
		close(w.ready)
		return
	}
	p.idle = append(p.idle, d)
	p.armReaperLocked()
}

// endDialLocked ends a dial: the first call in line that takes dials gets
// it, else it is free.
func (p *BlockingPool) endDialLocked() {
	for i, w := range p.waiters {
		if w.takesDial {
			p.waiters = slices.Delete(p.waiters, i, i+1)
			if len(p.waiters) == 0 {
				p.waiters = nil
			}
			w.dial = true
			close(w.ready)
			return
		}
	}
	p.dialing--
}

// retryable reports whether a call whose dial failed with err tries again
// after a backoff (see the top of this file).
func (p *BlockingPool) retryable(cctx context.Context, err error) bool {
	if cctx.Err() != nil || permanent(err) || p.closed {
		return false
	}
	if serverFull(err) || len(p.busy) > 0 {
		return true
	}
	if p.cfg.FailFast {
		return false
	}
	_, bounded := cctx.Deadline()
	return bounded || p.everUp
}

// serverFull reports a dial error that says the server or this process
// is out of room for another connection, not that the server is gone.
func serverFull(err error) bool {
	var se *ServerError
	if errors.As(err, &se) && strings.Contains(se.Message, "max number of clients") {
		return true
	}
	return outOfDescriptors(err)
}

// dialErr is the error of a call that gives up after its dial failed
// with err.
func (p *BlockingPool) dialErr(ctx, cctx context.Context, err error) error {
	switch {
	case context.Cause(cctx) == ErrClosed:
		return ErrClosed
	case ctx.Err() != nil:
		return unavailable(p.cfg.Addr, err, ctx.Err())
	case permanent(err):
		return NotSent(err)
	}
	return unavailable(p.cfg.Addr, err, nil)
}

// endErr is the error of a call that stopped waiting with err (the pool
// closed, or its context ended), lastErr the error of its last dial, if
// any.
func (p *BlockingPool) endErr(ctx, cctx context.Context, err, lastErr error) error {
	switch {
	case err == ErrClosed || context.Cause(cctx) == ErrClosed:
		return ErrClosed
	case lastErr != nil:
		return unavailable(p.cfg.Addr, lastErr, ctx.Err())
	}
	return fmt.Errorf("waiting for a connection to %s in line: %w", p.cfg.Addr, ctx.Err())
}

// armReaperLocked makes sure the reaper runs once the oldest idle
// connection has been idle for PoolIdle, when more than PoolKeepIdle are.
func (p *BlockingPool) armReaperLocked() {
	if p.reaping || p.closed || len(p.idle) <= PoolKeepIdle {
		return
	}
	p.reaping = true
	wait := p.cfg.PoolIdle - time.Since(p.idle[0].lastUsed)
	if p.reaper == nil {
		p.reaper = time.AfterFunc(wait, p.reap)
	} else {
		p.reaper.Reset(wait)
	}
}

// reap closes the connections idle for PoolIdle, the oldest first, as
// long as more than PoolKeepIdle are idle, and gives back the memory the
// pool's lists grew to at their peak.
func (p *BlockingPool) reap() {
	p.mu.Lock()
	p.reaping = false
	if p.closed {
		p.mu.Unlock()
		return
	}
	now := time.Now()
	excess := len(p.idle) - PoolKeepIdle
	var old []*Dedicated
	kept := p.idle[:0]
	for _, d := range p.idle {
		if excess > 0 && now.Sub(d.lastUsed) >= p.cfg.PoolIdle {
			old = append(old, d)
			excess--
			continue
		}
		kept = append(kept, d)
	}
	clear(p.idle[len(kept):])
	p.idle = kept
	p.claims -= len(old)
	if cap(p.idle) > 64 && len(p.idle) < cap(p.idle)/4 {
		p.idle = append([]*Dedicated(nil), p.idle...)
	}
	if p.busyMax > 64 && len(p.busy) < p.busyMax/4 {
		// A map keeps its peak size: make it anew.
		busy := make(map[*Dedicated]struct{}, len(p.busy))
		for d := range p.busy {
			busy[d] = struct{}{}
		}
		p.busy, p.busyMax = busy, len(busy)
	}
	p.armReaperLocked()
	p.mu.Unlock()
	for _, d := range old {
		d.Close()
	}
}
