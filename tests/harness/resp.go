package harness

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

// ServerError is an error reply (a RESP "-" line) from the server, such as
// "NOAUTH Authentication required.".
type ServerError string

// Error returns the server's message.
func (e ServerError) Error() string { return string(e) }

// respConn is a minimal RESP2 client: one command at a time, enough for
// readiness checks and test setup. It deliberately shares no code with the
// client under test.
type respConn struct {
	conn net.Conn
	r    *bufio.Reader
}

// dialRESP connects to addr over network ("tcp" or "unix"), wrapping the
// connection in TLS when tlsConf is not nil.
func dialRESP(ctx context.Context, network, addr string, tlsConf *tls.Config) (*respConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if tlsConf != nil {
		tc := tls.Client(c, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	return &respConn{conn: c, r: bufio.NewReader(c)}, nil
}

// Close closes the connection.
func (c *respConn) Close() error { return c.conn.Close() }

// do sends one command and reads its reply. An error reply is returned as a
// ServerError; other errors mean the connection is unusable.
func (c *respConn) do(args ...string) (any, error) {
	vs, err := c.pipeline([][]string{args})
	if err != nil {
		return nil, err
	}
	if se, ok := vs[0].(ServerError); ok {
		return nil, se
	}
	return vs[0], nil
}

// pipeline sends every command at once and reads their replies in order.
// An error reply is returned in its place as a ServerError; the error
// return means the connection is unusable.
func (c *respConn) pipeline(cmds [][]string) ([]any, error) {
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
		v, err := c.read()
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// read parses one RESP2 value: string, int64, []any, nil or ServerError.
func (c *respConn) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("harness: malformed RESP line %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return ServerError(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			v, err := c.read()
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("harness: unexpected RESP type %q", kind)
}

// infoField returns the value of field in an INFO reply.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// serverVersion returns the product version and flavor from an INFO server
// reply: Valkey reports valkey_version, Redis only redis_version.
func serverVersion(info string) (string, Flavor) {
	if v := infoField(info, "valkey_version"); v != "" {
		return v, flavorOf("valkey", v)
	}
	v := infoField(info, "redis_version")
	return v, flavorOf("redis", v)
}

// flavorOf names the flavor of product at version v: ("redis", "8.0.2") is
// "redis-8.0".
func flavorOf(product, v string) Flavor {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return Flavor(product + "-" + v)
	}
	return Flavor(product + "-" + parts[0] + "." + parts[1])
}

// probe connects once, authenticates if a password is given and sends PING.
// Any reply but LOADING, even an error such as NOAUTH, means the server is
// serving.
func probe(ctx context.Context, network, addr string, tlsConf *tls.Config, password string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := dialRESP(ctx, network, addr, tlsConf)
	if err != nil {
		return err
	}
	defer c.Close()
	if password != "" {
		if _, err := c.do("AUTH", password); err != nil {
			var se ServerError
			if !errors.As(err, &se) {
				return err
			}
		}
	}
	if _, err := c.do("PING"); err != nil {
		var se ServerError
		if !errors.As(err, &se) || strings.HasPrefix(string(se), "LOADING") {
			return err
		}
	}
	return nil
}
