package respire

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// cmdInfo is the static description of one command. The generator emits
// one package-level value per command from the spec; nothing here is parsed
// at run time.
type cmdInfo struct {
	name                       string // "GET", "CLIENT KILL"
	flags                      cmdFlag
	firstKey, lastKey, keyStep int // legacy key positions; 0 is the command name
	requestPolicy              string
	responsePolicy             string
	servers                    serverSet // serverRedis70 | ...
}

// cmdFlag is a set of command properties taken from the spec.
type cmdFlag uint32

const (
	flagReadonly cmdFlag = 1 << iota
	flagWrite
	flagBlocking
	flagPubsub
	flagMovableKeys
	flagNoscript
	flagFast
	flagAdmin
	flagLoading
	flagStale
	flagNondeterministic
)

// result holds a decoded reply. Scalars go in their own fields so that the
// common commands decode without allocating; anything else goes in Any.
type result struct {
	Int   int64
	Float float64
	Str   string
	Bool  bool
	Any   any
}

// decoder turns a reply into a result. It runs on the connection's reader
// goroutine; m is valid only during the call, so decoders copy what they
// keep. Top-level error replies never reach a decoder.
type decoder func(m resp.Msg, r *result) error

// hdrRoom is the space reserved in front of a command's arguments for the
// RESP array header, which is written once the arguments are counted.
const hdrRoom = 24

// cmd is one command being built and run. It is pooled.
type cmd struct {
	transport.Request
	info     *cmdInfo
	buf      []byte
	start    int
	nargs    int
	keyed    bool
	oneRoute bool     // the route picks nothing (one connection): argKey does not hash
	keys     []string // added with argKey, for the client-side cache
	argErr   error
	srv      *serverBitCache // the connected spec server, for cmd.needs; nil if unknown
	dec      decoder
	res      result
	replyErr error
	// verb is the first word of a raw command the spec does not know (a
	// module's), for naming it in its error; "" otherwise.
	verb string
	// raw marks a command of Do, and rawName is its first word as given,
	// for the interceptors (intercept_client.go); answered marks one an
	// interceptor answered (Command.Reply).
	raw      bool
	rawName  string
	answered bool

	// refs are the arguments of transport.DirectPayload bytes or more,
	// not copied into buf (bigarg.go); wrefs the same with offsets into
	// the sealed payload, for the transport.
	refs, wrefs []transport.Ref
}

// name is the command's name for errors: the spec's ("CLIENT KILL"), or
// the first word of a raw command the spec does not know, in upper case.
func (x *cmd) name() string {
	if x.info.name != "" || x.verb == "" {
		return x.info.name
	}
	return strings.ToUpper(x.verb)
}

var cmdPool = sync.Pool{New: func() any {
	x := &cmd{buf: make([]byte, hdrRoom, 256)}
	x.Init(x)
	return x
}}

// HandleReply implements transport.Handler.
func (x *cmd) HandleReply(m resp.Msg) {
	n := &m[m.Value(0)]
	if n.IsError() {
		x.replyErr = x.serverError(n)
		return
	}
	x.replyErr = x.dec(m, &x.res)
}

// serverError is the *Error of x's error reply n. For a command that may
// carry a credential, an argument the server quotes in its message is
// shown as CommandArgs.String renders it (redact.go).
func (x *cmd) serverError(n *resp.Node) error {
	name := x.name()
	e := newError(name, string(n.Data))
	if redactsName(name) && len(x.buf) > hdrRoom {
		e.Message = hideSecrets(e.Message, CommandArgs{enc: x.buf[hdrRoom:], n: x.nargs}.Strings())
		e.Prefix, _, _ = strings.Cut(e.Message, " ")
	}
	return e
}

// Recycle implements transport.Handler.
func (x *cmd) Recycle() {
	x.info = nil
	x.argErr = nil
	x.srv = nil
	x.replyErr = nil
	x.verb = ""
	x.raw, x.rawName, x.answered = false, "", false
	x.dec = nil
	switch l := x.res.Any.(type) {
	case *Lease:
		// Decoded for a caller that left: the buffer goes back to the pool.
		l.Release()
	case *LeaseList:
		l.Release()
	}
	x.res = result{}
	clear(x.keys)
	x.keys = x.keys[:0]
	x.dropRefs()
	if cap(x.buf) > 64<<10 {
		x.buf = make([]byte, hdrRoom, 256)
	}
	cmdPool.Put(x)
}

// newCmd takes a command from the pool with its name tokens appended.
func newCmd(info *cmdInfo) *cmd {
	x := blankCmd(info)
	name := info.name
	for name != "" {
		word := name
		if i := strings.IndexByte(name, ' '); i >= 0 {
			word, name = name[:i], name[i+1:]
		} else {
			name = ""
		}
		x.arg(word)
	}
	return x
}

