package ecosystem

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/goredis"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clusterShaped is what a cluster-shaped go-redis program holds: the
// universal client and *redis.ClusterClient's per-node methods. go-redis's
// own cluster client satisfies it, and so must the adapter.
type clusterShaped interface {
	redis.UniversalClient
	ForEachShard(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error
	ForEachMaster(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error
	ForEachSlave(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error
	MasterForKey(ctx context.Context, key string) (*redis.Client, error)
	SlaveForKey(ctx context.Context, key string) (*redis.Client, error)
	ReloadState(ctx context.Context)
}

var (
	_ clusterShaped = (*redis.ClusterClient)(nil)
	_ clusterShaped = (*goredis.Client)(nil)
)

// scanEveryMaster is the go-redis idiom for a whole-cluster SCAN: one
// scan per primary.
func scanEveryMaster(ctx context.Context, rdb clusterShaped, match string) ([]string, error) {
	var mu sync.Mutex
	var keys []string
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		it := c.Scan(ctx, 0, match, 100).Iterator()
		for it.Next(ctx) {
			mu.Lock()
			keys = append(keys, it.Val())
			mu.Unlock()
		}
		return it.Err()
	})
	sort.Strings(keys)
	return keys, err
}

// A program written for *redis.ClusterClient's per-node methods runs on a
// Respire cluster client: ForEachMaster reaches each primary (a SCAN on
// each covers the cluster), ForEachSlave each replica, ForEachShard both,
// MasterForKey the key's owner; fn's error comes back.
func TestGoRedisAdapterClusterShaped(t *testing.T) {
	ctx := ctxT(t)
	rdb, _ := onCluster(t)
	p := unique("shaped")
	var want []string
	for i := 0; i < 30; i++ {
		k := fmt.Sprintf("%s%d", p, i)
		require.NoError(t, rdb.Set(ctx, k, i, time.Minute).Err())
		want = append(want, k)
	}
	sort.Strings(want)
	keys, err := scanEveryMaster(ctx, rdb, p+"*")
	require.NoError(t, err)
	assert.Equal(t, want, keys, "a SCAN on every primary")

	roles := func(each func(context.Context, func(context.Context, *redis.Client) error) error) map[string]string {
		var mu sync.Mutex
		m := map[string]string{}
		require.NoError(t, each(ctx, func(ctx context.Context, c *redis.Client) error {
			info, err := c.Info(ctx, "replication").Result()
			if err != nil {
				return err
			}
			role := "?"
			for _, line := range strings.Split(info, "\r\n") {
				if r, ok := strings.CutPrefix(line, "role:"); ok {
					role = r
				}
			}
			mu.Lock()
			m[c.Options().Addr] = role
			mu.Unlock()
			return nil
		}))
		return m
	}
	masters, slaves, all := roles(rdb.ForEachMaster), roles(rdb.ForEachSlave), roles(rdb.ForEachShard)
	assert.Len(t, masters, 3, "the shared cluster's primaries")
	assert.Len(t, slaves, 3, "the shared cluster's replicas")
	for addr, role := range masters {
		assert.Equal(t, "master", role, addr)
		assert.Equal(t, "master", all[addr], addr)
	}
	for addr, role := range slaves {
		assert.Equal(t, "slave", role, addr)
		assert.Equal(t, "slave", all[addr], addr)
	}
	assert.Len(t, all, 6)

	// The key's owner answers for it (a per-node client follows no MOVED).
	for _, k := range want[:5] {
		c, err := rdb.MasterForKey(ctx, k)
		require.NoError(t, err)
		assert.Contains(t, masters, c.Options().Addr)
		_, err = c.Get(ctx, k).Result()
		require.NoError(t, err, "GET %s on its primary", k)
		r, err := rdb.SlaveForKey(ctx, k)
		require.NoError(t, err)
		assert.Contains(t, slaves, r.Options().Addr)
	}

	boom := errors.New("boom")
	err = rdb.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
		if err := c.Ping(ctx).Err(); err != nil {
			return err
		}
		return boom
	})
	assert.ErrorIs(t, err, boom)
}

// On a single server, the one primary is the adapter and there is no
// replica; after Close, the per-node calls fail.
func TestGoRedisAdapterClusterShapedSingle(t *testing.T) {
	ctx := ctxT(t)
	addr := standalone(t)
	rc := connect(t, respire.Options{Addr: addr})
	rdb := goredis.New(rc)
	p := unique("single")
	require.NoError(t, rdb.Set(ctx, p+"a", "1", time.Minute).Err())
	keys, err := scanEveryMaster(ctx, rdb, p+"*")
	require.NoError(t, err)
	assert.Equal(t, []string{p + "a"}, keys)
	n := 0
	require.NoError(t, rdb.ForEachSlave(ctx, func(context.Context, *redis.Client) error { n++; return nil }))
	assert.Zero(t, n)
	c, err := rdb.MasterForKey(ctx, p+"a")
	require.NoError(t, err)
	assert.Equal(t, "1", c.Get(ctx, p+"a").Val())
	require.NoError(t, rdb.Close())
}

// The clients the adapter makes for a cluster's nodes are closed with it
// (the package's leak check sees their goroutines otherwise), and later
// per-node calls fail with an error that says so.
func TestGoRedisAdapterClusterShapedClose(t *testing.T) {
	ctx := ctxT(t)
	_, rc := onCluster(t)
	rdb := goredis.New(rc)
	require.NoError(t, rdb.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() }))
	require.NoError(t, rdb.Close())
	err := rdb.ForEachMaster(ctx, func(context.Context, *redis.Client) error { return nil })
	require.ErrorIs(t, err, respire.ErrClosed)
}
