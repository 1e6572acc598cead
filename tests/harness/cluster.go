package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// SlotCount is the number of hash slots of a Redis Cluster.
const SlotCount = 16384

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
	// clusterWait bounds a wait whose context has no deadline.
	clusterWait = 30 * time.Second
	// requestTimeout bounds one request to one node, so that a hung node
	// cannot use up a whole wait.
	requestTimeout = 2 * time.Second
)

// StartCluster starts and creates a cluster configured by cfg and stops it
// when t ends. Each node is a server process with its own directory and a
// loopback port whose bus port (port+10000) is free too. It fails t unless
// the cluster is ready within 30s: cluster_state:ok everywhere, the same slot
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
	if _, err := findBinary(cfg.Flavor); err != nil {
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
			if err := signalProcess(n.Server, "CONT"); err == nil {
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
	return c.waitStable(ctx, "the new cluster to be ready", func(vs []*nodeView) error {
		v := vs[0]
		if got := v.coverage(); got != SlotCount {
			return fmt.Errorf("%s reports %d slots covered", v.node.Addr, got)
		}
		for _, m := range masters {
			if got := len(v.shards[m.ID]); got != cfg.Replicas {
				return fmt.Errorf("%s lists %d replicas of %s in CLUSTER SLOTS, want %d", v.node.Addr, got, m.Addr, cfg.Replicas)
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
func (c *Cluster) selves() map[*ClusterNode]nodeEntry {
	out := make(map[*ClusterNode]nodeEntry)
	for _, n := range c.upNodes() {
		if v, err := c.view(context.Background(), n, false); err == nil {
			out[n] = v.self
		}
	}
	return out
}

// Masters returns the nodes that report themselves masters now, in the
// order of Nodes. Nodes that are paused, stopped or do not answer are left
// out. A master may own no slots (see AddNode).
func (c *Cluster) Masters() []*ClusterNode {
	selves := c.selves()
	var out []*ClusterNode
	for _, n := range c.nodeList() {
		if e, ok := selves[n]; ok && e.isMaster() {
			out = append(out, n)
		}
	}
	return out
}

// Replicas returns the nodes that report themselves replicas now, in the
// order of Nodes, leaving out those that are paused, stopped or silent.
func (c *Cluster) Replicas() []*ClusterNode {
	selves := c.selves()
	var out []*ClusterNode
	for _, n := range c.nodeList() {
		if e, ok := selves[n]; ok && e.isReplica() {
			out = append(out, n)
		}
	}
	return out
}

// ReplicasOf returns the nodes that report themselves replicas of master
// now, leaving out those that are paused, stopped or silent.
func (c *Cluster) ReplicasOf(master *ClusterNode) []*ClusterNode {
	selves := c.selves()
	var out []*ClusterNode
	for _, n := range c.nodeList() {
		if e, ok := selves[n]; ok && e.isReplica() && e.master == master.ID {
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
		if e.isMaster() && e.owns(slot) && e.epoch > epoch {
			best, epoch = n, e.epoch
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
		if !e.isMaster() {
			continue
		}
		for slot := range SlotCount {
			if e.owns(slot) {
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
			replies, err := rc.pipeline(batch)
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
	conn, err := dialRESP(ctx, "tcp", addr, nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if asking {
		if _, err := conn.do("ASKING"); err != nil {
			return nil, err
		}
	}
	return conn.do(args...)
}

// mustNotBeShared panics when c is a SharedCluster: other tests use it.
func (c *Cluster) mustNotBeShared(op string) {
	if c.shared {
		panic("harness: " + op + " on a SharedCluster; tests that change the cluster must use StartCluster")
	}
}

// Kill ends the node with SIGKILL, as a crash would, and waits until the
// process is gone. The other nodes notice after NodeTimeout; see
// WaitMasterFailed.
func (c *Cluster) Kill(n *ClusterNode) {
	c.mustNotBeShared("Kill")
	n.mu.Lock()
	defer n.mu.Unlock()
	n.Server.Kill()
	n.down, n.paused = true, false
}

// Stop shuts the node down gracefully and waits for it.
func (c *Cluster) Stop(n *ClusterNode) {
	c.mustNotBeShared("Stop")
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.paused {
		signalProcess(n.Server, "CONT")
		n.paused = false
	}
	n.Server.Stop()
	n.down = true
}

// Pause stops the node's process with SIGSTOP: it keeps its connections
// but answers nothing, as a hung or partitioned node would. Resume lets it
// go on; the cluster's cleanup resumes it in any case, before stopping it.
// Pausing a paused or stopped node does nothing.
func (c *Cluster) Pause(n *ClusterNode) error {
	c.mustNotBeShared("Pause")
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.paused || n.down {
		return nil
	}
	if err := signalProcess(n.Server, "STOP"); err != nil {
		return fmt.Errorf("harness: pausing %s: %w", n.Addr, err)
	}
	n.paused = true
	return nil
}

// Resume continues a node paused by Pause with SIGCONT. Resuming a node
// that is not paused does nothing.
func (c *Cluster) Resume(n *ClusterNode) error {
	c.mustNotBeShared("Resume")
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.paused {
		return nil
	}
	if err := signalProcess(n.Server, "CONT"); err != nil {
		return fmt.Errorf("harness: resuming %s: %w", n.Addr, err)
	}
	n.paused = false
	return nil
}

// Restart stops the node if it runs (resuming it first if paused) and
// starts it again on the same port with the same nodes.conf, so it rejoins
// the cluster with its ID; its dataset starts empty. A master that was
// failed over meanwhile comes back as a replica of its successor. Restart
// returns once the node answers PING; WaitStable waits for the cluster.
func (c *Cluster) Restart(n *ClusterNode) error {
	c.mustNotBeShared("Restart")
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.paused {
		if err := signalProcess(n.Server, "CONT"); err != nil {
			return fmt.Errorf("harness: resuming %s: %w", n.Addr, err)
		}
		n.paused = false
	}
	// Server.Restart fails its test with t.Fatal: run it where that ends
	// only a goroutine of ours, and report the failure as an error.
	ct := &captureTB{TB: c.t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.Server.Restart(ct)
	}()
	<-done
	if msg := ct.message(); msg != "" {
		n.down = true
		return errors.New(msg)
	}
	n.down = false
	return nil
}

// Failover runs CLUSTER FAILOVER on replica with mode "" (a coordinated
// manual failover), "FORCE" (without the master's agreement) or "TAKEOVER"
// (without the other masters' agreement either), and waits until the node
// reports itself a master. The rest of the cluster learns of it by gossip:
// call WaitStable before relying on it, and before another failover, which
// could otherwise collide with this one's config epoch and be undone. On
// Redis (not Valkey), "" and FORCE fail on a node that won an election less
// than 4*max(NodeTimeout, 1s) ago: the server reuses that election's votes.
func (c *Cluster) Failover(ctx context.Context, replica *ClusterNode, mode string) error {
	c.mustNotBeShared("Failover")
	args := []string{"CLUSTER", "FAILOVER"}
	switch mode = strings.ToUpper(mode); mode {
	case "":
	case "FORCE", "TAKEOVER":
		args = append(args, mode)
	default:
		return fmt.Errorf("harness: failover mode %q is none of \"\", FORCE and TAKEOVER", mode)
	}
	info, err := replica.Do(ctx, "CLUSTER", "INFO")
	if err != nil {
		return fmt.Errorf("harness: CLUSTER INFO on %s: %w", replica.Addr, err)
	}
	before, _ := strconv.ParseInt(infoField(fmt.Sprint(info), "cluster_current_epoch"), 10, 64)
	logStart := fileSize(replica.Server.LogPath)
	if _, err := replica.Do(ctx, args...); err != nil {
		return fmt.Errorf("harness: %s on %s: %w", strings.Join(args, " "), replica.Addr, err)
	}
	// Redis 7.0 and 8.0 let a replica that won an election less than
	// 4*max(NodeTimeout, 1s) ago "win" again at once with that election's
	// votes and epoch; the cluster undoes it a moment later, maybe before
	// it is seen here as a master, but not before it says so in its log.
	const hint = "the server reused the votes of an election it won less than 4*max(NodeTimeout, 1s) ago " +
		"and the cluster undid it; fail over another node, or this one later"
	var stale error
	err = poll(ctx, replica.Addr+" to become a master", func(ctx context.Context) error {
		// The log first: a win it reports happened before the view.
		won := strings.Contains(readFrom(replica.Server.LogPath, logStart), "Failover election won")
		v, err := c.view(ctx, replica, false)
		if err != nil {
			return err
		}
		if !v.self.isMaster() {
			if mode != "TAKEOVER" && won {
				stale = fmt.Errorf("harness: %s on %s: it won an election and is a replica again: %s",
					strings.Join(args, " "), replica.Addr, hint)
				return nil
			}
			return fmt.Errorf("it reports flags %s", v.self.flagList)
		}
		// An election yields an epoch above every earlier one.
		if mode != "TAKEOVER" && v.self.epoch <= before {
			stale = fmt.Errorf("harness: %s on %s: it became a master with config epoch %d, not above the current epoch %d: %s",
				strings.Join(args, " "), replica.Addr, v.self.epoch, before, hint)
		}
		return nil
	})
	if stale != nil {
		return stale
	}
	return err
}

// WaitMasterFailed waits until every other node that is up flags n as
// failed (FAIL, not just PFAIL), which is when its replicas may be elected.
func (c *Cluster) WaitMasterFailed(ctx context.Context, n *ClusterNode) error {
	return poll(ctx, "the cluster to flag "+n.Addr+" as failed", func(ctx context.Context) error {
		for _, o := range c.upNodes() {
			if o == n {
				continue
			}
			v, err := c.view(ctx, o, false)
			if err != nil {
				return err
			}
			e, ok := v.byID[n.ID]
			if !ok {
				return fmt.Errorf("%s does not know it", o.Addr)
			}
			if !e.flags["fail"] {
				return fmt.Errorf("%s reports flags %s", o.Addr, e.flagList)
			}
		}
		return nil
	})
}

// WaitStable waits until every node that is up (neither stopped nor paused
// by the harness) reports cluster_state:ok, knows every other such node and
// flags none of them as failing, all of them report the same slot map (the
// same masters and replicas for the same slot ranges in CLUSTER SLOTS), the
// same role and config epoch for each and the same current epoch, no two
// masters share a config epoch, and every replica among them has its master
// link up. Without a deadline in ctx it waits at most 30s.
func (c *Cluster) WaitStable(ctx context.Context) error {
	return c.waitStable(ctx, "the cluster to be stable", nil)
}

// waitStable is WaitStable with an extra condition on the agreed views.
func (c *Cluster) waitStable(ctx context.Context, what string, extra func([]*nodeView) error) error {
	return poll(ctx, what, func(ctx context.Context) error {
		up := c.upNodes()
		if len(up) == 0 {
			return errors.New("no node is up")
		}
		views := make([]*nodeView, len(up))
		for i, n := range up {
			v, err := c.view(ctx, n, true)
			if err != nil {
				return err
			}
			if st := infoField(v.info, "cluster_state"); st != "ok" {
				return fmt.Errorf("%s reports cluster_state:%s", n.Addr, st)
			}
			if v.self.isReplica() && infoField(v.repl, "master_link_status") != "up" {
				return fmt.Errorf("replica %s reports master_link_status:%s", n.Addr, infoField(v.repl, "master_link_status"))
			}
			views[i] = v
		}
		first := views[0]
		epochs := make(map[int64]*ClusterNode)
		for _, v := range views {
			if v.slots != first.slots {
				return fmt.Errorf("%s and %s disagree on the slot map:\n  %s\n  %s",
					first.node.Addr, v.node.Addr, first.slots, v.slots)
			}
			// A failover or a takeover bumps epochs, which gossip spreads;
			// a failover started before they agree may collide with it.
			if a, b := infoField(first.info, "cluster_current_epoch"), infoField(v.info, "cluster_current_epoch"); a != b {
				return fmt.Errorf("%s reports cluster_current_epoch:%s, %s reports %s", first.node.Addr, a, v.node.Addr, b)
			}
			if v.self.isMaster() {
				if o, ok := epochs[v.self.epoch]; ok {
					return fmt.Errorf("masters %s and %s share config epoch %d", o.Addr, v.node.Addr, v.self.epoch)
				}
				epochs[v.self.epoch] = v.node
			}
			for _, n := range up {
				e, ok := v.byID[n.ID]
				if !ok {
					return fmt.Errorf("%s does not know %s", v.node.Addr, n.Addr)
				}
				if e.flags["fail"] || e.flags["fail?"] || e.flags["handshake"] || e.flags["noaddr"] {
					return fmt.Errorf("%s reports %s with flags %s", v.node.Addr, n.Addr, e.flagList)
				}
				own := views[slices.Index(up, n)].self
				if e.isMaster() != own.isMaster() || e.master != own.master {
					return fmt.Errorf("%s reports %s as %s of %q, which reports itself %s of %q",
						v.node.Addr, n.Addr, e.flagList, e.master, own.flagList, own.master)
				}
				if e.epoch != own.epoch {
					return fmt.Errorf("%s reports config epoch %d for %s, which reports %d", v.node.Addr, e.epoch, n.Addr, own.epoch)
				}
			}
		}
		if extra != nil {
			return extra(views)
		}
		return nil
	})
}

// waitKnown waits until every node in nodes knows every other one (and each
// of them has finished its handshake) and none knows any node in gone.
func (c *Cluster) waitKnown(ctx context.Context, nodes []*ClusterNode, gone []*ClusterNode) error {
	return poll(ctx, "the nodes to know each other", func(ctx context.Context) error {
		for _, n := range nodes {
			v, err := c.view(ctx, n, false)
			if err != nil {
				return err
			}
			for _, o := range nodes {
				e, ok := v.byID[o.ID]
				if !ok {
					return fmt.Errorf("%s does not know %s", n.Addr, o.Addr)
				}
				if e.flags["handshake"] || e.flags["noaddr"] {
					return fmt.Errorf("%s reports %s with flags %s", n.Addr, o.Addr, e.flagList)
				}
			}
			for _, o := range gone {
				if _, ok := v.byID[o.ID]; ok {
					return fmt.Errorf("%s still knows %s", n.Addr, o.Addr)
				}
			}
		}
		return nil
	})
}

// MoveSlots migrates slots, with their keys, from one master to another
// while the cluster serves: for each slot it marks the slot IMPORTING on to
// and MIGRATING on from, moves the keys with MIGRATE in batches of 100
// (clients meanwhile get ASK redirections), then assigns the slot to to
// with CLUSTER SETSLOT NODE on to, on from and on every other master. It
// returns once every node that is up reports the new owner. A master that
// gives away its last slot becomes a replica of to, as the servers do.
func (c *Cluster) MoveSlots(ctx context.Context, from, to *ClusterNode, slots []int) error {
	c.mustNotBeShared("MoveSlots")
	// One connection to each side for the whole move: a connection per
	// command runs out of loopback ports on thousands of slots.
	fc, err := openNode(ctx, from)
	if err != nil {
		return err
	}
	defer fc.Close()
	tc, err := openNode(ctx, to)
	if err != nil {
		return err
	}
	defer tc.Close()
	host, _, _ := net.SplitHostPort(to.Addr)
	port := strconv.Itoa(to.Port)
	// Slots move in chunks, each step pipelined over the chunk: a round
	// trip per slot and step makes thousands of slots take minutes on a
	// loaded machine.
	for rest := slots; len(rest) > 0; {
		chunk := rest[:min(moveChunk, len(rest))]
		rest = rest[len(chunk):]
		if err := setSlots(tc, to, chunk, "IMPORTING", from.ID); err != nil {
			return err
		}
		if err := setSlots(fc, from, chunk, "MIGRATING", to.ID); err != nil {
			return err
		}
		for pending := chunk; len(pending) > 0; {
			var cmds [][]string
			for _, slot := range pending {
				cmds = append(cmds, []string{"CLUSTER", "GETKEYSINSLOT", strconv.Itoa(slot), "1000"})
			}
			replies, err := fc.pipeline(cmds)
			if err != nil {
				return fmt.Errorf("harness: CLUSTER GETKEYSINSLOT on %s: %w", from.Addr, err)
			}
			var more []int
			var migrates [][]string
			for i, r := range replies {
				if se, ok := r.(ServerError); ok {
					return fmt.Errorf("harness: CLUSTER GETKEYSINSLOT %d on %s: %w", pending[i], from.Addr, se)
				}
				ks, _ := r.([]any)
				if len(ks) == 0 {
					continue
				}
				more = append(more, pending[i])
				// One MIGRATE per slot (the source refuses keys of several
				// slots in one), all of them pipelined.
				args := []string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}
				for _, k := range ks {
					args = append(args, fmt.Sprint(k))
				}
				migrates = append(migrates, args)
			}
			replies, err = fc.pipeline(migrates)
			if err != nil {
				return fmt.Errorf("harness: MIGRATE from %s: %w", from.Addr, err)
			}
			for i, r := range replies {
				se, ok := r.(ServerError)
				switch {
				case !ok:
				case strings.Contains(string(se), "CLUSTERDOWN") && ctx.Err() == nil:
					// The target saw the cluster down for a moment (a node
					// slow to answer on a loaded machine): the keys are
					// still here; look again shortly.
					time.Sleep(50 * time.Millisecond)
				default:
					return fmt.Errorf("harness: MIGRATE of the keys of slot %d from %s: %w", more[i], from.Addr, se)
				}
			}
			pending = more
		}
		// The target first, so that the slot is never owned by nobody, as
		// the cluster specification asks.
		if err := setSlots(tc, to, chunk, "NODE", to.ID); err != nil {
			return err
		}
		if err := setSlots(fc, from, chunk, "NODE", to.ID); err != nil {
			return err
		}
	}
	for n, e := range c.selves() {
		if n == from || n == to || !e.isMaster() {
			continue
		}
		nc, err := openNode(ctx, n)
		if err != nil {
			return err
		}
		err = setSlots(nc, n, slots, "NODE", to.ID)
		nc.Close()
		if err != nil {
			return err
		}
	}
	return poll(ctx, fmt.Sprintf("every node to give %d slots to %s", len(slots), to.Addr), func(ctx context.Context) error {
		for _, n := range c.upNodes() {
			v, err := c.view(ctx, n, false)
			if err != nil {
				return err
			}
			e := v.byID[to.ID]
			for _, slot := range slots {
				if !e.owns(slot) {
					return fmt.Errorf("%s does not report slot %d on %s", n.Addr, slot, to.Addr)
				}
			}
		}
		return nil
	})
}

// moveChunk is how many slots MoveSlots moves at a time.
const moveChunk = 128

// setSlots sends CLUSTER SETSLOT slot state id for every slot on rc, n's
// connection, pipelined. Once a master lost its last slot it refuses
// SETSLOT; that is not an error (see lostSlots).
func setSlots(rc *respConn, n *ClusterNode, slots []int, state, id string) error {
	cmds := make([][]string, len(slots))
	for i, slot := range slots {
		cmds[i] = []string{"CLUSTER", "SETSLOT", strconv.Itoa(slot), state, id}
	}
	replies, err := rc.pipeline(cmds)
	if err != nil {
		return fmt.Errorf("harness: CLUSTER SETSLOT %s on %s: %w", state, n.Addr, err)
	}
	for i, r := range replies {
		if se, ok := r.(ServerError); ok && !lostSlots(se) {
			return fmt.Errorf("harness: CLUSTER SETSLOT %d %s on %s: %w", slots[i], state, n.Addr, se)
		}
	}
	return nil
}

// openNode connects to n for a sequence of commands, authenticated as
// Server.Do is; the connection's deadline is ctx's, or a minute.
func openNode(ctx context.Context, n *ClusterNode) (*respConn, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Minute)
		defer cancel()
	}
	rc, err := dialRESP(ctx, "tcp", n.Addr, n.Server.TLSConfig)
	if err != nil {
		return nil, fmt.Errorf("harness: connecting to %s: %w", n.Addr, err)
	}
	if pw := n.Server.Config.Password; pw != "" {
		if _, err := rc.do("AUTH", pw); err != nil {
			rc.Close()
			return nil, fmt.Errorf("harness: AUTH on %s: %w", n.Addr, err)
		}
	}
	return rc, nil
}

// lostSlots reports whether err says that a node which was a master is a
// replica now: a master whose last slot goes elsewhere becomes a replica of
// the new owner (cluster-allow-replica-migration), possibly as soon as it
// hears of the target's claim by gossip, before SETSLOT reaches it.
func lostSlots(err error) bool {
	var se ServerError
	return errors.As(err, &se) && strings.Contains(string(se), "SETSLOT only with masters")
}

// AddNode starts a new node, an empty master without slots, introduces it
// to the cluster with CLUSTER MEET and waits until it and every node that is
// up know each other. It is appended to Nodes. Give it slots with MoveSlots,
// or make it a replica with CLUSTER REPLICATE.
func (c *Cluster) AddNode(ctx context.Context) (*ClusterNode, error) {
	c.mustNotBeShared("AddNode")
	up := c.upNodes()
	if len(up) == 0 {
		return nil, errors.New("harness: no cluster node is up to meet a new one")
	}
	nodes, err := c.startNodes(c.t, 1)
	if err != nil {
		return nil, fmt.Errorf("harness: starting a new cluster node: %v", err)
	}
	n := nodes[0]
	c.mu.Lock()
	c.Nodes = append(c.Nodes, n)
	c.mu.Unlock()
	if err := meet(ctx, up[0], n); err != nil {
		return n, fmt.Errorf("harness: %w", err)
	}
	if err := c.waitKnown(ctx, append(up, n), nil); err != nil {
		return n, err
	}
	// Until the new node has learned the whole slot map it answers
	// CLUSTERDOWN, to MIGRATE too.
	err = poll(ctx, "the new node "+n.Addr+" to report cluster_state:ok", func(ctx context.Context) error {
		info, err := n.Do(ctx, "CLUSTER", "INFO")
		if err != nil {
			return err
		}
		if !strings.Contains(fmt.Sprint(info), "cluster_state:ok") {
			return errors.New("cluster_state is not ok")
		}
		return nil
	})
	return n, err
}

// RemoveNode makes every other node that is up forget n (CLUSTER FORGET),
// then stops n and drops it from Nodes. Move its slots away first; a
// replica of n refuses to forget its master.
func (c *Cluster) RemoveNode(ctx context.Context, n *ClusterNode) error {
	c.mustNotBeShared("RemoveNode")
	var others []*ClusterNode
	for _, o := range c.upNodes() {
		if o == n {
			continue
		}
		others = append(others, o)
		if _, err := o.Do(ctx, "CLUSTER", "FORGET", n.ID); err != nil {
			return fmt.Errorf("harness: CLUSTER FORGET %s on %s: %w", n.Addr, o.Addr, err)
		}
	}
	n.mu.Lock()
	if n.paused {
		signalProcess(n.Server, "CONT")
		n.paused = false
	}
	n.Server.Stop()
	n.down = true
	n.mu.Unlock()
	c.mu.Lock()
	if i := slices.Index(c.Nodes, n); i >= 0 {
		c.Nodes = slices.Delete(c.Nodes, i, i+1)
	}
	c.mu.Unlock()
	return c.waitKnown(ctx, others, []*ClusterNode{n})
}

// poll calls check, backing off from 10ms to 100ms, until it succeeds or
// ctx ends; without a deadline in ctx it gives up after clusterWait.
func poll(ctx context.Context, what string, check func(context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, clusterWait)
		defer cancel()
	}
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("harness: waiting for %s: %w; last: %v", what, ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}

// nodeView is what one node reports about the cluster.
type nodeView struct {
	node  *ClusterNode
	self  nodeEntry            // the node's own line of CLUSTER NODES
	byID  map[string]nodeEntry // CLUSTER NODES by node ID
	info  string               // CLUSTER INFO, when asked for
	repl  string               // INFO replication, when asked for
	slots string               // CLUSTER SLOTS in canonical form, when asked for
	// shards maps each master in CLUSTER SLOTS to its replicas' IDs.
	shards map[string][]string
	ranges [][2]int // the slot ranges of CLUSTER SLOTS
}

// coverage returns the number of slots CLUSTER SLOTS assigns.
func (v *nodeView) coverage() int {
	n := 0
	for _, r := range v.ranges {
		n += r[1] - r[0] + 1
	}
	return n
}

// view asks n for CLUSTER NODES and, if full, CLUSTER INFO, CLUSTER SLOTS
// and INFO replication, on one connection.
func (c *Cluster) view(ctx context.Context, n *ClusterNode, full bool) (*nodeView, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	conn, err := dialRESP(ctx, "tcp", n.Addr, nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ask := func(args ...string) (string, any, error) {
		reply, err := conn.do(args...)
		if err != nil {
			return "", nil, fmt.Errorf("%s on %s: %w", strings.Join(args, " "), n.Addr, err)
		}
		s, _ := reply.(string)
		return s, reply, nil
	}
	nodes, _, err := ask("CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	v := &nodeView{node: n, byID: make(map[string]nodeEntry)}
	for _, e := range parseClusterNodes(nodes) {
		v.byID[e.id] = e
		if e.flags["myself"] {
			v.self = e
		}
	}
	if v.self.id == "" {
		return nil, fmt.Errorf("CLUSTER NODES on %s has no myself line", n.Addr)
	}
	if !full {
		return v, nil
	}
	if v.info, _, err = ask("CLUSTER", "INFO"); err != nil {
		return nil, err
	}
	if v.repl, _, err = ask("INFO", "replication"); err != nil {
		return nil, err
	}
	_, slots, err := ask("CLUSTER", "SLOTS")
	if err != nil {
		return nil, err
	}
	if err := v.parseSlots(slots); err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS on %s: %w", n.Addr, err)
	}
	return v, nil
}

// parseSlots fills v.slots, v.shards and v.ranges from a CLUSTER SLOTS
// reply: ranges of [start, end, master, replicas...], each node as
// [ip, port, id, ...].
func (v *nodeView) parseSlots(reply any) error {
	entries, ok := reply.([]any)
	if !ok {
		return fmt.Errorf("unexpected reply %T", reply)
	}
	type rng struct {
		lo, hi int
		ids    []string
	}
	var rs []rng
	for _, e := range entries {
		f, ok := e.([]any)
		if !ok || len(f) < 3 {
			return fmt.Errorf("unexpected entry %v", e)
		}
		lo, ok1 := f[0].(int64)
		hi, ok2 := f[1].(int64)
		if !ok1 || !ok2 {
			return fmt.Errorf("unexpected range %v", e)
		}
		r := rng{lo: int(lo), hi: int(hi)}
		for _, nd := range f[2:] {
			nf, ok := nd.([]any)
			if !ok || len(nf) < 3 {
				return fmt.Errorf("unexpected node %v", nd)
			}
			id, _ := nf[2].(string)
			r.ids = append(r.ids, id)
		}
		slices.Sort(r.ids[1:])
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b rng) int { return a.lo - b.lo })
	v.shards = make(map[string][]string)
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%d-%d:%s ", r.lo, r.hi, strings.Join(r.ids, ","))
		v.shards[r.ids[0]] = r.ids[1:]
		v.ranges = append(v.ranges, [2]int{r.lo, r.hi})
	}
	v.slots = strings.TrimSpace(b.String())
	return nil
}

// nodeEntry is one line of CLUSTER NODES:
//
//	<id> <ip:port@cport[,hostname]> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>...
type nodeEntry struct {
	id       string
	addr     string // ip:port
	flagList string // as reported: "myself,master"
	flags    map[string]bool
	master   string // the master's ID for a replica, else ""
	epoch    int64
	slots    [][2]int // owned ranges; migration annotations are left out
}

func (e nodeEntry) isMaster() bool  { return e.flags["master"] }
func (e nodeEntry) isReplica() bool { return e.flags["slave"] || e.flags["replica"] }

// owns reports whether slot is in one of the entry's ranges.
func (e nodeEntry) owns(slot int) bool {
	for _, r := range e.slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// parseClusterNodes parses a CLUSTER NODES reply, skipping malformed lines.
func parseClusterNodes(s string) []nodeEntry {
	var out []nodeEntry
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		e := nodeEntry{id: f[0], flagList: f[2], flags: make(map[string]bool)}
		e.addr, _, _ = strings.Cut(f[1], "@")
		e.addr, _, _ = strings.Cut(e.addr, ",")
		for _, fl := range strings.Split(f[2], ",") {
			e.flags[fl] = true
		}
		if f[3] != "-" {
			e.master = f[3]
		}
		e.epoch, _ = strconv.ParseInt(f[6], 10, 64)
		for _, sl := range f[8:] {
			if strings.HasPrefix(sl, "[") {
				continue // [slot->-id] migrating, [slot-<-id] importing
			}
			lo, hi, isRange := strings.Cut(sl, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 == nil && err2 == nil {
				e.slots = append(e.slots, [2]int{a, b})
			}
		}
		out = append(out, e)
	}
	return out
}

// signalProcess sends sig ("STOP", "CONT") to the server's process. It uses
// the shell's kill so that the harness builds where package syscall lacks
// those signals.
func signalProcess(s *Server, sig string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.run.(*procRunner)
	if !ok || p.cmd == nil || p.cmd.Process == nil {
		return errors.New("the server is not a local process")
	}
	select {
	case <-p.done:
		return errors.New("the server process has ended")
	default:
	}
	if runtime.GOOS == "windows" {
		return errors.New("SIGSTOP and SIGCONT do not exist on Windows")
	}
	out, err := exec.Command("/bin/sh", "-c", "kill -s "+sig+" "+strconv.Itoa(p.cmd.Process.Pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kill -s %s: %v: %s", sig, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Cluster ports: a node listens on p and its bus on p+10000. They are drawn
// from 11000-21999 (buses 21000-31999), below the ephemeral port range of
// Linux (32768 and up), so that outgoing connections do not take them, and
// checked by binding both. Ports handed out stay reserved in this process
// until the cluster's test ends.
const (
	clusterPortLow  = 11000
	clusterPortHigh = 22000
)

var clusterPorts = struct {
	sync.Mutex
	used map[int]bool
}{used: make(map[int]bool)}

// reserveClusterPort returns a port p such that p and p+10000 were free on
// 127.0.0.1 a moment ago and no other cluster of this process holds p.
func reserveClusterPort() (int, error) {
	clusterPorts.Lock()
	defer clusterPorts.Unlock()
	for range 200 {
		p := clusterPortLow + rand.IntN(clusterPortHigh-clusterPortLow)
		if clusterPorts.used[p] || clusterPorts.used[p+10000] || clusterPorts.used[p-10000] {
			continue
		}
		if !portFree(p) || !portFree(p+10000) {
			continue
		}
		clusterPorts.used[p] = true
		return p, nil
	}
	return 0, errors.New("no free port pair (port, port+10000) found for a cluster node")
}

// releasePorts returns reserved ports.
func releasePorts(ports []int) {
	clusterPorts.Lock()
	defer clusterPorts.Unlock()
	for _, p := range ports {
		delete(clusterPorts.used, p)
	}
}

// portFree reports whether a TCP listener can bind 127.0.0.1:p.
func portFree(p int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// SlotOf returns the hash slot of key: CRC16 (XMODEM) of the key modulo
// 16384, where a key holding "{...}" with at least one byte between the first
// "{" and the first "}" after it is hashed by that part only.
func SlotOf(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key)) % SlotCount
}

// crc16 is CRC-16/XMODEM: polynomial 0x1021, initial value 0, no
// reflection, no final XOR.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// captureTB runs harness code outside the test's goroutine: fatal failures
// are recorded and end only the calling goroutine (runtime.Goexit), for the
// test's goroutine to report. Everything else goes to the test.
type captureTB struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (c *captureTB) record(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, msg)
}

// message returns the recorded failures, "" if none.
func (c *captureTB) message() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.msgs, "\n")
}

func (c *captureTB) Error(args ...any)                 { c.record(fmt.Sprint(args...)) }
func (c *captureTB) Errorf(format string, args ...any) { c.record(fmt.Sprintf(format, args...)) }
func (c *captureTB) Fail()                             { c.record("failed") }
func (c *captureTB) FailNow()                          { c.record("failed"); runtime.Goexit() }
func (c *captureTB) Fatal(args ...any)                 { c.record(fmt.Sprint(args...)); runtime.Goexit() }
func (c *captureTB) Fatalf(format string, args ...any) {
	c.record(fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (c *captureTB) Skip(args ...any)                 { c.Fatal(args...) }
func (c *captureTB) Skipf(format string, args ...any) { c.Fatalf(format, args...) }
func (c *captureTB) SkipNow()                         { c.FailNow() }

// sharedTB is the lifetime of a SharedCluster: from its start to
// StopSharedClusters, beyond the test that happened to start it. Cleanups
// and temporary directories are its own; failures are recorded.
type sharedTB struct {
	captureTB
	name     string
	cleanups []func()
	dirs     []string
}

func (s *sharedTB) Helper()             {}
func (s *sharedTB) Name() string        { return s.name }
func (s *sharedTB) Log(...any)          {}
func (s *sharedTB) Logf(string, ...any) {}
func (s *sharedTB) Failed() bool        { return s.message() != "" }
func (s *sharedTB) Cleanup(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanups = append(s.cleanups, f)
}
func (s *sharedTB) TempDir() string {
	dir, err := os.MkdirTemp("", "respire-cluster-")
	if err != nil {
		s.Fatalf("harness: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirs = append(s.dirs, dir)
	return dir
}

// stop runs the cleanups, last first, and removes the directories.
func (s *sharedTB) stop() {
	s.mu.Lock()
	cleanups, dirs := s.cleanups, s.dirs
	s.cleanups, s.dirs = nil, nil
	s.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}

// sharedCluster is one flavor's entry in sharedClusters.
type sharedCluster struct {
	ready chan struct{} // closed once c or err is set
	c     *Cluster
	err   string
	tb    *sharedTB
}

var sharedClusters = struct {
	sync.Mutex
	m map[Flavor]*sharedCluster
}{m: make(map[Flavor]*sharedCluster)}

// SharedCluster returns the test binary's cluster of flavor f (3 masters
// with a replica each), starting it on first use. It outlives the test that
// started it: call StopSharedClusters from TestMain after m.Run, before any
// leak check:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		harness.StopSharedClusters()
//		os.Exit(code)
//	}
//
// Tests that share it must keep to keys under a prefix of their own and must
// not change the cluster: Kill, Pause, Restart, Failover, MoveSlots and the
// like panic on it. When a test that uses it fails, the end of every node's
// log is written to that test's log.
func SharedCluster(t testing.TB, f Flavor) *Cluster {
	t.Helper()
	if f == "" {
		f = DefaultFlavor
	}
	sharedClusters.Lock()
	sc, ok := sharedClusters.m[f]
	if !ok {
		sc = &sharedCluster{ready: make(chan struct{})}
		sc.tb = &sharedTB{captureTB: captureTB{TB: t}, name: "harness.SharedCluster(" + string(f) + ")"}
		sharedClusters.m[f] = sc
		go func() {
			defer close(sc.ready)
			defer func() { sc.err = sc.tb.message() }()
			c := StartCluster(sc.tb, ClusterConfig{Flavor: f})
			c.shared = true
			sc.c = c
		}()
	}
	sharedClusters.Unlock()
	<-sc.ready
	if sc.err != "" || sc.c == nil {
		t.Fatalf("harness: the shared %s cluster did not start: %s", f, sc.err)
	}
	c := sc.c
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range c.nodeList() {
				t.Logf("harness: shared %s cluster node %s id %s:\n%s", f, n.Addr, n.ID, n.Server.logTail(50))
			}
		}
	})
	return c
}

// StopSharedClusters stops the clusters SharedCluster started. Call it from
// TestMain after m.Run. A later SharedCluster starts a new cluster.
func StopSharedClusters() {
	sharedClusters.Lock()
	m := sharedClusters.m
	sharedClusters.m = make(map[Flavor]*sharedCluster)
	sharedClusters.Unlock()
	for _, sc := range m {
		<-sc.ready
		sc.tb.stop()
	}
}
