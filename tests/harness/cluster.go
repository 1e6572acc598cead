package harness

// Redis Cluster of real servers for tests: its configuration, StartCluster,
// the node accessors, Fill, and a Do that follows redirects. Faults,
// resharding, the nodes' views and shared clusters have files of their own.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

// SlotCount is the number of hash slots of a Redis Cluster.
const SlotCount = testserver.SlotCount

// ClusterConfig describes a cluster for StartCluster.
type ClusterConfig struct {
	// Flavor selects the server product and version; empty means
	// DefaultFlavor.
	Flavor Flavor
	// Masters is the number of masters that share the slots; 0 means 3.
	Masters int
	// Replicas is the number of replicas of each master; 0 means 1 and a
	// negative number means none.
	Replicas int
	// NodeTimeout is cluster-node-timeout, which governs failure detection
	// and failover; 0 means 2s. It is rounded down to whole milliseconds.
	NodeTimeout time.Duration
	// Args are extra directives for every node, as in Config.Args. They
	// come last, so they override the harness's own.
	Args []string
}

// withDefaults returns cfg with its zero fields filled in.
func (cfg ClusterConfig) withDefaults() ClusterConfig {
	if cfg.Flavor == "" {
		cfg.Flavor = DefaultFlavor
	}
	if cfg.Masters == 0 {
		cfg.Masters = 3
	}
	switch {
	case cfg.Replicas == 0:
		cfg.Replicas = 1
	case cfg.Replicas < 0:
		cfg.Replicas = 0
	}
	if cfg.NodeTimeout <= 0 {
		cfg.NodeTimeout = 2 * time.Second
	}
	return cfg
}

// nodeArgs are the directives of every cluster node. Start already passes
// save "" and appendonly no, so nothing is persisted but nodes.conf.
func (cfg ClusterConfig) nodeArgs() []string {
	a := []string{
		"cluster-enabled yes",
		// Relative to the node's dir, so Restart finds it again.
		"cluster-config-file nodes.conf",
		"cluster-node-timeout " + strconv.FormatInt(max(cfg.NodeTimeout.Milliseconds(), 1), 10),
		"cluster-require-full-coverage yes",
		// A replica may always fail over, however stale its data: tests
		// pause and kill nodes on purpose.
		"cluster-replica-validity-factor 0",
		// Full syncs start at once instead of after 5s of waiting for more
		// replicas (Redis 7.0 and Valkey sync diskless by default).
		"repl-diskless-sync-delay 0",
		// CLUSTER SLOTS and SHARDS leave out replicas whose replication
		// offset is still 0, and on an idle master only its pings to the
		// replicas advance it: every 10s by default.
		"repl-ping-replica-period 1",
	}
	return append(a, cfg.Args...)
}

// Cluster is a Redis Cluster of local server processes, started by
// StartCluster for one test or by SharedCluster for many:
//
//	c := harness.StartCluster(t, harness.ClusterConfig{Flavor: f})
//	m := c.MasterOf(harness.SlotOf("user:{42}"))
//	// dial c.Seeds() with the client under test ...
//
// The cluster is created with the harness's own RESP client (no redis-cli):
// slots are assigned with CLUSTER ADDSLOTSRANGE, nodes are introduced with
// CLUSTER MEET and replicas attached with CLUSTER REPLICATE. StartCluster
// returns once every node reports cluster_state:ok, all nodes agree on the
// slot map and every replica's link to its master is up.
//
// Tests that only read and write keys may share one cluster per flavor with
// SharedCluster, each test under its own key prefix. Tests that kill, pause,
// restart or fail over nodes or move slots must start their own cluster with
// StartCluster: the methods that change the topology panic on a shared one.
//
// Clusters need a local server binary (see the package documentation); the
// Docker fallback is not used for them, since nodes in containers would
// announce addresses the other nodes and the client cannot reach.
//
// Its methods are safe for concurrent use, except that AddNode and
// RemoveNode change Nodes.
type Cluster struct {
	// Flavor is the flavor of every node.
	Flavor Flavor
	// Version is the server version of the nodes, as Server.Version.
	Version string
	// Config is the configuration with its defaults filled in.
	Config ClusterConfig
	// Nodes are the cluster's nodes: the masters first, then the replicas
	// in the order of their masters, then nodes added by AddNode. Roles
	// change with failovers; Masters and Replicas ask the nodes.
	Nodes []*ClusterNode

	t      testing.TB
	shared bool
	mu     sync.Mutex // guards Nodes
}

