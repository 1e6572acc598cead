package respiretest

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// assertNodesGone checks that the nodes' processes and directories are
// gone.
func assertNodesGone(t *testing.T, nodes []*Node) {
	t.Helper()
	require.NotEmpty(t, nodes)
	for _, n := range nodes {
		assertGone(t, n.srv)
	}
}

// retryWrite sets key to value through c until it works or ctx ends: a
// client learns a new primary from the error of a write to the old one.
func retryWrite(ctx context.Context, t *testing.T, c *respire.Client, key, value string) {
	t.Helper()
	var err error
	for {
		if err = c.Set(ctx, key, value, nil); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("writing %s after the failover: %v", key, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestCluster: a cluster of three primaries with a replica each serves a
// cluster client; a stopped node answers nothing until it is continued;
// a killed primary is replaced by its replica, and writes work again.
// When the test ends every node is gone.
func TestCluster(t *testing.T) {
	for _, name := range []string{"redis-7.0-server", "valkey-8.1-server"} {
		var nodes []*Node
		t.Run(name, func(t *testing.T) {
			began := time.Now()
			c, cl := StartCluster(t, &ClusterOptions{Server: serverBin(t, name), ReplicasPerMaster: 1})
			t.Logf("cluster ready in %v", time.Since(began).Round(time.Millisecond))
			nodes = cl.Nodes()
			require.Len(t, nodes, 6)
			assert.Len(t, cl.Addrs(), 6)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()

			for i := range 20 {
				k := "k" + strconv.Itoa(i)
				require.NoError(t, c.Set(ctx, k, k, nil))
				v, err := c.Get(ctx, k)
				require.NoError(t, err)
				assert.Equal(t, k, v)
			}

			old, err := cl.PrimaryOf(ctx, "user:{42}")
			require.NoError(t, err)
			assert.Contains(t, nodes[:3], old)
			replicas, err := cl.ReplicasOf(ctx, old)
			require.NoError(t, err)
			require.Len(t, replicas, 1)

			t.Run("stop and continue", func(t *testing.T) {
				r := replicas[0]
				direct, err := respire.Connect(ctx, respire.Options{Addr: r.Addr})
				require.NoError(t, err)
				defer direct.Close()
				require.NoError(t, r.Stop())
				require.NoError(t, r.Stop(), "stopping a stopped node does nothing")
				short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				_, err = direct.Ping(short)
				cancel()
				require.Error(t, err, "a stopped node answers nothing")
				assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
				require.NoError(t, r.Continue())
				require.NoError(t, r.Continue(), "continuing a running node does nothing")
				_, err = direct.Ping(ctx)
				require.NoError(t, err)
			})

			t.Run("failover", func(t *testing.T) {
				require.NoError(t, old.Kill())
				require.NoError(t, old.Kill(), "killing a killed node does nothing")
				assert.ErrorIs(t, old.Stop(), ErrNodeKilled)
				assert.ErrorIs(t, old.Continue(), ErrNodeKilled)
				began := time.Now()
				require.NoError(t, cl.WaitFailover(ctx, old))
				t.Logf("failover in %v", time.Since(began).Round(time.Millisecond))
				now, err := cl.PrimaryOf(ctx, "user:{42}")
				require.NoError(t, err)
				assert.Same(t, replicas[0], now, "the replica took over")
				retryWrite(ctx, t, c, "user:{42}", "after")
				v, err := c.Get(ctx, "user:{42}")
				require.NoError(t, err)
				assert.Equal(t, "after", v)
			})
		})
		assertNodesGone(t, nodes)
	}
}

// TestClusterNoReplica: WaitFailover of a primary without a replica says
// so at once.
func TestClusterNoReplica(t *testing.T) {
	_, cl := StartCluster(t, &ClusterOptions{Server: serverBin(t, "redis-8.0-server"), Masters: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := cl.Nodes()[0]
	require.NoError(t, p.Kill())
	began := time.Now()
	err := cl.WaitFailover(ctx, p)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no replica to promote")
	assert.Less(t, time.Since(began), 5*time.Second)

	err = cl.WaitFailover(ctx, &Node{Addr: "127.0.0.1:1"})
	assert.ErrorContains(t, err, "not a node of this cluster")
}

// TestClusterBadOptions: nonsense is an error before anything starts.
func TestClusterBadOptions(t *testing.T) {
	ctx := context.Background()
	for _, o := range []ClusterOptions{
		{Masters: -1},
		{ReplicasPerMaster: -1},
		{NodeTimeout: -time.Second},
		{StartTimeout: -time.Second},
		{Masters: 20000},
	} {
		_, err := NewCluster(ctx, &o)
		assert.ErrorIs(t, err, ErrInvalidOptions, "%+v", o)
	}
}

// TestClusterNoServer: without a binary the error is Start's, and says
// that Docker is no help for a cluster.
func TestClusterNoServer(t *testing.T) {
	noServer(t)
	ctx := context.Background()
	_, err := NewCluster(ctx, nil)
	require.ErrorIs(t, err, ErrNoServer)
	assert.Contains(t, err.Error(), "redis-server or valkey-server on PATH")
	assert.Contains(t, err.Error(), "a cluster needs a local binary")
	assert.Contains(t, err.Error(), "apt-get install redis-server")
	assert.Contains(t, err.Error(), EnvServer)

	_, err = NewCluster(ctx, &ClusterOptions{Server: "/no/such/redis-server"})
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrNoServer))
	assert.Contains(t, err.Error(), `ClusterOptions.Server names "/no/such/redis-server", which cannot be run`)

	var skipped bool
	t.Run("skip", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		StartCluster(t, &ClusterOptions{SkipIfUnavailable: true})
	})
	assert.True(t, skipped)
}

// TestClusterBadArgs: a node that does not start fails the whole start,
// with the server's complaint in the error.
func TestClusterBadArgs(t *testing.T) {
	_, err := NewCluster(context.Background(), &ClusterOptions{
		Server: serverBin(t, "redis-8.0-server"), Masters: 2, Args: []string{"--no-such-directive", "1"},
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not start")
	assert.Contains(t, err.Error(), "no-such-directive")
}
