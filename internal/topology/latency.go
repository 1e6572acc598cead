package topology

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Latency measurement, for ReadNearest.
//
// While Options.Latency is set, every node is sent a PING each
// LatencyInterval on its own multiplexed connection (so the figure includes
// the queueing a command meets there) and its round trip is kept as a
// moving average. A node that fails the PING is given a large round trip,
// so reads move off it until it answers again.

// defaultLatencyInterval is how often nodes are pinged by default.
const defaultLatencyInterval = time.Second

// failedRTT is the round trip recorded for a node whose PING failed.
const failedRTT = time.Hour

// RTT returns n's measured round trip (a moving average), or 0 before the
// first measurement or when latency is not measured.
func (n *Node) RTT() time.Duration { return time.Duration(n.rtt.Load()) }

// observe folds one round trip into n's moving average (a quarter weight
// to the new sample; a failure replaces it).
func (n *Node) observe(d time.Duration) {
	old := n.rtt.Load()
	switch {
	case d >= failedRTT || old == 0 || old >= int64(failedRTT):
		n.rtt.Store(int64(d))
	default:
		n.rtt.Store(old + (int64(d)-old)/4)
	}
}

func (c *Cluster) latencyLoop() {
	t := time.NewTicker(c.opts.LatencyInterval)
	defer t.Stop()
	for {
		c.measure()
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// measure pings every node of the current view at once.
func (c *Cluster) measure() {
	r := c.cur.Load()
	if r == nil {
		return
	}
	var wg sync.WaitGroup
	for _, sh := range r.shards {
		for _, n := range append([]*Node{sh.primary}, sh.replicas...) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(c.ctx, c.opts.LatencyInterval)
				defer cancel()
				began := time.Now()
				v, err := roundTrip(ctx, n.Mux, "PING")
				switch {
				case c.ctx.Err() != nil:
				case err != nil || v.Str != "PONG":
					n.observe(failedRTT)
				default:
					n.observe(time.Since(began))
				}
			}()
		}
	}
	wg.Wait()
}

// nearest returns the node of sh with the lowest measured round trip,
// among those not suspected of failing (among all when every one is);
// before anything was measured, a random replica that is not suspected.
func nearest(sh *shard) *Node {
	nodes := append([]*Node{sh.primary}, sh.replicas...)
	for _, suspects := range []bool{false, true} {
		var best *Node
		var unmeasured []*Node
		for _, n := range nodes {
			if n.suspected() != suspects {
				continue
			}
			switch d := n.RTT(); {
			case d == 0:
				unmeasured = append(unmeasured, n)
			case best == nil || d < best.RTT():
				best = n
			}
		}
		switch {
		case best != nil:
			return best
		case len(unmeasured) > 1 && unmeasured[0] == sh.primary:
			return unmeasured[1+rand.IntN(len(unmeasured)-1)]
		case len(unmeasured) > 0:
			return unmeasured[rand.IntN(len(unmeasured))]
		}
	}
	return sh.primary
}
