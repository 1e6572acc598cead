package harness

// Resharding a running cluster: moving slots between masters, adding and
// removing nodes.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

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
			replies, err := fc.Pipeline(cmds)
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
			replies, err = fc.Pipeline(migrates)
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
		if n == from || n == to || !e.IsPrimary() {
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
	return c.waitOwner(ctx, to, slots)
}

// moveChunk is how many slots MoveSlots moves at a time.
const moveChunk = 128

// setSlots sends CLUSTER SETSLOT slot state id for every slot on rc, n's
// connection, pipelined. Once a master lost its last slot it refuses
// SETSLOT; that is not an error (see lostSlots).
func setSlots(rc *testserver.Conn, n *ClusterNode, slots []int, state, id string) error {
	cmds := make([][]string, len(slots))
	for i, slot := range slots {
		cmds[i] = []string{"CLUSTER", "SETSLOT", strconv.Itoa(slot), state, id}
	}
	replies, err := rc.Pipeline(cmds)
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
func openNode(ctx context.Context, n *ClusterNode) (*testserver.Conn, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Minute)
		defer cancel()
	}
	rc, err := testserver.Dial(ctx, "tcp", n.Addr, n.Server.TLSConfig)
	if err != nil {
		return nil, fmt.Errorf("harness: connecting to %s: %w", n.Addr, err)
	}
	if pw := n.Server.Config.Password; pw != "" {
		if _, err := rc.Do("AUTH", pw); err != nil {
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
	err = waitClusterOK(ctx, n.Server, "the new node "+n.Addr)
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
		pauseProcess(n.Server, false)
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

// waitClusterOK waits until the node s reports cluster_state:ok.
func waitClusterOK(ctx context.Context, s *Server, what string) error {
	return poll(ctx, what+" to report cluster_state:ok", func(ctx context.Context) error {
		info, err := s.Do(ctx, "CLUSTER", "INFO")
		if err != nil {
			return err
		}
		if st := testserver.InfoField(fmt.Sprint(info), "cluster_state"); st != "ok" {
			return fmt.Errorf("cluster_state:%s", st)
		}
		return nil
	})
}
