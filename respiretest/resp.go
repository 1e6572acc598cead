package respiretest

// A few commands to the nodes of a cluster or a Sentinel deployment, for
// setting them up and watching them, sent on a connection of their own so
// that the client under test is never involved.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// requestTimeout bounds one command to one node, so that a stopped node
// cannot use up a whole wait.
const requestTimeout = 2 * time.Second

// serverError is an error reply ("-ERR ...").
type serverError string

func (e serverError) Error() string { return string(e) }

// do sends one command to addr in RESP2 on a new connection and returns
// its reply: a string (simple or bulk; "" for a null), an int64, a []any,
// or an error reply as a serverError.
func do(ctx context.Context, addr string, args ...string) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return nil, err
	}
	reply, err := readReply(bufio.NewReader(conn))
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", strings.Join(args, " "), addr, err)
	}
	if se, ok := reply.(serverError); ok {
		return nil, fmt.Errorf("%s on %s: %w", strings.Join(args, " "), addr, se)
	}
	return reply, nil
}

// doString is do for a command whose reply is a string.
func doString(ctx context.Context, addr string, args ...string) (string, error) {
	r, err := do(ctx, addr, args...)
	if err != nil {
		return "", err
	}
	s, ok := r.(string)
	if !ok {
		return "", fmt.Errorf("%s on %s: a reply of type %T, not a string", strings.Join(args, " "), addr, r)
	}
	return s, nil
}

// readReply reads one RESP2 reply. Error replies nested in an array stay
// in it as serverErrors.
func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return nil, fmt.Errorf("malformed reply line %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return serverError(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return "", err // $-1: null
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return []any(nil), err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = readReply(r); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown reply type %q", kind)
}

// infoField returns the value of field in an INFO reply, "" when absent.
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// pairs reads a flat list of names and values (SENTINEL MASTER).
func pairs(v any) map[string]string {
	a, _ := v.([]any)
	m := make(map[string]string, len(a)/2)
	for i := 0; i+1 < len(a); i += 2 {
		m[fmt.Sprint(a[i])] = fmt.Sprint(a[i+1])
	}
	return m
}

// defaultWait bounds a wait whose context has no deadline.
const defaultWait = 30 * time.Second

// poll calls check, backing off from 10ms to 100ms, until it returns nil
// or ctx ends; without a deadline in ctx it gives up after defaultWait. A
// check that returns a *permanentError ends the wait with its cause.
func poll(ctx context.Context, what string, check func(context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultWait)
		defer cancel()
	}
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := check(ctx)
		if err == nil {
			return nil
		}
		var perm *permanentError
		if errors.As(err, &perm) {
			return fmt.Errorf("respiretest: %s: %w", what, perm.err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("respiretest: waiting for %s: %w (last: %v)", what, ctx.Err(), err)
		case <-t.C:
		}
	}
}

// permanentError ends a poll at once.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }
