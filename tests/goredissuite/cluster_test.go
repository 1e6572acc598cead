package goredissuite

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// goRedisClusterFocus are the cluster suites run, as ginkgo's
// -focus-file filters: osscluster_test.go and the "cluster races"
// container of race_test.go (at the line given).
var goRedisClusterFocus = []string{`/osscluster_test\.go$`, `/race_test\.go$:251`}

// clusterByDesign are the cluster specs that pass on go-redis and fail
// through the adapter because they assert what only go-redis's
// ClusterClient does, with the reason. Any other spec that passes on
// go-redis must pass through the adapter, but for clusterGaps. The specs
// that cannot run through the adapter at all (go-redis's slot map,
// internal slot table, per-node state) are skipped by the redirection
// (redirect/cluster_adapter_test.go.txt), with the reason.
var clusterByDesign = withClusterVariants(map[string]string{
	"pipelining with TxPipeline returns CrossSlot error":                "matches go-redis's ErrCrossSlot value; Respire refuses a transaction over several slots before sending it, with an *respire.ArgError naming the keys and slots",
	"retries the whole tx after a transient write failure and succeeds": txNotResent,
	"preserves ASKING when retrying a conn failure on the ASK target":   txNotResent,
	"should RANDOMKEY": "expects RANDOMKEY to reach every master over 1000 calls (go-redis sends it to a random one); Respire sends a keyless command to one node",
	"should check all shards when using Script Exists":                                     scriptRouting,
	"should distribute scripts when using Script Load":                                     scriptRouting,
	"should reject ping command in pipeline":                                               "expects go-redis's refusal of PING (request policy all_shards) in a cluster pipeline; Respire runs it on one node",
	"should support Process hook":                                                          nodeHooks,
	"should support Pipeline hook":                                                         nodeHooks,
	"should support TxPipeline hook":                                                       nodeHooks,
	"ClusterClient FailingTimeoutSeconds should handle zero timeout by using default":      goRedisDefaults,
	"ClusterClient FailingTimeoutSeconds should use default failing timeout of 15 seconds": goRedisDefaults,
	"ClusterClient timeout read/write timeout should timeout Ping":                         nodeTimeouts,
	"ClusterClient timeout read/write timeout should timeout Pipeline":                     nodeTimeouts,
	"ClusterClient timeout read/write timeout should timeout Tx":                           nodeTimeouts,
	"ClusterClient timeout read/write timeout should timeout Tx Pipeline":                  nodeTimeouts,
	"ClusterClient with unavailable Cluster should recover when Cluster recovers":          "expects a PING to fail within go-redis's 250ms ReadTimeout while CLIENT PAUSE holds every node; Respire has no per-command read timeout: the PING waits for the pause to end and succeeds",
	"ClusterClient without nodes should return an error for Ping":                          noAddrs,
	"ClusterClient without nodes should return an error for pipeline":                      noAddrs,
})

// clusterGaps are the cluster specs that fail through the adapter for a
// reason that is neither go-redis's internals nor Respire's choice: known
// gaps, logged rather than failed, to be fixed.
var clusterGaps = withClusterVariants(map[string]string{
	"should surface the triggering error on TxPipeline EXECABORT instead of 'expected'":                      "the adapter's error is Respire's EXECABORT summary, without the queued command's own error (wrong number of arguments)",
	"ClusterClient without valid nodes should return an error for pipeline when cluster support is disabled": "a pipeline's error is Respire's wrapped error (no cluster topology yet: ...), not the server's reply as for a single command",
})

const (
	txNotResent     = "injects a connection failure on the MULTI write and expects go-redis to send the transaction again; Respire does not resend an EXEC whose connection broke, since it cannot know whether the server ran it"
	scriptRouting   = "go-redis sends SCRIPT LOAD to every shard and asks SCRIPT EXISTS of all of them; Respire sends both to one node (EVALSHA through its Script loads the script where it is missing)"
	nodeHooks       = "expects go-redis's hooks on its per-node clients (OnNewNode); the adapter's hooks run once, around Respire, which has no per-node client"
	goRedisDefaults = "asserts that go-redis fills ClusterOptions.FailingTimeoutSeconds in when it builds its client; the adapter is built from Respire's Options and leaves go-redis's options as given"
	nodeTimeouts    = "sets a 1ns ReadTimeout on go-redis's per-node clients through their Options() while CLIENT PAUSE holds every node; the adapter's Options() is a copy and Respire has no per-command read timeout: the commands wait for the pause to end and succeed"
	noAddrs         = "compares the error text with go-redis's (redis: cluster has no nodes); the suite's adapter has no Respire client to build without addresses, and fails with ErrNilClient"
)

