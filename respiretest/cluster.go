package respiretest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/respiretest/testserver"
)

// ErrInvalidOptions is wrapped by the error of NewCluster or NewSentinel
// for options that make no sense (a negative count or duration).
var ErrInvalidOptions = errors.New("respiretest: invalid options")

// ClusterOptions configure a cluster started by StartCluster or
// NewCluster. The zero value (or a nil *ClusterOptions) is three
// primaries without replicas, on a binary found as for Start.
type ClusterOptions struct {
	// Server is the path of the redis-server or valkey-server binary of
	// every node, found as Options.Server is; "" uses $RESPIRETEST_SERVER,
	// then redis-server or valkey-server on PATH. A cluster never runs in
	// Docker. Redis 7.0 or later, or Valkey.
	Server string
	// Args are extra arguments of every node, as on its command line.
	Args []string
	// Masters is the number of primaries, which share the 16384 slots in
	// equal ranges. Default 3.
	Masters int
	// ReplicasPerMaster is the number of replicas of each primary; 0 means
	// none (a failover needs at least one).
	ReplicasPerMaster int
	// NodeTimeout is the nodes' cluster-node-timeout: how long a node may
	// not answer before the others flag it failed and one of its replicas
	// takes over. Default 2s; a failover takes about a second or two more.
	NodeTimeout time.Duration
	// StartTimeout bounds the start of the cluster, until it is ready.
	// Default 30s.
	StartTimeout time.Duration
	// SkipIfUnavailable makes StartCluster skip the test, rather than fail
	// it, when no server binary can be found.
	SkipIfUnavailable bool
	// Client are the options of the client StartCluster returns; its
	// Cluster.Addrs are set to the nodes (and Cluster to a new
	// ClusterOptions when nil).
	Client respire.Options
}

// withDefaults checks o and fills in its zero fields.
func (o ClusterOptions) withDefaults() (ClusterOptions, error) {
	switch {
	case o.Masters < 0:
		return o, fmt.Errorf("%w: ClusterOptions.Masters is %d", ErrInvalidOptions, o.Masters)
	case o.ReplicasPerMaster < 0:
		return o, fmt.Errorf("%w: ClusterOptions.ReplicasPerMaster is %d", ErrInvalidOptions, o.ReplicasPerMaster)
	case o.NodeTimeout < 0:
		return o, fmt.Errorf("%w: ClusterOptions.NodeTimeout is %v", ErrInvalidOptions, o.NodeTimeout)
	case o.StartTimeout < 0:
		return o, fmt.Errorf("%w: ClusterOptions.StartTimeout is %v", ErrInvalidOptions, o.StartTimeout)
	case o.Masters > testserver.SlotCount:
		return o, fmt.Errorf("%w: ClusterOptions.Masters is %d, more than the %d slots", ErrInvalidOptions, o.Masters, testserver.SlotCount)
	}
	if o.Masters == 0 {
		o.Masters = 3
	}
	o.NodeTimeout = orDefault(o.NodeTimeout, 2*time.Second)
	o.StartTimeout = orDefault(o.StartTimeout, 30*time.Second)
	return o, nil
}

// Cluster is a Redis Cluster (or Valkey cluster) of local server
// processes, started by StartCluster or NewCluster. Its nodes listen on
// free ports of 127.0.0.1, keep nothing on disk but nodes.conf, and are
// killed, their directories removed, by Close. Its methods are safe for
// concurrent use.
type Cluster struct {
	// Binary is the path of the nodes' server binary.
	Binary string

	opts  ClusterOptions
	nodes []*Node // primaries first, then replicas in their primaries' order
}

// StartCluster starts a cluster for the test and returns a client
// connected to it (opts.Client, with Cluster.Addrs set) and the cluster,
// ready: every node reports cluster_state:ok and the same slot map, and
// every replica is linked to its primary. A three-primary cluster with a
// replica each takes about two seconds. The client is closed, every node
// killed and its directory removed when the test ends (t.Cleanup), after
// the end of each node's log is written to the test log if it failed.
// When no server binary can be found, or the cluster does not start, the
// test fails with a message saying why, or is skipped with
// SkipIfUnavailable. opts may be nil.
func StartCluster(t testing.TB, opts *ClusterOptions) (*respire.Client, *Cluster) {
	t.Helper()
	opts = cmp.Or(opts, &ClusterOptions{})
	c := startFor(t, opts.SkipIfUnavailable, "the cluster", func() (*Cluster, error) {
		return NewCluster(context.Background(), opts)
	}, func(c *Cluster) { logNodes(t, "cluster node", c.nodes) })
	return c.Connect(t, opts.Client), c
}

