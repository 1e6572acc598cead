package goredis

import (
	"context"
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
)

// Watch: go-redis's Watch holds a connection of its own for WATCH, the
// reads of fn and MULTI ... EXEC. The adapter maps it onto Respire's Watch,
// which holds a connection of its blocking pool for WATCH and EXEC while
// fn's reads run on the shared connections (WATCH was acknowledged first,
// so a change after it still fails the EXEC), on primaries whatever the
// client's ReadFrom (respire.PrimaryReads).
//
// fn gets a real *redis.Tx, from a go-redis client made for this one call
// whose hook knows the session: the Tx's TxPipelined and TxPipeline run as
// the session's respire.Tx, its Watch adds keys to it, its other commands
// run as any other command of the adapter (hooks included). A watched key
// that changed fails the transaction with redis.TxFailedErr, as in
// go-redis.

// watchSession is one call of Watch.
type watchSession struct {
	a     *Client
	tx    *respire.Tx // nil once executed, or when no key was watched
	chain *chain
}

// Watch runs fn as an optimistic transaction on keys, as go-redis's
// Client.Watch does, on Respire's Watch (see the package documentation).
func (a *Client) Watch(ctx context.Context, fn func(*redis.Tx) error, keys ...string) error {
	if a.rc == nil {
		return ErrNilClient
	}
	ws := &watchSession{a: a}
	ws.chain = buildChain(a.chain.Load().hooks, ws.process, a.pipeline, ws.txPipeline)
	shell := redis.NewClient(a.shellOptions())
	defer shell.Close()
	shell.AddHook(outer{a: a, ws: ws})
	if len(keys) == 0 {
		return shell.Watch(ctx, fn)
	}
	ran := false
	var fnErr error
	err := a.rc.Watch(ctx, func(tx *respire.Tx) error {
		ws.tx, ran = tx, true
		fnErr = shell.Watch(ctx, fn)
		return fnErr
	}, keys...)
	switch {
	case !ran:
		return mapErr(err)
	case fnErr != nil:
		return fnErr
	case errors.Is(err, respire.TxFailed):
		return redis.TxFailedErr
	}
	return mapErr(err)
}

// process runs a command of the Tx: WATCH adds keys to the session, and
// UNWATCH, which go-redis sends when the Tx closes, is left to Respire's
// Watch, which clears the keys when it returns.
func (ws *watchSession) process(ctx context.Context, cmd redis.Cmder) error {
	switch strings.ToLower(cmd.Name()) {
	case "watch":
		c, ok := cmd.(*redis.StatusCmd)
		if !ok || ws.tx == nil {
			break
		}
		keys := make([]string, 0, len(cmd.Args())-1)
		for _, k := range cmd.Args()[1:] {
			s, ok := k.(string)
			if !ok {
				return ws.a.process(ctx, cmd)
			}
			keys = append(keys, s)
		}
		if err := ws.tx.Watch(ctx, keys...); err != nil {
			err = mapErr(err)
			c.SetErr(err)
			return err
		}
		c.SetVal("OK")
		return nil
	case "unwatch":
		if c, ok := cmd.(*redis.StatusCmd); ok {
			c.SetVal("OK")
			return nil
		}
	}
	// fn's reads must see every write before the WATCH: on the primary,
	// whatever the client's ReadFrom (a replica may lag behind).
	return ws.a.process(respire.PrimaryReads(ctx), cmd)
}

// txPipeline runs the Tx's MULTI ... EXEC as the session's respire.Tx;
// a second one in the same call runs unwatched, as after EXEC in go-redis.
func (ws *watchSession) txPipeline(ctx context.Context, cmds []redis.Cmder) error {
	tx := ws.tx
	if tx == nil {
		return ws.a.txPipeline(ctx, cmds)
	}
	ws.tx = nil
	return ws.a.execTx(ctx, tx, cmds)
}
