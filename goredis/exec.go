package goredis

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
)

// process runs one go-redis command on Respire.
func (a *Client) process(ctx context.Context, cmd redis.Cmder) error {
	if a.rc == nil {
		cmd.SetErr(ErrNilClient)
		return ErrNilClient
	}
	if c, ok := cmd.(*redis.StringCmd); ok {
		if key, ok := getKey(c.Args()); ok {
			v, err := a.rc.Get(ctx, key)
			return storeString(c, v, err)
		}
	}
	if a.node && isReadWrite(cmd) {
		// A node's client never sends READONLY: its connections are in
		// the mode READWRITE asks for (the call that ends a replica read
		// session on go-redis's per-node clients).
		if c, ok := cmd.(*redis.StatusCmd); ok {
			c.SetVal("OK")
			return nil
		}
	}
	if err := a.supported(cmd); err != nil {
		cmd.SetErr(err)
		return err
	}
	args, err := convertArgs(cmd.Args())
	if err != nil {
		cmd.SetErr(err)
		return err
	}
	r, err := a.run(ctx, args)
	return a.settleOne(ctx, cmd, r, err)
}

// isReadWrite reports whether cmd is READWRITE, without arguments.
func isReadWrite(cmd redis.Cmder) bool {
	return len(cmd.Args()) == 1 && strings.EqualFold(cmd.Name(), "readwrite")
}

// getKey returns the key of a GET command ("get", key): the most common
// command goes through Respire's typed Get, whose reply is a string rather
// than Do's generic reply tree.
func getKey(args []any) (string, bool) {
	if len(args) != 2 {
		return "", false
	}
	name, ok := args[0].(string)
	if !ok || len(name) != 3 || !strings.EqualFold(name, "get") {
		return "", false
	}
	key, ok := args[1].(string)
	return key, ok
}

// storeString stores the outcome of a typed string read in c, as store
// does for Do's.
func storeString(c *redis.StringCmd, s string, err error) error {
	switch {
	case err == nil:
		c.SetVal(s)
	case errors.Is(err, respire.Nil):
		c.SetErr(redis.Nil)
	default:
		c.SetErr(mapErr(err))
	}
	return c.Err()
}

// run sends one command. The script commands go through Respire's typed
// methods, so that on a cluster they are routed by their keys rather than
// by a MOVED redirect.
func (a *Client) run(ctx context.Context, args []any) (respire.Reply, error) {
	if s, ok := parseScript(args); ok {
		switch s.name {
		case "eval":
			return a.rc.Eval(ctx, s.body, s.keys, s.args...)
		case "evalsha":
			return a.rc.EvalSha(ctx, s.body, s.keys, s.args...)
		case "eval_ro":
			return a.rc.EvalRO(ctx, s.body, s.keys, s.args...)
		case "evalsha_ro":
			return a.rc.EvalShaRO(ctx, s.body, s.keys, s.args...)
		}
	}
	return a.rc.Do(ctx, args...)
}

// script is an EVAL-family command taken apart.
type script struct {
	name string // lower case
	body string // the script or its SHA1
	keys []string
	args []any
}

// parseScript reads EVAL, EVALSHA and their _RO forms; ok is false for
// any other command, or one whose numkeys is not usable (Do then sends it
// as it is, and the server answers).
func parseScript(args []any) (script, bool) {
	if len(args) < 3 {
		return script{}, false
	}
	name, _ := args[0].(string)
	name = strings.ToLower(name)
	switch name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro":
	default:
		return script{}, false
	}
	body, ok1 := args[1].(string)
	var n int64
	var ok2 bool
	switch v := args[2].(type) {
	case int64:
		n, ok2 = v, true
	case string:
		var err error
		n, err = strconv.ParseInt(v, 10, 64)
		ok2 = err == nil
	}
	if !ok1 || !ok2 || n < 0 || n > int64(len(args)-3) {
		return script{}, false
	}
	keys := make([]string, n)
	for i := range keys {
		k, ok := args[3+i].(string)
		if !ok {
			return script{}, false
		}
		keys[i] = k
	}
	return script{name: name, body: body, keys: keys, args: args[3+n:]}, true
}

