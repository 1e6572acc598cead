package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The typed methods of blocking commands (BLPop, XRead, ...) reach the
// blocking pool through the blocking flag the spec gives them; DoBlocking is
// the escape hatch to the same pool.

// blockedClients reads blocked_clients from INFO on a connection of the
// harness, independent of the client under test.
func blockedClients(t *testing.T, srv *harness.Server) int {
	t.Helper()
	v, err := srv.Do(ctxT(t), "INFO", "clients")
	require.NoError(t, err)
	for _, line := range strings.Split(v.(string), "\n") {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "blocked_clients:"); ok {
			var b int
			_, err := fmt.Sscan(n, &b)
			require.NoError(t, err)
			return b
		}
	}
	t.Fatal("INFO clients has no blocked_clients")
	return 0
}

// waitBlocked waits until n clients are blocked on the server.
func waitBlocked(t *testing.T, srv *harness.Server, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return blockedClients(t, srv) == n },
		10*time.Second, 2*time.Millisecond, "waiting for %d blocked clients", n)
}

// TestBlockingDoesNotDelayOtherCommands: while a BLPOP with a 30 s timeout
// blocks, 10,000 GETs complete, none of them waiting for it (which would
// take the 30 s); fed, the BLPOP returns the element at once, not at its
// timeout.
func TestBlockingDoesNotDelayOtherCommands(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
				ctx := ctxT(t)
				require.NoError(t, c.Set(ctx, "blk:get", "value", nil))

				type result struct {
					r   respire.KeyElement
					err error
					at  time.Time
				}
				done := make(chan result, 1)
				go func() {
					r, err := c.BLPop(ctx, 30*time.Second, "blk:list")
					done <- result{r, err, time.Now()}
				}()
				waitBlocked(t, srv, 1)

				const workers, perWorker = 16, 625
				var wg sync.WaitGroup
				lat := make([]time.Duration, workers*perWorker)
				start := time.Now()
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range perWorker {
							t0 := time.Now()
							v, err := c.Get(ctx, "blk:get")
							lat[w*perWorker+i] = time.Since(t0)
							if !assert.NoError(t, err) || !assert.Equal(t, "value", v) {
								return
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				var worst time.Duration
				for _, d := range lat {
					worst = max(worst, d)
				}
				t.Logf("10k GETs in %v, slowest %v, while BLPOP blocks", elapsed, worst)
				// Bounds far below the BLPOP's 30 s, far above a slow
				// machine's worst GET.
				assert.Less(t, worst, 10*time.Second, "a GET waited behind the BLPOP")
				select {
				case r := <-done:
					t.Fatalf("BLPOP returned before it was served: %v %v", r.r, r.err)
				default:
				}
				assert.Equal(t, 1, blockedClients(t, srv))

				// Feed the list: the BLPOP returns the element at once.
				pushed := time.Now()
				_, err := c.Do(ctx, "RPUSH", "blk:list", "x")
				require.NoError(t, err)
				r := <-done
				require.NoError(t, r.err)
				assert.Equal(t, respire.KeyElement{Key: "blk:list", Element: "x"}, r.r)
				assert.Less(t, r.at.Sub(pushed), 10*time.Second, "the BLPOP returned at its timeout, not when fed")
			})
		}
	})
}

// TestBlockingCancel: cancelling a blocked BLPOP (timeout 0: it would
// block for ever) returns it, and its connection is closed, so it cannot
// pop an element later.
func TestBlockingCancel(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		c := connect(t, respire.Options{Addr: srv.Addr})
		bg := ctxT(t)
		for round := range 3 {
			ctx, cancel := context.WithCancel(bg)
			done := make(chan error, 1)
			go func() {
				var err error
				if round%2 == 0 {
					_, err = c.BLPop(ctx, 0, "cancel:list")
				} else {
					_, err = c.DoBlocking(ctx, "BLPOP", "cancel:list", 0)
				}
				done <- err
			}()
			waitBlocked(t, srv, 1)
			start := time.Now()
			cancel()
			err := <-done
			took := time.Since(start)
			require.ErrorIs(t, err, context.Canceled)
			// Promptly: about a millisecond; 5 s is a margin no slow
			// machine reaches.
			assert.Less(t, took, 5*time.Second, "round %d", round)

			// The server sees the connection go away; an element pushed
			// afterwards stays in the list.
			waitBlocked(t, srv, 0)
			_, err = c.Do(bg, "RPUSH", "cancel:list", "kept")
			require.NoError(t, err)
			n, err := c.Do(bg, "LLEN", "cancel:list")
			require.NoError(t, err)
			l, _ := n.Int64()
			require.Equal(t, int64(1), l)
			_, err = c.Del(bg, "cancel:list")
			require.NoError(t, err)
		}
		// A deadline ends a blocked call the same way.
		ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.BLPop(ctx, 0, "cancel:list")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 5*time.Second)
	})
}

