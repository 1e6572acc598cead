package scaleout

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reads are counted per node with INFO commandstats. The reads are HSTRLEN,
// a command no other test of the package sends, so that tests that share
// a cluster do not disturb the counts; the writes are HSET.

// zoneReads is how many reads each check sends per key.
const zoneReads = 30

// calls returns how many times addr ran cmd (lower case), from INFO
// commandstats.
func calls(t *testing.T, ctx context.Context, do func(context.Context, ...string) (any, error), cmd string) int {
	t.Helper()
	v, err := do(ctx, "INFO", "commandstats")
	require.NoError(t, err)
	m := regexp.MustCompile(`cmdstat_` + cmd + `:calls=(\d+)`).FindStringSubmatch(fmt.Sprint(v))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// counted is a data node whose calls of a command are counted.
type counted struct {
	name string
	do   func(context.Context, ...string) (any, error)
}

// delta runs f and returns how many calls of cmd each node ran meanwhile.
func delta(t *testing.T, ctx context.Context, nodes []counted, cmd string, f func()) map[string]int {
	t.Helper()
	before := map[string]int{}
	for _, n := range nodes {
		before[n.name] = calls(t, ctx, n.do, cmd)
	}
	f()
	out := map[string]int{}
	for _, n := range nodes {
		if d := calls(t, ctx, n.do, cmd) - before[n.name]; d != 0 {
			out[n.name] = d
		}
	}
	return out
}

func clusterCounted(c *harness.Cluster) []counted {
	var out []counted
	for _, n := range c.Nodes {
		out = append(out, counted{n.Addr, n.Do})
	}
	return out
}

// keyPerShard returns a key of every master of c, under prefix.
func keyPerShard(t *testing.T, c *harness.Cluster, prefix string) map[*harness.ClusterNode]string {
	t.Helper()
	masters := c.Masters()
	out := map[*harness.ClusterNode]string{}
	for i := 0; len(out) < len(masters) && i < 1000; i++ {
		k := fmt.Sprintf("%s:%d", prefix, i)
		if m := c.MasterOf(harness.SlotOf(k)); m != nil && out[m] == "" {
			out[m] = k
		}
	}
	require.Len(t, out, len(masters))
	return out
}

// readEach writes a field to each key through cl, then reads it
// zoneReads times, and returns where the reads went.
func readEach(t *testing.T, ctx context.Context, cl *respire.Client, nodes []counted, key string) map[string]int {
	t.Helper()
	_, err := cl.HSet(ctx, key, respire.FieldValue{Field: "f", Value: "value"})
	require.NoError(t, err)
	return delta(t, ctx, nodes, "hstrlen", func() {
		for range zoneReads {
			n, err := cl.HStrLen(ctx, key, "f")
			require.NoError(t, err)
			require.EqualValues(t, 5, n)
		}
	})
}

// On the shared Valkey 9.1 cluster (zones in CLUSTER SHARDS and HELLO), a
// client in zone-a reads, for keys of every shard, where the documented
// order says; writes go to the primaries. ReadZoneReplica: the replica of
// the third shard is in zone-a, the others are the only replicas of their
// shards, so every read goes to a replica. ReadZone: the first shard's
// primary is in zone-a and comes before its zone-b replica.
func TestZonesCluster(t *testing.T) {
	c := valkeyCluster(t)
	ctx := ctxT(t)
	nodes := clusterCounted(c)
	masters := c.Masters()
	keys := keyPerShard(t, c, "zones-cluster")
	opts := func(rf respire.ReadFrom, zone string) respire.Options {
		return respire.Options{Cluster: &respire.ClusterOptions{Addrs: c.Seeds()}, ReadFrom: rf, AvailabilityZone: zone}
	}
	replicaOf := func(m *harness.ClusterNode) string {
		rs := c.ReplicasOf(m)
		require.Len(t, rs, 1)
		return rs[0].Addr
	}
	for _, tc := range []struct {
		name string
		rf   respire.ReadFrom
		zone string
		// want returns the one node that serves the reads of master i's
		// shard.
		want func(i int, m *harness.ClusterNode) string
	}{
		{"ReadZoneReplica", respire.ReadZoneReplica, "zone-a", func(i int, m *harness.ClusterNode) string { return replicaOf(m) }},
		{"ReadZone", respire.ReadZone, "zone-a", func(i int, m *harness.ClusterNode) string {
			if zoneOf(c, m) == "zone-a" {
				return m.Addr
			}
			return replicaOf(m)
		}},
		// A zone that no node has: as without zones, replicas first.
		{"ReadZone/elsewhere", respire.ReadZone, "zone-x", func(i int, m *harness.ClusterNode) string { return replicaOf(m) }},
		{"ReadZoneReplica/elsewhere", respire.ReadZoneReplica, "zone-x", func(i int, m *harness.ClusterNode) string { return replicaOf(m) }},
		// No zone: reads as before.
		{"ReadPrimary", respire.ReadPrimary, "", func(i int, m *harness.ClusterNode) string { return m.Addr }},
		{"ReadPreferReplica", respire.ReadPreferReplica, "", func(i int, m *harness.ClusterNode) string { return replicaOf(m) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := connect(t, opts(tc.rf, tc.zone))
			for i, m := range masters {
				key := keys[m]
				got := readEach(t, ctx, cl, nodes, key)
				assert.Equal(t, map[string]int{tc.want(i, m): zoneReads}, got, "reads of %s (shard of %s, %s)", key, m.Addr, zoneOf(c, m))
			}
			// Writes go to the primaries whatever the mode (a replica runs
			// the write too, as its primary replicates it: it is left out).
			for _, m := range masters {
				got := delta(t, ctx, nodes, "hset", func() {
					_, err := cl.HSet(ctx, keys[m], respire.FieldValue{Field: "g", Value: "w"})
					require.NoError(t, err)
				})
				delete(got, replicaOf(m))
				assert.Equal(t, map[string]int{m.Addr: 1}, got, "write of %s", keys[m])
			}
		})
	}
	// The zone modes need a zone, and a zone needs a zone mode.
	_, err := respire.NewClient(opts(respire.ReadZone, ""))
	require.ErrorIs(t, err, respire.ErrInvalidOption)
	_, err = respire.NewClient(opts(respire.ReadPreferReplica, "zone-a"))
	require.ErrorIs(t, err, respire.ErrInvalidOption)
}

// A Valkey 8.1 cluster reports zones in HELLO only (its CLUSTER SHARDS has
// no availability-zone): the client learns them by dialing the nodes.
// Two primaries with two replicas each, so that ReadZoneReplica and
// ReadZone part ways: shard 0 has its primary in zone-b and replicas in
// zone-a and zone-c; shard 1 its primary in zone-a and replicas in zone-b
// and zone-c.
func TestZonesClusterHello(t *testing.T) {
	c := harness.StartCluster(t, harness.ClusterConfig{Flavor: harness.Valkey81, Masters: 2, Replicas: 2})
	ctx := ctxT(t)
	masters := c.Masters()
	require.Len(t, masters, 2)
	layout := [][3]string{{"zone-b", "zone-a", "zone-c"}, {"zone-a", "zone-b", "zone-c"}}
	zoneAt := map[string]string{}
	for i, m := range masters {
		rs := c.ReplicasOf(m)
		require.Len(t, rs, 2)
		for j, n := range append([]*harness.ClusterNode{m}, rs...) {
			_, err := n.Do(ctx, "CONFIG", "SET", "availability-zone", layout[i][j])
			require.NoError(t, err)
			zoneAt[n.Addr] = layout[i][j]
		}
	}
	v, err := masters[0].Do(ctx, "CLUSTER", "SHARDS")
	require.NoError(t, err)
	for _, z := range shardZones(v) {
		require.Empty(t, z, "Valkey 8.1 is expected to report no zone in CLUSTER SHARDS")
	}
	nodes := clusterCounted(c)
	keys := keyPerShard(t, c, "zones-hello")
	connectZone := func(rf respire.ReadFrom, zone string) *respire.Client {
		return connect(t, respire.Options{Cluster: &respire.ClusterOptions{Addrs: c.Seeds()}, ReadFrom: rf, AvailabilityZone: zone})
	}
	inZone := func(m *harness.ClusterNode, zone string) string {
		for _, r := range c.ReplicasOf(m) {
			if zoneAt[r.Addr] == zone {
				return r.Addr
			}
		}
		return ""
	}
	// replicasOnly checks that the reads of m's shard went to its replicas
	// only, and returns how many each got.
	replicasOnly := func(t *testing.T, m *harness.ClusterNode, got map[string]int) {
		t.Helper()
		sum := 0
		for addr, n := range got {
			assert.NotEqual(t, m.Addr, addr, "a read went to the primary")
			sum += n
		}
		assert.Equal(t, zoneReads, sum)
	}
	t.Run("ReadZoneReplica", func(t *testing.T) {
		cl := connectZone(respire.ReadZoneReplica, "zone-a")
		// Shard 0: its zone-a replica only.
		got := readEach(t, ctx, cl, nodes, keys[masters[0]])
		assert.Equal(t, map[string]int{inZone(masters[0], "zone-a"): zoneReads}, got)
		// Shard 1: no replica in zone-a; the other replicas, not the
		// primary that is in zone-a.
		replicasOnly(t, masters[1], readEach(t, ctx, cl, nodes, keys[masters[1]]))
	})
	t.Run("ReadZone", func(t *testing.T) {
		cl := connectZone(respire.ReadZone, "zone-a")
		got := readEach(t, ctx, cl, nodes, keys[masters[0]])
		assert.Equal(t, map[string]int{inZone(masters[0], "zone-a"): zoneReads}, got)
		// Shard 1: its primary is the node of zone-a.
		got = readEach(t, ctx, cl, nodes, keys[masters[1]])
		assert.Equal(t, map[string]int{masters[1].Addr: zoneReads}, got)
	})
	t.Run("ReadZone/zone-c", func(t *testing.T) {
		cl := connectZone(respire.ReadZone, "zone-c")
		for _, m := range masters {
			got := readEach(t, ctx, cl, nodes, keys[m])
			assert.Equal(t, map[string]int{inZone(m, "zone-c"): zoneReads}, got)
		}
	})
	t.Run("ReadPreferReplica", func(t *testing.T) {
		// No zone: reads spread over both replicas of each shard.
		cl := connect(t, respire.Options{Cluster: &respire.ClusterOptions{Addrs: c.Seeds()}, ReadFrom: respire.ReadPreferReplica})
		for _, m := range masters {
			got := readEach(t, ctx, cl, nodes, keys[m])
			replicasOnly(t, m, got)
			assert.Len(t, got, 2, "reads of %s", keys[m])
		}
	})
}

// On Sentinel (Valkey 9.1, zones in the replicas' HELLO): the master in
// zone-b, its replicas in zone-a and zone-c; reads counted per data node.
func TestZonesSentinel(t *testing.T) {
	d := harness.StartSentinels(t, harness.SentinelConfig{Flavor: harness.Valkey91, Replicas: 2})
	ctx := ctxT(t)
	layout := []string{"zone-b", "zone-a", "zone-c"}
	var nodes []counted
	at := map[string]string{} // zone -> address
	for i, s := range d.Data {
		_, err := s.Do(ctx, "CONFIG", "SET", "availability-zone", layout[i])
		require.NoError(t, err)
		nodes = append(nodes, counted{s.Addr, s.Do})
		at[layout[i]] = s.Addr
	}
	master := d.Data[0].Addr
	connectZone := func(rf respire.ReadFrom, zone string) *respire.Client {
		return connect(t, respire.Options{ReadFrom: rf, AvailabilityZone: zone,
			Sentinel: &respire.SentinelOptions{MasterName: d.Config.MasterName, Addrs: d.Addrs()}})
	}
	for _, tc := range []struct {
		name string
		rf   respire.ReadFrom
		zone string
		want map[string]int // nil: both replicas, not the master
	}{
		{"ReadZoneReplica/zone-a", respire.ReadZoneReplica, "zone-a", map[string]int{at["zone-a"]: zoneReads}},
		{"ReadZone/zone-c", respire.ReadZone, "zone-c", map[string]int{at["zone-c"]: zoneReads}},
		// No replica in zone-b: ReadZone keeps to the master there,
		// ReadZoneReplica spreads over the other replicas.
		{"ReadZone/zone-b", respire.ReadZone, "zone-b", map[string]int{master: zoneReads}},
		{"ReadZoneReplica/zone-b", respire.ReadZoneReplica, "zone-b", nil},
		{"ReadZone/elsewhere", respire.ReadZone, "zone-x", nil},
		{"ReadPreferReplica", respire.ReadPreferReplica, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := connectZone(tc.rf, tc.zone)
			got := readEach(t, ctx, cl, nodes, "zones-sentinel")
			if tc.want != nil {
				assert.Equal(t, tc.want, got)
				return
			}
			assert.Len(t, got, 2, "reads spread over both replicas: %v", got)
			assert.Zero(t, got[master], "reads on the master: %v", got)
		})
	}
}
