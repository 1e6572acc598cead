package scaleout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Databases on a cluster (Valkey 9 cluster-databases): Options.DB on a
// cluster client selects the database on every node connection.

// dbNodeClient returns a standalone client of node n in database db: the view
// of one node, independent of the cluster client under test.
func dbNodeClient(t *testing.T, n *harness.ClusterNode, db int) *respire.Client {
	t.Helper()
	return connect(t, respire.Options{Addr: n.Addr, DB: db})
}

// assertInDB checks that key holds want in database 3 of the node that
// serves its slot, and is absent from database 0 there; it returns the node.
func assertInDB(t *testing.T, ctx context.Context, hc *harness.Cluster, views map[string][2]*respire.Client, c *respire.Client, key, want string) *harness.ClusterNode {
	t.Helper()
	slot, err := c.ClusterKeySlot(ctx, key)
	require.NoError(t, err)
	owner := hc.MasterOf(int(slot))
	require.NotNil(t, owner, "slot %d", slot)
	v, ok := views[owner.Addr]
	if !ok {
		v = [2]*respire.Client{dbNodeClient(t, owner, 0), dbNodeClient(t, owner, 3)}
		views[owner.Addr] = v
	}
	got, err := v[1].Get(ctx, key)
	require.NoError(t, err, "%s in database 3 on %s", key, owner.Addr)
	assert.Equal(t, want, got, key)
	_, err = v[0].Get(ctx, key)
	assert.ErrorIs(t, err, respire.Nil, "%s must not be in database 0 on %s", key, owner.Addr)
	return owner
}