// TestBlockingTimeoutIsNil: the server's timeout reply of each blocking
// command is Nil, not an error of the pool, in both protocols.
func TestBlockingTimeoutIsNil(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		// Servers time blocked clients out on their cron tick: 10 ms here
		// rather than the default 100 ms.
		srv := startFlavor(t, f, harness.Config{Args: []string{"hz 100"}})
		for _, proto := range []int{2, 3} {
			c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto, BlockingPoolSize: 1})
			ctx := ctxT(t)
			const tm = 10 * time.Millisecond
			block := tm
			for name, call := range map[string]func() error{
				"BLPOP": func() error { _, err := c.BLPop(ctx, tm, "nil:a", "nil:b"); return err },
				"BRPOP": func() error { _, err := c.BRPop(ctx, tm, "nil:a"); return err },
				"BLMOVE": func() error {
					_, err := c.BLMove(ctx, "nil:a", "nil:b", respire.SideLeft, respire.SideRight, tm)
					return err
				},
				"BZPOPMIN": func() error { _, err := c.BZPopMin(ctx, tm, "nil:z"); return err },
				"BLMPOP":   func() error { _, err := c.BLMPop(ctx, tm, []string{"nil:a"}, respire.SideLeft, nil); return err },
				"XREAD": func() error {
					_, err := c.XRead(ctx, []string{"nil:s"}, []string{"$"}, &respire.XReadOptions{Block: &block})
					return err
				},
			} {
				require.ErrorIs(t, call(), respire.Nil, "RESP%d %s", proto, name)
			}
			for _, args := range [][]any{
				{"BLPOP", "nil:a", "nil:b", 0.01},
				{"BRPOP", "nil:a", 0.01},
				{"BLMOVE", "nil:a", "nil:b", "LEFT", "RIGHT", 0.01},
				{"BZPOPMIN", "nil:z", 0.01},
				{"BLMPOP", 0.01, 1, "nil:a", "LEFT"},
				{"BZMPOP", 0.01, 1, "nil:z", "MIN"},
				{"XREAD", "BLOCK", 10, "STREAMS", "nil:s", "$"},
			} {
				_, err := c.DoBlocking(ctx, args...)
				require.ErrorIs(t, err, respire.Nil, "RESP%d %v", proto, args)
			}
			// WAIT with no replicas reports 0 after its timeout (in a
			// batch: a Client refuses it sent by itself, wait_test.go).
			b := c.NewBatch()
			w := b.Wait(1, 10*time.Millisecond)
			require.NoError(t, b.Exec(ctx))
			n, err := w.Result()
			require.NoError(t, err)
			assert.Equal(t, int64(0), n)
			// Server errors come back as they are, on a reusable connection.
			_, err = c.DoBlocking(ctx, "BLPOP", "nil:a", "not-a-timeout")
			var se *respire.Error
			require.ErrorAs(t, err, &se)
			_, err = c.DoBlocking(ctx, "BLPOP", "nil:a", 0.01)
			require.ErrorIs(t, err, respire.Nil)
		}
	})
}

// TestBlockingAfterRestart: a pooled connection the server dropped while
// it was idle is not used for the next command, which would fail it for
// nothing.
func TestBlockingAfterRestart(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr, BlockingPoolSize: 1})
	ctx := ctxT(t)
	_, err := c.BLPop(ctx, 10*time.Millisecond, "restart:list")
	require.ErrorIs(t, err, respire.Nil)
	srv.Restart(t)
	_, err = c.BLPop(ctx, 10*time.Millisecond, "restart:list")
	require.ErrorIs(t, err, respire.Nil)
}

// TestBlockingTLS: the pool dials like the client, TLS included, and
// checks idle TLS connections the same way.
func TestBlockingTLS(t *testing.T) {
	srv := harness.Start(t, harness.Config{TLS: true})
	c := connect(t, respire.Options{Addr: srv.Addr, TLSConfig: srv.TLSConfig, BlockingPoolSize: 1})
	ctx := ctxT(t)
	for range 3 {
		_, err := c.BLPop(ctx, 10*time.Millisecond, "tls:list")
		require.ErrorIs(t, err, respire.Nil)
	}
	_, err := c.Do(ctx, "RPUSH", "tls:list", "v")
	require.NoError(t, err)
	v, err := c.BLPop(ctx, time.Second, "tls:list")
	require.NoError(t, err)
	assert.Equal(t, "v", v.Element)
}
