// Package scaleout tests Respire against clusters and Sentinel deployments
// beyond the basics of package integration: following a failover at once,
// atomic slot migration, availability zones, databases on a cluster, and
// Sentinel over TLS, with ACLs and with hostnames. It runs beside package
// integration, so that their waits for failovers overlap.
package scaleout

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(stopShared{m}) }

// stopShared stops the shared clusters after the tests, before the leak
// check.
type stopShared struct{ m *testing.M }

func (s stopShared) Run() int {
	code := s.m.Run()
	harness.StopSharedClusters()
	return code
}

// connect returns a connected client, closed at the end of the test.
func connect(t testing.TB, opts respire.Options) *respire.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// ctxT is a context for one test, ended at its end or after a minute.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Zones of the shared Valkey 9.1 cluster's nodes: primary i is in
// zones[i], and its replica in zones[(i+1)%3]. So a client in zones[0]
// finds a replica of its own zone in the third shard only, the primary of
// its zone in the first, and neither in the second.
var zones = []string{"zone-a", "zone-b", "zone-c"}

// valkeyCluster is the package's shared Valkey 9.1 cluster: 3 primaries
// with a replica each, cluster-databases 16, every node in one of zones
// (reported in HELLO and CLUSTER SHARDS). Tests that use it keep to keys
// under a prefix of their own and do not change the cluster.
func valkeyCluster(t testing.TB) *harness.Cluster {
	t.Helper()
	cfg := harness.ClusterConfig{Flavor: harness.Valkey91, Args: []string{"cluster-databases 16"}}
	return harness.SharedClusterWith(t, "valkey-9.1-zones", cfg, setZones)
}

// zoneOf returns the zone setZones gave to n.
func zoneOf(c *harness.Cluster, n *harness.ClusterNode) string {
	for i, m := range c.Masters() {
		if m == n {
			return zones[i%len(zones)]
		}
		if slices.Contains(c.ReplicasOf(m), n) {
			return zones[(i+1)%len(zones)]
		}
	}
	return ""
}

// setZones puts every node of c in its zone (zoneOf) and waits until every
// node's CLUSTER SHARDS reports every node's zone.
func setZones(ctx context.Context, c *harness.Cluster) error {
	want := map[string]string{} // node id -> zone
	for _, n := range c.Nodes {
		z := zoneOf(c, n)
		if z == "" {
			return fmt.Errorf("%s is neither a primary nor a replica of one", n.Addr)
		}
		if _, err := n.Do(ctx, "CONFIG", "SET", "availability-zone", z); err != nil {
			return fmt.Errorf("CONFIG SET availability-zone on %s: %w", n.Addr, err)
		}
		want[n.ID] = z
	}
	for {
		ok := true
		for _, n := range c.Nodes {
			v, err := n.Do(ctx, "CLUSTER", "SHARDS")
			if err != nil {
				return fmt.Errorf("CLUSTER SHARDS on %s: %w", n.Addr, err)
			}
			got := shardZones(v)
			for id, z := range want {
				if got[id] != z {
					ok = false
				}
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the nodes did not report every node's availability zone: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond): // gossip carries the zones: nothing to await but the next look
		}
	}
}

// shardZones reads node id -> availability-zone from a CLUSTER SHARDS
// reply as the harness's client returns it (RESP2: lists of alternating
// keys and values).
func shardZones(v any) map[string]string {
	out := map[string]string{}
	shards, _ := v.([]any)
	for _, sh := range shards {
		nodes, _ := field(sh, "nodes").([]any)
		for _, n := range nodes {
			id, _ := field(n, "id").(string)
			z, _ := field(n, "availability-zone").(string)
			if id != "" {
				out[id] = z
			}
		}
	}
	return out
}

// field returns the value of key in a RESP2 list of alternating keys and
// values, nil when it is not there.
func field(v any, key string) any {
	kv, _ := v.([]any)
	for i := 0; i+1 < len(kv); i += 2 {
		if k, _ := kv[i].(string); k == key {
			return kv[i+1]
		}
	}
	return nil
}

// TestSharedValkeyCluster checks the shared cluster's set-up: every node
// reports its zone in HELLO, and a database other than 0 is allowed.
func TestSharedValkeyCluster(t *testing.T) {
	c := valkeyCluster(t)
	ctx := ctxT(t)
	for _, n := range c.Nodes {
		v, err := n.Do(ctx, "CONFIG", "GET", "availability-zone")
		require.NoError(t, err)
		require.Equal(t, zoneOf(c, n), field(v, "availability-zone"), n.Addr)
	}
	v, err := c.Nodes[0].Do(ctx, "CONFIG", "GET", "cluster-databases")
	require.NoError(t, err)
	require.Equal(t, "16", field(v, "cluster-databases"))
}
