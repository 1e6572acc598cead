package respiretest

// What one cluster node says about the cluster (CLUSTER NODES, CLUSTER
// SLOTS, CLUSTER INFO), read with testserver.

import (
	"context"
	"fmt"

	"github.com/respire-go/respire/respiretest/testserver"
)

// nodeView is what one node reports about the cluster.
type nodeView struct {
	node *Node
	self testserver.NodeLine            // its own line of CLUSTER NODES
	byID map[string]testserver.NodeLine // CLUSTER NODES by node ID
	// The rest is filled in by a full view only.
	info  string             // CLUSTER INFO
	repl  string             // INFO replication
	slots testserver.SlotMap // CLUSTER SLOTS
}

// view asks n for CLUSTER NODES and, if full, CLUSTER INFO, INFO
// replication and CLUSTER SLOTS.
func (c *Cluster) view(ctx context.Context, n *Node, full bool) (*nodeView, error) {
	nodes, err := doString(ctx, n.Addr, "CLUSTER", "NODES")
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
		return nil, fmt.Errorf("CLUSTER NODES on %s has no line for itself", n.Addr)
	}
	if !full {
		return v, nil
	}
	if v.info, err = doString(ctx, n.Addr, "CLUSTER", "INFO"); err != nil {
		return nil, err
	}
	if v.repl, err = doString(ctx, n.Addr, "INFO", "replication"); err != nil {
		return nil, err
	}
	slots, err := n.do(ctx, "CLUSTER", "SLOTS")
	if err != nil {
		return nil, err
	}
	if v.slots, err = testserver.ParseClusterSlots(slots); err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS on %s: %w", n.Addr, err)
	}
	return v, nil
}
