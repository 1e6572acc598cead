package testserver

// What a cluster node says about the cluster (CLUSTER NODES, CLUSTER
// SLOTS, CLUSTER INFO), and the slot of a key.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SlotCount is the number of hash slots of a cluster.
const SlotCount = 16384

// KeySlot returns the hash slot of key: CRC-16/XMODEM of the key modulo
// 16384, where a key holding "{...}" with at least one byte between the
// first "{" and the first "}" after it is hashed by that part only (its
// hash tag): keys that share a tag share a slot.
func KeySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % SlotCount)
}

// crc16 is CRC-16/XMODEM: polynomial 0x1021, initial value 0, no
// reflection, no final XOR.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// NodeLine is one line of CLUSTER NODES:
//
//	<id> <ip:port@cport[,hostname]> <flags> <primary> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>...
type NodeLine struct {
	// ID is the node's ID.
	ID string
	// Addr is the node's "ip:port".
	Addr string
	// FlagList is the flags as reported: "myself,master".
	FlagList string
	// Flags are the flags as a set.
	Flags map[string]bool
	// Primary is the ID of a replica's primary, "" for a primary.
	Primary string
	// Epoch is the node's config epoch.
	Epoch int64
	// Slots are the ranges of slots the node owns, both ends included;
	// slots being migrated or imported are left out.
	Slots [][2]int
}

// IsPrimary reports whether the line flags the node a primary ("master").
func (e NodeLine) IsPrimary() bool { return e.Flags["master"] }

// IsReplica reports whether the line flags the node a replica ("slave").
func (e NodeLine) IsReplica() bool { return e.Flags["slave"] || e.Flags["replica"] }

// Owns reports whether slot is in one of the line's ranges.
func (e NodeLine) Owns(slot int) bool {
	for _, r := range e.Slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// parseClusterNodes parses a CLUSTER NODES reply, skipping malformed
// lines.
func parseClusterNodes(reply string) []NodeLine {
	var out []NodeLine
	for _, line := range strings.Split(reply, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		e := NodeLine{ID: f[0], FlagList: f[2], Flags: make(map[string]bool)}
		e.Addr, _, _ = strings.Cut(f[1], "@")
		e.Addr, _, _ = strings.Cut(e.Addr, ",")
		for _, fl := range strings.Split(f[2], ",") {
			e.Flags[fl] = true
		}
		if f[3] != "-" {
			e.Primary = f[3]
		}
		e.Epoch, _ = strconv.ParseInt(f[6], 10, 64)
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
				e.Slots = append(e.Slots, [2]int{a, b})
			}
		}
		out = append(out, e)
	}
	return out
}

// SlotMap is a CLUSTER SLOTS reply, read by parseClusterSlots.
type SlotMap struct {
	// Canonical is the map in a canonical form, to compare what two
	// nodes say: "lo-hi:primary,replica... " by range, replicas sorted.
	Canonical string
	// Shards maps each primary's ID to its replicas' IDs, sorted.
	Shards map[string][]string
	// Ranges are the slot ranges, both ends included, in order.
	Ranges [][2]int
}

// Covered returns the number of slots the map assigns.
func (m SlotMap) Covered() int {
	n := 0
	for _, r := range m.Ranges {
		n += r[1] - r[0] + 1
	}
	return n
}

// parseClusterSlots reads a CLUSTER SLOTS reply: ranges of [start, end,
// primary, replicas...], each node as [ip, port, id, ...].
func parseClusterSlots(reply any) (SlotMap, error) {
	entries, ok := reply.([]any)
	if !ok {
		return SlotMap{}, fmt.Errorf("a reply of type %T", reply)
	}
	type shardRange struct {
		lo, hi int
		ids    []string
	}
	var rs []shardRange
	for _, e := range entries {
		f, ok := e.([]any)
		if !ok || len(f) < 3 {
			return SlotMap{}, fmt.Errorf("unexpected entry %v", e)
		}
		lo, ok1 := f[0].(int64)
		hi, ok2 := f[1].(int64)
		if !ok1 || !ok2 {
			return SlotMap{}, fmt.Errorf("unexpected range %v", e)
		}
		r := shardRange{lo: int(lo), hi: int(hi)}
		for _, nd := range f[2:] {
			nf, ok := nd.([]any)
			if !ok || len(nf) < 3 {
				return SlotMap{}, fmt.Errorf("unexpected node %v", nd)
			}
			id, _ := nf[2].(string)
			r.ids = append(r.ids, id)
		}
		slices.Sort(r.ids[1:])
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b shardRange) int { return a.lo - b.lo })
	m := SlotMap{Shards: make(map[string][]string)}
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%d-%d:%s ", r.lo, r.hi, strings.Join(r.ids, ","))
		m.Shards[r.ids[0]] = r.ids[1:]
		m.Ranges = append(m.Ranges, [2]int{r.lo, r.hi})
	}
	m.Canonical = strings.TrimSpace(b.String())
	return m, nil
}

// ClusterView is what one cluster node says about the cluster, read by
// AskCluster.
type ClusterView struct {
	// Addr is the address of the node asked.
	Addr string
	// Self is the node's own line of CLUSTER NODES.
	Self NodeLine
	// Nodes are the lines of CLUSTER NODES by node ID.
	Nodes map[string]NodeLine
	// Info (CLUSTER INFO), Replication (INFO replication) and Slots
	// (CLUSTER SLOTS) are read by a full AskCluster only.
	Info, Replication string
	Slots             SlotMap
}

// AskCluster asks the node at addr, on a connection of its own, for
// CLUSTER NODES and, when full, CLUSTER INFO, INFO replication and
// CLUSTER SLOTS.
func AskCluster(ctx context.Context, addr string, full bool) (*ClusterView, error) {
	c, err := Dial(ctx, "tcp", addr, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ask := func(args ...string) (any, error) {
		reply, err := c.Do(args...)
		if err != nil {
			return nil, fmt.Errorf("%s on %s: %w", strings.Join(args, " "), c.addr, err)
		}
		return reply, nil
	}
	text := func(args ...string) (string, error) {
		reply, err := ask(args...)
		if s, ok := reply.(string); ok || err != nil {
			return s, err
		}
		return "", fmt.Errorf("%s on %s: a reply of type %T, not a string", strings.Join(args, " "), c.addr, reply)
	}
	nodes, err := text("CLUSTER", "NODES")
	if err != nil {
		return nil, err
	}
	v := &ClusterView{Addr: addr, Nodes: make(map[string]NodeLine)}
	for _, e := range parseClusterNodes(nodes) {
		v.Nodes[e.ID] = e
		if e.Flags["myself"] {
			v.Self = e
		}
	}
	if v.Self.ID == "" {
		return nil, fmt.Errorf("CLUSTER NODES on %s has no line for the node itself", c.addr)
	}
	if !full {
		return v, nil
	}
	if v.Info, err = text("CLUSTER", "INFO"); err != nil {
		return nil, err
	}
	if v.Replication, err = text("INFO", "replication"); err != nil {
		return nil, err
	}
	slots, err := ask("CLUSTER", "SLOTS")
	if err != nil {
		return nil, err
	}
	if v.Slots, err = parseClusterSlots(slots); err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS on %s: %w", c.addr, err)
	}
	return v, nil
}