// ClusterNode is one node of a Cluster. Compare nodes by pointer, address
// or ID: a deep comparison (assert.Equal) reads state that the harness's
// goroutines change.
type ClusterNode struct {
	// Addr is the node's address, "127.0.0.1:port"; its cluster bus listens
	// on port+10000.
	Addr string
	// Port is the node's client port.
	Port int
	// ID is the node's cluster ID (CLUSTER MYID). It survives Restart.
	ID string
	// Server is the node's server process.
	Server *Server

	mu     sync.Mutex
	paused bool // stopped with SIGSTOP by Pause
	down   bool // killed, stopped or removed by the harness
}

// String returns the node's address and the start of its ID.
func (n *ClusterNode) String() string {
	id := n.ID
	if len(id) > 8 {
		id = id[:8]
	}
	return n.Addr + "/" + id
}

// Do sends one command to the node on a fresh connection, as Server.Do. A
// redirection is returned as a ServerError ("MOVED 3999 127.0.0.1:20001").
func (n *ClusterNode) Do(ctx context.Context, args ...string) (any, error) {
	return n.Server.Do(ctx, args...)
}

// up reports whether the harness has neither stopped nor paused the node.
func (n *ClusterNode) up() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.paused && !n.down
}

// Polling bounds.
const (
	// clusterWait bounds a wait whose context has no deadline. A new
	// cluster of six nodes was once not ready within 30 s in make test on
	// 2 cores (a node answered no dial for 2 s at a time while its replica
	// synced, beside the race-enabled packages).
	clusterWait = 60 * time.Second
	// requestTimeout bounds one request to one node, so that a hung node
	// cannot use up a whole wait.
	requestTimeout = 2 * time.Second
)

// StartCluster starts and creates a cluster configured by cfg and stops it
// when t ends. Each node is a server process with its own directory and a
// loopback port whose bus port (port+10000) is free too. It fails t unless
// the cluster is ready within 60s: cluster_state:ok everywhere, the same slot
// map on every node and every replica linked to its master. When the test
// has failed, the end of every node's log is written to the test log.
func StartCluster(t testing.TB, cfg ClusterConfig) *Cluster {
	t.Helper()
	cfg = cfg.withDefaults()
	if !cfg.Flavor.known() {
		t.Fatalf("harness: unknown flavor %q (known: %v)", cfg.Flavor, AllFlavors)
	}
	if cfg.Masters < 1 {
		t.Fatalf("harness: a cluster needs at least one master, not %d", cfg.Masters)
	}
	if _, err := Binary(cfg.Flavor); err != nil {
		if errors.Is(err, errNoBinary) {
			t.Fatal(installHint(cfg.Flavor) + "\n  Clusters always need a local server binary.")
		}
		t.Fatalf("harness: %v", err)
	}
	began := time.Now()
	c := &Cluster{Flavor: cfg.Flavor, Config: cfg, t: t}
	nodes, err := c.startNodes(t, cfg.Masters*(1+cfg.Replicas))
	// Registered after the nodes' own cleanups, so it runs before them:
	// paused nodes are resumed before they are stopped.
	t.Cleanup(func() { c.cleanup(t) })
	if err != nil {
		t.Fatalf("harness: starting %s cluster nodes: %v", cfg.Flavor, err)
	}
	c.Nodes = nodes
	c.Version = nodes[0].Server.Version

	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	if err := c.create(ctx); err != nil {
		t.Fatalf("harness: creating %s cluster: %v", cfg.Flavor, err)
	}
	t.Logf("harness: %s cluster of %d masters and %d replicas ready in %v",
		cfg.Flavor, cfg.Masters, cfg.Masters*cfg.Replicas, time.Since(began).Round(time.Millisecond))
	return c
}