// pipeline runs a go-redis pipeline as one Respire Batch.
func (a *Client) pipeline(ctx context.Context, cmds []redis.Cmder) error {
	if a.rc == nil {
		setAll(cmds, ErrNilClient)
		return ErrNilClient
	}
	b := a.rc.NewBatch()
	futs, err := a.queueAll(cmds, b.Do)
	if err != nil {
		return err
	}
	if err := b.Exec(ctx); err != nil {
		setAll(cmds, err)
		return err
	}
	return a.settle(ctx, cmds, futs)
}

// txPipeline runs a go-redis MULTI/EXEC pipeline (cmds framed by MULTI and
// EXEC, as go-redis hands it to its hooks) as a Respire Tx.
func (a *Client) txPipeline(ctx context.Context, cmds []redis.Cmder) error {
	if a.rc == nil {
		setAll(cmds, ErrNilClient)
		return ErrNilClient
	}
	return a.execTx(ctx, a.rc.NewTx(), cmds)
}

// execTx queues the commands between MULTI and EXEC on tx and executes it.
// A transaction that a watched key failed gives every command
// redis.TxFailedErr, as go-redis does.
func (a *Client) execTx(ctx context.Context, tx *respire.Tx, cmds []redis.Cmder) error {
	inner := cmds[1 : len(cmds)-1]
	futs, err := a.queueAll(inner, tx.Do)
	if err != nil {
		setAll(cmds, err)
		return err
	}
	if err := tx.Exec(ctx); err != nil {
		if errors.Is(err, respire.TxFailed) {
			err = redis.TxFailedErr
		}
		setAll(cmds, err)
		return err
	}
	cmds[0].(*redis.StatusCmd).SetVal("OK")
	err = a.settle(ctx, inner, futs)
	if exec, ok := cmds[len(cmds)-1].(*redis.SliceCmd); ok {
		vals := make([]any, len(inner))
		for i, f := range futs {
			r, err := f.Result()
			switch {
			case errors.Is(err, respire.Nil):
			case err != nil:
				vals[i] = protoError(errMessage(err))
			default:
				vals[i] = value(r)
			}
		}
		exec.SetVal(vals)
	}
	return err
}

// isTx reports a pipeline framed by MULTI and EXEC.
func isTx(cmds []redis.Cmder) bool {
	if len(cmds) < 2 {
		return false
	}
	_, multi := cmds[0].(*redis.StatusCmd)
	_, exec := cmds[len(cmds)-1].(*redis.SliceCmd)
	return multi && exec && strings.EqualFold(cmds[0].Name(), "multi") &&
		strings.EqualFold(cmds[len(cmds)-1].Name(), "exec")
}

// queueAll checks and queues every command; if one cannot be sent, none
// is, and all of them get its error.
func (a *Client) queueAll(cmds []redis.Cmder, do func(...any) *respire.Future[respire.Reply]) ([]*respire.Future[respire.Reply], error) {
	all := make([][]any, len(cmds))
	for i, c := range cmds {
		err := a.supported(c)
		if err == nil {
			all[i], err = convertArgs(c.Args())
		}
		if err != nil {
			setAll(cmds, err)
			return nil, err
		}
	}
	futs := make([]*respire.Future[respire.Reply], len(cmds))
	for i, args := range all {
		futs[i] = do(args...)
	}
	return futs, nil
}

// settle stores each Future's reply in its command and returns the first
// command error, as go-redis's Exec does.
func (a *Client) settle(ctx context.Context, cmds []redis.Cmder, futs []*respire.Future[respire.Reply]) error {
	var first error
	for i, c := range cmds {
		r, err := futs[i].Result()
		if err := a.settleOne(ctx, c, r, err); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func setAll(cmds []redis.Cmder, err error) {
	for _, c := range cmds {
		c.SetErr(err)
	}
}
