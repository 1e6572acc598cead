package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var debugCfg = harness.Config{Args: []string{"enable-debug-command yes"}}

// TestContextCancelMidFlight: the caller returns promptly with the
// context's error, and the late reply is discarded without shifting later
// replies onto the wrong callers.
func TestContextCancelMidFlight(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, debugCfg)
		for _, mode := range modes {
			t.Run(mode.name, func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, ReadMode: mode.readMode, Protocol: mode.protocol})
				bg := ctxT(t)
				require.NoError(t, c.Set(bg, "cancel:k", "v1", nil))

				ctx, cancel := context.WithCancel(bg)
				done := make(chan error, 1)
				go func() {
					_, err := c.Do(ctx, "DEBUG", "SLEEP", "0.3")
					done <- err
				}()
				// Wait until the server runs the sleep: a second client
				// sees the command in CLIENT LIST? Simpler: the sleep blocks
				// the server, so cancel right away; the command was sent or
				// not, either way the caller must return at once.
				cancel()
				start := time.Now()
				err := <-done
				require.ErrorIs(t, err, context.Canceled)
				assert.Less(t, time.Since(start), 200*time.Millisecond)

				// The same client keeps working and replies stay matched.
				for i := range 20 {
					v := fmt.Sprint("v", i)
					require.NoError(t, c.Set(bg, "cancel:k", v, nil))
					got, err := c.Get(bg, "cancel:k")
					require.NoError(t, err)
					require.Equal(t, v, got)
				}
			})
		}
	})
}

// TestDeadlineMidFlight: a deadline shorter than the server's work ends
// the call with DeadlineExceeded while the reply is still owed.
func TestDeadlineMidFlight(t *testing.T) {
	srv := harness.Start(t, debugCfg)
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			c := connect(t, respire.Options{Addr: srv.Addr, ReadMode: mode.readMode, Protocol: mode.protocol})
			bg := ctxT(t)
			ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := c.Do(ctx, "DEBUG", "SLEEP", "0.4")
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Less(t, time.Since(start), 300*time.Millisecond)
			// Later commands queue behind the sleep and get their own replies.
			for i := range 10 {
				n, err := c.Incr(bg, "deadline:n")
				require.NoError(t, err)
				require.Equal(t, int64(i+1), n)
			}
			_, err = c.Del(bg, "deadline:n")
			require.NoError(t, err)
		})
	}
}

// TestServerKilledAndRestarted: under load, killing the server fails the
// calls in flight with errors wrapping the cause; after a restart the same
// client works again.
func TestServerKilledAndRestarted(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, mode := range modes[:2] {
			t.Run(mode.name, func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, ReadMode: mode.readMode, MinRetryBackoff: 5 * time.Millisecond, MaxRetryBackoff: 50 * time.Millisecond})
				bg := ctxT(t)
				stop := make(chan struct{})
				failed := make(chan error, 1)
				var wg sync.WaitGroup
				for g := range 16 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; ; i++ {
							select {
							case <-stop:
								return
							default:
							}
							ctx, cancel := context.WithTimeout(bg, 2*time.Second)
							_, err := c.Incr(ctx, fmt.Sprint("kill:", g))
							cancel()
							if err != nil {
								select {
								case failed <- err:
								default:
								}
							}
						}
					}()
				}
				// Load is running once a few increments landed.
				require.Eventually(t, func() bool {
					r, err := c.Do(bg, "GET", "kill:0")
					if err != nil {
						return false
					}
					n, _ := r.Int64()
					return n > 10
				}, 10*time.Second, time.Millisecond)
				srv.Kill()
				var err error
				select {
				case err = <-failed:
				case <-time.After(10 * time.Second):
					t.Fatal("no call failed after the server was killed")
				}
				var ce *respire.ConnError
				isConn := errors.As(err, &ce)
				isDown := errors.Is(err, respire.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
				require.True(t, isConn || isDown, "unexpected error %v", err)
				if isConn {
					require.NotNil(t, errors.Unwrap(ce), "a ConnError wraps its cause")
				}
				srv.Restart(t)
				require.Eventually(t, func() bool {
					ctx, cancel := context.WithTimeout(bg, time.Second)
					defer cancel()
					return c.Set(ctx, "kill:after", "ok", nil) == nil
				}, 20*time.Second, 5*time.Millisecond)
				close(stop)
				wg.Wait()
				got, err := c.Get(bg, "kill:after")
				require.NoError(t, err)
				require.Equal(t, "ok", got)
			})
		}
	})
}

