package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClusterNodeBusPortTaken(t *testing.T) {
	t.Parallel()
	// Hold a port and offer its port-10000 first: the node cannot bind its
	// bus, exits, and Start retries on the next port offered.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port - 10000
	require.True(t, portFree(taken), "port %d is in use", taken)
	offered := 0
	pick := func() (int, error) {
		offered++
		if offered == 1 {
			return taken, nil
		}
		return reserveClusterPort()
	}
	cfg := ClusterConfig{}.withDefaults()
	s := Start(t, Config{Flavor: cfg.Flavor, Args: cfg.nodeArgs(), pickPort: pick})
	assert.Equal(t, 2, offered)
	assert.NotEqual(t, taken, s.port)
	releasePorts([]int{s.port})
	log, err := os.ReadFile(s.LogPath)
	require.NoError(t, err)
	assert.Contains(t, string(log), "Address already in use")
}

func TestClusterWithoutReplicas(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, ClusterConfig{Flavor: Valkey81, Masters: 1, Replicas: -1})
	require.Len(t, c.Nodes, 1)
	assert.Equal(t, addrs(c.Nodes...), addrs(c.Masters()...))
	assert.Empty(t, c.Replicas())
	assert.Equal(t, addrs(c.Nodes[0]), addrs(c.MasterOf(SlotOf("any"))))
	_, err := c.Do(clusterCtx(t), "SET", "k", "v")
	require.NoError(t, err)
}

