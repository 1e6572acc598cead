package topology

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Following the promotion itself. A failover's leader sends the replica it
// chose REPLICAOF NO ONE and announces +failover-state-wait-promotion; the
// replica runs as master from that moment, but the leader sees it only in
// its next INFO of the replica, up to a second later, and only then
// announces +promoted-slave. Writes held back by the fence would wait that
// second for nothing: the watcher asks the replica for its ROLE from the
// announcement on, and switches to it as soon as it answers master.
//
// That is safe because of what ROLE master means there: the replica no
// longer replicates from the old master, so whatever the old master
// acknowledges from then on is lost (other clients' writes), and the
// client's writes, held since the fence went up, go only to the new one.
// The switch stays provisional until the sentinels name the node (an
// event or a poll with a newer configuration epoch). Should the leader
// abort the failover instead (-failover-abort-*, or a poll in which it
// names the old master in good health again), the client goes back to
// the old master, as the sentinels will make the promoted node a replica
// again.

// provisional is an early switch the sentinels have not confirmed yet.
type provisional struct {
	old, addr string // the master before, and the promoted node
	by        string // the sentinel that announced the promotion
	epoch     int64  // the configuration epoch before
}

// promoteProbeEvery is how often the promoted replica is asked for its
// ROLE, and promoteProbeFor how long at most. promoteConfirm is how long
// an early switch waits for the sentinels' word (the leader sees the
// promotion within a second, in its next INFO) before writes are held
// back again: a leader that stopped meanwhile confirms nothing, and the
// other sentinels, which know nothing of its failover, would in time make
// the promoted node a replica again.
const (
	promoteProbeEvery = 10 * time.Millisecond
	promoteProbeFor   = 10 * time.Second
	promoteConfirm    = 3 * time.Second
)

// unconfirmed is the fence's event while an early switch waits too long
// for the sentinels' word.
const unconfirmed = "unconfirmed"

// probe starts asking addr, the replica that by (a failover's leader)
// announced it sent REPLICAOF NO ONE, for its ROLE.
func (s *Sentinel) probe(addr, by string) {
	if s.opts.Data == nil || !s.opts.EarlySwitch {
		return
	}
	s.mu.Lock()
	if s.closed || s.probing != "" {
		s.mu.Unlock()
		return
	}
	s.probing = addr
	old := s.Master()
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		p := s.runProbe(addr, old, by)
		s.mu.Lock()
		s.probing = ""
		s.mu.Unlock()
		if p != nil {
			s.awaitConfirm(p)
		}
	}()
}

// runProbe asks addr for its ROLE until it answers master (then switches to
// it, and returns the switch), the master in use is no longer old, the
// fence is lifted, the watcher stops or promoteProbeFor passed. The
// leader's REPLICAOF NO ONE also closes the replica's client connections
// (CLIENT KILL TYPE normal), the probe's among them: it dials again.
func (s *Sentinel) runProbe(addr, old, by string) *provisional {
	cfg := *s.opts.Data
	cfg.Addr, cfg.Resolve, cfg.Role, cfg.NodeID = addr, nil, "", ""
	cfg.Tracking, cfg.OnPush, cfg.ReadOnly = nil, nil, false
	var d *transport.Dedicated
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	role := resp.AppendCommand(nil, "ROLE")
	until := time.Now().Add(promoteProbeFor)
	for s.ctx.Err() == nil && s.Master() == old && s.fenced.Load() && time.Now().Before(until) {
		ctx, cancel := context.WithTimeout(s.ctx, s.queryTimeout())
		var err error
		if d == nil {
			d, err = transport.DialDedicated(ctx, cfg)
		}
		got := ""
		if err == nil {
			err = d.DoN(ctx, role, 1, func(_ int, m resp.Msg) {
				if v := m.Tree(); len(v.Elems) > 0 {
					got = v.Elems[0].Str
				}
			})
			if err != nil || d.Broken() {
				d.Close()
				d = nil
			}
		}
		cancel()
		if got == "master" {
			p := &provisional{old: old, addr: addr, by: by}
			s.switchMaster(addr, "promoted (ROLE master)", p)
			return p
		}
		if !s.pause(promoteProbeEvery) {
			break
		}
	}
	return nil
}

