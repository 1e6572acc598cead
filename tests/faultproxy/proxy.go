// Package faultproxy is a small TCP proxy on loopback that sits between a
// client and a real server and injects faults on command: cut every
// connection, blackhole traffic (keep sockets open, forward nothing), or
// send bytes of its own to the client. It also records which client
// connection carried which bytes, so tests can check routing.
package faultproxy

import (
	"net"
	"sync"
)

// Proxy forwards 127.0.0.1:<port> to a target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu        sync.Mutex
	conns     map[int]*pair
	nextID    int
	blackhole bool
	accepted  int
	onData    func(id int, b []byte)
	wg        sync.WaitGroup
	closed    bool
}

type pair struct {
	client, server net.Conn
}

// New starts a proxy to target.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[int]*pair{}}
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

// OnClientData sets a function called with each chunk a client sends, and
// the id of its connection (ids count from 1 in accept order).
func (p *Proxy) OnClientData(fn func(id int, b []byte)) {
	p.mu.Lock()
	p.onData = fn
	p.mu.Unlock()
}

// Blackhole stops (on) or resumes (off) forwarding in both directions.
// Connections stay open; bytes read meanwhile are dropped.
func (p *Proxy) Blackhole(on bool) {
	p.mu.Lock()
	p.blackhole = on
	p.mu.Unlock()
}

// Cut closes every open connection.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, c := range p.conns {
		c.client.Close()
		c.server.Close()
		delete(p.conns, id)
	}
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
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.Cut()
	p.wg.Wait()
	return err
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
		p.conns[id] = &pair{client: cc, server: sc}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pump(id, cc, sc, true)
		go p.pump(id, sc, cc, false)
	}
}

func (p *Proxy) pump(id int, from, to net.Conn, fromClient bool) {
	defer p.wg.Done()
	defer func() {
		from.Close()
		to.Close()
		p.mu.Lock()
		delete(p.conns, id)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			p.mu.Lock()
			hole, fn := p.blackhole, p.onData
			p.mu.Unlock()
			if fromClient && fn != nil {
				fn(id, append([]byte(nil), buf[:n]...))
			}
			if !hole {
				if _, werr := to.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}