// TestCloseWithCallsInFlight: Close fails calls in flight and later calls
// with ErrClosed, promptly.
func TestCloseWithCallsInFlight(t *testing.T) {
	srv := harness.Start(t, debugCfg)
	for _, mode := range modes[:2] {
		t.Run(mode.name, func(t *testing.T) {
			c, err := respire.Connect(ctxT(t), respire.Options{Addr: srv.Addr, ReadMode: mode.readMode})
			require.NoError(t, err)
			bg := ctxT(t)
			errs := make(chan error, 8)
			for range 8 {
				go func() {
					_, err := c.Do(bg, "DEBUG", "SLEEP", "0.5")
					errs <- err
				}()
			}
			// Wait until at least one call is on the wire: the server is
			// asleep, so a PING on another client answers only later; we
			// just need Close to race calls in flight, so make sure the
			// sends happened by waiting for the client's send counter.
			require.Eventually(t, func() bool { return c.Stats().Sends >= 1 }, 5*time.Second, time.Millisecond)
			start := time.Now()
			require.NoError(t, c.Close())
			for range 8 {
				err := <-errs
				require.ErrorIs(t, err, respire.ErrClosed)
			}
			require.Less(t, time.Since(start), 400*time.Millisecond)
			_, err = c.Get(bg, "x")
			require.ErrorIs(t, err, respire.ErrClosed)
			require.NoError(t, c.Close(), "a second Close is harmless")
		})
	}
}

// TestStalledConnectionReplaced: a peer that stops answering (blackholed
// by the proxy) is detected by the stall timeout; in-flight calls fail
// with ErrStalled long before their own deadline, and the client
// reconnects.
func TestStalledConnectionReplaced(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	defer p.Close()
	c := connect(t, respire.Options{Addr: p.Addr(), StallTimeout: 300 * time.Millisecond, HealthCheckInterval: 100 * time.Millisecond})
	bg := ctxT(t)
	require.NoError(t, c.Set(bg, "stall", "1", nil))
	p.Blackhole(true)
	start := time.Now()
	// A write: a read would be sent again on a new connection (the
	// default read retries), which the blackhole keeps from answering.
	_, err = c.Incr(bg, "stall:n")
	require.ErrorIs(t, err, respire.ErrStalled)
	require.Less(t, time.Since(start), 5*time.Second)
	p.Blackhole(false)
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(bg, time.Second)
		defer cancel()
		v, err := c.Get(ctx, "stall")
		return err == nil && v == "1"
	}, 10*time.Second, 10*time.Millisecond)
	require.GreaterOrEqual(t, p.Accepted(), 2)
}

// TestIdlePeerDetected: an idle connection whose peer vanished is found by
// the health-check PING, and replaced before the next call needs it.
func TestIdlePeerDetected(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	defer p.Close()
	c := connect(t, respire.Options{Addr: p.Addr(), StallTimeout: 200 * time.Millisecond, HealthCheckInterval: 50 * time.Millisecond})
	bg := ctxT(t)
	require.NoError(t, c.Set(bg, "idle", "1", nil))
	p.Blackhole(true)
	// No call is made: only the health check can notice.
	require.Eventually(t, func() bool { return p.Accepted() >= 2 }, 10*time.Second, 5*time.Millisecond)
	p.Blackhole(false)
	v, err := c.Get(bg, "idle")
	require.NoError(t, err)
	require.Equal(t, "1", v)
}

// TestHostileServerBytes: garbage from the server is a protocol error for
// the callers of that connection, never a panic or a hang; the client
// reconnects.
func TestHostileServerBytes(t *testing.T) {
	for _, garbage := range []string{
		"$99999999999999\r\n",
		"*-5\r\n",
		"@garbage\r\n",
		"$3\r\nabcXY",
		":12x\r\n",
	} {
		t.Run(fmt.Sprintf("%q", garbage), func(t *testing.T) {
			srv := harness.Start(t, debugCfg)
			p, err := faultproxy.New(srv.Addr)
			require.NoError(t, err)
			defer p.Close()
			c := connect(t, respire.Options{Addr: p.Addr(), MinRetryBackoff: time.Millisecond, Limits: respireLimits()})
			bg := ctxT(t)
			done := make(chan error, 1)
			go func() {
				_, err := c.Do(bg, "DEBUG", "SLEEP", "0.2")
				done <- err
			}()
			require.Eventually(t, func() bool { return c.Stats().Sends >= 1 }, 5*time.Second, time.Millisecond)
			p.InjectToClients([]byte(garbage))
			err = <-done
			require.ErrorIs(t, err, respire.ErrProtocol)
			require.Eventually(t, func() bool {
				return c.Set(bg, "after", "ok", nil) == nil
			}, 10*time.Second, 5*time.Millisecond)
		})
	}
}
