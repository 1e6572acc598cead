package conformance

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// CLUSTER cases. The read-only ones run on the framework's one-node cluster
// that owns every slot; the ones that change the slot map or the node run
// on a cluster-mode server of their own.

var cClusterConfig = harness.Config{Args: []string{"cluster-enabled yes"}}

func cInfoField(e *Env, text, field string) string {
	e.Helper()
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			return v
		}
	}
	e.Fatalf("no %s in %q", field, text)
	return ""
}

func init() {
	register(Case{
		Name: "c_cluster_read",
		Commands: []string{"CLUSTER INFO", "CLUSTER MYID", "CLUSTER NODES", "CLUSTER SLOTS", "CLUSTER SHARDS",
			"CLUSTER LINKS", "CLUSTER KEYSLOT", "CLUSTER COUNTKEYSINSLOT", "CLUSTER GETKEYSINSLOT",
			"CLUSTER REPLICAS", "CLUSTER SLAVES", "CLUSTER COUNT-FAILURE-REPORTS", "CLUSTER HELP",
			"RESTORE-ASKING"},
		Server: "cluster",
		Run: func(e *Env) {
			info, err := e.C.ClusterInfo(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, "ok", cInfoField(e, info, "cluster_state"))
			require.Equal(e, "16384", cInfoField(e, info, "cluster_slots_assigned"))
			require.Equal(e, "1", cInfoField(e, info, "cluster_known_nodes"))

			id, err := e.C.ClusterMyID(e.Ctx)
			require.NoError(e, err)
			require.Regexp(e, "^[0-9a-f]{40}$", id)

			nodes, err := e.C.ClusterNodes(e.Ctx)
			require.NoError(e, err)
			lines := strings.Split(strings.TrimSpace(nodes), "\n")
			require.Len(e, lines, 1)
			f := strings.Fields(lines[0])
			require.Equal(e, id, f[0])
			require.Contains(e, f[2], "myself")
			require.Contains(e, f[2], "master")
			require.Equal(e, "0-16383", f[len(f)-1])

			_, port, err := net.SplitHostPort(e.Srv.Addr)
			require.NoError(e, err)
			wantPort, _ := strconv.ParseInt(port, 10, 64)
			slots, err := e.C.ClusterSlots(e.Ctx)
			require.NoError(e, err)
			require.Len(e, slots, 1)
			sl, err := slots[0].Slice()
			require.NoError(e, err)
			require.GreaterOrEqual(e, len(sl), 3)
			start, err := sl[0].Int64()
			require.NoError(e, err)
			end, err := sl[1].Int64()
			require.NoError(e, err)
			require.Equal(e, []int64{0, 16383}, []int64{start, end})
			node, err := sl[2].Slice()
			require.NoError(e, err)
			p, err := node[1].Int64()
			require.NoError(e, err)
			require.Equal(e, wantPort, p)
			nid, err := node[2].Text()
			require.NoError(e, err)
			require.Equal(e, id, nid)

			shards, err := e.C.ClusterShards(e.Ctx)
			require.NoError(e, err)
			require.Len(e, shards, 1)
			require.Equal(e, []respire.SlotRange{{Start: 0, End: 16383}}, shards[0].Slots)
			require.Len(e, shards[0].Nodes, 1)
			n0 := shards[0].Nodes[0]
			require.Equal(e, id, n0.ID)
			require.Equal(e, wantPort, n0.Port)
			require.Equal(e, "master", n0.Role)
			require.Equal(e, "online", n0.Health)
			// IP and endpoint stay empty until the node learns its address by gossip.
			require.GreaterOrEqual(e, n0.ReplicationOffset, int64(0))

			links, err := e.C.ClusterLinks(e.Ctx)
			require.NoError(e, err)
			require.Empty(e, links) // no other node to link to

			slot, err := e.C.ClusterKeySlot(e.Ctx, "foo")
			require.NoError(e, err)
			require.Equal(e, int64(12182), slot)
			slot, err = e.C.ClusterKeySlot(e.Ctx, "{foo}:bar")
			require.NoError(e, err)
			require.Equal(e, int64(12182), slot)

			k := e.Key("k")
			slot, err = e.C.ClusterKeySlot(e.Ctx, k)
			require.NoError(e, err)
			e.Do("SET", k, "v")
			cnt, err := e.C.ClusterCountKeysInSlot(e.Ctx, slot)
			require.NoError(e, err)
			require.GreaterOrEqual(e, cnt, int64(1))
			keys, err := e.C.ClusterGetKeysInSlot(e.Ctx, slot, 1000)
			require.NoError(e, err)
			require.Contains(e, keys, k)
			require.Len(e, keys, int(cnt))
			_, err = e.C.ClusterCountKeysInSlot(e.Ctx, 20000)
			e.ServerError(err, "ERR")

			reps, err := e.C.ClusterReplicas(e.Ctx, id)
			require.NoError(e, err)
			require.Empty(e, reps)
			reps, err = e.C.ClusterSlaves(e.Ctx, id)
			require.NoError(e, err)
			require.Empty(e, reps)
			_, err = e.C.ClusterReplicas(e.Ctx, strings.Repeat("0", 40))
			e.ServerError(err, "ERR")

			fr, err := e.C.ClusterCountFailureReports(e.Ctx, id)
			require.NoError(e, err)
			require.Equal(e, int64(0), fr)

			help, err := e.C.ClusterHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "CLUSTER")

			// RESTORE-ASKING: RESTORE as sent after an ASK redirect.
			dump, err := e.Do("DUMP", k).Text()
			require.NoError(e, err)
			k2 := e.Key("k2")
			require.NoError(e, e.C.RestoreAsking(e.Ctx, k2, 0, dump, nil))
			v, err := e.C.Get(e.Ctx, k2)
			require.NoError(e, err)
			require.Equal(e, "v", v)
			e.ServerError(e.C.RestoreAsking(e.Ctx, k2, 0, dump, nil), "BUSYKEY")
			require.NoError(e, e.C.RestoreAsking(e.Ctx, k2, 0, dump, &respire.RestoreAskingOptions{Replace: true}))
		},
	}, Case{
		Name:     "c_cluster_myshardid",
		Commands: []string{"CLUSTER MYSHARDID"},
		Server:   "cluster",
		Probe: func(e *Env) error {
			_, err := e.C.ClusterMyShardID(e.Ctx)
			return err
		},
		Run: func(e *Env) {
			sid, err := e.C.ClusterMyShardID(e.Ctx)
			require.NoError(e, err)
			require.Regexp(e, "^[0-9a-f]{40}$", sid)
			again, err := e.C.ClusterMyShardID(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, sid, again)
			myid, err := e.C.ClusterMyID(e.Ctx)
			require.NoError(e, err)
			require.NotEqual(e, myid, sid)
		},
	}, Case{
		Name:     "c_cluster_slot_stats",
		Commands: []string{"CLUSTER SLOT-STATS"},
		Server:   "cluster",
		Probe: func(e *Env) error {
			_, err := e.C.ClusterSlotStats(e.Ctx, respire.ClusterSlotStatsFilter{
				SlotsRange: &respire.SlotsRange{StartSlot: 0, EndSlot: 1}})
			return err
		},
		Run: func(e *Env) {
			k := e.Key("k")
			e.Do("SET", k, "v")
			slot := e.Do("CLUSTER", "KEYSLOT", k)
			s, err := slot.Int64()
			require.NoError(e, err)
			st, err := e.C.ClusterSlotStats(e.Ctx, respire.ClusterSlotStatsFilter{
				SlotsRange: &respire.SlotsRange{StartSlot: s, EndSlot: s + 1}})
			require.NoError(e, err)
			require.Len(e, st, 2)
			require.Equal(e, s, st[0].Slot)
			require.Equal(e, s+1, st[1].Slot)
			require.GreaterOrEqual(e, st[0].Stats["key-count"], int64(1))
			require.Contains(e, st[1].Stats, "key-count")

			st, err = e.C.ClusterSlotStats(e.Ctx, respire.ClusterSlotStatsFilter{
				Orderby: &respire.SlotStatsOrderBy{Metric: "key-count", Limit: 3, Order: respire.OrderDesc}})
			require.NoError(e, err)
			require.Len(e, st, 3)
			require.GreaterOrEqual(e, st[0].Stats["key-count"], st[1].Stats["key-count"])
			require.GreaterOrEqual(e, st[0].Stats["key-count"], int64(1))
		},
	}, Case{
		// Two cluster nodes: this case's server (A) and a second one (B)
		// that owns the slots. A meets B, becomes its replica, takes its
		// slots over and forgets it.
		Name: "c_cluster_pair",
		Commands: []string{"CLUSTER MEET", "CLUSTER LINKS", "CLUSTER COUNT-FAILURE-REPORTS", "CLUSTER REPLICATE",
			"CLUSTER REPLICAS", "CLUSTER SLAVES", "CLUSTER FAILOVER", "CLUSTER FORGET"},
		Server: "own",
		Config: cClusterConfig,
		Run: func(e *Env) {
			b := harness.Start(e.T, harness.Config{Flavor: e.Flavor, Args: cClusterConfig.Args})
			cb, err := respire.Connect(e.Ctx, respire.Options{Addr: b.Addr, Protocol: e.Proto})
			require.NoError(e, err)
			defer cb.Close()
			idA, err := e.C.ClusterMyID(e.Ctx)
			require.NoError(e, err)
			idB, err := cb.ClusterMyID(e.Ctx)
			require.NoError(e, err)
			require.NoError(e, cb.ClusterAddSlotsRange(e.Ctx, respire.SlotsRange{StartSlot: 0, EndSlot: 16383}))

			host, port, err := net.SplitHostPort(b.Addr)
			require.NoError(e, err)
			portB, _ := strconv.ParseInt(port, 10, 64)
			require.NoError(e, e.C.ClusterMeet(e.Ctx, host, portB, nil))
			// The handshake is done once both know each other by id.
			require.Eventually(e, func() bool {
				na, err1 := e.C.ClusterNodes(e.Ctx)
				nb, err2 := cb.ClusterNodes(e.Ctx)
				return err1 == nil && err2 == nil && strings.Contains(na, idB) && strings.Contains(nb, idA) &&
					!strings.Contains(na, "handshake") && !strings.Contains(nb, "handshake")
			}, 15*time.Second, 10*time.Millisecond)

			var links []respire.ClusterLink
			require.Eventually(e, func() bool {
				links, err = e.C.ClusterLinks(e.Ctx)
				require.NoError(e, err)
				return len(links) == 2
			}, 15*time.Second, 10*time.Millisecond)
			dirs := []string{}
			for _, l := range links {
				require.Equal(e, idB, l.Node)
				require.Greater(e, l.CreateTime, int64(0))
				require.GreaterOrEqual(e, l.SendBufferAllocated, l.SendBufferUsed)
				require.Regexp(e, "^[rw]*$", l.Events)
				dirs = append(dirs, l.Direction)
			}
			require.ElementsMatch(e, []string{"to", "from"}, dirs)

			n, err := e.C.ClusterCountFailureReports(e.Ctx, idB)
			require.NoError(e, err)
			require.Equal(e, int64(0), n)

			require.NoError(e, e.C.ClusterReplicate(e.Ctx, idB))
			for _, f := range []func(context.Context, string) ([]string, error){e.C.ClusterReplicas, e.C.ClusterSlaves} {
				reps, err := f(e.Ctx, idB)
				require.NoError(e, err)
				require.Len(e, reps, 1)
				require.True(e, strings.HasPrefix(reps[0], idA+" "), reps[0])
				require.Contains(e, reps[0], "slave "+idB)
			}

			// TAKEOVER: no agreement needed, A claims B's slots at once.
			require.NoError(e, e.C.ClusterFailover(e.Ctx, &respire.ClusterFailoverOptions{FailoverMode: respire.FailoverModeTakeover}))
			require.Eventually(e, func() bool {
				nodes, err := e.C.ClusterNodes(e.Ctx)
				return err == nil && strings.Contains(nodes, "myself,master")
			}, 15*time.Second, 10*time.Millisecond)

			require.NoError(e, e.C.ClusterForget(e.Ctx, idB))
			nodes, err := e.C.ClusterNodes(e.Ctx)
			require.NoError(e, err)
			require.NotContains(e, nodes, idB)
		},
	}, Case{
		Name: "c_cluster_admin",
		Commands: []string{"CLUSTER SET-CONFIG-EPOCH", "CLUSTER BUMPEPOCH", "CLUSTER ADDSLOTS",
			"CLUSTER ADDSLOTSRANGE", "CLUSTER DELSLOTS", "CLUSTER DELSLOTSRANGE", "CLUSTER SETSLOT",
			"CLUSTER MEET", "CLUSTER FORGET", "CLUSTER REPLICATE", "CLUSTER FAILOVER", "CLUSTER SAVECONFIG",
			"CLUSTER FLUSHSLOTS", "CLUSTER RESET"},
		Server: "own",
		Config: cClusterConfig,
		Run: func(e *Env) {
			id, err := e.C.ClusterMyID(e.Ctx)
			require.NoError(e, err)
			info := func() string {
				s, err := e.C.ClusterInfo(e.Ctx)
				require.NoError(e, err)
				return s
			}

			require.NoError(e, e.C.ClusterSetConfigEpoch(e.Ctx, 7))
			require.Equal(e, "7", cInfoField(e, info(), "cluster_my_epoch"))
			e.ServerError(e.C.ClusterSetConfigEpoch(e.Ctx, 8), "ERR") // already non-zero
			s, err := e.C.ClusterBumpEpoch(e.Ctx)
			require.NoError(e, err)
			require.Regexp(e, `^(BUMPED|STILL) \d+$`, s)
			ep := strings.Fields(s)[1]
			require.Equal(e, ep, cInfoField(e, info(), "cluster_my_epoch"))

			require.NoError(e, e.C.ClusterAddSlots(e.Ctx, 1, 2, 3))
			require.NoError(e, e.C.ClusterAddSlotsRange(e.Ctx, respire.SlotsRange{StartSlot: 100, EndSlot: 199},
				respire.SlotsRange{StartSlot: 300, EndSlot: 309}))
			require.Equal(e, "113", cInfoField(e, info(), "cluster_slots_assigned"))
			e.ServerError(e.C.ClusterAddSlots(e.Ctx, 1), "ERR") // busy
			e.ServerError(e.C.ClusterAddSlotsRange(e.Ctx, respire.SlotsRange{StartSlot: 5, EndSlot: 4}), "ERR")
			require.NoError(e, e.C.ClusterDelSlots(e.Ctx, 1))
			require.NoError(e, e.C.ClusterDelSlotsRange(e.Ctx, respire.SlotsRange{StartSlot: 150, EndSlot: 199}))
			require.Equal(e, "62", cInfoField(e, info(), "cluster_slots_assigned"))
			e.ServerError(e.C.ClusterDelSlots(e.Ctx, 1), "ERR") // already unassigned

			require.NoError(e, e.C.ClusterSetSlot(e.Ctx, 1, respire.ClusterSetSlotSubCommand{Node: id}, nil))
			require.NoError(e, e.C.ClusterSetSlot(e.Ctx, 2, respire.ClusterSetSlotSubCommand{Stable: true}, nil))
			err = e.C.ClusterSetSlot(e.Ctx, 3, respire.ClusterSetSlotSubCommand{Migrating: strings.Repeat("a", 40)}, nil)
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "know")
			err = e.C.ClusterSetSlot(e.Ctx, 3, respire.ClusterSetSlotSubCommand{Importing: id}, nil)
			e.ServerError(err, "ERR")
			require.Equal(e, "63", cInfoField(e, info(), "cluster_slots_assigned"))

			// MEET of an address where nothing listens: accepted; the
			// node stays in handshake until the reset below.
			require.NoError(e, e.C.ClusterMeet(e.Ctx, "127.0.0.1", 1, &respire.ClusterMeetOptions{ClusterBusPort: 2}))
			nodes, err := e.C.ClusterNodes(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, nodes, "127.0.0.1:1@2")
			e.ServerError(e.C.ClusterMeet(e.Ctx, "not-an-ip", 1, nil), "ERR")
			err = e.C.ClusterForget(e.Ctx, id)
			e.ServerError(err, "ERR")
			err = e.C.ClusterForget(e.Ctx, strings.Repeat("b", 40))
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "nknown node")

			err = e.C.ClusterReplicate(e.Ctx, id)
			e.ServerError(err, "ERR")
			err = e.C.ClusterFailover(e.Ctx, nil)
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "replica")
			err = e.C.ClusterFailover(e.Ctx, &respire.ClusterFailoverOptions{FailoverMode: respire.FailoverModeForce})
			e.ServerError(err, "ERR")

			require.NoError(e, e.C.ClusterSaveConfig(e.Ctx))
			require.NoError(e, e.C.ClusterFlushSlots(e.Ctx))
			require.Equal(e, "0", cInfoField(e, info(), "cluster_slots_assigned"))

			require.NoError(e, e.C.ClusterReset(e.Ctx, &respire.ClusterResetOptions{ResetType: respire.ResetTypeSoft}))
			id2, err := e.C.ClusterMyID(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, id, id2)
			require.NoError(e, e.C.ClusterReset(e.Ctx, &respire.ClusterResetOptions{ResetType: respire.ResetTypeHard}))
			id3, err := e.C.ClusterMyID(e.Ctx)
			require.NoError(e, err)
			require.NotEqual(e, id, id3)
			require.Equal(e, "0", cInfoField(e, info(), "cluster_my_epoch"))
			require.Equal(e, "1", cInfoField(e, info(), "cluster_known_nodes"))
		},
	})
}