// cleanup resumes paused nodes, so that they can be stopped, and on failure
// says which node is which before the nodes' logs follow.
func (c *Cluster) cleanup(t testing.TB) {
	var b strings.Builder
	for _, n := range c.nodeList() {
		n.mu.Lock()
		state := "up"
		switch {
		case n.down:
			state = "stopped by the harness"
		case n.paused:
			state = "was paused by the harness"
			if err := pauseProcess(n.Server, false); err == nil {
				n.paused = false
			}
		}
		n.mu.Unlock()
		fmt.Fprintf(&b, "\n  %s id %s (%s), log %s", n.Addr, n.ID, state, n.Server.LogPath)
	}
	if t.Failed() {
		t.Logf("harness: %s cluster nodes:%s", c.Flavor, b.String())
	}
}

// startNodes starts n cluster nodes in parallel. Their servers stop when t
// ends.
func (c *Cluster) startNodes(t testing.TB, n int) ([]*ClusterNode, error) {
	nodes := make([]*ClusterNode, n)
	errs := make([]string, n)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Start reports failures with t.Fatal, which must not be called
			// outside the test's goroutine: capture them instead.
			ct := &captureTB{TB: t}
			defer func() { errs[i] = ct.message() }()
			var reserved []int
			ct.Cleanup(func() { releasePorts(reserved) })
			pick := func() (int, error) {
				p, err := reserveClusterPort()
				if err == nil {
					reserved = append(reserved, p)
				}
				return p, err
			}
			s := Start(ct, Config{Flavor: c.Config.Flavor, Args: c.Config.nodeArgs(), pickPort: pick})
			nodes[i] = &ClusterNode{Addr: s.Addr, Port: s.port, Server: s}
		}()
	}
	wg.Wait()
	var failed []string
	for _, e := range errs {
		if e != "" {
			failed = append(failed, e)
		}
	}
	if len(failed) > 0 {
		return nil, errors.New(strings.Join(failed, "\n"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	for _, nd := range nodes {
		id, err := nd.Do(ctx, "CLUSTER", "MYID")
		if err != nil {
			return nil, fmt.Errorf("CLUSTER MYID on %s: %w", nd.Addr, err)
		}
		nd.ID, _ = id.(string)
	}
	return nodes, nil
}

// create assigns the slots, introduces the nodes to each other, attaches
// the replicas and waits until the cluster is ready.
func (c *Cluster) create(ctx context.Context) error {
	cfg := c.Config
	masters, replicas := c.Nodes[:cfg.Masters], c.Nodes[cfg.Masters:]
	for i, m := range masters {
		// Distinct epochs spare the nodes the collision resolution they
		// would otherwise go through: every master starts at epoch 0.
		if _, err := m.Do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1)); err != nil {
			return fmt.Errorf("CLUSTER SET-CONFIG-EPOCH on %s: %w", m.Addr, err)
		}
		lo, hi := i*SlotCount/cfg.Masters, (i+1)*SlotCount/cfg.Masters-1
		if _, err := m.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return fmt.Errorf("CLUSTER ADDSLOTSRANGE %d %d on %s: %w", lo, hi, m.Addr, err)
		}
	}
	// Every pair meets directly, rather than waiting for gossip to spread
	// the news from one node.
	for i, a := range c.Nodes {
		for _, b := range c.Nodes[i+1:] {
			if err := meet(ctx, a, b); err != nil {
				return err
			}
		}
	}
	if err := c.waitKnown(ctx, c.Nodes, nil); err != nil {
		return err
	}
	for i, r := range replicas {
		m := masters[i/max(cfg.Replicas, 1)]
		if _, err := r.Do(ctx, "CLUSTER", "REPLICATE", m.ID); err != nil {
			return fmt.Errorf("CLUSTER REPLICATE %s on %s: %w", m.ID, r.Addr, err)
		}
	}
	return c.waitStable(ctx, "the new cluster to be ready", func(vs []*testserver.ClusterView) error {
		v := vs[0]
		if got := v.Slots.Covered(); got != SlotCount {
			return fmt.Errorf("%s reports %d slots covered", v.Addr, got)
		}
		for _, m := range masters {
			if got := len(v.Slots.Shards[m.ID]); got != cfg.Replicas {
				return fmt.Errorf("%s lists %d replicas of %s in CLUSTER SLOTS, want %d", v.Addr, got, m.Addr, cfg.Replicas)
			}
		}
		return nil
	})
}

