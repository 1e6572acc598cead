package respire

// Hand-written stand-ins for four commands until the generated surface
// (zz_commands.go) provides them; the generator replaces this file.

import (
	"context"
	"time"

	"github.com/respire-go/respire/transport/resp"
)

var (
	cmdGET  = cmdInfo{name: "GET", flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, keyStep: 1}
	cmdSET  = cmdInfo{name: "SET", flags: flagWrite, firstKey: 1, lastKey: 1, keyStep: 1}
	cmdINCR = cmdInfo{name: "INCR", flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, keyStep: 1}
	cmdDEL  = cmdInfo{name: "DEL", flags: flagWrite, firstKey: 1, lastKey: -1, keyStep: 1}
)

// SetOptions are the optional arguments of Set.
type SetOptions struct {
	// EX sets an expiry, sent in milliseconds (PX).
	EX time.Duration
}

// Get returns the value of key, or Nil when it does not exist.
func (c *Client) Get(ctx context.Context, key string) (string, error) {
	x := c.newCmd(&cmdGET)
	x.argKey(key)
	if err := c.exec(ctx, x, decodeStrNullable); err != nil {
		return "", err
	}
	v := x.res.Str
	c.release(x)
	return v, nil
}

// Set sets key to value.
func (c *Client) Set(ctx context.Context, key, value string, opts *SetOptions) error {
	x := c.newCmd(&cmdSET)
	x.argKey(key)
	x.arg(value)
	if opts != nil && opts.EX > 0 {
		x.arg("PX")
		x.argInt(opts.EX.Milliseconds())
	}
	if err := c.exec(ctx, x, decodeOK); err != nil {
		return err
	}
	c.release(x)
	return nil
}

// Incr increments the integer at key by one and returns the new value.
func (c *Client) Incr(ctx context.Context, key string) (int64, error) {
	x := c.newCmd(&cmdINCR)
	x.argKey(key)
	if err := c.exec(ctx, x, decodeInt); err != nil {
		return 0, err
	}
	v := x.res.Int
	c.release(x)
	return v, nil
}

// Del removes keys and returns how many existed.
func (c *Client) Del(ctx context.Context, keys ...string) (int64, error) {
	x := c.newCmd(&cmdDEL)
	if len(keys) == 0 {
		x.fail(newArgError("DEL", "key", "at least one key is required"))
	}
	for _, k := range keys {
		x.argKey(k)
	}
	if err := c.exec(ctx, x, decodeInt); err != nil {
		return 0, err
	}
	v := x.res.Int
	c.release(x)
	return v, nil
}

func decodeStrNullable(m resp.Msg, r *result) error {
	n := &m[m.Value(0)]
	if n.Null {
		return Nil
	}
	switch n.Type {
	case resp.TypeBulkString, resp.TypeSimpleString, resp.TypeVerbatim:
		r.Str = string(n.Data)
		return nil
	}
	return errUnexpected("GET", n, "bulk string")
}

func decodeOK(m resp.Msg, r *result) error {
	n := &m[m.Value(0)]
	if n.Null {
		return Nil
	}
	if n.Type == resp.TypeSimpleString {
		return nil
	}
	return errUnexpected("SET", n, "simple string")
}

func decodeInt(m resp.Msg, r *result) error {
	n := &m[m.Value(0)]
	if n.Type == resp.TypeInteger {
		r.Int = n.Int
		return nil
	}
	return errUnexpected("INCR", n, "integer")
}
