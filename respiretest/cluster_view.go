package respiretest

// What one cluster node says about the cluster (CLUSTER NODES, CLUSTER
// SLOTS, CLUSTER INFO), and the slot of a key.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// nodeView is what one node reports about the cluster.
type nodeView struct {
	node *Node
	self nodeLine            // its own line of CLUSTER NODES
	byID map[string]nodeLine // CLUSTER NODES by node ID
	// The rest is filled in by a full view only.
	info    string              // CLUSTER INFO
	repl    string              // INFO replication
	slots   string              // CLUSTER SLOTS in a canonical form, for comparison
	shards  map[string][]string // each primary in CLUSTER SLOTS to its replicas' IDs
	covered int                 // the slots CLUSTER SLOTS assigns
}

// view asks n for CLUSTER NODES and, if full, CLUSTER INFO, INFO
// replication and CLUSTER SLOTS.
func (c *Cluster) view(ctx context.Context, n *Node, full bool) (*nodeView, error) {
	nodes, err := doString(ctx, n.Addr, "CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	v := &nodeView{node: n, byID: make(map[string]nodeLine)}
	for _, e := range parseClusterNodes(nodes) {
		v.byID[e.id] = e
		if e.flags["myself"] {
			v.self = e
		}
	}
	if v.self.id == "" {
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
	if err := v.parseSlots(slots); err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS on %s: %w", n.Addr, err)
	}
	return v, nil
}

// parseSlots reads a CLUSTER SLOTS reply: ranges of [start, end,
// primary, replicas...], each node as [ip, port, id, ...].
func (v *nodeView) parseSlots(reply any) error {
	entries, ok := reply.([]any)
	if !ok {
		return fmt.Errorf("a reply of type %T", reply)
	}
	type shardRange struct {
		lo, hi int64
		ids    []string
	}
	var rs []shardRange
	for _, e := range entries {
		f, ok := e.([]any)
		if !ok || len(f) < 3 {
			return fmt.Errorf("unexpected entry %v", e)
		}
		lo, ok1 := f[0].(int64)
		hi, ok2 := f[1].(int64)
		if !ok1 || !ok2 {
			return fmt.Errorf("unexpected range %v", e)
		}
		r := shardRange{lo: lo, hi: hi}
		for _, nd := range f[2:] {
			nf, ok := nd.([]any)
			if !ok || len(nf) < 3 {
				return fmt.Errorf("unexpected node %v", nd)
			}
			id, _ := nf[2].(string)
			r.ids = append(r.ids, id)
		}
		slices.Sort(r.ids[1:])
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b shardRange) int { return int(a.lo - b.lo) })
	v.shards = make(map[string][]string)
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%d-%d:%s ", r.lo, r.hi, strings.Join(r.ids, ","))
		v.shards[r.ids[0]] = r.ids[1:]
		v.covered += int(r.hi - r.lo + 1)
	}
	v.slots = strings.TrimSpace(b.String())
	return nil
}

// nodeLine is one line of CLUSTER NODES:
//
//	<id> <ip:port@cport[,hostname]> <flags> <primary> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>...
type nodeLine struct {
	id       string
	addr     string // ip:port
	flagList string // as reported: "myself,master"
	flags    map[string]bool
	master   string // the primary's ID for a replica, else ""
	epoch    int64
	slots    [][2]int // owned ranges; slots being migrated are left out
}

// owns reports whether slot is in one of the line's ranges.
func (e nodeLine) owns(slot int) bool {
	for _, r := range e.slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// parseClusterNodes parses a CLUSTER NODES reply, skipping malformed
// lines.
func parseClusterNodes(s string) []nodeLine {
	var out []nodeLine
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		e := nodeLine{id: f[0], flagList: f[2], flags: make(map[string]bool)}
		e.addr, _, _ = strings.Cut(f[1], "@")
		for _, fl := range strings.Split(f[2], ",") {
			e.flags[fl] = true
		}
		if f[3] != "-" {
			e.master = f[3]
		}
		e.epoch, _ = strconv.ParseInt(f[6], 10, 64)
		for _, sl := range f[8:] {
			if strings.HasPrefix(sl, "[") {
				continue // [slot->-id] migrating, [slot-<-id] importing
			}
			lo, hi, isRange := strings.Cut(sl, "-")
			a, err1 := strconv.Atoi(lo)
			b, err2 := a, error(nil)
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 == nil && err2 == nil {
				e.slots = append(e.slots, [2]int{a, b})
			}
		}
		out = append(out, e)
	}
	return out
}

// keySlot returns the hash slot of key: CRC-16/XMODEM of the key (or of
// its hash tag, the bytes between the first "{" and the next "}" when
// there is at least one) modulo 16384.
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc % slotCount)
}