// awaitConfirm holds writes back again when the sentinels did not confirm
// the early switch p within promoteConfirm; their word lifts the fence
// (confirmed).
func (s *Sentinel) awaitConfirm(p *provisional) {
	if !s.pause(promoteConfirm) {
		return
	}
	s.mu.Lock()
	still := s.prov == p
	s.mu.Unlock()
	if still {
		s.fence(true, p.by, unconfirmed)
	}
}

// confirmed lifts the fence that awaitConfirm raised, once the sentinels
// named the node promoted early.
func (s *Sentinel) confirmed() {
	s.mu.Lock()
	lift := s.fenced.Load() && s.fencedOn == unconfirmed
	s.mu.Unlock()
	if lift {
		s.setFence(false, "")
	}
}

// checkProvisional goes back to the old master when the sentinel that
// announced the promotion answered a poll (res, in the order of addrs)
// naming the old master in good health at the configuration epoch in use:
// it aborted the failover.
func (s *Sentinel) checkProvisional(p *provisional, addrs []string, res []pollResult) {
	i := slices.Index(addrs, p.by)
	if i < 0 || res[i].err != nil || !res[i].healthy || !s.sameNode(res[i].master, p.old) {
		return
	}
	if res[i].epoch <= p.epoch {
		s.revert(p.old, p.by, "the failover's leader names the old master again")
	}
}

// revert goes back from an early switch to old, the master before it,
// when by, the sentinel that announced the promotion, aborted the
// failover.
func (s *Sentinel) revert(old, by, why string) {
	s.mu.Lock()
	p := s.prov
	s.mu.Unlock()
	if p == nil || p.by != by || !s.sameNode(p.old, old) {
		return
	}
	s.mu.Lock()
	if s.prov != p || s.Master() != p.addr {
		s.mu.Unlock()
		return
	}
	s.prov = nil
	s.epoch = p.epoch
	s.mu.Unlock()
	s.setMaster(p.old, why)
}

// dropReplica removes addr, promoted, from the replicas.
func (s *Sentinel) dropReplica(addr string) {
	var keep []string
	for _, a := range s.Replicas() {
		if !s.sameNode(a, addr) {
			keep = append(keep, a)
		}
	}
	s.storeReplicas(keep)
}

// FenceCause says why writes are held back: the master's failure or
// failover as the sentinels announced it, or a switch to a new master
// under way; nil when they are not.
func (s *Sentinel) FenceCause() error {
	if !s.fenced.Load() {
		return nil
	}
	s.mu.Lock()
	by, on, at, probing, master := s.fencedBy, s.fencedOn, s.fencedAt, s.probing, s.fencedMaster
	s.mu.Unlock()
	if on == unconfirmed || master == "" {
		// The promoted master the sentinels have not confirmed yet.
		master = s.Master()
	}
	ago := time.Since(at).Round(time.Millisecond)
	var msg string
	switch on {
	case "":
		msg = fmt.Sprintf("master %s is being replaced", master)
	case "+sdown", "+odown":
		msg = fmt.Sprintf("master %s is down (%s from sentinel %s %v ago)", master, on, by, ago)
	case unconfirmed:
		msg = fmt.Sprintf("master %s, promoted by the failover sentinel %s announced, is not confirmed by the sentinels yet (%v)", master, by, ago)
	default:
		msg = fmt.Sprintf("master %s is being failed over (%s from sentinel %s %v ago)", master, on, by, ago)
	}
	if probing != "" {
		msg += fmt.Sprintf("; replica %s is being promoted", probing)
	} else if on != "" && on != unconfirmed {
		msg += "; no replica promoted yet"
	}
	return errors.New(msg)
}
