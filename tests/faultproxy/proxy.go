// Package faultproxy is a small TCP proxy on loopback that sits between a
// client and a real server and injects faults on command: cut every
// connection (plain close, reset or orderly shutdown), cut one connection
// in the middle of a reply, delay replies, blackhole traffic (drop it, or
// hold it as a network partition would), or send bytes of its own to the
// client. It also records which client connection carried which bytes, so
// tests can check routing.
//
// It needs no testing.TB, so that tools outside tests (the soak program)
// can use it too.
package faultproxy

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards 127.0.0.1:<port> to a target address.
//
// Each direction of a connection is a reader goroutine and a writer
// goroutine joined by a bounded queue of chunks: the reader drops chunks
// (Blackhole) and stamps when a reply may leave (Delay); the writer waits
// for that time, waits while traffic is held (Hold), and cuts a reply short
// (TruncateReply).
type Proxy struct {
	ln     net.Listener
	target string
	done   chan struct{} // closed by Close

	mu        sync.Mutex
	conns     map[int]*pair
	nextID    int
	blackhole bool
	hold      chan struct{} // not nil while held; closed when released
	delay     time.Duration
	truncate  []chan struct{} // armed TruncateReply calls, oldest first
	accepted  int
	onData    func(id int, b []byte)
	idlePick  func() time.Duration // IdleClose
	wg        sync.WaitGroup
	// idleClosed counts the connections closed by IdleClose.
	idleClosed atomic.Int64
	idle       idleSpans // IdleClosedDuring
	closed     bool
}

type pair struct {
	id             int
	client, server net.Conn
	once           sync.Once
	gone           chan struct{} // closed when the pair is closed
	last           atomic.Int64  // unix nanoseconds of the last byte read
}

// chunk is one read's bytes, and the time they may be written.
type chunk struct {
	b   []byte
	due time.Time
}

// queueLen bounds the chunks in flight per direction; a full queue stops
// the reader, so the sender feels back pressure as from a slow network.
const queueLen = 256

// New starts a proxy to target.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[int]*pair{}, done: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Accepted returns how many client connections were accepted so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Open returns how many connections are open now.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// OnClientData sets a function called with each chunk a client sends, and
// the id of its connection (ids count from 1 in accept order).
func (p *Proxy) OnClientData(fn func(id int, b []byte)) {
	p.mu.Lock()
	p.onData = fn
	p.mu.Unlock()
}

// Blackhole stops (on) or resumes (off) forwarding in both directions.
// Connections stay open; bytes read meanwhile are dropped. Dropping bytes
// from the middle of a TCP stream is something no network does (TCP
// retransmits, or the connection dies): a request cut in half reaches the
// server as garbage. Use Hold to model a partition.
func (p *Proxy) Blackhole(on bool) {
	p.mu.Lock()
	p.blackhole = on
	p.mu.Unlock()
}

// Hold stops (on) or resumes (off) forwarding in both directions, as a
// network partition does: connections stay open and nothing is lost;
// bytes sent meanwhile wait in the proxy (then, once its queue is full, in
// the sockets) and are delivered in order when the hold ends. New
// connections are accepted and dialed during a hold, and held too.
func (p *Proxy) Hold(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && p.hold == nil:
		p.hold = make(chan struct{})
	case !on && p.hold != nil:
		close(p.hold)
		p.hold = nil
	}
}

// Delay holds every chunk the server sends for d after the proxy read it,
// then passes it on: replies arrive d late, and a stream of them keeps its
// rate. Zero ends the delay for chunks read from then on; chunks already
// waiting keep their time. Bytes from clients are not delayed.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	p.delay = max(d, 0)
	p.mu.Unlock()
}

// TruncateReply arms a one-shot fault: the next chunk of at least two
// bytes that a server sends on any connection is passed on only in part,
// cut at a byte that cannot end a RESP frame (anything but '\n'), so the
// client holds an incomplete reply; that connection is then closed. The
// returned channel is closed once it happened.
func (p *Proxy) TruncateReply() <-chan struct{} {
	ch := make(chan struct{})
	p.mu.Lock()
	p.truncate = append(p.truncate, ch)
	p.mu.Unlock()
	return ch
}

// Cut closes every open connection.
func (p *Proxy) Cut() { p.cutAll(func(c *pair) { c.close(p, false) }) }

// CutRST resets every open connection: both the client and the server get
// a TCP RST (SO_LINGER 0) instead of an orderly end of stream.
func (p *Proxy) CutRST() { p.cutAll(func(c *pair) { c.close(p, true) }) }

// CutFIN ends every open connection with an orderly shutdown: both peers
// get a FIN (end of stream) first. The proxy closes its sockets when the
// peers close theirs or a write fails.
func (p *Proxy) CutFIN() {
	p.cutAll(func(c *pair) {
		closeWrite(c.client)
		closeWrite(c.server)
	})
}

