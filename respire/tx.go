package respire

import (
	"context"
	"errors"
	"fmt"

	"github.com/respire-go/respire/internal/topology"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Transactions (MULTI/EXEC).
//
// A Tx holds its commands until Exec, which sends MULTI, the commands and
// EXEC in one write on a connection of the blocking pool (a multiplexed
// connection cannot carry the per-connection state of a transaction), then
// reads the replies on the caller's goroutine. EXEC's array reply is split
// into its elements, and each element goes to its command's decoder as if
// it were that command's own reply.

// TxFailed is the error of a transaction that the server did not run
// because a key watched with Client.Watch changed before EXEC. Nothing of
// the transaction was applied; running it again, with fresh reads, may
// succeed (Client.WatchRetry does that):
//
//	if errors.Is(err, respire.TxFailed) { ... }
var TxFailed = errors.New("respire: transaction failed: a watched key changed")

// TxAbortedError is the error of a transaction that the server refused as
// a whole at EXEC (EXECABORT) because it rejected a command when it was
// queued (an unknown command, a wrong number of arguments, an ACL denial,
// OOM, ...). Nothing of the transaction was applied. The Future of each
// rejected command holds the server's reason for it; the other Futures
// hold the TxAbortedError.
type TxAbortedError struct {
	Err      *Error // the server's reply to EXEC, prefix EXECABORT
	Rejected int    // how many commands the server rejected when queued
}

func (e *TxAbortedError) Error() string {
	return fmt.Sprintf("respire: transaction aborted, %d command(s) rejected: %s", e.Rejected, e.Err.Message)
}

func (e *TxAbortedError) Unwrap() error { return e.Err }

// Tx is a MULTI/EXEC transaction: the commands queued on it run on the
// server one after the other, with no other client's command in between,
// when Exec is called. Its command methods queue into the transaction and
// return a *Future for the typed result:
//
//	tx := client.NewTx()
//	n := tx.Incr("counter")
//	tx.Expire("counter", time.Minute, nil)
//	if err := tx.Exec(ctx); err != nil { ... }
//	v, err := n.Result()
//
// Tx offers the commands that make sense inside MULTI: not the blocking
// ones (inside a transaction BLPOP does not block), not those the server
// refuses there or that change the connection's state, and no admin
// command; Do sends any command. A Tx is not safe for concurrent use and
// is used once.
//
// For optimistic locking (WATCH), get the Tx from Client.Watch instead of
// NewTx.
type Tx struct {
	b        *Batch          // the queued commands
	held     *transport.Held // the watched connection; nil outside Watch
	watching bool            // the server holds WATCHed keys for held
	err      error           // what Exec returned, for Watch
}

// NewTx returns an empty transaction that runs on c.
func (c *Client) NewTx() *Tx { return &Tx{b: c.NewBatch()} }

// Len returns the number of commands queued.
func (tx *Tx) Len() int { return tx.b.Len() }

// Do queues any command, given as its words, in the transaction; see
// Client.Do for the arguments it takes and the commands it refuses.
func (tx *Tx) Do(args ...any) *Future[Reply] { return tx.b.Do(args...) }

// HSetMap queues HSET with the fields and values of a map in the
// transaction; see Client.HSetMap.
func (tx *Tx) HSetMap(key string, fields map[string]any) *Future[int64] {
	return tx.b.HSetMap(key, fields)
}

// XAddMap queues XADD with the fields and values of a map in the
// transaction; see Client.XAddMap.
func (tx *Tx) XAddMap(key string, id string, fields map[string]any, opts *XAddOptions) *Future[string] {
	return tx.b.XAddMap(key, id, fields, opts)
}

// SetIfGet queues SET with a condition and GET in the transaction; see
// Client.SetIfGet.
func (tx *Tx) SetIfGet(key string, value string, condition SetIfCondition, opts *SetOptions) *Future[SetIfGetResult] {
	return tx.b.SetIfGet(key, value, condition, opts)
}

// Encoded MULTI and EXEC, sent around the queued commands.
const (
	multiPayload = "*1\r\n$5\r\nMULTI\r\n"
	execPayload  = "*1\r\n$4\r\nEXEC\r\n"
)

// Exec runs the transaction and waits for its outcome. It returns nil when
// the server ran the transaction: the replies, errors included, are then in
// each command's Future. A command that fails while the transaction runs
// (WRONGTYPE, say) fails alone; the server does not roll back the others.
//
// Otherwise nothing was applied (except after a connection error, when the
// outcome is unknown), every Future holds an error, and Exec returns:
//   - TxFailed when a watched key changed (only inside Client.Watch);
//   - a *TxAbortedError wrapping the server's EXECABORT when the server
//     rejected a command when queued; that command's Future holds its own
//     error;
//   - an *ArgError when a command has an invalid argument; nothing is sent;
//   - the context's or the connection's error, as a *CommandError. An
//     error wrapping ErrPoolExhausted means that the blocking pool, which
//     transactions share with blocking commands, was at its bound
//     (Options.BlockingPoolSize): every connection busy.
//
// A Tx with no command sends nothing (outside Watch).
func (tx *Tx) Exec(ctx context.Context) error {
	if tx.b.done {
		return ErrBatchDone
	}
	if tx.b.c.ibatch != nil {
		return tx.b.c.interceptBatch(ctx, tx.b, tx)
	}
	return tx.execNow(ctx)
}

// execNow is Exec without interceptors.
func (tx *Tx) execNow(ctx context.Context) error {
	b := tx.b
	if b.done {
		return ErrBatchDone
	}
	b.done = true
	cmds, futs := b.cmds, b.futs
	b.cmds, b.futs = nil, nil
	ctx, bt := tx.b.c.traceBatchStart(ctx, cmds, true)
	tx.err = tx.exec(ctx, cmds, futs)
	tx.b.c.traceBatchEnd(ctx, bt, tx.err)
	for _, x := range cmds {
		x.Recycle()
	}
	return tx.err
}

func (tx *Tx) exec(ctx context.Context, cmds []*cmd, futs []settler) error {
	for _, x := range cmds {
		if x.argErr != nil {
			return settleAll(futs, x.argErr)
		}
	}
	if len(cmds) == 0 && tx.held == nil {
		return nil
	}
	c := tx.b.c
	slot, keyed, err := c.be.txSlot(cmds)
	if err != nil {
		return settleAll(futs, err)
	}

	size := len(multiPayload) + len(execPayload)
	for _, x := range cmds {
		x.seal()
		size += len(x.buf) - x.start
	}
	payload := make([]byte, 0, len(askingPayload)+size)
	payload = append(payload, askingPayload...)
	payload = append(payload, multiPayload...)
	for _, x := range cmds {
		payload = append(payload, x.buf[x.start:]...)
	}
	payload = append(payload, execPayload...)

	var ask *topology.Node
	for attempt := 0; ; attempt++ {
		h := tx.held
		if h == nil {
			if h, err = c.be.hold(ctx, slot, keyed, ask); err != nil {
				return settleAll(futs, c.wrapErr(ctx, "MULTI", err))
			}
		}
		// ASKING before MULTI, after an ASK redirect: the server keeps the
		// flag for the whole transaction.
		p, n, skip := payload[len(askingPayload):], len(cmds)+2, 0
		if ask != nil {
			p, n, skip = payload, n+1, 1
		}
		r := txReplies{cmds: cmds, queueErr: make([]error, len(cmds))}
		err := h.Do(ctx, p, n, func(i int, m resp.Msg) {
			if i >= skip {
				r.handle(i-skip, m)
			}
		})
		if tx.held == nil {
			h.Release()
		}
		if err != nil {
			return settleAll(futs, c.wrapErr(ctx, "EXEC", err))
		}
		// Whatever EXEC replied, the server has unwatched the keys.
		tx.watching = false
		rd, redirected := r.redirect()
		if !redirected || tx.held != nil || attempt >= maxRedirects {
			return r.settle(ctx, c, futs)
		}
		// The cluster refused the whole transaction (EXECABORT) for a
		// redirect: nothing ran, so it goes again, as a unit.
		var ok bool
		if ask, ok = c.be.txRedirected(ctx, rd, attempt); !ok {
			return r.settle(ctx, c, futs)
		}
	}
}

// redirect returns the cluster redirect that made the server refuse the
// transaction, if any.
func (r *txReplies) redirect() (redirect, bool) {
	if r.execErr == nil {
		return redirect{}, false
	}
	for _, e := range r.queueErr {
		if rd, ok := redirectOf(e, ""); ok {
			return rd, true
		}
	}
	return redirectOf(r.multiErr, "")
}

// settle hands the outcome of the transaction to the Futures and returns
// Exec's error.
func (r *txReplies) settle(ctx context.Context, c *Client, futs []settler) error {
	cmds := r.cmds
	switch {
	case r.multiErr != nil:
		return settleAll(futs, withCommand(&cmdMulti, r.multiErr))
	case r.execErr != nil:
		var se *Error
		if !errors.As(r.execErr, &se) {
			return settleAll(futs, r.execErr)
		}
		abort := &TxAbortedError{Err: se}
		for _, e := range r.queueErr {
			if e != nil {
				abort.Rejected++
			}
		}
		for i, f := range futs {
			if e := r.queueErr[i]; e != nil {
				f.settle(nil, e)
			} else {
				f.settle(nil, abort)
			}
		}
		return abort
	case r.failed:
		return settleAll(futs, TxFailed)
	}
	if c.cache != nil {
		c.afterWrites(ctx, cmds)
	}
	for i, x := range cmds {
		futs[i].settle(&x.res, withCommand(x.info, x.replyErr))
	}
	return nil
}

// settleAll gives every Future the same error, and returns it.
func settleAll(futs []settler, err error) error {
	for _, f := range futs {
		f.settle(nil, err)
	}
	return err
}

// cmdMulti names MULTI in errors.
var cmdMulti = cmdInfo{name: "MULTI"}

// txReplies takes the replies to MULTI, the queued commands and EXEC.
type txReplies struct {
	cmds     []*cmd
	queueErr []error // per command: its rejection when queued
	multiErr error
	execErr  error // an error reply to EXEC, or a malformed one
	failed   bool  // EXEC replied null: a watched key changed
}

func (r *txReplies) handle(i int, m resp.Msg) {
	v := m.Value(0)
	n := &m[v]
	switch {
	case i == 0:
		if n.IsError() {
			r.multiErr = newServerError("MULTI", n)
		}
	case i <= len(r.cmds):
		if n.IsError() {
			r.queueErr[i-1] = r.cmds[i-1].serverError(n)
		}
	case n.IsError():
		r.execErr = newServerError("EXEC", n)
	case n.Null || n.Type == resp.TypeNull:
		r.failed = true
	case n.Type != resp.TypeArray || n.Int != int64(len(r.cmds)):
		r.execErr = &UnexpectedReplyError{Command: "EXEC", Got: fmt.Sprintf("%s of %d", n.Type, n.Int),
			Want: fmt.Sprintf("an array of %d replies", len(r.cmds))}
	default:
		// Each element is a valid Msg of its own: its command's reply.
		j := v + 1
		for _, x := range r.cmds {
			next := m.Next(j)
			x.HandleReply(m[j:next])
			j = next
		}
	}
}
