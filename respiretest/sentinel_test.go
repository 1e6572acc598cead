package respiretest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSentinel: a primary with two replicas watched by three sentinels
// serves a client with Options.Sentinel; when the primary is killed the
// sentinels promote a replica, the other one follows it, and the client's
// writes work again. When the test ends every process is gone.
func TestSentinel(t *testing.T) {
	var nodes []*Node
	t.Run("redis-7.0-server", func(t *testing.T) {
		began := time.Now()
		c, s := StartSentinel(t, &SentinelOptions{Server: serverBin(t, "redis-7.0-server"), Replicas: 2})
		t.Logf("deployment ready in %v", time.Since(began).Round(time.Millisecond))
		nodes = append(s.Nodes(), s.Sentinels()...)
		require.Len(t, s.Nodes(), 3)
		assert.Len(t, s.Addrs(), 3)
		assert.Equal(t, "mymaster", s.MasterName())
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()

		require.NoError(t, c.Set(ctx, "k", "before", nil))
		p, err := s.Primary(ctx)
		require.NoError(t, err)
		assert.Same(t, s.Nodes()[0], p)
		replicas, err := s.Replicas(ctx)
		require.NoError(t, err)
		assert.Equal(t, s.Nodes()[1:], replicas)

		old, err := s.KillPrimary(ctx)
		require.NoError(t, err)
		assert.Same(t, p, old)
		began = time.Now()
		require.NoError(t, s.WaitFailover(ctx, old))
		t.Logf("failover in %v", time.Since(began).Round(time.Millisecond))
		now, err := s.Primary(ctx)
		require.NoError(t, err)
		assert.NotSame(t, old, now)
		assert.Contains(t, replicas, now)

		retryWrite(ctx, t, c, "k", "after")
		v, err := c.Get(ctx, "k")
		require.NoError(t, err)
		assert.Equal(t, "after", v)

		c2 := s.Connect(t, respire.Options{Protocol: 2})
		v, err = c2.Get(ctx, "k")
		require.NoError(t, err)
		assert.Equal(t, "after", v)
	})
	require.Len(t, nodes, 6)
	assertNodesGone(t, nodes)
}

// TestSentinelNoReplica: WaitFailover with nothing to promote says so at
// once; a node of another deployment is refused.
func TestSentinelNoReplica(t *testing.T) {
	_, s := StartSentinel(t, &SentinelOptions{Server: serverBin(t, "valkey-8.1-server"), Sentinels: 1, MasterName: "solo"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	old, err := s.KillPrimary(ctx)
	require.NoError(t, err)
	err = s.WaitFailover(ctx, old)
	assert.ErrorContains(t, err, "no replica to promote")
	assert.ErrorContains(t, s.WaitFailover(ctx, &Node{Addr: old.Addr}), "not a data node")
}

// TestSentinelBadOptions: nonsense is an error before anything starts.
func TestSentinelBadOptions(t *testing.T) {
	for _, o := range []SentinelOptions{
		{Replicas: -1},
		{Sentinels: -1},
		{DownAfter: -time.Second},
		{MasterName: "my master"},
	} {
		_, err := NewSentinel(context.Background(), &o)
		assert.ErrorIs(t, err, ErrInvalidOptions, "%+v", o)
	}
}

// TestSentinelNoServer: without a binary the error is Start's.
func TestSentinelNoServer(t *testing.T) {
	noServer(t)
	_, err := NewSentinel(context.Background(), nil)
	require.ErrorIs(t, err, ErrNoServer)
	assert.Contains(t, err.Error(), "Sentinel needs a local binary")
	assert.Contains(t, err.Error(), "apt-get install redis-server")
	_, err = NewSentinel(context.Background(), &SentinelOptions{Server: "/no/such/valkey-server"})
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrNoServer))
	assert.Contains(t, err.Error(), `SentinelOptions.Server names "/no/such/valkey-server"`)

	var skipped bool
	t.Run("skip", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		StartSentinel(t, &SentinelOptions{SkipIfUnavailable: true})
	})
	assert.True(t, skipped)
}