// InjectToClients writes b to every client connection, as if the server
// had sent it.
func (p *Proxy) InjectToClients(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_, _ = c.client.Write(b)
	}
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.Cut()
	p.wg.Wait()
	return err
}

// cutAll applies fn to every open connection, outside the lock (closing a
// pair takes it).
func (p *Proxy) cutAll(fn func(*pair)) {
	p.mu.Lock()
	pairs := make([]*pair, 0, len(p.conns))
	for _, c := range p.conns {
		pairs = append(pairs, c)
	}
	p.mu.Unlock()
	for _, c := range pairs {
		fn(c)
	}
}

func (c *pair) close(p *Proxy, reset bool) {
	c.once.Do(func() {
		if reset {
			setLinger0(c.client)
			setLinger0(c.server)
		}
		c.client.Close()
		c.server.Close()
		close(c.gone)
		p.mu.Lock()
		delete(p.conns, c.id)
		p.mu.Unlock()
	})
}

func setLinger0(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		cc, err := p.ln.Accept()
		if err != nil {
			return
		}
		sc, err := net.Dial("tcp", p.target)
		if err != nil {
			cc.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			cc.Close()
			sc.Close()
			return
		}
		p.nextID++
		id := p.nextID
		p.accepted++
		c := &pair{id: id, client: cc, server: sc, gone: make(chan struct{})}
		c.touch()
		p.conns[id] = c
		pick := p.idlePick
		p.mu.Unlock()
		up, down := make(chan chunk, queueLen), make(chan chunk, queueLen)
		if pick != nil {
			p.wg.Add(1)
			go p.idleWatch(c, pick)
		}
		p.wg.Add(4)
		go p.read(c, cc, up, true)
		go p.write(c, sc, up, false)
		go p.read(c, sc, down, false)
		go p.write(c, cc, down, true)
	}
}

// read moves chunks from one socket into q until the socket ends.
func (p *Proxy) read(c *pair, from net.Conn, q chan<- chunk, fromClient bool) {
	defer p.wg.Done()
	defer close(q)
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			c.touch()
			now := time.Now()
			p.mu.Lock()
			hole, fn, delay := p.blackhole, p.onData, p.delay
			p.mu.Unlock()
			b := append([]byte(nil), buf[:n]...)
			if fromClient && fn != nil {
				fn(c.id, b)
			}
			if !hole {
				ch := chunk{b: b}
				if !fromClient && delay > 0 {
					ch.due = now.Add(delay)
				}
				select {
				case q <- ch:
				case <-c.gone:
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// write passes the chunks of q to a socket, then closes the pair: when one
// side ends, the proxy ends the other, after delivering what it holds.
func (p *Proxy) write(c *pair, to net.Conn, q <-chan chunk, toClient bool) {
	defer p.wg.Done()
	defer c.close(p, false)
	for ch := range q {
		if !ch.due.IsZero() && !p.waitUntil(c, ch.due) {
			return
		}
		if !p.waitHold(c) {
			return
		}
		if toClient && len(ch.b) >= 2 {
			if done := p.takeTruncate(); done != nil {
				_, _ = to.Write(ch.b[:cutPoint(ch.b)])
				c.close(p, false)
				close(done)
				return
			}
		}
		if _, err := to.Write(ch.b); err != nil {
			return
		}
	}
}

// waitUntil waits for t; false means the pair or the proxy closed first.
func (p *Proxy) waitUntil(c *pair, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-c.gone:
	case <-p.done:
	}
	return false
}

// waitHold waits while traffic is held; false means the pair or the proxy
// closed first.
func (p *Proxy) waitHold(c *pair) bool {
	for {
		p.mu.Lock()
		h := p.hold
		p.mu.Unlock()
		if h == nil {
			return true
		}
		select {
		case <-h:
		case <-c.gone:
			return false
		case <-p.done:
			return false
		}
	}
}

func (p *Proxy) takeTruncate() chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.truncate) == 0 {
		return nil
	}
	ch := p.truncate[0]
	p.truncate = p.truncate[1:]
	return ch
}

// cutPoint returns a length n, 0 < n < len(b), such that b[:n] does not end
// with '\n': every RESP frame ends with "\r\n", so b[:n] ends inside one.
func cutPoint(b []byte) int {
	for n := len(b) / 2; n > 0; n-- {
		if b[n-1] != '\n' {
			return n
		}
	}
	for n := len(b)/2 + 1; n < len(b); n++ {
		if b[n-1] != '\n' {
			return n
		}
	}
	return 1 // all newlines: nothing better to do
}
