package integration

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Transactions run on a connection of the blocking pool: MULTI, the queued
// commands and EXEC in one write, EXEC's array split into typed Futures.

// forEachProto runs fn on a fresh server of each flavor, once per protocol.
func forEachProto(t *testing.T, cfg harness.Config, fn func(t *testing.T, srv *harness.Server, proto int)) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, cfg)
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				fn(t, srv, proto)
			})
		}
	})
}

func TestTxCommitTyped(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		p := fmt.Sprintf("txc%d:", proto)

		tx := c.NewTx()
		set := tx.Set(p+"s", "hello", nil)
		get := tx.Get(p + "s")
		missing := tx.Get(p + "missing")
		incr := tx.Incr(p + "n")
		hset := tx.HSet(p+"h", respire.FieldValue{Field: "a", Value: "1"}, respire.FieldValue{Field: "b", Value: "2"})
		hall := tx.HGetAll(p + "h")
		require.Equal(t, 6, tx.Len())
		_, err := get.Result()
		require.ErrorIs(t, err, respire.ErrNotExecuted)

		require.NoError(t, tx.Exec(ctx))
		assert.NoError(t, set.Err())
		assert.Equal(t, "hello", get.Val())
		assert.ErrorIs(t, missing.Err(), respire.Nil)
		assert.Equal(t, int64(1), incr.Val())
		assert.Equal(t, int64(2), hset.Val())
		assert.Equal(t, map[string]string{"a": "1", "b": "2"}, hall.Val())

		assert.ErrorIs(t, tx.Exec(ctx), respire.ErrBatchDone)

		// An empty transaction sends nothing and succeeds.
		require.NoError(t, c.NewTx().Exec(ctx))
	})
}

// TestTxRuntimeErrorOnlyAffectsItsCommand: a command that fails while the
// transaction runs (WRONGTYPE) fails alone; the others are applied.
func TestTxRuntimeErrorOnlyAffectsItsCommand(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		p := fmt.Sprintf("txr%d:", proto)

		tx := c.NewTx()
		set := tx.Set(p+"str", "x", nil)
		push := tx.LPush(p+"str", "a")
		incr := tx.Incr(p + "n")
		require.NoError(t, tx.Exec(ctx))

		assert.NoError(t, set.Err())
		var se *respire.Error
		require.ErrorAs(t, push.Err(), &se)
		assert.Equal(t, "WRONGTYPE", se.Prefix)
		assert.Equal(t, int64(1), incr.Val())

		v, err := c.Get(ctx, p+"n")
		require.NoError(t, err)
		assert.Equal(t, "1", v)
	})
}

// TestTxExecAbort: a command the server rejects when queued (here an ACL
// denial) aborts the whole transaction with EXECABORT; that command's
// Future holds its own error, the others the abort.
func TestTxExecAbort(t *testing.T) {
	cfg := harness.Config{Users: []harness.User{{Name: "noincr", Password: "pw", Rules: "~* &* +@all -incr"}}}
	forEachProto(t, cfg, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto, Username: "noincr", Password: "pw"})
		ctx := ctxT(t)
		p := fmt.Sprintf("txa%d:", proto)

		tx := c.NewTx()
		set := tx.Set(p+"k", "v", nil)
		incr := tx.Incr(p + "n")
		get := tx.Get(p + "k")
		err := tx.Exec(ctx)

		var abort *respire.TxAbortedError
		require.ErrorAs(t, err, &abort)
		assert.Equal(t, 1, abort.Rejected)
		var se *respire.Error
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "EXECABORT", se.Prefix)

		require.ErrorAs(t, incr.Err(), &se)
		assert.Equal(t, "NOPERM", se.Prefix)
		assert.ErrorAs(t, set.Err(), &abort)
		assert.ErrorAs(t, get.Err(), &abort)

		_, err = c.Get(ctx, p+"k")
		assert.ErrorIs(t, err, respire.Nil, "nothing of an aborted transaction is applied")

		// The pool connection is clean afterwards.
		tx = c.NewTx()
		set = tx.Set(p+"k", "v2", nil)
		require.NoError(t, tx.Exec(ctx))
		require.NoError(t, set.Err())
	})
}

// TestWatchFailsWhenKeyChanges: a watched key changed by another client
// between WATCH and EXEC makes the transaction fail with TxFailed, with
// nothing applied.
func TestWatchFailsWhenKeyChanges(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		other := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		k := fmt.Sprintf("txw%d:k", proto)
		require.NoError(t, c.Set(ctx, k, "1", nil))

		var set *respire.Future[struct{}]
		err := c.Watch(ctx, func(tx *respire.Tx) error {
			v, err := c.Get(ctx, k)
			if err != nil {
				return err
			}
			require.NoError(t, other.Set(ctx, k, "other", nil))
			set = tx.Set(k, v+"-mine", nil)
			return nil
		}, k)
		require.ErrorIs(t, err, respire.TxFailed)
		assert.ErrorIs(t, set.Err(), respire.TxFailed)

		v, err := c.Get(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, "other", v)

		// Unchanged, the same transaction commits, and its Futures are
		// readable inside fn after an explicit Exec.
		err = c.Watch(ctx, func(tx *respire.Tx) error {
			v, err := c.Get(ctx, k)
			if err != nil {
				return err
			}
			set := tx.Set(k, v+"-mine", nil)
			get := tx.Get(k)
			if err := tx.Exec(ctx); err != nil {
				return err
			}
			assert.NoError(t, set.Err())
			assert.Equal(t, "other-mine", get.Val())
			return nil
		}, k)
		require.NoError(t, err)
	})
}

