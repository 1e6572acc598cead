package testserver

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// ServerError is an error reply of the server (a RESP "-" line), such as
// "NOAUTH Authentication required.".
type ServerError string

// Error returns the server's message.
func (e ServerError) Error() string { return string(e) }

// Conn is a minimal RESP2 connection to a server, for setting it up and
// looking at it: commands and their replies in order, nothing more. A
// reply is a string (simple or bulk), an int64, a []any, nil (a null), or
// a ServerError in an array. It is not safe for concurrent use.
type Conn struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
}

// Dial connects to addr over network ("tcp" or "unix"), in TLS when
// tlsConfig is not nil. ctx bounds the dial and, when it has a deadline,
// every later read and write of the connection.
func Dial(ctx context.Context, network, addr string, tlsConfig *tls.Config) (*Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		tc := tls.Client(c, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	return &Conn{addr: addr, conn: c, r: bufio.NewReader(c)}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.conn.Close() }

// SetDeadline sets the deadline of the connection's reads and writes; the
// zero time means none.
func (c *Conn) SetDeadline(t time.Time) error { return c.conn.SetDeadline(t) }

// Do sends one command and reads its reply. An error reply is the error,
// a ServerError; any other error means the connection is unusable.
func (c *Conn) Do(args ...string) (any, error) {
	vs, err := c.Pipeline([][]string{args})
	if err != nil {
		return nil, err
	}
	if se, ok := vs[0].(ServerError); ok {
		return nil, se
	}
	return vs[0], nil
}

// Pipeline sends every command at once and reads their replies in order.
// An error reply stands in its place as a ServerError; the error return
// means the connection is unusable.
func (c *Conn) Pipeline(cmds [][]string) ([]any, error) {
	var b strings.Builder
	for _, args := range cmds {
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	if _, err := io.WriteString(c.conn, b.String()); err != nil {
		return nil, err
	}
	out := make([]any, len(cmds))
	for i := range cmds {
		v, err := c.Receive()
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// Receive reads one reply, for what the server sends unasked (the
// messages of a subscription). An error reply is returned as a value, a
// ServerError.
func (c *Conn) Receive() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("testserver: malformed RESP line %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return ServerError(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$', '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("testserver: malformed RESP length %q", line)
		}
		if n < 0 {
			return nil, nil
		}
		if kind == '$' {
			buf := make([]byte, n+2)
			if _, err := io.ReadFull(c.r, buf); err != nil {
				return nil, err
			}
			return string(buf[:n]), nil
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = c.Receive(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("testserver: unexpected RESP type %q", kind)
}

// Do sends one command to the server at addr on a connection of its own
// and returns the reply, as Conn.Do does. The error names the command and
// the address.
func Do(ctx context.Context, addr string, args ...string) (any, error) {
	c, err := Dial(ctx, "tcp", addr, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	reply, err := c.Do(args...)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", strings.Join(args, " "), addr, err)
	}
	return reply, nil
}

// Probe says how to reach a server to see whether it serves: WaitReady
// sends it PING, after AUTH when Password is set.
type Probe struct {
	// Network is "tcp" (the default) or "unix".
	Network string
	// Addr is the server's address, or the path of its unix socket.
	Addr string
	// TLS, when not nil, is the configuration of a TLS connection.
	TLS *tls.Config
	// User and Password authenticate; User "" is the default user.
	User, Password string
}

// WaitReady sends PING to the server, backing off from 5ms to 25ms, until
// it answers with anything but LOADING (an error such as NOAUTH counts:
// the server serves), exited (which may be nil) is closed, or ctx ends.
func WaitReady(ctx context.Context, p Probe, exited <-chan struct{}) error {
	// A PING to a port that another process holds may get no answer: it
	// ends when the server does.
	pingCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if exited != nil {
		go func() {
			select {
			case <-exited:
				cancel()
			case <-pingCtx.Done():
			}
		}()
	}
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 25*time.Millisecond) {
		err := p.ping(pingCtx)
		if err == nil {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-exited:
			t.Stop()
			return errors.New("the server exited during startup")
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("no PING reply: %w (last: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// ping connects once, authenticates if asked and sends PING.
func (p Probe) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := Dial(ctx, orDefault(p.Network, "tcp"), p.Addr, p.TLS)
	if err != nil {
		return err
	}
	defer c.Close()
	defer context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })()
	var se ServerError
	if p.Password != "" {
		auth := []string{"AUTH", p.Password}
		if p.User != "" {
			auth = []string{"AUTH", p.User, p.Password}
		}
		if _, err := c.Do(auth...); err != nil && !errors.As(err, &se) {
			return err
		}
	}
	if _, err := c.Do("PING"); err != nil {
		if !errors.As(err, &se) || strings.HasPrefix(string(se), "LOADING") {
			return err
		}
	}
	return nil
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// InfoField returns the value of field in an INFO reply, "" when it is
// absent.
func InfoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// Pairs reads a flat array of names and values (SENTINEL MASTER, CONFIG
// GET) into a map.
func Pairs(reply any) map[string]string {
	a, _ := reply.([]any)
	m := make(map[string]string, len(a)/2)
	for i := 0; i+1 < len(a); i += 2 {
		m[fmt.Sprint(a[i])] = fmt.Sprint(a[i+1])
	}
	return m
}
