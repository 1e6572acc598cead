// Package testpeer is a scripted RESP peer on loopback for unit tests of
// what real servers will not do: malformed bytes, pushes between replies,
// replies nobody asked for, invalidations racing reads. Tests against real
// servers use tests/harness instead.
package testpeer

import (
	"net"
	"sync"
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Peer answers each command it reads with the bytes its reply function
// returns for the command's words (nothing when it returns "").
type Peer struct {
	ln    net.Listener
	reply func(args []string) string
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

// Start listens on a free loopback port and serves until the test ends.
func Start(t testing.TB, reply func(args []string) string) *Peer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Peer{ln: ln, reply: reply}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.CloseConns()
		p.wg.Wait()
	})
	return p
}

// Addr is the address to dial.
func (p *Peer) Addr() string { return p.ln.Addr().String() }

// Last returns the connection accepted last, nil before the first. Called
// from the reply function, it is the connection the command came on when
// clients connect one at a time.
func (p *Peer) Last() net.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.conns) == 0 {
		return nil
	}
	return p.conns[len(p.conns)-1]
}

// Accepted is the number of connections accepted so far.
func (p *Peer) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// CloseConns closes every connection accepted so far.
func (p *Peer) CloseConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *Peer) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Peer) serve(c net.Conn) {
	defer p.wg.Done()
	defer c.Close()
	rd := resp.NewReader(c, resp.Limits{})
	for {
		m, err := rd.Next()
		if err != nil {
			return
		}
		v := m.Tree()
		args := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			args[i] = e.Str
		}
		if out := p.reply(args); out != "" {
			if _, err := c.Write([]byte(out)); err != nil {
				return
			}
		}
	}
}