// TestWatchLeavesConnectionClean: after Watch ends without EXEC (fn failed,
// or queued nothing), its connection goes back to the pool unwatched, so a
// later transaction on it is not failed by a stale WATCH.
func TestWatchLeavesConnectionClean(t *testing.T) {
	srv := startFlavor(t, harness.Redis70, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr, BlockingPoolSize: 1})
	ctx := ctxT(t)
	const k = "txclean:k"
	errStop := errors.New("stop")

	for _, fnErr := range []error{errStop, nil} {
		var queued *respire.Future[struct{}]
		err := c.Watch(ctx, func(tx *respire.Tx) error {
			require.NoError(t, c.Set(ctx, k, "changed", nil))
			if fnErr != nil {
				queued = tx.Set(k, "never", nil)
			}
			return fnErr
		}, k)
		require.ErrorIs(t, err, fnErr)
		if queued != nil {
			assert.ErrorIs(t, queued.Err(), respire.ErrNotExecuted)
		}
		require.NoError(t, c.Set(ctx, k, "again", nil))

		tx := c.NewTx()
		set := tx.Set(k, "committed", nil)
		require.NoError(t, tx.Exec(ctx), "stale WATCH on the pooled connection")
		require.NoError(t, set.Err())
	}

	// A panicking fn leaves no watched connection behind either.
	assert.Panics(t, func() {
		_ = c.Watch(ctx, func(tx *respire.Tx) error { panic("boom") }, k)
	})
	require.NoError(t, c.Set(ctx, k, "after panic", nil))
	tx := c.NewTx()
	tx.Set(k, "committed", nil)
	require.NoError(t, tx.Exec(ctx))
}

// TestWatchRetryUnderContention: 8 goroutines increment one key through
// WATCH/GET/SET; every increment lands exactly once.
func TestWatchRetryUnderContention(t *testing.T) {
	forEachProto(t, harness.Config{}, func(t *testing.T, srv *harness.Server, proto int) {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		k := fmt.Sprintf("txretry%d:n", proto)
		const workers, each = 8, 25

		var wg sync.WaitGroup
		var mu sync.Mutex
		var runs int
		errs := make(chan error, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					err := c.WatchRetry(ctx, func(tx *respire.Tx) error {
						mu.Lock()
						runs++
						mu.Unlock()
						n := 0
						v, err := c.Get(ctx, k)
						switch {
						case errors.Is(err, respire.Nil):
						case err != nil:
							return err
						default:
							if n, err = strconv.Atoi(v); err != nil {
								return err
							}
						}
						tx.Set(k, strconv.Itoa(n+1), nil)
						return nil
					}, k)
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		v, err := c.Get(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(workers*each), v)
		t.Logf("%d increments took %d attempts", workers*each, runs)
	})
}

// TestWatchRetryStopsWithContext: a transaction that can never commit is
// retried until ctx ends, then fails with TxFailed and the context's error.
func TestWatchRetryStopsWithContext(t *testing.T) {
	srv := startFlavor(t, harness.Redis70, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx, cancel := context.WithTimeout(ctxT(t), 200*time.Millisecond)
	defer cancel()
	const k = "txspin:k"
	attempts := 0
	err := c.WatchRetry(ctx, func(tx *respire.Tx) error {
		attempts++
		if _, err := c.Incr(ctxT(t), k); err != nil {
			return err
		}
		tx.Incr(k)
		return nil
	}, k)
	// Usually ctx ends during a pause between attempts (the error then
	// wraps TxFailed too), but it may end during an attempt.
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Greater(t, attempts, 1)
	t.Logf("%d attempts: %v", attempts, err)
}

// TestWatchEndsWithContextOrClose: a context that ends, or a client closed,
// while fn runs fails the transaction without sending it, and leaves no
// connection or goroutine behind.
func TestWatchEndsWithContextOrClose(t *testing.T) {
	srv := startFlavor(t, harness.Redis70, harness.Config{})
	const k = "txend:k"

	c := connect(t, respire.Options{Addr: srv.Addr, BlockingPoolSize: 1})
	ctx, cancel := context.WithCancel(ctxT(t))
	err := c.Watch(ctx, func(tx *respire.Tx) error {
		tx.Set(k, "never", nil)
		cancel()
		return nil
	}, k)
	require.ErrorIs(t, err, context.Canceled)
	_, err = c.Get(ctxT(t), k)
	require.ErrorIs(t, err, respire.Nil)
	// The pool's only connection is usable again.
	tx := c.NewTx()
	tx.Set(k, "v", nil)
	require.NoError(t, tx.Exec(ctxT(t)))

	c3, err := respire.Connect(ctxT(t), respire.Options{Addr: srv.Addr})
	require.NoError(t, err)
	err = c3.Watch(ctxT(t), func(tx *respire.Tx) error {
		tx.Set(k, "never", nil)
		c3.Close()
		return nil
	}, k)
	require.ErrorIs(t, err, respire.ErrClosed)
	err = c3.Watch(ctxT(t), func(tx *respire.Tx) error { return nil }, k)
	require.ErrorIs(t, err, respire.ErrClosed)
	v, err := c.Get(ctxT(t), k)
	require.NoError(t, err)
	assert.Equal(t, "v", v)
}
