package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// heldProxy is a proxy to srv that tells when a client's bytes hold
// marker: Hold(true) keeps a command's reply owed for as long as a test
// needs, without a sleeping server or a bound on time.
func heldProxy(t *testing.T, srv *harness.Server, marker string) (*faultproxy.Proxy, <-chan struct{}) {
	t.Helper()
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	seen := make(chan struct{}, 1)
	p.OnClientData(func(_ int, b []byte) {
		if bytes.Contains(b, []byte(marker)) {
			select {
			case seen <- struct{}{}:
			default:
			}
		}
	})
	return p, seen
}

// await fails the test unless ch delivers within a limit that only a hang
// reaches.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: nothing after 10s", what)
		panic("unreachable")
	}
}

// TestContextCancelMidFlight: a caller whose command was sent returns with
// the context's error without waiting for the reply (held by the proxy
// until the caller returned), and the late reply is discarded without
// shifting later replies onto the wrong callers.
func TestContextCancelMidFlight(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, mode := range modes {
			t.Run(mode.name, func(t *testing.T) {
				p, sent := heldProxy(t, srv, "cancel:held")
				c := connect(t, respire.Options{Addr: p.Addr(), ReadMode: mode.readMode, Protocol: mode.protocol})
				bg := ctxT(t)
				require.NoError(t, c.Set(bg, "cancel:k", "v1", nil))

				p.Hold(true)
				ctx, cancel := context.WithCancel(bg)
				done := make(chan error, 1)
				go func() {
					_, err := c.Do(ctx, "GET", "cancel:held")
					done <- err
				}()
				await(t, sent, "the GET reaching the proxy")
				cancel()
				require.ErrorIs(t, await(t, done, "the cancelled caller waits for its reply"), context.Canceled)
				p.Hold(false)

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

// TestDeadlineMidFlight: a deadline ends a sent call with DeadlineExceeded
// while its reply is still owed; later commands queue behind that reply
// and get their own.
func TestDeadlineMidFlight(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			p, sent := heldProxy(t, srv, "deadline:held")
			c := connect(t, respire.Options{Addr: p.Addr(), ReadMode: mode.readMode, Protocol: mode.protocol})
			bg := ctxT(t)
			_, err := c.Del(bg, "deadline:n")
			require.NoError(t, err)

			p.Hold(true)
			ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := c.Do(ctx, "GET", "deadline:held")
				done <- err
			}()
			await(t, sent, "the GET reaching the proxy")
			require.ErrorIs(t, await(t, done, "the caller past its deadline waits for its reply"), context.DeadlineExceeded)
			// Later commands queue behind the owed reply (the first INCR
			// is sent while it is held) and get their own replies.
			sendsBefore := c.Stats().Sends
			incrs := make(chan error, 1)
			go func() {
				for i := range 10 {
					n, err := c.Incr(bg, "deadline:n")
					if err == nil && n != int64(i+1) {
						err = fmt.Errorf("INCR %d: got %d", i+1, n)
					}
					if err != nil {
						incrs <- err
						return
					}
				}
				incrs <- nil
			}()
			require.Eventually(t, func() bool { return c.Stats().Sends > sendsBefore }, 10*time.Second, time.Millisecond)
			p.Hold(false)
			require.NoError(t, await(t, incrs, "INCRs"))
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

// TestCloseWithCallsInFlight: Close fails calls in flight (their replies
// held by the proxy: a call waiting for its reply would hang) and later
// calls with ErrClosed.
func TestCloseWithCallsInFlight(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			p, sent := heldProxy(t, srv, "close:held")
			c, err := respire.Connect(ctxT(t), respire.Options{Addr: p.Addr(), ReadMode: mode.readMode, Protocol: mode.protocol})
			require.NoError(t, err)
			bg := ctxT(t)
			p.Hold(true)
			errs := make(chan error, 8)
			for range 8 {
				go func() {
					_, err := c.Do(bg, "GET", "close:held")
					errs <- err
				}()
			}
			await(t, sent, "a GET reaching the proxy")
			require.NoError(t, c.Close())
			for range 8 {
				require.ErrorIs(t, await(t, errs, "a call in flight at Close"), respire.ErrClosed)
			}
			p.Hold(false)
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
	t.Parallel() // waits for servers of its own: see main_test.go
	srv := harness.Start(t, harness.Config{})
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	defer p.Close()
	// A stall timeout of a second, not less: the GET below goes to a new
	// connection, and a loaded host can keep a healthy server from
	// answering for a few hundred milliseconds (the default is 30s).
	c := connect(t, respire.Options{Addr: p.Addr(), StallTimeout: time.Second, HealthCheckInterval: 50 * time.Millisecond})
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
			srv := harness.Start(t, harness.Config{})
			p, sent := heldProxy(t, srv, "hostile:held")
			c := connect(t, respire.Options{Addr: p.Addr(), MinRetryBackoff: time.Millisecond, Limits: respireLimits()})
			bg := ctxT(t)
			// The INCR's reply is held: the garbage is what answers it. (A
			// write: a read would be sent again on a new connection, the
			// default read retries, which the hold keeps from answering.)
			p.Hold(true)
			done := make(chan error, 1)
			go func() {
				_, err := c.Do(bg, "INCR", "hostile:held")
				done <- err
			}()
			await(t, sent, "the INCR reaching the proxy")
			p.InjectToClients([]byte(garbage))
			require.ErrorIs(t, await(t, done, "the INCR answered with garbage"), respire.ErrProtocol)
			p.Hold(false)
			require.Eventually(t, func() bool {
				return c.Set(bg, "after", "ok", nil) == nil
			}, 10*time.Second, 5*time.Millisecond)
		})
	}
}
