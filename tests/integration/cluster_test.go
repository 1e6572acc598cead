package integration

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clusterClient connects to c through all its seeds.
func clusterClient(t *testing.T, c *harness.Cluster, opts respire.Options) *respire.Client {
	t.Helper()
	if opts.Cluster == nil {
		opts.Cluster = &respire.ClusterOptions{}
	}
	opts.Cluster.Addrs = c.Seeds()
	if opts.MinRetryBackoff == 0 {
		opts.MinRetryBackoff = 5 * time.Millisecond
		opts.MaxRetryBackoff = 100 * time.Millisecond
	}
	return connect(t, opts)
}

// topologyFetches sums the CLUSTER SHARDS calls every node has served:
// the client's topology fetches (the harness asks with CLUSTER SLOTS and
// CLUSTER NODES).
func topologyFetches(t *testing.T, c *harness.Cluster) int {
	t.Helper()
	total := 0
	for _, n := range c.Nodes {
		info, err := n.Do(context.Background(), "INFO", "commandstats")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(fmt.Sprint(info), "\n") {
			for _, name := range []string{"cmdstat_cluster|shards:"} {
				if strings.HasPrefix(line, name) {
					f := strings.TrimPrefix(line, name)
					f = strings.TrimPrefix(strings.Split(f, ",")[0], "calls=")
					n, _ := strconv.Atoi(f)
					total += n
				}
			}
		}
	}
	return total
}

