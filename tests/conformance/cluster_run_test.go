package conformance

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/gen/spec"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// clusterFlavor is the server the cases also run on as a cluster.
const clusterFlavor = harness.Redis80

// notOnCluster names the cases that do not run on a cluster client, and
// why; every other case of the shared server runs there too, with the
// same assertions.
var notOnCluster = map[string]string{
	"B_pubsub":              "PUBLISH counts the subscribers of the node that took it, and a cluster client subscribes on another (sharded pub/sub is tested in the integration suite)",
	"generic-scan-keys":     "SCAN's cursor belongs to one node: the method scans one node of a cluster",
	"c_acl":                 "ACL LOG is kept per node; the case logs in to one node and reads the log of another",
	"c_client":              "CLIENT SETNAME, INFO and the like act on whichever node's connection carries them",
	"c_client_unblock_kill": "CLIENT ID and UNBLOCK need the node the blocked call is on",
	"c_client_no_touch":     "CLIENT NO-TOUCH sets a flag on one node's connection",
	"c_script_busy":         "SCRIPT KILL needs the node the busy script runs on",
	"c_persistence":         "SAVE, BGSAVE and LASTSAVE are per node; the case waits on one node's INFO",
	"c_slowlog":             "SLOWLOG is per node: on a cluster the reply holds every node's entries",
	"c_latency":             "the case configures and reads one node's latency monitor",
	"c_replication":         "REPLICAOF is not allowed in cluster mode",
}

// TestConformanceOnCluster runs the cases of the shared standalone server
// through a cluster client (3 masters), under RESP2 and RESP3: every
// command that has a meaning on a cluster gives the same typed result
// there, whether it goes to its slot's node or is fanned out. A case's
// commands must have run on some node (INFO commandstats summed over the
// masters).
func TestConformanceOnCluster(t *testing.T) {
	sp, err := spec.Load(repoFile(t, "spec/commands.json"))
	require.NoError(t, err)
	servers := specServerOf(t, sp)
	hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: clusterFlavor, Replicas: -1})
	masters := hc.Masters()
	ran, skipped := 0, 0
	for _, proto := range []int{2, 3} {
		t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			c, err := respire.Connect(ctx, respire.Options{Protocol: proto,
				Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
			require.NoError(t, err)
			defer c.Close()
			for i, cs := range cases {
				name := cs.Name
				if name == "" {
					name = cs.Commands[0]
				}
				if cs.Server != "" || !onFlavor(sp, servers, cs, clusterFlavor) {
					continue
				}
				if notOnCluster[name] != "" {
					skipped++
					continue
				}
				t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
					ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
					defer cancel()
					for _, m := range masters {
						_, err := m.Do(ctx, "CONFIG", "RESETSTAT")
						require.NoError(t, err)
					}
					e := &Env{T: t, Ctx: ctx, C: c, Flavor: clusterFlavor, Proto: proto, Srv: masters[0].Server,
						prefix: fmt.Sprintf("{cc%d:%d}:", i, proto)}
					cs.Run(e)
					if t.Failed() {
						return
					}
					all := map[string]bool{}
					for _, m := range masters {
						for cmd := range commandStats(t, ctx, m.Server) {
							all[cmd] = true
						}
					}
					for _, cmd := range cs.Commands {
						require.True(t, all[cmd], "case %s did not run %s on any node", name, cmd)
					}
					ran++
				})
			}
		})
	}
	var why []string
	for name, reason := range notOnCluster {
		why = append(why, name+": "+reason)
	}
	sort.Strings(why)
	t.Logf("cluster: %d case runs passed, %d skipped as meaningless on a cluster:\n%s", ran, skipped, strings.Join(why, "\n"))
}

// onFlavor reports whether every command of cs is in the spec for f.
func onFlavor(sp *spec.Spec, servers map[harness.Flavor]string, cs Case, f harness.Flavor) bool {
	for _, name := range cs.Commands {
		if !specHas(sp, name, servers[f]) {
			return false
		}
	}
	return true
}