// withClusterVariants adds, for each spec of go-redis's assertClusterClient
// (named without its container), the name it has in each container that
// runs it, on a Respire cluster client.
func withClusterVariants(m map[string]string) map[string]string {
	out := map[string]string{}
	for name, why := range m {
		if strings.HasPrefix(name, "ClusterClient ") {
			out[name] = why
			continue
		}
		for _, c := range []string{"ClusterClient ClusterClient ", "ClusterClient ClusterClient with RouteByLatency ", "ClusterClient ClusterClient with RouteByLatencyTolerance ", "ClusterClient ClusterClient PROTO 2 "} {
			out[c+name] = why
		}
	}
	return out
}

// goRedisClusterFails are the cluster specs that fail on go-redis too on
// the harness's cluster, with the reason: none in go-redis v9.23.0.
var goRedisClusterFails = map[string]string{}

// TestGoRedisClusterSuite runs go-redis's own cluster suite on a cluster
// started by the harness (three masters and their replicas on free
// loopback ports, with go-redis's slot ranges), on go-redis's
// ClusterClient and through the adapter over a Respire cluster client,
// each run on a cluster of its own.
func TestGoRedisClusterSuite(t *testing.T) {
	clients := clusterSuiteClients(t)
	t.Parallel()
	built := building()
	defer built()
	dir := copyModule(t, "go-redis-cluster", "github.com/redis/go-redis/v9", goRedisVersion)
	require.NoError(t, copyRedirect(dir, map[string]string{
		"goredis_test.go.txt":         "zz_respire_test.go",
		"gored_test.go.txt":           "zz_respire_goredis_test.go",
		"adapter_test.go.txt":         "zz_respire_adapter_test.go",
		"cluster_test.go.txt":         "zz_respire_cluster_test.go",
		"cluster_gored_test.go.txt":   "zz_respire_cluster_goredis_test.go",
		"cluster_adapter_test.go.txt": "zz_respire_cluster_adapter_test.go",
	}))
	require.NoError(t, redirectCluster(dir))
	require.NoError(t, useAdapter(dir))

	bins := map[string]string{"go-redis": filepath.Join(dir, "goredis.test"), "adapter": filepath.Join(dir, "adapter.test")}
	for _, client := range clients {
		require.NoError(t, buildFor(client, dir, bins[client]))
	}
	built()

	var mu sync.Mutex
	results := map[string]result{}
	t.Run("runs", func(t *testing.T) {
		for _, client := range clients {
			t.Run(client, func(t *testing.T) {
				t.Parallel()
				cluster, ring := startSuiteCluster(t)
				began := time.Now()
				args := []string{"-test.run", "^TestGinkgoSuite$", "-ginkgo.skip", goRedisSkip, "-ginkgo.no-color",
					"-ginkgo.flake-attempts", "2"} // some specs wait on timers, which a loaded machine can miss
				for _, f := range goRedisClusterFocus {
					args = append(args, "-ginkgo.focus-file", f)
				}
				cmd := exec.Command(bins[client], args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(),
					"RESPIRE_SUITE_CLUSTER="+strings.Join(cluster, ","),
					"RESPIRE_SUITE_RING="+strings.Join(ring, ","),
					"RESPIRE_SUITE_ADDR="+ring[0], // the suite's standalone server (ClusterClient without valid nodes)
					"RE_CLUSTER=true",             // no ring, sentinel or cluster setup at go-redis's fixed ports: ours are redirected
					"REDIS_VERSION=8.6")
				out, _ := cmd.CombinedOutput()
				r, err := parseGinkgo(out)
				if err != nil {
					t.Fatalf("%v:\n%s", err, tail(out, 8000))
				}
				t.Logf("%s: %s in %v", client, r, time.Since(began).Round(time.Second))
				if os.Getenv("RESPIRE_SUITE_DIR") != "" {
					_ = os.WriteFile(filepath.Join(dir, client+".out"), out, 0o644)
				}
				mu.Lock()
				results[client] = r
				mu.Unlock()
			})
		}
	})
	got, ok := results["adapter"]
	if !ok {
		return
	}
	baseFail := map[string]bool{}
	if base, ok := results["go-redis"]; ok {
		for _, f := range base.failures {
			baseFail[f] = true
			if _, ok := goRedisClusterFails[f]; !ok {
				t.Logf("fails on go-redis, not listed in goRedisClusterFails: %s", f)
			}
		}
	} else {
		for f := range goRedisClusterFails {
			baseFail[f] = true
		}
	}
	for f := range baseFail {
		t.Logf("fails on go-redis too: %s", f)
	}
	for _, f := range got.failures {
		switch why, ok := clusterByDesign[f]; {
		case baseFail[f]:
		case ok:
			t.Logf("by design: %s (%s)", f, why)
		case clusterGaps[f] != "":
			t.Logf("known gap: %s (%s)", f, clusterGaps[f])
		default:
			t.Errorf("passes on go-redis, fails through the adapter: %s", f)
		}
	}
}

