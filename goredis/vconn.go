package goredis

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// vconn is the connection go-redis's embedded client dials: a net.Conn
// that reaches no server. go-redis's pools, its PubSub and its reply
// parsers run on it unchanged; the adapter answers what go-redis writes:
//
//   - the handshake (HELLO), with the protocol Respire speaks;
//   - a replayed command (see replay.go): the reply Respire already
//     received for it, so that go-redis parses it with its own code;
//   - SUBSCRIBE and its kin (see pubsub.go): a respire.Subscription, whose
//     messages are written back as the server would push them.
//
// Anything else gets an error reply naming the adapter. A vconn is closed
// by go-redis like any connection; it holds no socket.
type vconn struct {
	a     *Client
	proto int

	wmu sync.Mutex // serialises Write: go-redis writes from one goroutine at a time per conn, but PubSub may race
	in  []byte     // written, not yet a whole command

	mu     sync.Mutex
	out    []byte        // replies not yet read
	wake   chan struct{} // closed when out grows or the conn closes
	closed bool
	rdl    time.Time // read deadline
	wdl    time.Time // write deadline

	ps   *subSession // set by the first SUBSCRIBE-family command
	held *held       // a Conn's own Respire connection, which runs every command
}

func newVconn(a *Client, proto int) *vconn {
	return &vconn{a: a, proto: proto, wake: make(chan struct{})}
}

// errVconnClosed is what a closed adapter connection returns, as net.Conn
// does after Close.
var errVconnClosed = net.ErrClosed

// timeoutErr is a read past the deadline, as net.Conn reports one.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "goredis: adapter connection: i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }
func (timeoutErr) Unwrap() error   { return os.ErrDeadlineExceeded }

// Read returns replies written back for go-redis, waiting for one until
// the read deadline.
func (c *vconn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		if len(c.out) > 0 {
			n := copy(p, c.out)
			c.out = c.out[n:]
			if len(c.out) == 0 {
				c.out = nil
			}
			c.mu.Unlock()
			return n, nil
		}
		if c.closed {
			c.mu.Unlock()
			return 0, errVconnClosed
		}
		wake, dl := c.wake, c.rdl
		c.mu.Unlock()
		if dl.IsZero() {
			<-wake
			continue
		}
		d := time.Until(dl)
		if d <= 0 {
			return 0, timeoutErr{}
		}
		t := time.NewTimer(d)
		select {
		case <-wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// push appends a reply for go-redis to read.
func (c *vconn) push(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.out = append(c.out, b...)
	close(c.wake)
	c.wake = make(chan struct{})
}

// Write takes commands go-redis writes and answers each in order.
func (c *vconn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return 0, errVconnClosed
	}
	c.in = append(c.in, p...)
	for len(c.in) > 0 {
		words, used, err := readCommand(c.in)
		if errors.Is(err, errIncomplete) {
			break
		}
		if err != nil {
			c.in = nil
			return 0, err
		}
		c.in = c.in[used:]
		if err := c.command(words); err != nil {
			c.in = nil
			return 0, err
		}
	}
	if len(c.in) == 0 {
		c.in = nil
	}
	return len(p), nil
}

// command answers one command.
func (c *vconn) command(words []string) error {
	if len(words) == 0 {
		c.push(appendLine(nil, '-', "ERR goredis: empty command"))
		return nil
	}
	if id, ok := replayID(words[0]); ok {
		c.push(c.a.takeReplay(id))
		return nil
	}
	name := strings.ToLower(words[0])
	if c.held != nil && name != "hello" {
		return c.held.send(words)
	}
	switch name {
	case "hello":
		c.push(c.hello())
		return nil
	case "subscribe", "psubscribe", "ssubscribe",
		"unsubscribe", "punsubscribe", "sunsubscribe":
		return c.subCommand(name, words[1:])
	case "ping":
		c.ping(words[1:])
		return nil
	}
	c.push(appendLine(nil, '-', "ERR goredis: the adapter's connection does not run "+
		strings.ToUpper(name)+": commands run through the *respire.Client"))
	return nil
}

// hello answers go-redis's handshake as a server would, for the protocol
// the adapter relays.
func (c *vconn) hello() []byte {
	b := appendInt(nil, '%', 7)
	if c.proto != 3 {
		b = appendInt(nil, '*', 14)
	}
	b = appendBulk(b, '$', "server")
	b = appendBulk(b, '$', "respire")
	b = appendBulk(b, '$', "version")
	b = appendBulk(b, '$', "0")
	b = appendBulk(b, '$', "proto")
	b = appendInt(b, ':', int64(c.proto))
	b = appendBulk(b, '$', "id")
	b = appendInt(b, ':', 0)
	b = appendBulk(b, '$', "mode")
	b = appendBulk(b, '$', "standalone")
	b = appendBulk(b, '$', "role")
	b = appendBulk(b, '$', "master")
	b = appendBulk(b, '$', "modules")
	return appendInt(b, '*', 0)
}

func (c *vconn) ping(args []string) {
	if ps := c.session(false); ps != nil && ps.count() > 0 && c.proto != 3 {
		msg := ""
		if len(args) > 0 {
			msg = args[0]
		}
		c.push(appendStrings(nil, false, c.proto, "pong", msg))
		return
	}
	if len(args) > 0 {
		c.push(appendBulk(nil, '$', args[0]))
		return
	}
	c.push(appendLine(nil, '+', "PONG"))
}

// writeContext is the context of work a Write starts (a subscription):
// it ends at the write deadline go-redis set, or after a minute.
func (c *vconn) writeContext() (context.Context, context.CancelFunc) {
	c.mu.Lock()
	dl := c.wdl
	c.mu.Unlock()
	if dl.IsZero() {
		return context.WithTimeout(context.Background(), time.Minute)
	}
	return context.WithDeadline(context.Background(), dl)
}

// Close ends the connection and any subscription it holds.
func (c *vconn) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.wake)
	}
	ps := c.ps
	c.ps = nil
	c.mu.Unlock()
	if ps != nil {
		ps.close()
	}
	if c.held != nil {
		c.held.close()
	}
	return nil
}

func (c *vconn) LocalAddr() net.Addr  { return vaddr("respire-adapter") }
func (c *vconn) RemoteAddr() net.Addr { return vaddr(c.a.addr()) }

func (c *vconn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdl, c.wdl = t, t
	c.mu.Unlock()
	return nil
}

func (c *vconn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdl = t
	c.mu.Unlock()
	return nil
}

func (c *vconn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.wdl = t
	c.mu.Unlock()
	return nil
}

// vaddr is the address a vconn reports.
type vaddr string

func (a vaddr) Network() string { return "respire" }
func (a vaddr) String() string  { return string(a) }

// replayPrefix starts the first word of a replayed command: a NUL, which
// no command name holds.
const replayPrefix = "\x00respire-replay:"

func replayID(word string) (uint64, bool) {
	if !strings.HasPrefix(word, replayPrefix) {
		return 0, false
	}
	id, err := strconv.ParseUint(word[len(replayPrefix):], 10, 64)
	return id, err == nil
}
