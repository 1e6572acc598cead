package integration

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWatchRetryBound: under contention that never ends (fn itself has a
// second client change the watched key on every attempt), WatchRetry gives
// up after Options.WatchRetries calls of fn with an error wrapping
// TxFailed, instead of looping for as long as its context allows.
func TestWatchRetryBound(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto, WatchRetries: 3})
		other := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		k := fmt.Sprintf("watchbound%d:k", proto)
		require.NoError(t, c.Set(ctx, k, "0", nil))

		calls := 0
		err := c.WatchRetry(ctx, func(tx *respire.Tx) error {
			calls++
			v, err := c.Get(ctx, k)
			if err != nil {
				return err
			}
			// The change after WATCH that fails this attempt's EXEC.
			if err := other.Set(ctx, k, "other-"+strconv.Itoa(calls), nil); err != nil {
				return err
			}
			tx.Set(k, v+"-mine", nil)
			return nil
		}, k)
		require.ErrorIs(t, err, respire.TxFailed)
		assert.Contains(t, err.Error(), "3 attempts")
		assert.Equal(t, 3, calls)
		require.NoError(t, ctx.Err(), "the bound ended the loop, not the context")

		v, err := c.Get(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, "other-3", v, "no attempt's transaction ran")
	})
}

// TestWatchGivesConnectionsBack: Watch runs on a connection of the
// blocking pool and gives it back without watched keys (EXEC or UNWATCH
// cleared them), so later Watches reuse it rather than dial: 20 callers in
// Watch at once leave 20 idle connections, none busy, and 20 more callers
// dial nothing. The pool closes connections idle for a minute, but for the
// 4 used last (docs/reliability.md). A Watch whose function fails gives
// its connection back unwatched; one whose function panics, or whose
// context ends, closes it.
func TestWatchGivesConnectionsBack(t *testing.T) {
	const callers = 20
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	other := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)

	// round has callers goroutines in Watch at once: each function waits
	// until all are inside, so that each holds a connection of its own.
	round := func(r int) {
		var inside, done sync.WaitGroup
		inside.Add(callers)
		for i := range callers {
			done.Add(1)
			go func() {
				defer done.Done()
				k := fmt.Sprintf("wgb:%d:%d", r, i)
				assert.NoError(t, c.Watch(ctx, func(tx *respire.Tx) error {
					inside.Done()
					inside.Wait()
					tx.Set(k, "v", nil)
					return nil
				}, k))
			}()
		}
		done.Wait()
	}
	round(1)
	s := c.PoolStats()
	assert.Equal(t, 0, s.BlockingBusy)
	assert.Equal(t, callers, s.BlockingIdle, "each Watch gave its connection back")
	dialed := infoField(t, other, "stats", "total_connections_received")
	round(2)
	assert.Equal(t, dialed, infoField(t, other, "stats", "total_connections_received"), "the second round dialed nothing")
	assert.Equal(t, callers, c.PoolStats().BlockingIdle)

	// A function's error: UNWATCH, and the connection (the pool's last
	// used, which the next Watch takes) carries no watched key: a change
	// of the first key does not fail the next transaction.
	errFn := errors.New("fn failed")
	err := c.Watch(ctx, func(tx *respire.Tx) error { return errFn }, "wgb:a")
	require.ErrorIs(t, err, errFn)
	assert.Equal(t, callers, c.PoolStats().BlockingIdle)
	require.NoError(t, other.Set(ctx, "wgb:a", "changed", nil))
	require.NoError(t, c.Watch(ctx, func(tx *respire.Tx) error {
		tx.Set("wgb:b", "v", nil)
		return nil
	}, "wgb:b"), "no key of the failed Watch is still watched")

	// A panic, and a context that ends: the connection is closed.
	func() {
		defer func() { assert.NotNil(t, recover()) }()
		_ = c.Watch(ctx, func(tx *respire.Tx) error { panic("fn panicked") }, "wgb:c")
	}()
	assert.Equal(t, poolCounts{callers - 1, 0}, idleBusy(c))
	cctx, cancel := context.WithCancel(ctx)
	err = c.Watch(cctx, func(tx *respire.Tx) error {
		cancel()
		tx.Set("wgb:d", "v", nil)
		return nil
	}, "wgb:d")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, poolCounts{callers - 2, 0}, idleBusy(c))
}

// poolCounts are the blocking pool's idle and busy connections.
type poolCounts struct{ Idle, Busy int }

func idleBusy(c *respire.Client) poolCounts {
	s := c.PoolStats()
	return poolCounts{s.BlockingIdle, s.BlockingBusy}
}
