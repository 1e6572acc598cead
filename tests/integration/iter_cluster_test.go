package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeKeys sets n string keys prefix+i, spread over every slot range.
func writeScanKeys(t *testing.T, ctx context.Context, c *respire.Client, prefix string, n int) map[string]bool {
	t.Helper()
	want := make(map[string]bool, n)
	b := c.NewBatch()
	for i := range n {
		k := prefix + strconv.Itoa(i)
		want[k] = true
		b.Set(k, "v", nil)
	}
	require.NoError(t, b.Exec(ctx))
	return want
}

// TestClusterScanIterators: on a cluster, ScanAll yields the keys of every
// shard exactly once (no failover, no migration), and HScanAll, SScanAll
// and ZScanAll go to the node of their key, whichever shard it is on.
func TestClusterScanIterators(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		hc := harness.SharedCluster(t, f)
		for _, proto := range []int{3, 2} {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				ctx := ctxT(t)
				c := clusterClient(t, hc, respire.Options{Protocol: proto})
				p := fmt.Sprintf("citer%d:", proto)
				want := writeScanKeys(t, ctx, c, p+"k", 1000)

				count := int64(25)
				got := collectScan(t, c.ScanAll(ctx, &respire.ScanOptions{Match: p + "k*", Count: count}))
				assert.Equal(t, len(want), len(got))
				for k, n := range got {
					assert.True(t, want[k], "unknown key %q", k)
					assert.Equal(t, 1, n, "key %q yielded %d times", k, n)
				}
				// Each master's own keys, asked of it directly, are among them.
				masters := hc.Masters()
				require.Len(t, masters, 3)
				for _, m := range masters {
					own := nodeScanKeys(t, ctx, m, p+"k*")
					assert.NotEmpty(t, own, "keys on %s", m)
					for _, k := range own {
						assert.Contains(t, got, k, "key %q of %s", k, m)
					}
				}

				// Collections on different shards (their slots differ).
				for i := range 3 {
					h, s, z := fmt.Sprintf("%sh%d", p, i), fmt.Sprintf("%ss%d", p, i), fmt.Sprintf("%sz%d", p, i)
					b := c.NewBatch()
					for j := range 300 {
						js := strconv.Itoa(j)
						b.HSet(h, respire.FieldValue{Field: "f" + js, Value: "v" + js})
						b.SAdd(s, "m"+js)
						b.ZAdd(z, []respire.ScoredMember{{Member: "m" + js, Score: float64(j)}}, nil)
					}
					require.NoError(t, b.Exec(ctx))
					fields := collectScan(t, c.HScanAll(ctx, h, &respire.HScanOptions{Count: count}))
					assert.Equal(t, 300, len(fields))
					assert.Contains(t, fields, respire.FieldValue{Field: "f9", Value: "v9"})
					assert.Len(t, collectScan(t, c.SScanAll(ctx, s, &respire.SScanOptions{Count: count})), 300)
					scored := collectScan(t, c.ZScanAll(ctx, z, &respire.ZScanOptions{Count: count}))
					assert.Equal(t, 300, len(scored))
					assert.Contains(t, scored, respire.ScoredMember{Member: "m9", Score: 9})
				}

				// Breaking out ends the scan on the shard it is on.
				seen := 0
				for _, err := range c.ScanAll(ctx, &respire.ScanOptions{Match: p + "k*"}) {
					require.NoError(t, err)
					if seen++; seen == 5 {
						break
					}
				}
				assert.Equal(t, 5, seen)
			})
		}
	})
}

// nodeKeys scans one node for the keys matching pattern, with the
// harness's own client.
func nodeScanKeys(t *testing.T, ctx context.Context, n *harness.ClusterNode, pattern string) []string {
	t.Helper()
	var out []string
	cursor := "0"
	for {
		r, err := n.Do(ctx, "SCAN", cursor, "MATCH", pattern, "COUNT", "1000")
		require.NoError(t, err)
		page := r.([]any)
		for _, k := range page[1].([]any) {
			out = append(out, k.(string))
		}
		if cursor = page[0].(string); cursor == "0" {
			return out
		}
	}
}

// replOffset reads a field of INFO replication.
func scanReplOffset(ctx context.Context, n *harness.ClusterNode, field string) (int64, error) {
	info, err := n.Do(ctx, "INFO", "replication")
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(field + `:(\d+)`).FindStringSubmatch(fmt.Sprint(info))
	if m == nil {
		return 0, fmt.Errorf("%s: no %s in INFO replication", n, field)
	}
	return strconv.ParseInt(m[1], 10, 64)
}

// awaitReplicated waits until every replica has what its master has, so
// that killing a master loses no key of the test.
func awaitScanReplicated(t *testing.T, ctx context.Context, hc *harness.Cluster) {
	t.Helper()
	for _, m := range hc.Masters() {
		want, err := scanReplOffset(ctx, m, "master_repl_offset")
		require.NoError(t, err)
		for _, r := range hc.ReplicasOf(m) {
			require.Eventually(t, func() bool {
				got, err := scanReplOffset(ctx, r, "slave_repl_offset")
				return err == nil && got >= want
			}, 10*time.Second, 5*time.Millisecond, "replica %s of %s", r, m)
		}
	}
}

