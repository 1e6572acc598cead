package integration

import (
	"context"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClusterStalledNodeHold: a cluster primary stopped (SIGSTOP) with no
// replica to take over. The first call on its slot is written and ends at
// its deadline with an unknown outcome; the calls after it are not piled
// onto the stopped node but held, and fail at their deadlines as not sent
// (ErrNodeStalled), so the INCRs they carried never run. Once the node
// answers again, calls go through.
func TestClusterStalledNodeHold(t *testing.T) {
	hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: harness.Redis70, Replicas: -1, NodeTimeout: 30 * time.Second})
	ctx := ctxT(t)
	c := clusterClient(t, hc, respire.Options{})
	key := "{stall}n"
	victim := hc.MasterOf(harness.SlotOf(key))
	require.NoError(t, c.Set(ctx, key, "0", nil))

	require.NoError(t, hc.Pause(victim))
	paused := true
	defer func() {
		if paused {
			_ = hc.Resume(victim)
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	_, err := c.Incr(cctx, key)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, respire.ErrNotSent, "the first INCR was written: its outcome is unknown")

	for range 3 {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := c.Incr(cctx, key)
		cancel()
		require.ErrorIs(t, err, respire.ErrNotSent, "a command for a stalled node is held, not written")
		require.ErrorIs(t, err, respire.ErrNodeStalled)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		t.Logf("held: %v", err)
	}

	require.NoError(t, hc.Resume(victim))
	paused = false
	cctx, cancel = context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := c.Incr(cctx, key)
	require.NoError(t, err)
	// The first INCR ran when the node resumed (or was lost with its
	// connection); the three held ones never reached the server.
	assert.GreaterOrEqual(t, n, int64(1))
	assert.LessOrEqual(t, n, int64(2), "a held INCR ran")
}
