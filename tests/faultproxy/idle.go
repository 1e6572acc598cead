package faultproxy

import "time"

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
		idle := time.Since(time.Unix(0, c.last.Load()))
		if idle >= limit {
			p.idleClosed.Add(1)
			c.close(p, false)
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