// TestClusterSurface: the same client and generated methods work on a
// cluster: keys on every shard, fan-out from the spec's tips, batches,
// transactions, Watch, blocking commands, pub/sub, leases, Do; commands
// that cannot be split are refused before sending.
func TestClusterSurface(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		hc := harness.SharedCluster(t, f)
		for _, proto := range []int{3, 2} {
			t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
				ctx := ctxT(t)
				before := topologyFetches(t, hc)
				c := clusterClient(t, hc, respire.Options{Protocol: proto})
				p := fmt.Sprintf("surf%d:", proto)

				// 64 callers on first use; keys on every shard.
				var wg sync.WaitGroup
				errs := make(chan error, 64)
				for i := range 64 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						k := fmt.Sprintf("%sk%d", p, i)
						if err := c.Set(ctx, k, "v"+strconv.Itoa(i), nil); err != nil {
							errs <- err
							return
						}
						v, err := c.Get(ctx, k)
						if err == nil && v != "v"+strconv.Itoa(i) {
							err = fmt.Errorf("%s: got %q", k, v)
						}
						if err != nil {
							errs <- err
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
				// One fetch on first use, shared by the 64 callers (a fetch
				// per caller would be 64). That fetch asks a second or
				// third node when one does not answer within a second,
				// which a loaded machine can make happen.
				assert.LessOrEqual(t, topologyFetches(t, hc)-before, 3, "one topology fetch on first use")

				// Split by slot and merged in the caller's order.
				keys := make([]string, 100)
				for i := range keys {
					keys[i] = fmt.Sprintf("%sk%d", p, i)
				}
				vals, err := c.MGet(ctx, keys...)
				require.NoError(t, err)
				require.Len(t, vals, 100)
				for i, v := range vals {
					if i < 64 {
						assert.Equal(t, "v"+strconv.Itoa(i), v.V, keys[i])
					} else {
						assert.False(t, v.Valid, keys[i])
					}
				}
				n, err := c.Exists(ctx, keys...)
				require.NoError(t, err)
				assert.Equal(t, int64(64), n)
				require.NoError(t, c.MSet(ctx, respire.KeyValue{Key: p + "a", Value: "1"}, respire.KeyValue{Key: p + "b", Value: "2"}, respire.KeyValue{Key: p + "c", Value: "3"}))
				_, err = c.MSetNX(ctx, respire.KeyValue{Key: p + "a", Value: "1"}, respire.KeyValue{Key: p + "zz", Value: "2"})
				var ae *respire.ArgError
				require.ErrorAs(t, err, &ae, "MSETNX across slots must be refused")
				assert.ErrorIs(t, err, respire.ErrCrossSlot)
				assert.ErrorIs(t, err, respire.ErrNotSent)
				_, err = c.RPopLPush(ctx, p+"x", p+"y")
				require.ErrorAs(t, err, &ae)
				assert.Contains(t, err.Error(), "slot")
				// Hash tags keep keys together.
				_, err = c.MSetNX(ctx, respire.KeyValue{Key: "{" + p + "t}a", Value: "1"}, respire.KeyValue{Key: "{" + p + "t}b", Value: "2"})
				require.NoError(t, err)

				dbsize, err := c.DBSize(ctx)
				require.NoError(t, err)
				assert.GreaterOrEqual(t, dbsize, int64(69))
				all, err := c.Keys(ctx, p+"*")
				require.NoError(t, err)
				assert.Len(t, all, 67, "every shard's keys but the hash-tagged ones")
				del, err := c.Del(ctx, keys...)
				require.NoError(t, err)
				assert.Equal(t, int64(64), del)

				// Batch over all shards, results in order.
				b := c.NewBatch()
				var futs []*respire.Future[int64]
				for i := range 200 {
					futs = append(futs, b.Incr(fmt.Sprintf("%sn%d", p, i%50)))
				}
				mg := b.MGet(p+"n1", p+"n2", p+"n3")
				require.NoError(t, b.Exec(ctx))
				for i, f := range futs {
					v, err := f.Result()
					require.NoError(t, err)
					assert.Equal(t, int64(i/50+1), v)
				}
				assert.Len(t, mg.Val(), 3)

				// A transaction in one slot; across slots it is refused.
				tx := c.NewTx()
				i1 := tx.Incr("{" + p + "tx}a")
				tx.Incr("{" + p + "tx}b")
				require.NoError(t, tx.Exec(ctx))
				assert.Equal(t, int64(1), i1.Val())
				tx = c.NewTx()
				tx.Incr(p + "tx-a")
				tx.Incr(p + "tx-b")
				err = tx.Exec(ctx)
				require.ErrorAs(t, err, &ae)
				assert.ErrorIs(t, err, respire.ErrCrossSlot)

				require.NoError(t, c.WatchRetry(ctx, func(tx *respire.Tx) error {
					v, err := c.Get(ctx, "{"+p+"w}bal")
					if err != nil && !errors.Is(err, respire.Nil) {
						return err
					}
					tx.Set("{"+p+"w}bal", v+"x", nil)
					return nil
				}, "{"+p+"w}bal"))

				// Blocking commands on the slot owner's pool.
				owner := hc.MasterOf(harness.SlotOf(p + "list"))
				go func() {
					// Push once the BLPOP blocks on the slot's owner.
					for {
						v, err := owner.Do(ctx, "INFO", "clients")
						if err != nil || strings.Contains(fmt.Sprint(v), "blocked_clients:1") {
							break
						}
					}
					c.RPush(ctx, p+"list", "item")
				}()
				got, err := c.BLPop(ctx, 5*time.Second, p+"list")
				require.NoError(t, err)
				assert.Equal(t, "item", got.Element)

				// Pub/sub on any node reaches publishers on any other.
				sub, err := c.Subscribe(ctx, p+"ch")
				require.NoError(t, err)
				defer sub.Close()
				_, err = c.Publish(ctx, p+"ch", "hello")
				require.NoError(t, err)
				msg, err := sub.Next(ctx)
				require.NoError(t, err)
				assert.Equal(t, "hello", msg.Payload)

				// Leases and Do.
				require.NoError(t, c.Set(ctx, p+"blob", "bytes", nil))
				l, err := c.GetLease(ctx, p+"blob")
				require.NoError(t, err)
				assert.Equal(t, "bytes", string(l.Bytes()))
				l.Release()
				r, err := c.Do(ctx, "GET", p+"blob")
				require.NoError(t, err)
				s, _ := r.Text()
				assert.Equal(t, "bytes", s)
				r, err = c.Do(ctx, "EVAL", "return redis.call('GET', KEYS[1])", 1, p+"blob")
				require.NoError(t, err, "a movable-key command follows MOVED")
				s, _ = r.Text()
				assert.Equal(t, "bytes", s)
				// Its keys unknown, it goes to a random primary, and after a
				// MOVED to the node named, not to another random one.
				for i := range 30 {
					k := fmt.Sprintf("%seval%d", p, i)
					r, err = c.Do(ctx, "EVAL", "return redis.call('SET', KEYS[1], ARGV[1])", 1, k, "v")
					require.NoError(t, err, "EVAL on %s", k)
				}
				ssub, err := c.SSubscribe(ctx, p+"sh")
				require.NoError(t, err)
				defer ssub.Close()
				_, err = c.SPublish(ctx, p+"sh", "sharded")
				require.NoError(t, err)
				msg, err = ssub.Next(ctx)
				require.NoError(t, err)
				assert.Equal(t, "sharded", msg.Payload)
				assert.True(t, msg.Sharded)
			})
		}
	})
}

