package goredis

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
)

// Replays: go-redis reads most of its replies into its commands with
// unexported methods (readReply). The adapter fills the common reply types
// itself, with their exported setters (reply.go); every other one it
// replays: it encodes the reply Respire received back into RESP, exactly
// as the server sent it, and lets go-redis's own processing read it from
// one of the adapter's connections (vconn), so that the command holds what
// go-redis would have given, nested errors, nulls and RESP3 types included.
//
// The command is sent through go-redis with its first word replaced by a
// token naming the prepared reply, and restored before the command is
// handed back; the connection answers the token with the reply.

// direct reports whether the adapter fills cmd's reply type itself.
func direct(cmd redis.Cmder) bool {
	switch cmd.(type) {
	case *redis.Cmd, *redis.StatusCmd, *redis.StringCmd, *redis.IntCmd,
		*redis.UintCmd, *redis.BoolCmd, *redis.FloatCmd, *redis.DurationCmd,
		*redis.TimeCmd, *redis.SliceCmd, *redis.BoolSliceCmd,
		*redis.StringSliceCmd, *redis.IntSliceCmd, *redis.FloatSliceCmd,
		*redis.MapStringStringCmd, *redis.MapStringIntCmd, *redis.ScanCmd,
		*redis.ZSliceCmd, *redis.XMessageSliceCmd:
		return true
	}
	return false
}

// settleOne stores the outcome of one command: directly for the types the
// adapter fills, by a replay for the others.
func (a *Client) settleOne(ctx context.Context, cmd redis.Cmder, r respire.Reply, err error) error {
	if direct(cmd) {
		return store(cmd, r, err)
	}
	var b []byte
	var rerr *respire.Error
	switch {
	case err == nil:
		b = appendReply(nil, r, a.proto)
	case errors.Is(err, respire.Nil):
		if a.proto == 3 {
			b = []byte("_\r\n")
		} else {
			b = []byte("$-1\r\n")
		}
	case errors.As(err, &rerr):
		b = appendLine(nil, '-', rerr.Message)
	default:
		err = mapErr(err)
		cmd.SetErr(err)
		return err
	}
	return a.replay(ctx, cmd, b)
}

// replay has go-redis read reply into cmd.
func (a *Client) replay(ctx context.Context, cmd redis.Cmder, reply []byte) error {
	args := cmd.Args()
	if len(args) == 0 || a.next == nil {
		cmd.SetErr(errNoReplay)
		return errNoReplay
	}
	id := a.seq.Add(1)
	a.replays.Store(id, reply)
	name := args[0]
	args[0] = replayPrefix + strconv.FormatUint(id, 10)
	// go-redis's own processing, without the hooks (they ran around the
	// adapter already) and without its context: the reply is in hand, and
	// a caller's context that ended meanwhile must not lose it.
	err := a.next(context.WithoutCancel(ctx), cmd)
	args[0] = name
	a.replays.Delete(id)
	return err
}

var errNoReplay = errors.New("goredis: cannot hand this reply to go-redis")

// takeReplay returns the reply prepared under id, for the connection that
// go-redis sent its token to.
func (a *Client) takeReplay(id uint64) []byte {
	if b, ok := a.replays.LoadAndDelete(id); ok {
		return b.([]byte)
	}
	return appendLine(nil, '-', "ERR goredis: no reply prepared for this command")
}