// NewCluster starts a cluster without a test: for TestMain, to share one
// cluster among the tests of a package, or for programs. The caller must
// Close it. ctx bounds the start only. The error wraps ErrNoServer when
// no server binary was found, ErrInvalidOptions for bad options.
func NewCluster(ctx context.Context, opts *ClusterOptions) (*Cluster, error) {
	o, err := cmp.Or(opts, &ClusterOptions{}).withDefaults()
	if err != nil {
		return nil, err
	}
	bin, err := localBinary(o.Server, "ClusterOptions.Server", "a cluster")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	total := o.Masters * (1 + o.ReplicasPerMaster)
	buses := make([]int, total)
	nodes, err := startNodes(ctx, bin, total, o.StartTimeout, func(i, port int, dir string) ([]string, error) {
		bus, err := testserver.FreePort()
		for err == nil && bus == port {
			bus, err = testserver.FreePort()
		}
		if err != nil {
			return nil, fmt.Errorf("finding a free port for the cluster bus: %w", err)
		}
		buses[i] = bus
		args := append(serverArgs(port, dir),
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(bus),
			"--cluster-node-timeout", strconv.FormatInt(max(o.NodeTimeout.Milliseconds(), 1), 10),
			// A replica may always take over, however long ago it last
			// heard from its primary: tests stop nodes on purpose.
			"--cluster-replica-validity-factor", "0",
			// A full sync starts at once, not after 5s of waiting for
			// more replicas.
			"--repl-diskless-sync-delay", "0",
			// CLUSTER SLOTS lists a replica once its replication offset
			// moves, which on an idle primary its pings do: every 10s by
			// default.
			"--repl-ping-replica-period", "1",
		)
		return append(args, o.Args...), nil
	})
	if err != nil {
		return nil, fmt.Errorf("respiretest: starting the cluster's nodes: %w", err)
	}
	c := &Cluster{Binary: bin, opts: o, nodes: nodes}
	if err := c.create(ctx, buses); err != nil {
		closeNodes(nodes)
		return nil, fmt.Errorf("respiretest: creating the cluster: %w", err)
	}
	return c, nil
}

