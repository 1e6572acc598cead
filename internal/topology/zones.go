package topology

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Availability zones, for ReadZoneReplica and ReadZone.
//
// A node's zone is the one the adopted view gives it (Valkey 9.1 reports
// availability-zone in CLUSTER SHARDS and CLUSTER SLOTS), else the one its
// newest connection's HELLO reported (Valkey 8.1+, availability_zone). A
// node whose zone is known neither way counts as another zone than the
// client's. So that HELLO can tell before the first read, a client with a
// zone dials every node of a view whose zone the view does not give
// (probeZonesLocked), and Connect waits for those dials (ConnectZones).
//
// The order of a read, among the nodes not suspected of failing:
//   - ReadZoneReplica: a replica in the zone, another replica, the primary;
//   - ReadZone: a replica in the zone, the primary if it is in the zone,
//     another replica, the primary.
//
// Writes never come here: they go to the primary whatever the mode.

// zoneProbeTimeout bounds the dial that learns a node's zone from HELLO.
const zoneProbeTimeout = 5 * time.Second

// zoned reports whether rf routes by availability zone.
func (rf ReadFrom) zoned() bool { return rf == ReadZoneReplica || rf == ReadZone }

// Zone returns n's availability zone: the view's, else its HELLO's, else
// "".
func (n *Node) Zone() string {
	if z := n.viewZone.Load(); z != nil && *z != "" {
		return *z
	}
	if info := n.Mux.ServerInfo(); info != nil {
		return info.Zone
	}
	return ""
}

// withZone records the zone the view gives n and returns n.
func (n *Node) withZone(zone string) *Node {
	if old := n.viewZone.Load(); old == nil || *old != zone {
		n.viewZone.Store(&zone)
	}
	return n
}

// inZone picks the node of sh for a read in mode rf (zoned).
func (c *Cluster) inZone(sh *shard, rf ReadFrom) *Node {
	zone := c.opts.Zone
	local := func(n *Node) bool { return zone != "" && n.Zone() == zone && !n.suspected() }
	if n := pickOne(sh.replicas, local); n != nil {
		return n
	}
	if rf == ReadZone && local(sh.primary) {
		return sh.primary
	}
	if n := pickOne(sh.replicas, func(n *Node) bool { return !n.suspected() }); n != nil {
		return n
	}
	return sh.primary
}

// pickOne returns one of the nodes that ok accepts, at random; nil when
// none does. It allocates nothing: reads call it.
func pickOne(nodes []*Node, ok func(*Node) bool) *Node {
	count := 0
	for _, n := range nodes {
		if ok(n) {
			count++
		}
	}
	if count == 0 {
		return nil
	}
	k := rand.IntN(count)
	for _, n := range nodes {
		if ok(n) {
			if k == 0 {
				return n
			}
			k--
		}
	}
	return nil
}

// zoneUnknown lists the nodes of r whose zone the view does not give and
// whose connections never reported one, that no probe was sent to yet
// when claim is set (which marks them probed).
func zoneUnknown(r *routes, claim bool) []*Node {
	var out []*Node
	for _, sh := range r.shards {
		for _, n := range append([]*Node{sh.primary}, sh.replicas...) {
			if z := n.viewZone.Load(); z != nil && *z != "" || n.Mux.ServerInfo() != nil {
				continue
			}
			if claim && n.probed.Swap(true) {
				continue
			}
			out = append(out, n)
		}
	}
	return out
}

// probeZonesLocked dials, in the background, the nodes of r whose zone
// only their HELLO can tell, when the client routes by zone. c.mu is
// held and c is not closed.
func (c *Cluster) probeZonesLocked(r *routes) {
	if c.opts.Zone == "" {
		return
	}
	for _, n := range zoneUnknown(r, true) {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			ctx, cancel := context.WithTimeout(c.ctx, zoneProbeTimeout)
			defer cancel()
			// An error leaves the zone unknown: the node counts as
			// another zone until a read or a later probe connects.
			_ = n.Mux.Connect(ctx)
		}()
	}
}

// ConnectZones connects, within ctx, the nodes of the current topology
// whose zone only their HELLO can tell, when the client routes by zone,
// so that the first reads after Connect know every reachable node's zone.
// A node that cannot be reached is left out, not an error: it counts as
// another zone.
func (c *Cluster) ConnectZones(ctx context.Context) {
	r := c.cur.Load()
	if c.opts.Zone == "" || r == nil {
		return
	}
	var wg sync.WaitGroup
	for _, n := range zoneUnknown(r, false) {
		wg.Go(func() { _ = n.Mux.Connect(ctx) })
	}
	wg.Wait()
}
