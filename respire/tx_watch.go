package respire

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Optimistic transactions (WATCH).
//
// WATCH asks the server to fail the next EXEC of the connection (with a
// null reply) if any of the keys changes in between. So Watch holds one
// connection of the blocking pool for the whole call: WATCH, the caller's
// function, then MULTI ... EXEC, and UNWATCH when no EXEC was sent, so that
// the connection goes back to the pool without watched keys.
//
// The function reads with the Client as usual, on the multiplexed
// connections: WATCH has been acknowledged before the function runs, so
// any change to a watched key after that moment fails the EXEC, whatever
// connection the read used. This keeps reads pipelined with everybody
// else's and gives the function the whole typed surface of Client.

// Watch runs fn as an optimistic transaction on keys. It watches keys,
// then calls fn with an empty Tx. fn reads what it needs with the Client
// (c.Get, c.HGetAll, ...) and queues the writes on tx; when fn returns nil,
// Watch executes tx. If a watched key changed since Watch began, the
// server runs none of tx and Watch returns TxFailed; WatchRetry retries in
// that case.
//
//	err := c.Watch(ctx, func(tx *respire.Tx) error {
//		n, err := c.Get(ctx, "balance")
//		if err != nil {
//			return err
//		}
//		... // compute from n
//		tx.Set("balance", next, nil)
//		return nil
//	}, "balance")
//
// Reads in fn must come from the server: not through Client.Cached, whose
// local copy may predate the WATCH. With Options.ReadFrom set to read from
// replicas, they must also come from the primary: read with
// PrimaryReads(ctx), as a replica's copy may predate the WATCH too (the
// transaction would then commit a value computed from a stale one).
//
// When fn returns an error, nothing is executed and Watch returns that
// error. When fn queues nothing, Watch sends no EXEC and returns nil. fn
// may call tx.Exec itself, to read the Futures before returning; Watch
// then returns what Exec returned. Futures queued on tx are settled when
// Watch returns (they hold ErrNotExecuted if nothing was executed).
//
// Watch holds a connection of the blocking pool (Options.BlockingPoolSize)
// until it returns: keep fn short. The errors of Tx.Exec apply, an error
// wrapping ErrPoolExhausted at once when the pool is at its bound. It then
// gives the connection back without watched keys (EXEC or UNWATCH cleared
// them) for the next Watch, transaction or blocking command to reuse; the
// pool closes connections idle for a minute but for the 4 used last, so N
// callers in Watch at once leave up to N idle connections for that minute.
// A connection whose state is unknown (fn panicked, ctx ended, UNWATCH
// failed) is closed instead.
func (c *Client) Watch(ctx context.Context, fn func(tx *Tx) error, keys ...string) error {
	h, err := c.holdWatch(ctx, keys)
	if err != nil {
		return c.wrapErr(ctx, "WATCH", err)
	}
	defer h.Release()
	return c.watchOnce(ctx, h, fn, keys)
}

// WatchRetry is Watch in an optimistic loop: as long as the transaction
// fails with TxFailed (a watched key changed under it), it calls fn again
// with a new Tx, after a short randomized pause that grows with the number
// of attempts, so that contending callers spread out. fn must therefore be
// safe to run several times, and read afresh each time. WatchRetry returns
// nil once a transaction commits, at once on any other error, and, when
// ctx ends between attempts, an error wrapping both TxFailed and the
// context's error. It runs fn at most Options.WatchRetries times
// (DefaultWatchRetries when zero); when the last attempt fails too, it
// returns an error that wraps TxFailed and says how many attempts it made.
func (c *Client) WatchRetry(ctx context.Context, fn func(tx *Tx) error, keys ...string) error {
	h, err := c.holdWatch(ctx, keys)
	if err != nil {
		return c.wrapErr(ctx, "WATCH", err)
	}
	defer h.Release()
	attempts := c.opts.WatchRetries
	if attempts == 0 {
		attempts = DefaultWatchRetries
	}
	var timer *time.Timer
	for attempt := 1; ; attempt++ {
		err := c.watchOnce(ctx, h, fn, keys)
		if !errors.Is(err, TxFailed) {
			return err
		}
		if attempt >= attempts {
			return fmt.Errorf("%w: gave up after %d attempts (Options.WatchRetries)", TxFailed, attempt)
		}
		if timer == nil {
			timer = time.NewTimer(txBackoff(attempt))
			defer timer.Stop()
		} else {
			timer.Reset(txBackoff(attempt))
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return fmt.Errorf("%w (%d attempts): %w", TxFailed, attempt, ctx.Err())
		}
	}
}

