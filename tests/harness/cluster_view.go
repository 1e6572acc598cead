package harness

// What the nodes say about the cluster: polling, and each node's view of
// it (CLUSTER NODES, CLUSTER SLOTS), read with testserver.

import (
	"context"
	"fmt"

	"github.com/respire-go/respire/respiretest/testserver"
)

// poll is testserver.Poll, its error prefixed with the package's name.
// Without a deadline in ctx it gives up after 60s (clusterWait).
func poll(ctx context.Context, what string, check func(context.Context) error) error {
	if err := testserver.Poll(ctx, what, check); err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	return nil
}

// view asks n for CLUSTER NODES and, if full, CLUSTER INFO, INFO
// replication and CLUSTER SLOTS (testserver.AskCluster), within
// requestTimeout.
func (c *Cluster) view(ctx context.Context, n *ClusterNode, full bool) (*testserver.ClusterView, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return testserver.AskCluster(ctx, n.Addr, full)
}

// SlotOf returns the hash slot of key (see testserver.KeySlot).
func SlotOf(key string) int { return testserver.KeySlot(key) }
