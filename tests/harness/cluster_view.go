package harness

// What the nodes say about the cluster: polling, and each node's view of
// it (CLUSTER NODES, CLUSTER SLOTS), read with testserver.

import (
	"context"
	"fmt"
	"strings"

	"github.com/respire-go/respire/respiretest/testserver"
)

// poll is testserver.Poll, its error prefixed with the package's name.
// Without a deadline in ctx it gives up after 30s (clusterWait).
func poll(ctx context.Context, what string, check func(context.Context) error) error {
	if err := testserver.Poll(ctx, what, check); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	return nil
}

// nodeView is what one node reports about the cluster.
type nodeView struct {
	node *ClusterNode
	self testserver.NodeLine            // the node's own line of CLUSTER NODES
	byID map[string]testserver.NodeLine // CLUSTER NODES by node ID
	info string                         // CLUSTER INFO, when asked for
	repl string                         // INFO replication, when asked for
	// slots is CLUSTER SLOTS, when asked for.
	slots testserver.SlotMap
}

// view asks n for CLUSTER NODES and, if full, CLUSTER INFO, CLUSTER SLOTS
// and INFO replication, on one connection.
func (c *Cluster) view(ctx context.Context, n *ClusterNode, full bool) (*nodeView, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	conn, err := testserver.Dial(ctx, "tcp", n.Addr, nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ask := func(args ...string) (string, any, error) {
		reply, err := conn.Do(args...)
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
	v := &nodeView{node: n, byID: make(map[string]testserver.NodeLine)}
	for _, e := range testserver.ParseClusterNodes(nodes) {
		v.byID[e.ID] = e
		if e.Flags["myself"] {
			v.self = e
		}
	}
	if v.self.ID == "" {
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
	if v.slots, err = testserver.ParseClusterSlots(slots); err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS on %s: %w", n.Addr, err)
	}
	return v, nil
}

// SlotOf returns the hash slot of key (see testserver.KeySlot).
func SlotOf(key string) int { return testserver.KeySlot(key) }
