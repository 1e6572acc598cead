package respire

import (
	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
)

// Sharded pub/sub on a cluster is topology.ShardedPubSub
// (internal/topology/sharded.go): each sharded channel is subscribed on
// the primary that owns its slot and follows the slot when it moves.

// initClusterPubSub wires the client's hubs to the topology: a broken
// pub/sub connection asks for a topology refresh, as a broken command
// connection does. cfg is the client's connection config, its tracer's
// and interceptors' hooks included.
func (c *Client) initClusterPubSub(cfg transport.Config) {
	c.shards = topology.NewShardedPubSub(c.cl, cfg)
	c.hub.SetHooks(transport.PubSubHooks{Lost: func(error) { c.cl.Urgent() }})
}

// closeShards closes the per-node hubs and stops the re-homing.
func (c *Client) closeShards() {
	if c.shards != nil {
		c.shards.Close()
	}
}