// meet introduces b to a (and so a to b) with CLUSTER MEET.
func meet(ctx context.Context, a, b *ClusterNode) error {
	host, _, _ := net.SplitHostPort(b.Addr)
	_, err := a.Do(ctx, "CLUSTER", "MEET", host, strconv.Itoa(b.Port), strconv.Itoa(b.Port+10000))
	if err != nil {
		return fmt.Errorf("CLUSTER MEET %s on %s: %w", b.Addr, a.Addr, err)
	}
	return nil
}

// nodeList returns a copy of Nodes.
func (c *Cluster) nodeList() []*ClusterNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.Nodes)
}

// upNodes returns the nodes the harness has neither stopped nor paused.
func (c *Cluster) upNodes() []*ClusterNode {
	var up []*ClusterNode
	for _, n := range c.nodeList() {
		if n.up() {
			up = append(up, n)
		}
	}
	return up
}

// Seeds returns the addresses of all nodes, for a client's seed list.
func (c *Cluster) Seeds() []string {
	var seeds []string
	for _, n := range c.nodeList() {
		seeds = append(seeds, n.Addr)
	}
	return seeds
}

// Node returns the node with the given address or ID, or nil.
func (c *Cluster) Node(addrOrID string) *ClusterNode {
	for _, n := range c.nodeList() {
		if n.Addr == addrOrID || n.ID == addrOrID {
			return n
		}
	}
	return nil
}

// selves asks every node that is up for its own entry in CLUSTER NODES.
// Nodes that do not answer are left out.
// Each node has requestTimeout to answer.
func (c *Cluster) selves() map[*ClusterNode]testserver.NodeLine {
	out := make(map[*ClusterNode]testserver.NodeLine)
	for _, n := range c.upNodes() {
		if v, err := c.view(context.Background(), n, false); err == nil {
			out[n] = v.Self
		}
	}
	return out
}

// Masters returns the nodes that report themselves masters now, in the
// order of Nodes. Nodes that are paused, stopped or do not answer are left
// out. A master may own no slots (see AddNode).
func (c *Cluster) Masters() []*ClusterNode {
	return c.nodesWhere(testserver.NodeLine.IsPrimary)
}

// Replicas returns the nodes that report themselves replicas now, in the
// order of Nodes, leaving out those that are paused, stopped or silent.
func (c *Cluster) Replicas() []*ClusterNode {
	return c.nodesWhere(testserver.NodeLine.IsReplica)
}

// ReplicasOf returns the nodes that report themselves replicas of master
// now, leaving out those that are paused, stopped or silent.
func (c *Cluster) ReplicasOf(master *ClusterNode) []*ClusterNode {
	return c.nodesWhere(func(e testserver.NodeLine) bool { return e.IsReplica() && e.Primary == master.ID })
}

