package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/cancelstorm"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// runCancelStorm runs the cancellation storm (issue 31, package
// cancelstorm) on c for d: 48 goroutines, every kind of call (GET, SET of
// 1 KiB and 128 KiB, INCR, MGET, a batch of ten, MULTI/EXEC, RPUSH,
// BLPOP), contexts cancelled or timed out at a random 0-2 ms, one call in
// five left alone. It fails on any call that failed while its own context
// was live, any error of an ended context's call not matching
// errors.Is(err, ctx.Err()), and any wrong result (values and counters
// checked against what was acknowledged, what said ErrNotSent, and what
// had an unknown outcome; a write of unknown outcome that ran late is
// logged, not failed), and on calls that had not returned 10 s after
// the storm ended.
func runCancelStorm(t *testing.T, c *respire.Client, prefix string, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
	defer cancel()
	r, err := cancelstorm.Run(ctx, cancelstorm.Respire(c), cancelstorm.Config{Prefix: prefix, Duration: d})
	if errors.Is(err, cancelstorm.ErrStuck) {
		// Every call must return by its deadline: these never did.
		t.Errorf("%v:\n%s", err, r.StuckReport)
	} else {
		require.NoError(t, err)
	}
	t.Logf("cancel storm %s: %s\nper kind:\n%s", prefix, r.Summary(), r.PerOp())
	if n := cancelstorm.Total(r.Live); n > 0 {
		t.Errorf("%d calls failed while their own context was live; by kind:\n%s", n, strings.Join(cancelstorm.Top(r.LiveErrs, 12), "\n"))
	}
	if n := cancelstorm.Total(r.Mismatch); n > 0 {
		t.Errorf("%d errors of calls whose context ended do not match errors.Is(err, ctx.Err()); by kind:\n%s", n, strings.Join(cancelstorm.Top(r.MismatchErrs, 12), "\n"))
	}
	// A write whose outcome was unknown may still run after the same
	// goroutine's next write when that went by another connection (a
	// batch connection, a transaction's): "outcome unknown" allows it
	// (docs/reliability.md). Writes withdrawn before they were written
	// never run (NotSentRan fails).
	if n := r.NWrong[cancelstorm.LateWrite]; n > 0 {
		t.Logf("%d writes of unknown outcome ran after a later acknowledged write of their goroutine", n)
	}
	if s := r.WrongReport(cancelstorm.LateWrite); s != "" {
		t.Error(s)
	}
	require.NotZero(t, cancelstorm.Total(r.OK), "no call succeeded")
}

// TestCancelStorm: the storm on one server with default Options, in RESP3
// and in RESP2.
func TestCancelStorm(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
			d := 3 * time.Second
			if proto == 2 {
				d = 2 * time.Second
			}
			runCancelStorm(t, c, fmt.Sprintf("cstorm%d:", proto), d)
		})
	}
}

// TestClusterCancelStorm: the storm on the shared 3-primary cluster with
// default Options.
func TestClusterCancelStorm(t *testing.T) {
	hc := harness.SharedCluster(t, "")
	c := connect(t, respire.Options{Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
	runCancelStorm(t, c, "ccstorm:", 3*time.Second)
}
