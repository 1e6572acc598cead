package respire

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/transport"
	"github.com/respire-go/respire/transport/resp"
)

// Client is a Redis or Valkey client for one server. It multiplexes all
// goroutines over Options.Connections connections, pipelining their
// commands automatically. It is safe for concurrent use; create one and
// share it.
type Client struct {
	opts     Options
	mux      *transport.Mux
	blocking *transport.BlockingPool
	hub      *transport.PubSub
	cache    *clientCache // nil unless Options.ClientCache
	conns    uint32
	rr       atomic.Uint32
	srvBit   atomic.Pointer[serverBitCache]
}

// NewClient validates opts and returns a client that connects on first use.
// Use Connect to find a wrong address or password at once.
func NewClient(opts Options) (*Client, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cfg := opts.transportConfig()
	c := &Client{opts: opts, mux: transport.NewMux(cfg)}
	c.blocking = transport.NewBlockingPool(cfg, opts.BlockingPoolSize)
	c.hub = transport.NewPubSub(cfg)
	c.conns = uint32(c.mux.Config().Connections)
	c.cache = newClientCache(&opts, cfg)
	return c, nil
}

// Connect returns a client whose connections are established and
// handshaken, or the error that prevented it (an unreachable address, a
// TLS failure, a wrong password: a *HandshakeError wrapping the server's
// *Error).
func Connect(ctx context.Context, opts Options) (*Client, error) {
	c, err := NewClient(opts)
	if err != nil {
		return nil, err
	}
	if err := c.mux.Connect(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.connectCache(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the connections. Commands in flight and later commands fail
// with an error wrapping ErrClosed. Close waits for the client's goroutines
// to end. It is safe to call more than once.
func (c *Client) Close() error {
	c.closeCache()
	c.hub.Close()
	c.blocking.Close()
	return c.mux.Close()
}

// Stats returns transport counters (socket reads, bytes, replies), for
// measuring how many replies each read carries.
func (c *Client) Stats() transport.Stats { return c.mux.Stats() }

var cmdDo = cmdInfo{name: ""}

// Do sends any command, given as its words, and returns the reply as a
// generic Reply. Arguments may be string, []byte, integers, floats, bool
// (sent as 1 or 0) or time.Duration (sent as whole milliseconds). A null
// reply gives Nil and an error reply an *Error.
//
//	r, err := client.Do(ctx, "OBJECT", "ENCODING", "mykey")
func (c *Client) Do(ctx context.Context, args ...any) (Reply, error) {
	return c.do(ctx, &cmdDo, args)
}

func (c *Client) do(ctx context.Context, info *cmdInfo, args []any) (Reply, error) {
	if len(args) == 0 {
		return Reply{}, newArgError("Do", "args", "no command given")
	}
	x := newCmd(info)
	name, _ := args[0].(string)
	for i, a := range args {
		switch v := a.(type) {
		case string:
			x.arg(v)
		case []byte:
			x.argBytes(v)
		case int:
			x.argInt(int64(v))
		case int32:
			x.argInt(int64(v))
		case int64:
			x.argInt(v)
		case uint:
			x.argUint(uint64(v))
		case uint32:
			x.argUint(uint64(v))
		case uint64:
			x.argUint(v)
		case float64:
			x.argFloat(v)
		case float32:
			x.argFloat(float64(v))
		case bool:
			if v {
				x.arg("1")
			} else {
				x.arg("0")
			}
		case time.Duration:
			x.argInt(v.Milliseconds())
		default:
			x.fail(newArgError(fmt.Sprint(name), fmt.Sprint(i), fmt.Sprintf("unsupported type %T", a)))
		}
	}
	if x.argErr != nil {
		err := x.argErr
		x.Recycle()
		return Reply{}, err
	}
	x.dec = decodeReply
	x.seal()
	// A command the spec knows is routed as its typed method would be:
	// blocking ones to the pool, and by its first key.
	keyPos := 1
	var known *cmdInfo
	if info == &cmdDo {
		known = lookupCommand(args)
	}
	if known != nil {
		x.info = known
		keyPos = known.firstKey
	}
	if c.conns > 1 {
		if k, ok := argAt(args, keyPos).(string); ok && keyPos > 0 {
			x.Route = routeOf(k)
		} else {
			x.Route = c.rr.Add(1)
		}
	}
	readonly := known != nil && known.flags&flagReadonly != 0
	if err := c.send(ctx, x); err != nil {
		return Reply{}, c.wrapErr(name, err)
	}
	if c.cache != nil && !readonly {
		c.afterUnknown(ctx)
	}
	if x.replyErr != nil {
		err := x.replyErr
		x.Recycle()
		return Reply{}, err
	}
	r, _ := x.res.Any.(Reply)
	x.Recycle()
	if r.IsNull() {
		return r, Nil
	}
	return r, nil
}

func argAt(args []any, i int) any {
	if i >= 0 && i < len(args) {
		return args[i]
	}
	return nil
}

// lookupCommand finds the spec's description of a command given as words
// ("client", "kill", ...), case-insensitively and without allocating; nil
// when the spec does not know it.
func lookupCommand(args []any) *cmdInfo {
	name, ok := args[0].(string)
	if !ok || len(name) > 32 {
		return nil
	}
	var buf [72]byte
	up := appendUpper(buf[:0], name)
	if len(args) > 1 {
		if sub, ok := args[1].(string); ok && len(sub) <= 32 {
			full := appendUpper(append(up, ' '), sub)
			if info := commandsByName[string(full)]; info != nil {
				return info
			}
		}
	}
	return commandsByName[string(up)]
}

func appendUpper(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if 'a' <= b && b <= 'z' {
			b -= 'a' - 'A'
		}
		dst = append(dst, b)
	}
	return dst
}

func decodeReply(m resp.Msg, r *result) error {
	r.Any = Reply{m.Tree()}
	return nil
}