// TestClusterScanFailover: a primary that turns replica (a manual
// failover) in the middle of its shard's part of a cluster-wide scan is
// scanned to the end; one killed is replaced by the replica the cluster
// promotes, and the shard's part starts again from cursor 0 there: every
// key is yielded, the ones yielded before the kill twice. While no node
// serves a shard, the scan ends with the context with an error naming it.
func TestClusterScanFailover(t *testing.T) {
	t.Parallel() // waits for servers of its own: see main_test.go
	hc := harness.StartCluster(t, harness.ClusterConfig{})
	ctx := ctxT(t)
	c := clusterClient(t, hc, respire.Options{})
	want := writeScanKeys(t, ctx, c, "cfail:", 3000)
	awaitScanReplicated(t, ctx, hc)
	first := hc.MasterOf(0) // the shard ScanAll starts with
	count := int64(10)
	opts := &respire.ScanOptions{Match: "cfail:*", Count: count}

	// A hash whose slot moves to another primary in the middle of its
	// HSCAN: the scan starts again on the new owner, where the old cursor
	// means nothing.
	const h = "chash:moved"
	b := c.NewBatch()
	for i := range 3000 {
		b.HSet(h, respire.FieldValue{Field: "f" + strconv.Itoa(i), Value: "v"})
	}
	require.NoError(t, b.Exec(ctx))
	slot := harness.SlotOf(h)
	from := hc.MasterOf(slot)
	var to *harness.ClusterNode
	for _, m := range hc.Masters() {
		if m != from {
			to = m
			break
		}
	}
	fields := make(map[string]int)
	var early []string
	for fv, err := range c.HScanAll(ctx, h, &respire.HScanOptions{Count: count}) {
		require.NoError(t, err)
		fields[fv.Field]++
		if len(fields) == 25 && early == nil {
			for f := range fields {
				early = append(early, f)
			}
			require.NoError(t, hc.MoveSlots(ctx, from, to, []int{slot}))
		}
	}
	require.NotNil(t, early, "the slot moved")
	assert.Equal(t, 3000, len(fields), "every field, though the hash moved mid-scan")
	for _, f := range early {
		assert.GreaterOrEqual(t, fields[f], 2, "%q was yielded before the move and again from the new owner", f)
	}
	require.Equal(t, to, hc.MasterOf(slot))
	require.NoError(t, hc.WaitStable(ctx))

	// A manual failover in the middle of the first shard: the old primary,
	// a replica now, holds the same keys and goes on serving its cursor.
	got := make(map[string]int)
	for k, err := range c.ScanAll(ctx, opts) {
		require.NoError(t, err)
		if got[k]++; len(got) == 25 && got[k] == 1 {
			require.NoError(t, hc.Failover(ctx, hc.ReplicasOf(first)[0], ""))
		}
	}
	assert.Equal(t, len(want), len(got), "every key, though the shard failed over mid-scan")
	for k, n := range got {
		assert.True(t, want[k], "unknown key %q", k)
		assert.Equal(t, 1, n, "%q yielded %d times: the shard's part was not started again", k, n)
	}
	require.NoError(t, hc.WaitStable(ctx))
	first = hc.MasterOf(0)

	// Killed in the middle of the first shard. (A new client, which knows
	// the new primary from the start.)
	c = clusterClient(t, hc, respire.Options{})
	got = make(map[string]int)
	var before []string
	for k, err := range c.ScanAll(ctx, opts) {
		require.NoError(t, err)
		got[k]++
		if len(got) == 25 && before == nil {
			for k := range got {
				before = append(before, k)
			}
			hc.Kill(first)
		}
	}
	require.NotNil(t, before, "the kill happened")
	assert.Equal(t, len(want), len(got), "every key, though a primary was killed mid-scan")
	for k := range got {
		assert.True(t, want[k], "unknown key %q", k)
	}
	for _, k := range before {
		assert.GreaterOrEqual(t, got[k], 2, "%q was yielded before the kill and again from the new primary", k)
	}
	require.NotEqual(t, first, hc.MasterOf(0), "a replica was promoted")

	// A shard that no node serves within the context: an error naming it.
	// Its replicas may not take over meanwhile (which, on a loaded host,
	// came before the healthy shards had answered within a short
	// deadline), and the other shards go on serving.
	require.NoError(t, hc.WaitStable(ctx))
	awaitScanReplicated(t, ctx, hc)
	last := hc.MasterOf(harness.SlotCount - 1)
	held := hc.ReplicasOf(last)
	for _, n := range append(hc.Masters(), hc.Replicas()...) {
		_, err := n.Do(ctx, "CONFIG", "SET", "cluster-require-full-coverage", "no")
		require.NoError(t, err)
	}
	for _, n := range held {
		_, err := n.Do(ctx, "CONFIG", "SET", "cluster-replica-no-failover", "yes")
		require.NoError(t, err)
	}
	hc.Kill(last)
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var end error
	yielded := 0
	for _, err := range c.ScanAll(short, &respire.ScanOptions{Match: "cfail:*", Count: int64(1000)}) {
		if err != nil {
			end = err
			continue
		}
		yielded++
	}
	require.Error(t, end)
	assert.True(t, errors.Is(end, context.DeadlineExceeded), "%v", end)
	assert.Contains(t, end.Error(), "SCAN on the node serving slot")
	assert.Contains(t, end.Error(), last.Addr)
	assert.Greater(t, yielded, 0, "the shards before it were scanned")
	for _, n := range held {
		_, err := n.Do(ctx, "CONFIG", "SET", "cluster-replica-no-failover", "no")
		require.NoError(t, err)
	}

	// Once the cluster has promoted a replica, the same client scans all.
	got = collectScan(t, c.ScanAll(ctx, opts))
	assert.Equal(t, len(want), len(got))
}