// TestValkeyClusterDB writes keys of every shard through a cluster client
// with Options.DB 3 and finds them in database 3 of their node, not in
// database 0; reads, DBSIZE, ScanAll, MOVE and COPY ... DB work in that
// database; SELECT through Do stays refused.
func TestValkeyClusterDB(t *testing.T) {
	hc := valkeyCluster(t)
	ctx := ctxT(t)
	c := connect(t, respire.Options{DB: 3, Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
	c0 := connect(t, respire.Options{Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
	prefix := "vdb:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	views := map[string][2]*respire.Client{}
	owners := map[string]bool{}
	var keys []string
	for i := range 30 {
		k := prefix + strconv.Itoa(i)
		keys = append(keys, k)
		require.NoError(t, c.Set(ctx, k, "v"+strconv.Itoa(i), nil))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, k := range keys {
			c.Del(ctx, k)
			c0.Del(ctx, k)
		}
	})
	for i, k := range keys {
		owners[assertInDB(t, ctx, hc, views, c, k, "v"+strconv.Itoa(i)).Addr] = true
		got, err := c.Get(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, "v"+strconv.Itoa(i), got)
		_, err = c0.Get(ctx, k)
		assert.ErrorIs(t, err, respire.Nil, "a database-0 client must not see %s", k)
	}
	require.Len(t, owners, len(hc.Masters()), "the keys must cover every shard")

	// ScanAll goes shard by shard, in database 3.
	var scanned []string
	for k, err := range c.ScanAll(ctx, &respire.ScanOptions{Match: prefix + "*"}) {
		require.NoError(t, err)
		scanned = append(scanned, k)
	}
	slices.Sort(scanned)
	want := slices.Clone(keys)
	slices.Sort(want)
	assert.Equal(t, want, scanned)
	for _, err := range c0.ScanAll(ctx, &respire.ScanOptions{Match: prefix + "*"}) {
		require.NoError(t, err)
		t.Fatal("database 0 must hold none of the keys")
	}
	n3, err := c.DBSize(ctx)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, n3, int64(len(keys)), "DBSIZE sums database 3 over the shards")

	// MOVE and COPY ... DB take a database: they act on the key's node.
	moved := keys[0]
	ok, err := c.Move(ctx, moved, 0)
	require.NoError(t, err)
	assert.True(t, ok)
	got, err := c0.Get(ctx, moved)
	require.NoError(t, err)
	assert.Equal(t, "v0", got, "MOVE to database 0 on the key's node")
	_, err = c.Get(ctx, moved)
	assert.ErrorIs(t, err, respire.Nil)
	db := int64(0)
	ok, err = c.Copy(ctx, keys[1], keys[1], &respire.CopyOptions{DB: &db})
	require.NoError(t, err)
	assert.True(t, ok)
	got, err = c0.Get(ctx, keys[1])
	require.NoError(t, err)
	assert.Equal(t, "v1", got)
	_, err = c.Move(ctx, keys[2], 16)
	assert.ErrorContains(t, err, "out of range", "MOVE to a database past cluster-databases")

	// SELECT through Do stays refused: it would change a shared
	// connection's database; the message names Options.DB.
	_, err = c.Do(ctx, "SELECT", 1)
	var ae *respire.ArgError
	require.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, respire.ErrNotSent)
	assert.Contains(t, err.Error(), "Options.DB")
	// SWAPDB is refused by the server in cluster mode; the reply says so.
	_, err = c.Do(ctx, "SWAPDB", 0, 3)
	assert.ErrorContains(t, err, "not allowed in cluster mode")
}

// TestValkeyClusterDBReplicaReads: reads from replicas (ReadReplica) are
// served in database 3 too, and counted on the replicas.
func TestValkeyClusterDBReplicaReads(t *testing.T) {
	hc := valkeyCluster(t)
	ctx := ctxT(t)
	c := connect(t, respire.Options{DB: 3, ReadFrom: respire.ReadReplica, Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
	prefix := "vdbr:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
	var keys []string
	for i := range 20 {
		k := prefix + strconv.Itoa(i)
		keys = append(keys, k)
		require.NoError(t, c.Set(ctx, k, "r"+strconv.Itoa(i), nil))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, k := range keys {
			c.Del(ctx, k)
		}
	})
	before := dbReplicaGets(t, ctx, hc)
	for i, k := range keys {
		// A replica may lag its primary for a moment: await the write's
		// arrival, bounded by the test's context.
		for {
			got, err := c.Get(ctx, k)
			if err == nil {
				assert.Equal(t, "r"+strconv.Itoa(i), got)
				break
			}
			require.ErrorIs(t, err, respire.Nil)
			select {
			case <-ctx.Done():
				t.Fatalf("%s never reached a replica's database 3", k)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	after := dbReplicaGets(t, ctx, hc)
	assert.GreaterOrEqual(t, after-before, int64(len(keys)), "the reads must be served by replicas")
}

// dbReplicaGets sums the GET calls of the cluster's replicas (INFO
// commandstats).
func dbReplicaGets(t *testing.T, ctx context.Context, hc *harness.Cluster) int64 {
	t.Helper()
	var sum int64
	for _, r := range hc.Replicas() {
		sum += dbCommandCalls(t, ctx, r.Addr, "get")
	}
	return sum
}

// dbCommandCalls returns the calls of command on the server at addr, from
// INFO commandstats.
func dbCommandCalls(t *testing.T, ctx context.Context, addr, command string) int64 {
	t.Helper()
	c := connect(t, respire.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(ctx, "commandstats")
	require.NoError(t, err)
	for line := range strings.SplitSeq(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+command+":calls=")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(rest, ",")
		v, err := strconv.ParseInt(n, 10, 64)
		require.NoError(t, err, line)
		return v
	}
	return 0
}

// dbErrorCount returns the count of the error replies of prefix on the server
// at addr, from INFO errorstats.
func dbErrorCount(t *testing.T, ctx context.Context, addr, prefix string) int64 {
	t.Helper()
	c := connect(t, respire.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(ctx, "errorstats")
	require.NoError(t, err)
	for line := range strings.SplitSeq(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_"+prefix+":count="); ok {
			v, err := strconv.ParseInt(rest, 10, 64)
			require.NoError(t, err, line)
			return v
		}
	}
	return 0
}

// TestValkeyClusterDBPubSubAndCache: pub/sub and the client-side cache of
// a cluster client in database 3 work (their connections select it too).
func TestValkeyClusterDBPubSubAndCache(t *testing.T) {
	hc := valkeyCluster(t)
	ctx := ctxT(t)
	c := connect(t, respire.Options{DB: 3, ClientCache: &respire.CacheOptions{}, Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
	w := connect(t, respire.Options{DB: 3, Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
	key := "vdbc:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() { w.Del(context.Background(), key) })

	sub, err := c.Subscribe(ctx, key)
	require.NoError(t, err)
	defer sub.Close()
	_, err = w.Publish(ctx, key, "hello")
	require.NoError(t, err)
	msg, err := sub.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, "hello", msg.Payload)

	require.NoError(t, w.Set(ctx, key, "one", nil))
	got, err := c.Cached(0).Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "one", got)
	require.NoError(t, w.Set(ctx, key, "two", nil))
	for { // the invalidation arrives as a push: await it
		got, err = c.Cached(0).Get(ctx, key)
		require.NoError(t, err)
		if got == "two" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the cached value was never invalidated")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestValkeyClusterDBMoved: a command redirected by MOVED to the slot's
// new owner runs there in the client's database.
func TestValkeyClusterDBMoved(t *testing.T) {
	hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: harness.Valkey91, Replicas: -1, Args: []string{"cluster-databases 16"}})
	ctx := ctxT(t)
	c := connect(t, respire.Options{DB: 3, Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
	key := "vdbm:key"
	slot, err := c.ClusterKeySlot(ctx, key)
	require.NoError(t, err)
	from := hc.MasterOf(int(slot))
	var to *harness.ClusterNode
	for _, m := range hc.Masters() {
		if m != from {
			to = m
			break
		}
	}
	// The slot is empty: moving it changes only its owner, which the
	// client learns from MOVED.
	require.NoError(t, hc.MoveSlots(ctx, from, to, []int{int(slot)}))
	movedBefore := dbErrorCount(t, ctx, from.Addr, "MOVED")
	require.NoError(t, c.Set(ctx, key, "moved", nil))
	assert.Greater(t, dbErrorCount(t, ctx, from.Addr, "MOVED"), movedBefore, "the write must have been redirected by MOVED")
	require.Equal(t, to, hc.MasterOf(int(slot)))
	assertInDB(t, ctx, hc, map[string][2]*respire.Client{}, c, key, "moved")
}

// TestValkeyClusterDBRefused: a database the cluster does not allow fails
// Connect at once with a *HandshakeError naming the database, the node and
// why: any but 0 on Redis, 16 with cluster-databases 16.
func TestValkeyClusterDBRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		hc   func(t *testing.T) *harness.Cluster
		db   int
		want string
	}{
		{"Redis 7.0", func(t *testing.T) *harness.Cluster { return harness.SharedCluster(t, harness.Redis70) }, 1, "not allowed in cluster mode"},
		{"Valkey 9.1, database 16", func(t *testing.T) *harness.Cluster { return valkeyCluster(t) }, 16, "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := tc.hc(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			c, err := respire.Connect(ctx, respire.Options{DB: tc.db, Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
			if err == nil {
				c.Close()
			}
			require.Error(t, err)
			assert.Less(t, time.Since(start), 5*time.Second, "a refused SELECT is permanent: no waiting")
			var he *respire.HandshakeError
			require.ErrorAs(t, err, &he, err.Error())
			assert.Equal(t, "SELECT", he.Step)
			var se *respire.Error
			assert.ErrorAs(t, err, &se)
			msg := err.Error()
			t.Log(msg)
			assert.Contains(t, msg, fmt.Sprintf("database %d on cluster node 127.0.0.1:", tc.db))
			assert.Contains(t, msg, tc.want)
			assert.Contains(t, msg, "cluster-databases")
			assert.True(t, strings.HasPrefix(msg, "respire: "), msg)

			// Without Connect, the first command fails the same way.
			c, err = respire.NewClient(respire.Options{DB: tc.db, Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
			require.NoError(t, err)
			defer c.Close()
			err = c.Set(ctx, "vdb:refused", "x", nil)
			require.ErrorAs(t, err, &he, fmt.Sprint(err))
			assert.Contains(t, err.Error(), fmt.Sprintf("database %d", tc.db))
			assert.False(t, errors.Is(err, context.DeadlineExceeded), "no waiting until the deadline: %v", err)
		})
	}
}