// TestClusterReplicaReads: with ReadPreferReplica, read-only commands go
// to replicas (which count them), writes and transactions to primaries;
// a replica that is stopped is left for its primary at once.
func TestClusterReplicaReads(t *testing.T) {
	hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: harness.Redis80})
	ctx := ctxT(t)
	c := clusterClient(t, hc, respire.Options{ReadFrom: respire.ReadPreferReplica, RetryReads: 1})
	require.NoError(t, c.Set(ctx, "rr:k", "v", nil))
	gets := func(n *harness.ClusterNode) int {
		info, err := n.Do(ctx, "INFO", "commandstats")
		require.NoError(t, err)
		for _, line := range strings.Split(fmt.Sprint(info), "\n") {
			if f, ok := strings.CutPrefix(line, "cmdstat_get:calls="); ok {
				n, _ := strconv.Atoi(strings.Split(f, ",")[0])
				return n
			}
		}
		return 0
	}
	replicaGets := func() int {
		total := 0
		for _, r := range hc.Replicas() {
			total += gets(r)
		}
		return total
	}
	// getN reads rr:k n times through cl, each call with timeout.
	getN := func(cl *respire.Client, n int, timeout time.Duration) {
		t.Helper()
		for range n {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			v, err := cl.Get(cctx, "rr:k")
			cancel()
			require.NoError(t, err)
			require.Equal(t, "v", v)
		}
	}
	// Replication is asynchronous: wait for the value on the replica.
	require.Eventually(t, func() bool { v, err := c.Get(ctx, "rr:k"); return err == nil && v == "v" }, 5*time.Second, time.Millisecond)
	before := replicaGets()
	getN(c, 100, 5*time.Second)
	assert.GreaterOrEqual(t, replicaGets()-before, 100, "the GETs were served by replicas")

	// Under PrimaryReads (the reads of a Watch's function), reads go to
	// the primary, alone and in a batch.
	pctx := respire.PrimaryReads(ctx)
	before = replicaGets()
	for range 20 {
		v, err := c.Get(pctx, "rr:k")
		require.NoError(t, err)
		require.Equal(t, "v", v)
	}
	b := c.NewBatch()
	for range 10 {
		b.Get("rr:k")
	}
	require.NoError(t, b.Exec(pctx))
	assert.Equal(t, before, replicaGets(), "reads under PrimaryReads went to a replica")

	// A stopped replica: reads keep working, from the primary.
	m := hc.MasterOf(harness.SlotOf("rr:k"))
	r := hc.ReplicasOf(m)[0]
	hc.Kill(r)
	getN(c, 50, 2*time.Second)
	require.NoError(t, hc.Restart(r))
	// The restarted replica starts empty and serves reads before its sync
	// is done (replica-serve-stale-data): wait for the sync, since a read
	// from it in between answers nil, which no client can tell apart.
	require.NoError(t, hc.WaitStable(ctx))
	getN(c, 50, 5*time.Second)

	// ReadNearest: a replica that stops answering (SIGSTOP: no reset, its
	// PINGs time out) is avoided, and reads go on from the primary.
	near := clusterClient(t, hc, respire.Options{ReadFrom: respire.ReadNearest})
	require.Eventually(t, func() bool { v, err := near.Get(ctx, "rr:k"); return err == nil && v == "v" }, 5*time.Second, time.Millisecond)
	before = gets(m) + gets(r)
	getN(near, 100, 5*time.Second)
	assert.GreaterOrEqual(t, gets(m)+gets(r)-before, 100, "nearest reads stay in the key's shard")
	require.NoError(t, hc.Pause(r))
	// Calls that reach the stopped replica before the next PING fails end
	// by their deadline; after that, every read is served by the primary.
	require.Eventually(t, func() bool {
		for range 20 {
			cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_, err := near.Get(cctx, "rr:k")
			cancel()
			if err != nil {
				return false
			}
		}
		return true
	}, 15*time.Second, time.Millisecond)
	before = gets(m)
	getN(near, 100, 2*time.Second)
	assert.GreaterOrEqual(t, gets(m)-before, 100, "with its replica stopped, the shard's reads go to the primary")
	require.NoError(t, hc.Resume(r))
}