// nodesWhere returns the nodes whose own line of CLUSTER NODES satisfies
// keep, in the order of Nodes, leaving out those that are paused, stopped
// or silent.
func (c *Cluster) nodesWhere(keep func(testserver.NodeLine) bool) []*ClusterNode {
	selves := c.selves()
	var out []*ClusterNode
	for _, n := range c.nodeList() {
		if e, ok := selves[n]; ok && keep(e) {
			out = append(out, n)
		}
	}
	return out
}

// MasterOf returns the master that serves slot now: of the nodes that are
// up and claim the slot as masters, the one with the highest config epoch.
// During a migration that is still the source. It returns nil when no node
// claims the slot.
func (c *Cluster) MasterOf(slot int) *ClusterNode {
	var best *ClusterNode
	var epoch int64 = -1
	for n, e := range c.selves() {
		if e.IsPrimary() && e.Owns(slot) && e.Epoch > epoch {
			best, epoch = n, e.Epoch
		}
	}
	return best
}

// Fill sets n keys, prefix followed by 0 to n-1, to value, sent straight to
// each key's master in pipelines of a thousand: test data for resharding,
// written without the client under test.
func (c *Cluster) Fill(ctx context.Context, prefix string, n int, value string) error {
	owner := map[int]*ClusterNode{}
	for n, e := range c.selves() {
		if !e.IsPrimary() {
			continue
		}
		for slot := range SlotCount {
			if e.Owns(slot) {
				owner[slot] = n
			}
		}
	}
	cmds := map[*ClusterNode][][]string{}
	for i := range n {
		k := prefix + strconv.Itoa(i)
		m := owner[SlotOf(k)]
		if m == nil {
			return fmt.Errorf("harness: no master serves slot %d of %q", SlotOf(k), k)
		}
		cmds[m] = append(cmds[m], []string{"SET", k, value})
	}
	for m, all := range cmds {
		rc, err := openNode(ctx, m)
		if err != nil {
			return err
		}
		for len(all) > 0 {
			batch := all[:min(1000, len(all))]
			all = all[len(batch):]
			replies, err := rc.Pipeline(batch)
			if err == nil {
				for _, r := range replies {
					if se, ok := r.(ServerError); ok {
						err = se
						break
					}
				}
			}
			if err != nil {
				rc.Close()
				return fmt.Errorf("harness: filling %s: %w", m.Addr, err)
			}
		}
		rc.Close()
	}
	return nil
}

// maxRedirects bounds the redirections Cluster.Do follows.
const maxRedirects = 16

// Do sends one command to the cluster, following MOVED and ASK
// redirections, and returns the reply as Server.Do does. It starts at the
// first node that is up, so a command without keys runs there. It is meant
// for test setup and inspection, independent of the client under test.
func (c *Cluster) Do(ctx context.Context, args ...string) (any, error) {
	up := c.upNodes()
	if len(up) == 0 {
		return nil, errors.New("harness: no cluster node is up")
	}
	n := up[0]
	addr, asking := n.Addr, false
	for range maxRedirects {
		reply, err := doAt(ctx, addr, asking, args)
		var se ServerError
		if !errors.As(err, &se) {
			return reply, err
		}
		f := strings.Fields(string(se))
		if len(f) != 3 || (f[0] != "MOVED" && f[0] != "ASK") {
			return reply, err
		}
		addr, asking = f[2], f[0] == "ASK"
	}
	return nil, fmt.Errorf("harness: more than %d redirections for %s", maxRedirects, args[0])
}

// doAt sends args to addr on a fresh connection, after ASKING if asked.
func doAt(ctx context.Context, addr string, asking bool, args []string) (any, error) {
	conn, err := testserver.Dial(ctx, "tcp", addr, nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if asking {
		if _, err := conn.Do("ASKING"); err != nil {
			return nil, err
		}
	}
	return conn.Do(args...)
}

// mustNotBeShared panics when c is a SharedCluster: other tests use it.
func (c *Cluster) mustNotBeShared(op string) {
	if c.shared {
		panic("harness: " + op + " on a SharedCluster; tests that change the cluster must use StartCluster")
	}
}
