package respire

import (
	"context"
	"fmt"
	"strconv"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Raw commands: Do and its twins on Batch and Tx.
//
// A command given as words is checked against the spec before it is
// encoded: one that would change the state of the connection it runs on
// (SUBSCRIBE, SELECT, CLIENT REPLY, MULTI, MONITOR, CLIENT SETNAME, ...) is
// refused with an *ArgError, because the connection is shared by every
// caller of the client: some would put its replies out of step with the
// requests, the others would change it for every caller (its name, its
// eviction). The list of such commands is generated from spec/replies.txt
// (connStateCommands), with the safe way to get the same effect; respgen
// checks that every command the spec marks as dealing with connections is
// either in it or reviewed as safe (gen/connstate.go). WithConn runs any of
// them on a connection of the caller's own; Options.OnConnect may send the
// attributes every connection of the client may carry alike
// (connSetupCommands).

var cmdDo = cmdInfo{name: ""}

// Do sends any command, given as its words, and returns the reply as a
// generic Reply. Arguments may be string, []byte, integers of every size,
// floats, bool (sent as 1 or 0) or time.Duration (sent in milliseconds,
// rounded up). Other types fail with an *ArgError, before anything is
// sent, that says what to send instead: for nil, "" (an empty string); for
// a time.Time, t.Unix(), t.UnixMilli() or a formatted text; for an
// encoding.BinaryMarshaler, the []byte of its MarshalBinary.
// A null reply gives Nil and an error reply an *Error.
//
//	r, err := client.Do(ctx, "OBJECT", "ENCODING", "mykey")
//
// A command that would change the state of the shared connection
// (SUBSCRIBE, SELECT, CLIENT REPLY, MULTI, MONITOR, HELLO, CLIENT SETNAME,
// CLIENT NO-EVICT, ...; the list is respire/zz_excluded.md) is refused
// before anything is sent with an *ArgError that names the safe way:
// Subscribe, Options.DB, Options.ClientName, Options.OnConnect, NewTx,
// Watch, or WithConn for a connection of the caller's own.
func (c *Client) Do(ctx context.Context, args ...any) (Reply, error) {
	return c.do(ctx, &cmdDo, args)
}

func (c *Client) do(ctx context.Context, info *cmdInfo, args []any) (Reply, error) {
	x, name := c.buildDo(info, args)
	if c.icmd != nil {
		x.raw, x.rawName = true, name
		if err := c.interceptCommand(ctx, x); err != nil {
			return Reply{}, err
		}
		return doResult(x)
	}
	if c.trace != nil && c.trace.cmd != nil {
		return c.doTraced(ctx, x, name)
	}
	return c.doBuilt(ctx, x, name)
}

// doBuilt runs a command that buildDo encoded; name is its first word.
func (c *Client) doBuilt(ctx context.Context, x *cmd, name string) (Reply, error) {
	x.rawName = name
	if err := c.doSend(ctx, x); err != nil {
		return Reply{}, err
	}
	return doResult(x)
}

// doSend sends a command that buildDo encoded (its first word in
// x.rawName) and waits for its reply, which it leaves in x: exec's
// contract, except that an error reply is a success here (doResult takes
// it).
func (c *Client) doSend(ctx context.Context, x *cmd) error {
	if x.argErr == nil {
		x.argErr = refuseAlone(x) // WAIT, WAITAOF (wait.go)
	}
	if x.argErr != nil {
		err := x.argErr
		x.Recycle()
		return err
	}
	x.dec = decodeReply
	x.sealRefs()
	readonly := x.info.flags&flagReadonly != 0
	if readonly {
		x.Retries = c.retries
	}
	name := x.rawName // x is the transport's once send fails
	if err := c.send(ctx, x); err != nil {
		return c.wrapErr(ctx, name, err)
	}
	if c.cache != nil && !readonly {
		c.afterUnknown(ctx)
	}
	return nil
}

// doResult returns the reply doSend left in x, and gives x back.
func doResult(x *cmd) (Reply, error) {
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

// buildDo encodes a raw command. A refused command or a bad argument is
// recorded in the returned cmd's argErr. A command the spec knows takes
// that command's description, so that it is routed as its typed method
// would be: blocking ones to the pool, and by its first key. name is the
// command's first word, for errors.
func (c *Client) buildDo(info *cmdInfo, args []any) (*cmd, string) {
	return c.encodeDo(info, args, true)
}

// encodeDo is buildDo; refuse says whether connection-state commands are
// refused (everywhere but on a Conn).
func (c *Client) encodeDo(info *cmdInfo, args []any, refuse bool) (*cmd, string) {
	if len(args) == 0 {
		x := newCmd(info)
		x.fail(newArgError("Do", "args", "no command given"))
		return x, ""
	}
	x := newCmd(info)
	name := word(args[0])
	if name == "" {
		name = fmt.Sprint(args[0])
	}
	if refuse {
		if err := c.be.refuse(args); err != nil {
			x.fail(err)
			return x, name
		}
	}
	for i, a := range args {
		x.argAny(name, strconv.Itoa(i), a)
	}
	keyPos := 1
	if info == &cmdDo {
		if known := lookupCommand(args); known != nil {
			x.info = known
			keyPos = known.firstKey
			c.be.doKeys(x, known, args)
		} else {
			x.verb = name
		}
	}
	if c.conns > 1 {
		if k, ok := argAt(args, keyPos).(string); ok && keyPos > 0 {
			x.Route = routeOf(k)
		} else {
			x.Route = c.rr.Add(1)
		}
	}
	return x, name
}

// clusterSelect is why SELECT is refused on a cluster, where the generated
// reason's Client.WithConn does not apply: a held connection is one node's,
// and the next command may be another's.
const clusterSelect = "switches the database of connections shared by every caller; set Options.DB " +
	"(a client per database), which every node connection selects: a cluster allows databases other than 0 " +
	"on Valkey 9 and later, with cluster-databases above the database"

// refuseConnState returns the *ArgError for a command that would change
// the state of the connection it runs on, or nil. cluster says whether the
// client serves a cluster; setup that the command is sent by
// Options.OnConnect, which may set the attributes of connSetupCommands
// (every connection of the client gets them alike).
func refuseConnState(args []any, cluster, setup bool) error {
	var buf [72]byte
	name, ok := upperWord(buf[:0], args[0])
	if !ok {
		return nil
	}
	full := name
	reason, found := connStateCommands[string(name)]
	if len(args) > 1 {
		if sub, ok := upperWord(append(name, ' '), args[1]); ok {
			if r, f := connStateCommands[string(sub)]; f {
				full, reason, found = sub, r, true
			}
		}
	}
	if !found || setup && connSetupCommands[string(full)] {
		return nil
	}
	if cluster && string(full) == "SELECT" {
		reason = clusterSelect
	}
	return &ArgError{Command: string(full), Argument: "command",
		Reason: "refused: it changes the state of a connection the client shares between callers (" + reason + ")"}
}

// word returns a command word given as a string or []byte, or "".
func word(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// upperWord appends the upper-case form of a command word given as a
// string or []byte; false for other types and words longer than any
// command name.
func upperWord(dst []byte, a any) ([]byte, bool) {
	switch v := a.(type) {
	case string:
		if len(v) > 32 {
			return dst, false
		}
		for i := 0; i < len(v); i++ {
			dst = append(dst, upper(v[i]))
		}
		return dst, true
	case []byte:
		if len(v) > 32 {
			return dst, false
		}
		for _, b := range v {
			dst = append(dst, upper(b))
		}
		return dst, true
	}
	return dst, false
}

func upper(b byte) byte {
	if 'a' <= b && b <= 'z' {
		b -= 'a' - 'A'
	}
	return b
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
	var buf [72]byte
	up, ok := upperWord(buf[:0], args[0])
	if !ok {
		return nil
	}
	if len(args) > 1 {
		if full, ok := upperWord(append(up, ' '), args[1]); ok {
			if info := commandsByName[string(full)]; info != nil {
				return info
			}
		}
	}
	return commandsByName[string(up)]
}

func decodeReply(m resp.Msg, r *result) error {
	r.Any = Reply{m.Tree()}
	return nil
}

// decodeReplyNil is decodeReply for a Future: a null reply is Nil there,
// as it is Do's error.
func decodeReplyNil(m resp.Msg, r *result) error {
	r.Any = Reply{m.Tree()}
	if m.Top().Null || m.Top().Type == resp.TypeNull {
		return Nil
	}
	return nil
}

func pickReply(r *result) Reply {
	v, _ := r.Any.(Reply)
	return v
}

// Do queues any command, given as its words, as Client.Do would send it,
// and returns the Future of its generic reply (Nil for a null reply). A
// command that would change the state of the connection is refused as by
// Client.Do: the Future and Exec hold the *ArgError, and nothing of the
// batch is sent.
func (b *Batch) Do(args ...any) *Future[Reply] {
	x, _ := b.c.buildDo(&cmdDo, args)
	return queue(b, x, decodeReplyNil, pickReply)
}

// clusterKeys records the keys of a raw command at the spec's key
// positions, for routing on a cluster. Commands whose keys move (EVAL's
// numkeys, XREAD's STREAMS) have none there: they go to any node and
// follow its MOVED redirect.
func clusterKeys(x *cmd, info *cmdInfo, args []any) {
	first, last, step := info.firstKey, info.lastKey, info.keyStep
	if first <= 0 || step <= 0 || info.flags&flagMovableKeys != 0 {
		return
	}
	if last < 0 {
		last = len(args) + last
	}
	for i := first; i <= last && i < len(args); i += step {
		if k := word(args[i]); k != "" || args[i] != nil {
			x.keys = append(x.keys, k)
		}
	}
}
