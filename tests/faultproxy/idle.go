package faultproxy

import (
	"sync"
	"time"
)

// IdleClose makes the proxy close a connection that carried no byte in
// either direction for a while, as load balancers, NAT tables and proxies
// do: pick gives the idle limit of each connection accepted from now on,
// anew for each of its idle periods, and the proxy closes both of its
// sides (an orderly close: FIN) once no traffic passed for that long. A
// nil pick turns it off for new connections.
func (p *Proxy) IdleClose(pick func() time.Duration) {
	p.mu.Lock()
	p.idlePick = pick
	p.mu.Unlock()
}

// IdleClosed returns how many connections the proxy closed for idleness.
func (p *Proxy) IdleClosed() int { return int(p.idleClosed.Load()) }

// idleSpans records when the proxy closed connections for idleness: from
// the check that found the connection idle to the end of its close.
type idleSpans struct {
	mu    sync.Mutex
	spans [][2]time.Time
}

// IdleClosedDuring reports whether the proxy closed a connection for
// idleness between from and to: a close that may have crossed a request
// sent in that time. The proxy decides on the idle time it saw last; bytes
// that reach it after that decision are dropped with the connection
// (unread, they make the close a reset), and whether the server ran them
// is unknown to the client, as with any close that crosses a request.
func (p *Proxy) IdleClosedDuring(from, to time.Time) bool {
	p.idle.mu.Lock()
	defer p.idle.mu.Unlock()
	for _, s := range p.idle.spans {
		if !s[1].Before(from) && !s[0].After(to) {
			return true
		}
	}
	return false
}

// idleWatch closes c once it was idle for the limit pick gives.
func (p *Proxy) idleWatch(c *pair, pick func() time.Duration) {
	defer p.wg.Done()
	limit := pick()
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case <-c.gone:
			return
		case <-p.done:
			return
		case <-t.C:
		}
		now := time.Now()
		idle := now.Sub(time.Unix(0, c.last.Load()))
		if idle >= limit {
			p.idleClosed.Add(1)
			c.close(p, false)
			p.idle.mu.Lock()
			p.idle.spans = append(p.idle.spans, [2]time.Time{now, time.Now()})
			p.idle.mu.Unlock()
			return
		}
		// Traffic passed: a new idle period, with a limit of its own,
		// starts at the last byte.
		limit = pick()
		t.Reset(max(limit-idle, 0))
	}
}

// touch records traffic on c.
func (c *pair) touch() { c.last.Store(time.Now().UnixNano()) }