// holdWatch lends the connection a Watch runs on: on a cluster, one of the
// primary that serves the keys, which must share a slot.
func (c *Client) holdWatch(ctx context.Context, keys []string) (*transport.Held, error) {
	slot, keyed, err := c.be.watchSlot(keys)
	if err != nil {
		return nil, err
	}
	return c.be.hold(ctx, slot, keyed, nil)
}

// txBackoff is the pause after the given number of failed attempts: random
// (full jitter) below a bound that doubles from 250µs up to 50ms.
func txBackoff(attempt int) time.Duration {
	bound := 250 * time.Microsecond << min(attempt-1, 8)
	bound = min(bound, 50*time.Millisecond)
	return rand.N(bound) + 1
}

// watchOnce is one attempt of Watch on h, which it leaves without watched
// keys, or broken (then Release closes it).
func (c *Client) watchOnce(ctx context.Context, h *transport.Held, fn func(tx *Tx) error, keys []string) (err error) {
	if len(keys) == 0 {
		return newArgError("WATCH", "key", "at least one value is required")
	}
	tx := &Tx{b: c.NewBatch(), held: h}
	if err := tx.Watch(ctx, keys...); err != nil {
		return err
	}
	clean := false
	defer func() {
		if !clean {
			// fn panicked: the connection's state is unknown.
			h.Discard()
			tx.discard()
		}
	}()
	err = fn(tx)
	clean = true
	switch {
	case err != nil:
		tx.discard()
	case tx.b.done:
		err = tx.err
	case tx.Len() == 0:
		tx.discard()
	default:
		err = tx.Exec(ctx)
	}
	if tx.watching {
		tx.unwatch(ctx)
	}
	tx.held = nil
	return err
}

var (
	cmdWatchInfo   = cmdInfo{name: "WATCH"}
	cmdUnwatchInfo = cmdInfo{name: "UNWATCH"}
)

// Watch adds keys to those watched for this transaction, for keys known
// only after a read in the function given to Client.Watch. It fails on a
// Tx that does not come from Client.Watch, and after Exec.
func (tx *Tx) Watch(ctx context.Context, keys ...string) error {
	if tx.held == nil || tx.b.done {
		return errors.New("respire: Tx.Watch: only inside Client.Watch, before Exec")
	}
	if len(keys) == 0 {
		return nil
	}
	x := newCmd(&cmdWatchInfo)
	defer x.Recycle()
	for _, k := range keys {
		x.arg(k)
	}
	if err := tx.held.Do(ctx, x.sealed(), 1, x.handleDirect(decOK)); err != nil {
		return tx.b.c.wrapErr(ctx, "WATCH", err)
	}
	tx.watching = true
	return withCommand(x.info, x.replyErr)
}

// unwatch clears the watched keys before the connection goes back to the
// pool, or marks it to be closed when that fails.
func (tx *Tx) unwatch(ctx context.Context) {
	tx.watching = false
	if ctx.Err() != nil {
		tx.held.Discard()
		return
	}
	x := newCmd(&cmdUnwatchInfo)
	defer x.Recycle()
	if err := tx.held.Do(ctx, x.sealed(), 1, x.handleDirect(decOK)); err != nil || x.replyErr != nil {
		tx.held.Discard()
	}
}

// discard drops the queued commands unsent; their Futures stay unsettled
// (ErrNotExecuted).
func (tx *Tx) discard() {
	b := tx.b
	if b.done {
		return
	}
	b.done = true
	for _, x := range b.cmds {
		x.Recycle()
	}
	b.cmds, b.futs = nil, nil
}

// sealed seals x and returns its encoding.
func (x *cmd) sealed() []byte {
	x.seal()
	return x.buf[x.start:]
}

// handleDirect returns the reply handler of x for a round trip on a held
// connection, decoding with dec.
func (x *cmd) handleDirect(dec decoder) func(int, resp.Msg) {
	x.dec = dec
	return func(_ int, m resp.Msg) { x.HandleReply(m) }
}