// renameTo makes x the command info, whose one-word name replaces x's
// (a twin taking the same arguments: EXPIRE and PEXPIRE), keeping the
// arguments written so far.
func (x *cmd) renameTo(info *cmdInfo) {
	old := len(resp.AppendBulkString(nil, x.info.name))
	rest := append([]byte(nil), x.buf[hdrRoom+old:]...)
	x.buf = resp.AppendBulkString(x.buf[:hdrRoom], info.name)
	shift := len(x.buf) - hdrRoom - old
	x.buf = append(x.buf, rest...)
	for i := range x.refs {
		x.refs[i].At += shift
	}
	x.info = info
}

// blankCmd takes a command from the pool with no argument yet.
func blankCmd(info *cmdInfo) *cmd {
	x := cmdPool.Get().(*cmd)
	x.info = info
	x.buf = x.buf[:hdrRoom]
	x.nargs = 0
	x.keyed = false
	x.oneRoute = false
	x.Route = 0
	x.Retries = 0
	x.ReadOnly = false
	return x
}

// arg appends a bulk string argument.
func (x *cmd) arg(s string) {
	if len(s) >= transport.DirectPayload {
		x.argRef(unsafe.Slice(unsafe.StringData(s), len(s)))
		return
	}
	x.buf = resp.AppendBulkString(x.buf, s)
	x.nargs++
}

func (x *cmd) argBytes(b []byte) {
	if len(b) >= transport.DirectPayload {
		x.argRef(b)
		return
	}
	x.buf = resp.AppendBulk(x.buf, b)
	x.nargs++
}

func (x *cmd) argInt(i int64) {
	x.buf = resp.AppendBulkInt(x.buf, i)
	x.nargs++
}

func (x *cmd) argUint(u uint64) {
	x.buf = resp.AppendBulkUint(x.buf, u)
	x.nargs++
}

func (x *cmd) argFloat(f float64) {
	x.buf = resp.AppendBulkFloat(x.buf, f)
	x.nargs++
}

// argKey appends a key; the first key decides the route, so that commands
// on one key keep their order across connections.
func (x *cmd) argKey(k string) {
	if !x.keyed {
		x.keyed = true
		if !x.oneRoute {
			x.Route = routeOf(k)
		}
	}
	x.keys = append(x.keys, k)
	x.arg(k)
}

// fail records an argument error; exec returns it and sends nothing.
func (x *cmd) fail(err error) {
	if x.argErr == nil {
		x.argErr = err
	}
}

// seal writes the array header in front of the arguments, which it first
// copies into buf whole (see sealRefs).
func (x *cmd) seal() {
	x.flatten()
	x.sealHeader()
}

// sealHeader writes the array header in front of the arguments.
func (x *cmd) sealHeader() {
	var tmp [hdrRoom]byte
	h := append(tmp[:0], '*')
	h = strconv.AppendInt(h, int64(x.nargs), 10)
	h = append(h, '\r', '\n')
	x.start = hdrRoom - len(h)
	copy(x.buf[x.start:], h)
	x.SetPayload(x.buf[x.start:])
}

// routeOf hashes a key (FNV-1a) to pick a connection.
func routeOf(k string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(k); i++ {
		h ^= uint32(k[i])
		h *= 16777619
	}
	return h
}

// exec sends x and waits for its reply, decoded by dec. On error x has been
// given back and must not be touched; on success the caller reads x.res and
// then calls release(x).
func (c *Client) exec(ctx context.Context, x *cmd, dec decoder) error {
	if c.icmd != nil {
		x.dec = dec
		return c.interceptCommand(ctx, x)
	}
	if c.trace != nil && c.trace.cmd != nil {
		return c.execTraced(ctx, x, dec)
	}
	return c.execPlain(ctx, x, dec)
}

// execPlain is exec without tracing or interceptors: the backend's.
func (c *Client) execPlain(ctx context.Context, x *cmd, dec decoder) error {
	if x.argErr == nil {
		x.argErr = refuseAlone(x) // WAIT, WAITAOF (wait.go)
	}
	if x.argErr != nil {
		err := x.argErr
		x.Recycle()
		return err
	}
	return c.be.exec(ctx, x, dec)
}

// replied ends exec once x's reply arrived: the client-side cache drops
// what a write changed, and an error reply is the caller's error.
func (c *Client) replied(ctx context.Context, x *cmd) error {
	if c.cache != nil {
		c.afterWrite(ctx, x)
	}
	if x.replyErr != nil {
		err := x.replyErr
		x.Recycle()
		return err
	}
	return nil
}

// newCmd takes a command for c. It is a method so that generated code reads
// the same on every client type.
//
// A command the connected server lacks (by the spec) fails with an
// *UnsupportedError before anything is sent.
func (c *Client) newCmd(info *cmdInfo) *cmd {
	x := newCmd(info)
	// With one connection every route leads to it: hashing each key (2%
	// of the client's CPU in pipelines of 1 KiB GETs) would pick nothing.
	// The client-side cache routes its own commands by their users'.
	x.oneRoute = c.conns <= 1 && c.cache == nil
	if err := c.unsupported(x, info); err != nil {
		x.fail(err)
	}
	return x
}

// release gives x back after its result was read.
func (c *Client) release(x *cmd) { x.Recycle() }