// create assigns the slots, introduces the nodes to each other, attaches
// the replicas and waits until the cluster is ready.
func (c *Cluster) create(ctx context.Context, buses []int) error {
	o := c.opts
	for _, n := range c.nodes {
		id, err := doString(ctx, n.Addr, "CLUSTER", "MYID")
		if err != nil {
			return err
		}
		n.ID = id
	}
	primaries, replicas := c.nodes[:o.Masters], c.nodes[o.Masters:]
	for i, p := range primaries {
		// Distinct epochs spare the nodes resolving the collision of
		// all starting at epoch 0.
		if _, err := p.do(ctx, "CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1)); err != nil {
			return err
		}
		lo, hi := i*testserver.SlotCount/o.Masters, (i+1)*testserver.SlotCount/o.Masters-1
		if _, err := p.do(ctx, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return err
		}
	}
	// Every pair meets directly: faster than gossip spreading the news.
	for i, a := range c.nodes {
		for j := i + 1; j < len(c.nodes); j++ {
			b := c.nodes[j]
			if _, err := a.do(ctx, "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(b.port()), strconv.Itoa(buses[j])); err != nil {
				return err
			}
		}
	}
	err := poll(ctx, "the nodes to know each other", func(ctx context.Context) error {
		for _, n := range c.nodes {
			v, err := c.view(ctx, n, false)
			if err != nil {
				return err
			}
			for _, o := range c.nodes {
				e, ok := v.Nodes[o.ID]
				if !ok {
					return fmt.Errorf("%s does not know %s", n.Addr, o.Addr)
				}
				if e.Flags["handshake"] || e.Flags["noaddr"] {
					return fmt.Errorf("%s reports %s as %s", n.Addr, o.Addr, e.FlagList)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, r := range replicas {
		p := primaries[i/o.ReplicasPerMaster]
		if _, err := r.do(ctx, "CLUSTER", "REPLICATE", p.ID); err != nil {
			return err
		}
	}
	return poll(ctx, "the new cluster to be ready", func(ctx context.Context) error {
		views, err := c.agreed(ctx, c.nodes)
		if err != nil {
			return err
		}
		for _, p := range primaries {
			if got := len(views[0].Slots.Shards[p.ID]); got != o.ReplicasPerMaster {
				return fmt.Errorf("%s lists %d replicas of %s, not %d", views[0].Addr, got, p.Addr, o.ReplicasPerMaster)
			}
		}
		return nil
	})
}

// Addrs returns the addresses of all nodes, killed ones included: the
// seeds of a cluster client.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.Addr
	}
	return out
}

// Nodes returns the cluster's nodes in the order they were created: the
// primaries first, then the replicas in their primaries' order. Roles
// change with failovers: PrimaryOf and ReplicasOf ask the nodes.
func (c *Cluster) Nodes() []*Node { return slices.Clone(c.nodes) }

// Connect returns another client of the cluster, with the given options
// (their Cluster.Addrs are the nodes), closed when the test ends. opts.Addr
// must be empty.
func (c *Cluster) Connect(t testing.TB, opts respire.Options) *respire.Client {
	t.Helper()
	co := respire.ClusterOptions{}
	if opts.Cluster != nil {
		co = *opts.Cluster
	}
	co.Addrs = c.Addrs()
	opts.Cluster = &co
	return connect(t, opts, "the cluster")
}

// connect opens a client for Connect and closes it when t ends.
func connect(t testing.TB, opts respire.Options, what string) *respire.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := respire.Connect(ctx, opts)
	if err != nil {
		t.Fatalf("respiretest: connecting to %s: %v", what, err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// PrimaryOf returns the primary that serves key's slot now, as the first
// node that answers (neither killed nor stopped) sees it: of the nodes
// that claim the slot as primaries and are not flagged failed, the one
// with the highest config epoch. Keys that share a {hash tag} share a
// slot.
func (c *Cluster) PrimaryOf(ctx context.Context, key string) (*Node, error) {
	slot := testserver.KeySlot(key)
	v, err := c.anyView(ctx)
	if err != nil {
		return nil, err
	}
	var best *testserver.NodeLine
	for _, e := range v.Nodes {
		if e.IsPrimary() && !e.Flags["fail"] && e.Owns(slot) && (best == nil || e.Epoch > best.Epoch) {
			best = &e
		}
	}
	if best == nil {
		return nil, fmt.Errorf("respiretest: %s sees no primary of slot %d (key %q)", v.Addr, slot, key)
	}
	if n := c.byID(best.ID); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("respiretest: slot %d is served by %s, not a node of this cluster", slot, best.Addr)
}

// ReplicasOf returns the nodes that replicate primary now, as the first
// node that answers sees it, killed and stopped ones included.
func (c *Cluster) ReplicasOf(ctx context.Context, primary *Node) ([]*Node, error) {
	if primary == nil || c.byID(primary.ID) != primary {
		return nil, fmt.Errorf("respiretest: ReplicasOf(%v): not a node of this cluster", primary)
	}
	v, err := c.anyView(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Node
	for _, n := range c.nodes {
		if e, ok := v.Nodes[n.ID]; ok && e.Primary == primary.ID {
			out = append(out, n)
		}
	}
	return out, nil
}

// WaitFailover waits until old, a primary that was killed or stopped (or
// that a CLUSTER FAILOVER demoted), serves no slot any more: one of its
// replicas was promoted, every node that is up (neither killed nor
// stopped) reports cluster_state:ok and the same slot map, and none of
// them sees old owning a slot. It fails at once when old has no replica
// to promote. Without a deadline in ctx it waits at most 30s. A client
// of the cluster may still need a command or two to learn the new map: a
// write to old fails and makes it refresh.
func (c *Cluster) WaitFailover(ctx context.Context, old *Node) error {
	if old == nil || c.byID(old.ID) != old {
		return fmt.Errorf("respiretest: WaitFailover(%v): not a node of this cluster", old)
	}
	return poll(ctx, "a failover of "+old.Addr, func(ctx context.Context) error {
		var up []*Node
		for _, n := range c.nodes {
			if n.up() {
				up = append(up, n)
			}
		}
		if len(up) == 0 {
			return testserver.Permanent(errors.New("every node is killed or stopped"))
		}
		v, err := c.anyView(ctx)
		if err != nil {
			return err
		}
		if e, ok := v.Nodes[old.ID]; ok && len(e.Slots) > 0 && e.IsPrimary() {
			replicated := false
			for _, o := range v.Nodes {
				replicated = replicated || o.Primary == old.ID
			}
			if !replicated {
				return testserver.Permanent(fmt.Errorf("%s has no replica to promote", old.Addr))
			}
		}
		views, err := c.agreed(ctx, up)
		if err != nil {
			return err
		}
		for _, v := range views {
			if e, ok := v.Nodes[old.ID]; ok && len(e.Slots) > 0 && e.IsPrimary() {
				return fmt.Errorf("%s still sees %s serving slots", v.Addr, old.Addr)
			}
		}
		return nil
	})
}

// Close kills every node and removes its directory. It is safe to call
// more than once.
func (c *Cluster) Close() error { return closeNodes(c.nodes) }

// byID returns the node with the given cluster ID, or nil.
func (c *Cluster) byID(id string) *Node {
	for _, n := range c.nodes {
		if n.ID == id && id != "" {
			return n
		}
	}
	return nil
}

// anyView returns the view of the first node that is up and answers.
func (c *Cluster) anyView(ctx context.Context) (*testserver.ClusterView, error) {
	last := errors.New("every node is killed or stopped")
	for _, n := range c.nodes {
		if !n.up() {
			continue
		}
		v, err := c.view(ctx, n, false)
		if err == nil {
			return v, nil
		}
		last = err
	}
	return nil, fmt.Errorf("respiretest: asking the cluster: %w", last)
}

// agreed checks that every node of up reports cluster_state:ok and the
// same complete slot map, and that each replica among them has its link
// to its primary up, and returns their views.
func (c *Cluster) agreed(ctx context.Context, up []*Node) ([]*testserver.ClusterView, error) {
	if len(up) == 0 {
		return nil, errors.New("every node is killed or stopped")
	}
	views := make([]*testserver.ClusterView, len(up))
	for i, n := range up {
		v, err := c.view(ctx, n, true)
		if err != nil {
			return nil, err
		}
		if st := testserver.InfoField(v.Info, "cluster_state"); st != "ok" {
			return nil, fmt.Errorf("%s reports cluster_state:%s", n.Addr, st)
		}
		if v.Self.IsReplica() {
			if st := testserver.InfoField(v.Replication, "master_link_status"); st != "up" {
				return nil, fmt.Errorf("replica %s reports master_link_status:%s", n.Addr, st)
			}
		}
		if v.Slots.Covered() != testserver.SlotCount {
			return nil, fmt.Errorf("%s reports %d of %d slots served", n.Addr, v.Slots.Covered(), testserver.SlotCount)
		}
		if i > 0 && v.Slots.Canonical != views[0].Slots.Canonical {
			return nil, fmt.Errorf("%s and %s disagree on the slot map:\n  %s\n  %s", views[0].Addr, n.Addr, views[0].Slots.Canonical, v.Slots.Canonical)
		}
		views[i] = v
	}
	return views, nil
}

// logNodes writes the end of each node's log to the test log.
func logNodes(t testing.TB, what string, nodes []*Node) {
	for _, n := range nodes {
		t.Logf("respiretest: %s %s %s, log:\n%s", what, n.Addr, n.ID, n.logTail())
	}
}

// view asks n for CLUSTER NODES and, if full, CLUSTER INFO, INFO
// replication and CLUSTER SLOTS (testserver.AskCluster), within
// requestTimeout.
func (c *Cluster) view(ctx context.Context, n *Node, full bool) (*testserver.ClusterView, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return testserver.AskCluster(ctx, n.Addr, full)
}
