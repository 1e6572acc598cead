package harness

// Faults on a running cluster: killing, stopping, pausing and restarting
// nodes, failovers, and waiting until every node agrees again.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

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
	_ = n.setPaused(false)
	n.paused = false
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
	if n.down {
		return nil
	}
	return n.setPaused(true)
}

// Resume continues a node paused by Pause with SIGCONT. Resuming a node
// that is not paused does nothing.
func (c *Cluster) Resume(n *ClusterNode) error {
	c.mustNotBeShared("Resume")
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.setPaused(false)
}

// setPaused pauses or resumes n's process unless it is so already; n.mu
// is held.
func (n *ClusterNode) setPaused(pause bool) error {
	if n.paused == pause {
		return nil
	}
	if err := pauseProcess(n.Server, pause); err != nil {
		verb := "resuming"
		if pause {
			verb = "pausing"
		}
		return fmt.Errorf("harness: %s %s: %w", verb, n.Addr, err)
	}
	n.paused = pause
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
	if err := n.setPaused(false); err != nil {
		return err
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
	before, _ := strconv.ParseInt(testserver.InfoField(fmt.Sprint(info), "cluster_current_epoch"), 10, 64)
	logStart := fileSize(replica.Server.LogPath)
	for {
		_, err := replica.Do(ctx, args...)
		if err == nil {
			break
		}
		// A replica refuses a plain failover while it flags its master as
		// failing, which a busy machine makes happen for a moment (pings
		// answered late): asked again, it accepts once the flag clears.
		// A master that is really down keeps it until ctx ends.
		if mode != "" || !strings.Contains(err.Error(), "Master is down or failed") {
			return fmt.Errorf("harness: %s on %s: %w", strings.Join(args, " "), replica.Addr, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("harness: %s on %s: %w", strings.Join(args, " "), replica.Addr, err)
		case <-time.After(50 * time.Millisecond):
		}
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
		if !v.Self.IsPrimary() {
			if mode != "TAKEOVER" && won {
				stale = fmt.Errorf("harness: %s on %s: it won an election and is a replica again: %s",
					strings.Join(args, " "), replica.Addr, hint)
				return nil
			}
			return fmt.Errorf("it reports flags %s", v.Self.FlagList)
		}
		// An election yields an epoch above every earlier one.
		if mode != "TAKEOVER" && v.Self.Epoch <= before {
			stale = fmt.Errorf("harness: %s on %s: it became a master with config epoch %d, not above the current epoch %d: %s",
				strings.Join(args, " "), replica.Addr, v.Self.Epoch, before, hint)
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
			e, ok := v.Nodes[n.ID]
			if !ok {
				return fmt.Errorf("%s does not know it", o.Addr)
			}
			if !e.Flags["fail"] {
				return fmt.Errorf("%s reports flags %s", o.Addr, e.FlagList)
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
func (c *Cluster) waitStable(ctx context.Context, what string, extra func([]*testserver.ClusterView) error) error {
	return poll(ctx, what, func(ctx context.Context) error {
		up := c.upNodes()
		if len(up) == 0 {
			return errors.New("no node is up")
		}
		views := make([]*testserver.ClusterView, len(up))
		for i, n := range up {
			v, err := c.view(ctx, n, true)
			if err != nil {
				return err
			}
			if st := testserver.InfoField(v.Info, "cluster_state"); st != "ok" {
				return fmt.Errorf("%s reports cluster_state:%s", n.Addr, st)
			}
			if v.Self.IsReplica() && testserver.InfoField(v.Replication, "master_link_status") != "up" {
				return fmt.Errorf("replica %s reports master_link_status:%s", n.Addr, testserver.InfoField(v.Replication, "master_link_status"))
			}
			views[i] = v
		}
		first := views[0]
		epochs := make(map[int64]string)
		for _, v := range views {
			if v.Slots.Canonical != first.Slots.Canonical {
				return fmt.Errorf("%s and %s disagree on the slot map:\n  %s\n  %s",
					first.Addr, v.Addr, first.Slots.Canonical, v.Slots.Canonical)
			}
			// A failover or a takeover bumps epochs, which gossip spreads;
			// a failover started before they agree may collide with it.
			if a, b := testserver.InfoField(first.Info, "cluster_current_epoch"), testserver.InfoField(v.Info, "cluster_current_epoch"); a != b {
				return fmt.Errorf("%s reports cluster_current_epoch:%s, %s reports %s", first.Addr, a, v.Addr, b)
			}
			if v.Self.IsPrimary() {
				if o, ok := epochs[v.Self.Epoch]; ok {
					return fmt.Errorf("masters %s and %s share config epoch %d", o, v.Addr, v.Self.Epoch)
				}
				epochs[v.Self.Epoch] = v.Addr
			}
			for _, n := range up {
				e, ok := v.Nodes[n.ID]
				if !ok {
					return fmt.Errorf("%s does not know %s", v.Addr, n.Addr)
				}
				if e.Flags["fail"] || e.Flags["fail?"] || e.Flags["handshake"] || e.Flags["noaddr"] {
					return fmt.Errorf("%s reports %s with flags %s", v.Addr, n.Addr, e.FlagList)
				}
				own := views[slices.Index(up, n)].Self
				if e.IsPrimary() != own.IsPrimary() || e.Primary != own.Primary {
					return fmt.Errorf("%s reports %s as %s of %q, which reports itself %s of %q",
						v.Addr, n.Addr, e.FlagList, e.Primary, own.FlagList, own.Primary)
				}
				if e.Epoch != own.Epoch {
					return fmt.Errorf("%s reports config epoch %d for %s, which reports %d", v.Addr, e.Epoch, n.Addr, own.Epoch)
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
				e, ok := v.Nodes[o.ID]
				if !ok {
					return fmt.Errorf("%s does not know %s", n.Addr, o.Addr)
				}
				if e.Flags["handshake"] || e.Flags["noaddr"] {
					return fmt.Errorf("%s reports %s with flags %s", n.Addr, o.Addr, e.FlagList)
				}
			}
			for _, o := range gone {
				if _, ok := v.Nodes[o.ID]; ok {
					return fmt.Errorf("%s still knows %s", n.Addr, o.Addr)
				}
			}
		}
		return nil
	})
}

// pauseProcess pauses (SIGSTOP) or resumes (SIGCONT) the server's process.
func pauseProcess(s *Server, pause bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.run.(*procRunner)
	if !ok {
		return errors.New("the server is not a local process")
	}
	return p.pause(pause)
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
