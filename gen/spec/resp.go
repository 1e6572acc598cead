package spec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// conn is the smallest RESP2 client that can ask a server about its
// commands: one request at a time, replies decoded into string, int64,
// []any, nil (null bulk or null array) or *serverError.
type conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

// serverError is an error reply ("-ERR ...").
type serverError struct{ msg string }

func (e *serverError) Error() string { return e.msg }

// Limits on what a reply may claim, so that a broken or hostile peer
// cannot make the reader allocate without bound. Real command tables nest
// fewer than ten levels and their longest string is well under a kilobyte.
const (
	maxReplyDepth = 64
	maxBulkLen    = 16 << 20
)

func dial(ctx context.Context, addr string) (*conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, r: bufio.NewReader(nc), w: bufio.NewWriter(nc)}, nil
}

func (c *conn) Close() error { return c.nc.Close() }

// do sends one command and reads its reply. An error reply is returned as
// an error. The context's deadline, if any, bounds the whole exchange, and
// cancelling the context closes the connection.
func (c *conn) do(ctx context.Context, args ...string) (any, error) {
	if dl, ok := ctx.Deadline(); ok {
		c.nc.SetDeadline(dl)
	} else {
		c.nc.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
	if err := c.w.Flush(); err != nil {
		return nil, ctxErr(ctx, err)
	}
	v, err := readReply(c.r, 0)
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	if e, ok := v.(*serverError); ok {
		return nil, e
	}
	return v, nil
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

func readReply(r *bufio.Reader, depth int) (any, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, errors.New("resp: empty line")
	}
	body := string(line[1:])
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return &serverError{body}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("resp: bad integer %q", body)
		}
		return n, nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxBulkLen {
			return nil, fmt.Errorf("resp: bad bulk length %q", body)
		}
		if n == -1 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return nil, errors.New("resp: bulk string not terminated by CRLF")
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 {
			return nil, fmt.Errorf("resp: bad array length %q", body)
		}
		if n == -1 {
			return nil, nil
		}
		if depth >= maxReplyDepth {
			return nil, errors.New("resp: arrays nested too deeply")
		}
		out := make([]any, 0, min(n, 1024))
		for range n {
			v, err := readReply(r, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("resp: unexpected type byte %q", line[0])
}

func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errors.New("resp: line too long")
		}
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, errors.New("resp: line not terminated by CRLF")
	}
	return line[:len(line)-2], nil
}