// redirectCluster edits go-redis's suite so that its cluster is the
// harness's (see redirect/cluster_test.go.txt).
func redirectCluster(dir string) error {
	if err := edit(filepath.Join(dir, "main_test.go"),
		"const (\n\tringShard1Port", "var (\n\tringShard1Port",
		"\tredisPort = redisStackPort\n\tredisAddr = redisStackAddr\n",
		"\tredisPort = redisStackPort\n\tredisAddr = redisStackAddr\n\trespireClusterSetup(ctx)\n"); err != nil {
		return err
	}
	pairs := []string{
		"func (s *clusterScenario) newClusterClientUnstable(", "func (s *clusterScenario) goRedisClusterClientUnstable(",
		"func (s *clusterScenario) newClusterClient(", "func (s *clusterScenario) goRedisClusterClient(",
		"client := s.newClusterClientUnstable(opt)", "client := s.goRedisClusterClientUnstable(opt)",
		"var client *redis.ClusterClient", "var client *testClusterClient",
		"client = redis.NewClusterClient(&redis.ClusterOptions{", "client = newTestClusterClient(&redis.ClusterOptions{",
		`"tcp_port:16601"`, `"tcp_port:" + cluster.ports[1]`,
		`"tcp_port:16604"`, `"tcp_port:" + cluster.ports[4]`,
	}
	for i, p := range []string{"16600", "16601", "16602", "16603", "16604", "16605"} {
		pairs = append(pairs,
			`"127.0.0.1:`+p+`"`, fmt.Sprintf(`"127.0.0.1:" + cluster.ports[%d]`, i),
			`":`+p+`"`, fmt.Sprintf(`":" + cluster.ports[%d]`, i))
	}
	if err := edit(filepath.Join(dir, "osscluster_test.go"), pairs...); err != nil {
		return err
	}
	return edit(filepath.Join(dir, "race_test.go"), "var client *redis.ClusterClient", "var client *testClusterClient")
}

// startSuiteCluster starts the servers of a run of the cluster suite: a
// cluster of three masters with a replica each, with go-redis's slot
// ranges (the harness gives slot 10922 to the third master, go-redis's
// suite to the second), and three servers without cluster support, the
// suite's ring shards. It returns their addresses: the masters, then their
// replicas in the same order; the ring shards.
func startSuiteCluster(t *testing.T) (cluster, ring []string) {
	c := harness.StartCluster(t, harness.ClusterConfig{Flavor: harness.Redis86})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.MoveSlots(ctx, c.Nodes[2], c.Nodes[1], []int{10922}))
	require.NoError(t, c.WaitStable(ctx))
	for _, n := range c.Nodes {
		cluster = append(cluster, n.Addr)
	}
	for range 3 {
		ring = append(ring, harness.Start(t, harness.Config{Flavor: harness.Redis86}).Addr)
	}
	return cluster, ring
}
