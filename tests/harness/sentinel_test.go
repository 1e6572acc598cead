package harness

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSentinels starts a deployment, fails it over with SENTINEL FAILOVER
// and waits for it to settle with another master. The flavors run in
// parallel: their time is spent waiting for the sentinels.
func TestSentinels(t *testing.T) {
	ForEachFlavor(t, func(t *testing.T, f Flavor) {
		t.Parallel()
		d := StartSentinels(t, SentinelConfig{Flavor: f})
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		old, err := d.MasterAddr(ctx)
		require.NoError(t, err)
		start := time.Now()
		require.NoError(t, d.Failover(ctx))
		ev, err := d.Events.Wait(ctx, start, "+switch-master", d.Config.MasterName)
		require.NoError(t, err)
		t.Logf("+switch-master after %v: %s", ev.At.Sub(start), ev.Payload)
		require.NoError(t, d.WaitStable(ctx))
		now, err := d.MasterAddr(ctx)
		require.NoError(t, err)
		require.NotEqual(t, old, now)
		t.Logf("settled after %v", time.Since(start))
	})
}
