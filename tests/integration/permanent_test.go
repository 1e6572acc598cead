package integration

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkPermanent asserts the shape of a permanent connect error: at once,
// a *HandshakeError (with the server's *Error when there is one), never
// ErrUnavailable, ErrNotSent, one "respire:" prefix.
func checkPermanent(t *testing.T, err error, prefix string) {
	t.Helper()
	require.Error(t, err)
	var he *respire.HandshakeError
	require.ErrorAs(t, err, &he)
	assert.True(t, he.Permanent(), "%v", err)
	if prefix != "" {
		var se *respire.Error
		require.ErrorAs(t, err, &se)
		assert.Equal(t, prefix, se.Prefix)
	}
	assert.NotErrorIs(t, err, respire.ErrUnavailable)
	assert.ErrorIs(t, err, respire.ErrNotSent)
	assert.Equal(t, 1, strings.Count(err.Error(), "respire:"), "%q", err)
}

// TestPermanentErrorsAtOnce: configuration mistakes reach a caller without
// a deadline at once, from NewClient and from Connect, and the client
// recovers by itself once the server accepts it.
func TestPermanentErrorsAtOnce(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80, Password: "right"})
	bg := context.Background()

	t.Run("wrong password", func(t *testing.T) {
		c, err := respire.NewClient(respire.Options{Addr: srv.Addr, Password: "wrong", MaxRetryBackoff: 20 * time.Millisecond})
		require.NoError(t, err)
		defer c.Close()
		for _, call := range []func() error{
			func() error { _, err := c.Get(bg, "k"); return err },
			func() error { _, err := c.BLPop(bg, time.Second, "l"); return err },
			func() error { _, err := c.Subscribe(bg, "ch"); return err },
			func() error { return c.WithConn(bg, func(*respire.Conn) error { return nil }) },
		} {
			done := make(chan error, 1)
			go func() { done <- call() }()
			select {
			case err := <-done:
				checkPermanent(t, err, "WRONGPASS")
			case <-time.After(10 * time.Second):
				t.Fatal("a permanent error kept the caller waiting")
			}
		}
		_, err = respire.Connect(bg, respire.Options{Addr: srv.Addr, Password: "wrong"})
		checkPermanent(t, err, "WRONGPASS")

		// The server is fixed: the same client recovers without help.
		_, err = srv.Do(bg, "CONFIG", "SET", "requirepass", "wrong")
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			ctx, cancel := context.WithTimeout(bg, time.Second)
			defer cancel()
			_, err := c.Get(ctx, "k")
			return errors.Is(err, respire.Nil)
		}, 10*time.Second, 10*time.Millisecond)
		_, err = c.Do(bg, "CONFIG", "SET", "requirepass", "right")
		require.NoError(t, err)
	})

	t.Run("database out of range", func(t *testing.T) {
		_, err := respire.Connect(bg, respire.Options{Addr: srv.Addr, Password: "right", DB: 999})
		checkPermanent(t, err, "ERR")
		assert.Contains(t, err.Error(), "SELECT")
	})

	t.Run("refused port is transient and does not hang", func(t *testing.T) {
		p, err := faultproxy.New("127.0.0.1:1")
		require.NoError(t, err)
		addr := p.Addr()
		p.Close()
		c, err := respire.NewClient(respire.Options{Addr: addr})
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Get(bg, "k")
		require.ErrorIs(t, err, respire.ErrUnavailable)
		assert.ErrorIs(t, err, respire.ErrNotSent)
		assert.Equal(t, 1, strings.Count(err.Error(), "respire:"), "%q", err)
	})
}

// TestTLSVerificationPermanent: a certificate that does not verify is a
// permanent error, not an outage to wait out.
func TestTLSVerificationPermanent(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80, TLS: true})
	c, err := respire.NewClient(respire.Options{Addr: srv.Addr, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12}})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Get(context.Background(), "k")
	checkPermanent(t, err, "")
}

// incrLog adds ARGV[1] to KEYS[1] and logs it in the list KEYS[2], in one
// atomic write: the list shows exactly which calls the server applied, and
// how many times.
const incrLog = `redis.call("INCRBY", KEYS[1], ARGV[1]) return redis.call("RPUSH", KEYS[2], ARGV[1])`

// TestNoWriteAppliedTwice: INCRBY of unique amounts while connections are
// cut (RST) every few milliseconds. Every acknowledged amount was applied
// exactly once, every applied amount was acknowledged or outcome-unknown,
// none that failed with ErrNotSent was applied, and no amount was applied
// twice; the final sum is the acknowledged sum plus a subset of the
// outcome-unknown amounts. Reads are retried (RetryReads), writes never.
func TestNoWriteAppliedTwice(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	defer p.Close()
	c := connect(t, respire.Options{Addr: p.Addr(), RetryReads: 3, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 20 * time.Millisecond})
	ctx := ctxT(t)
	keys := []string{"once:sum", "once:log"}

	const workers, each, most = 16, 150, 100 * 150
	var mu sync.Mutex
	outcome := map[int64]string{} // amount -> "acked", "unknown", "notsent"
	var wg sync.WaitGroup
	stop := make(chan struct{})
	cutterDone := make(chan struct{})
	go func() {
		defer close(cutterDone)
		tick := time.NewTicker(15 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				p.CutRST()
			}
		}
	}()
	var readsOK, readsErr atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// At least each calls, and on until the proxy has cut
			// connections a few times: a fast machine would finish
			// before the first cut.
			for i := 0; i < each || p.Accepted() < 5 && i < most; i++ {
				amt := int64(w*most + i + 1)
				cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
				_, err := c.Eval(cctx, incrLog, keys, fmt.Sprint(amt))
				_, rerr := c.Get(cctx, "once:sum")
				cancel()
				if rerr == nil {
					readsOK.Add(1)
				} else {
					readsErr.Add(1)
				}
				o := "acked"
				switch {
				case err == nil:
				case errors.Is(err, respire.ErrNotSent):
					o = "notsent"
				default:
					o = "unknown"
				}
				mu.Lock()
				outcome[amt] = o
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-cutterDone

	applied, err := c.LRange(ctx, "once:log", 0, -1)
	require.NoError(t, err)
	seen := map[int64]int{}
	for _, s := range applied {
		var a int64
		fmt.Sscan(s, &a)
		seen[a]++
	}
	counts := map[string]int{}
	var ackedSum, unknownSum int64
	for amt, o := range outcome {
		counts[o]++
		n := seen[amt]
		assert.LessOrEqual(t, n, 1, "amount %d applied %d times", amt, n)
		switch o {
		case "acked":
			ackedSum += amt
			assert.Equal(t, 1, n, "acknowledged amount %d not applied", amt)
		case "notsent":
			assert.Equal(t, 0, n, "amount %d applied though its error said not sent", amt)
		case "unknown":
			unknownSum += amt
		}
	}
	for amt := range seen {
		assert.Contains(t, outcome, amt, "applied amount %d was never sent", amt)
	}
	got, err := c.Get(ctx, "once:sum")
	require.NoError(t, err)
	var final int64
	fmt.Sscan(got, &final)
	assert.GreaterOrEqual(t, final, ackedSum)
	assert.LessOrEqual(t, final, ackedSum+unknownSum)
	t.Logf("writes: %d acked, %d outcome-unknown, %d not sent; final %d = acked %d + %d of unknown %d; reads ok %d, failed %d; connections %d",
		counts["acked"], counts["unknown"], counts["notsent"], final, ackedSum, final-ackedSum, unknownSum, readsOK.Load(), readsErr.Load(), p.Accepted())
	assert.Greater(t, p.Accepted(), 3, "the faults happened")
}