// randomKey returns a short key of bytes biased towards braces, so that
// hash tags of every shape occur.
func randomKey(r *rand.Rand) string {
	const alphabet = "{}{}{}ab:.\x00\xff"
	b := make([]byte, r.IntN(12))
	for i := range b {
		if r.IntN(3) == 0 {
			b[i] = byte(r.IntN(256))
		} else {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
	}
	return string(b)
}

func TestClusterSlotOfMatchesServer(t *testing.T) {
	t.Parallel()
	// The shared clusters are this test's alone in this package.
	t.Cleanup(StopSharedClusters)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	ForEachFlavor(t, func(t *testing.T, f Flavor) {
		t.Parallel()
		c := SharedCluster(t, f)
		assert.Same(t, c, SharedCluster(t, f), "one shared cluster per flavor")
		ctx := clusterCtx(t)

		keys := []string{"", "{}", "{a", "a}", "}{", "{}{a}", "a{}b{c}", "{a}{b}", "{{a}}", "a{b}c", "{user1000}.following",
			"\x00{\x00}", strings.Repeat("x", 1000)}
		r := rand.New(rand.NewPCG(seed, uint64(len(f))))
		for len(keys) < 400 {
			keys = append(keys, randomKey(r))
		}
		node := c.Nodes[r.IntN(len(c.Nodes))]
		conn, err := testserver.Dial(ctx, "tcp", node.Addr, nil)
		require.NoError(t, err)
		defer conn.Close()
		for _, k := range keys {
			reply, err := conn.Do("CLUSTER", "KEYSLOT", k)
			require.NoError(t, err)
			assert.Equal(t, int64(SlotOf(k)), reply, "SlotOf(%q)", k)
		}

		// Shared clusters serve keys under a prefix of one's own.
		key := "slotof:" + t.Name()
		_, err = c.Do(ctx, "SET", key, "v")
		require.NoError(t, err)
		got, err := c.Do(ctx, "GET", key)
		require.NoError(t, err)
		assert.Equal(t, "v", got)
		assert.Panics(t, func() { c.Kill(c.Nodes[0]) }, "Kill on a shared cluster")
	})
}

// addrs returns the addresses of nodes, "" for nil.
func addrs(nodes ...*ClusterNode) []string {
	out := []string{}
	for _, n := range nodes {
		if n == nil {
			out = append(out, "")
		} else {
			out = append(out, n.Addr)
		}
	}
	return out
}

// tagsForSlots returns, for each slot, a hash tag whose keys map to it.
func tagsForSlots(slots []int) map[int]string {
	tags := make(map[int]string)
	for i := 0; len(tags) < len(slots); i++ {
		tag := "mv" + strconv.Itoa(i)
		if s := SlotOf(tag); slices.Contains(slots, s) && tags[s] == "" {
			tags[s] = tag
		}
	}
	return tags
}

func TestCluster(t *testing.T) {
	t.Parallel()
	ForEachFlavor(t, func(t *testing.T, f Flavor) {
		t.Parallel()
		began := time.Now()
		c := StartCluster(t, ClusterConfig{Flavor: f, NodeTimeout: time.Second})
		startTime := time.Since(began)
		assert.True(t, strings.HasPrefix(c.Version, f.versionPrefix()), c.Version)
		var timings []string
		defer func() {
			t.Logf("%s timings: %s", f, strings.Join(timings, ", "))
		}()
		timings = append(timings, "start "+startTime.Round(time.Millisecond).String())

		t.Run("topology", func(t *testing.T) {
			ctx := clusterCtx(t)
			require.Len(t, c.Nodes, 6)
			assert.Len(t, c.Seeds(), 6)
			masters, replicas := c.Masters(), c.Replicas()
			assert.Equal(t, addrs(c.Nodes[:3]...), addrs(masters...))
			assert.Equal(t, addrs(c.Nodes[3:]...), addrs(replicas...))
			for i, m := range masters {
				assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{40}$`), m.ID)
				assert.Equal(t, addrs(c.Nodes[3+i]), addrs(c.ReplicasOf(m)...))
			}
			for _, n := range c.Nodes {
				info, err := n.Do(ctx, "CLUSTER", "INFO")
				require.NoError(t, err)
				for _, field := range []string{"cluster_slots_assigned", "cluster_slots_ok"} {
					assert.Equal(t, "16384", testserver.InfoField(info.(string), field), "%s of %s", field, n.Addr)
				}
				assert.Equal(t, "ok", testserver.InfoField(info.(string), "cluster_state"))
				assert.Equal(t, "6", testserver.InfoField(info.(string), "cluster_known_nodes"))
			}
			for _, r := range replicas {
				info, err := r.Do(ctx, "INFO", "replication")
				require.NoError(t, err)
				assert.Equal(t, "up", testserver.InfoField(info.(string), "master_link_status"), r.Addr)
			}
			assert.Equal(t, addrs(c.Nodes[0]), addrs(c.MasterOf(0)))
			assert.Equal(t, addrs(c.Nodes[2]), addrs(c.MasterOf(SlotCount-1)))
			assert.Nil(t, c.MasterOf(SlotCount))
		})

		t.Run("moved", func(t *testing.T) {
			ctx := clusterCtx(t)
			key := "moved:key"
			slot := SlotOf(key)
			m := c.MasterOf(slot)
			require.NotNil(t, m)
			_, err := m.Do(ctx, "SET", key, "v")
			require.NoError(t, err)
			for _, o := range c.Masters() {
				if o == m {
					continue
				}
				_, err := o.Do(ctx, "GET", key)
				assert.EqualError(t, err, fmt.Sprintf("MOVED %d %s", slot, m.Addr))
			}
			got, err := c.Do(ctx, "GET", key)
			require.NoError(t, err)
			assert.Equal(t, "v", got)
		})

		t.Run("pause", func(t *testing.T) {
			r := c.Nodes[3]
			require.NoError(t, c.Pause(r))
			short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			_, err := r.Do(short, "PING")
			cancel()
			require.Error(t, err, "a paused node answered")
			require.NoError(t, c.Resume(r))
			reply, err := r.Do(clusterCtx(t), "PING")
			require.NoError(t, err)
			assert.Equal(t, "PONG", reply)
			require.NoError(t, c.WaitStable(clusterCtx(t)))
		})

		t.Run("move-slots", func(t *testing.T) {
			ctx := clusterCtx(t)
			from, to := c.MasterOf(100), c.MasterOf(16000)
			require.NotNil(t, from)
			require.NotNil(t, to)
			require.NotEqual(t, from.Addr, to.Addr)
			var slots []int
			for s := 100; s < 110; s++ {
				slots = append(slots, s)
			}
			for s, tag := range tagsForSlots(slots) {
				args := []string{"MSET"}
				for i := range 100 {
					args = append(args, fmt.Sprintf("{%s}:%d", tag, i), strconv.Itoa(s))
				}
				_, err := from.Do(ctx, args...)
				require.NoError(t, err)
			}
			began := time.Now()
			require.NoError(t, c.MoveSlots(ctx, from, to, slots))
			timings = append(timings, "10-slot move "+time.Since(began).Round(time.Millisecond).String())

			total := int64(0)
			for _, s := range slots {
				n, err := to.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(s))
				require.NoError(t, err)
				assert.Equal(t, int64(100), n, "keys of slot %d on the target", s)
				total += n.(int64)
				n, err = from.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(s))
				require.NoError(t, err)
				assert.Equal(t, int64(0), n, "keys of slot %d left on the source", s)
				assert.Equal(t, addrs(to), addrs(c.MasterOf(s)), "master of slot %d", s)
			}
			assert.Equal(t, int64(1000), total)
			key := "{" + tagsForSlots([]int{105})[105] + "}:7"
			_, err := from.Do(ctx, "GET", key)
			assert.EqualError(t, err, "MOVED 105 "+to.Addr)
			got, err := c.Do(ctx, "GET", key)
			require.NoError(t, err)
			assert.Equal(t, "105", got)
			require.NoError(t, c.WaitStable(ctx))
		})

		key := "failover:key"
		slot := SlotOf(key)
		var oldMaster, promoted *ClusterNode
		t.Run("kill-master", func(t *testing.T) {
			ctx := clusterCtx(t)
			oldMaster = c.MasterOf(slot)
			require.NotNil(t, oldMaster)
			rs := c.ReplicasOf(oldMaster)
			require.Len(t, rs, 1)
			_, err := oldMaster.Do(ctx, "SET", key, "before")
			require.NoError(t, err)
			n, err := oldMaster.Do(ctx, "WAIT", "1", "5000")
			require.NoError(t, err)
			require.Equal(t, int64(1), n, "the replica did not acknowledge the write")

			began := time.Now()
			c.Kill(oldMaster)
			require.NoError(t, c.WaitMasterFailed(ctx, oldMaster))
			failed := time.Since(began)
			require.NoError(t, c.WaitStable(ctx))
			timings = append(timings, fmt.Sprintf("kill to FAIL %v, kill to stable %v",
				failed.Round(time.Millisecond), time.Since(began).Round(time.Millisecond)))

			promoted = rs[0]
			assert.Equal(t, addrs(promoted), addrs(c.MasterOf(slot)))
			assert.Len(t, c.Masters(), 3)
			got, err := promoted.Do(ctx, "GET", key)
			require.NoError(t, err)
			assert.Equal(t, "before", got)
		})
		if oldMaster == nil || promoted == nil {
			return
		}

		t.Run("restart-rejoins-as-replica", func(t *testing.T) {
			ctx := clusterCtx(t)
			id := oldMaster.ID
			began := time.Now()
			require.NoError(t, c.Restart(oldMaster))
			require.NoError(t, c.WaitStable(ctx))
			timings = append(timings, "restart to stable "+time.Since(began).Round(time.Millisecond).String())
			assert.Equal(t, id, oldMaster.ID)
			assert.Equal(t, addrs(oldMaster), addrs(c.ReplicasOf(promoted)...))
			assert.Len(t, c.Replicas(), 3)
		})

		t.Run("failover", func(t *testing.T) {
			// Each mode on a node of its own: Redis cannot fail the same
			// node over twice within a few seconds (see Cluster.Failover).
			ctx := clusterCtx(t)
			began := time.Now()
			require.NoError(t, c.Failover(ctx, oldMaster, ""))
			require.NoError(t, c.WaitStable(ctx))
			timings = append(timings, "manual failover "+time.Since(began).Round(time.Millisecond).String())
			assert.Equal(t, addrs(oldMaster), addrs(c.MasterOf(slot)))
			assert.Equal(t, addrs(promoted), addrs(c.ReplicasOf(oldMaster)...))

			var others []*ClusterNode
			for _, m := range c.Masters() {
				if m != oldMaster {
					others = append(others, m)
				}
			}
			require.Len(t, others, 2)
			for i, mode := range []string{"FORCE", "TAKEOVER"} {
				m := others[i]
				rs := c.ReplicasOf(m)
				require.Len(t, rs, 1)
				began = time.Now()
				require.NoError(t, c.Failover(ctx, rs[0], mode))
				require.NoError(t, c.WaitStable(ctx))
				timings = append(timings, strings.ToLower(mode)+" failover "+time.Since(began).Round(time.Millisecond).String())
				assert.Contains(t, addrs(c.Masters()...), rs[0].Addr)
				assert.Equal(t, addrs(m), addrs(c.ReplicasOf(rs[0])...))
			}
			assert.Error(t, c.Failover(ctx, promoted, "SOMETIMES"))
		})

		t.Run("failover-again", func(t *testing.T) {
			// oldMaster won an election a moment ago; Redis reuses its votes
			// for the next one, which Failover must report, not hide.
			ctx := clusterCtx(t)
			require.NoError(t, c.Failover(ctx, promoted, "TAKEOVER"))
			require.NoError(t, c.WaitStable(ctx))
			err := c.Failover(ctx, oldMaster, "")
			if err != nil {
				assert.Contains(t, err.Error(), "reused the votes", "Failover failed otherwise")
			}
			t.Logf("%s: an immediate second manual failover of %s: %v", f, oldMaster.Addr, err)
			require.NoError(t, c.WaitStable(ctx))
			if err == nil {
				assert.Equal(t, addrs(oldMaster), addrs(c.MasterOf(slot)))
			} else {
				assert.Equal(t, addrs(promoted), addrs(c.MasterOf(slot)))
			}
		})

		t.Run("add-remove-node", func(t *testing.T) {
			ctx := clusterCtx(t)
			n, err := c.AddNode(ctx)
			require.NoError(t, err)
			require.NoError(t, c.WaitStable(ctx))
			assert.Len(t, c.Nodes, 7)
			assert.Contains(t, addrs(c.Masters()...), n.Addr)
			from := c.MasterOf(200)
			require.NoError(t, c.MoveSlots(ctx, from, n, []int{200, 201}))
			assert.Equal(t, addrs(n), addrs(c.MasterOf(201)))
			require.NoError(t, c.MoveSlots(ctx, n, from, []int{200, 201}))
			require.NoError(t, c.RemoveNode(ctx, n))
			require.NoError(t, c.WaitStable(ctx))
			assert.Len(t, c.Nodes, 6)
			assert.Nil(t, c.Node(n.ID))
			for _, o := range c.Nodes {
				info, err := o.Do(ctx, "CLUSTER", "INFO")
				require.NoError(t, err)
				assert.Equal(t, "6", testserver.InfoField(info.(string), "cluster_known_nodes"), o.Addr)
			}
		})

		t.Run("left-paused", func(t *testing.T) {
			// The cleanup must resume and stop a node left paused.
			require.NoError(t, c.Pause(c.Nodes[4]))
		})
	})
}
