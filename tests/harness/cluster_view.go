package harness

// What the nodes say about the cluster: polling, each node's view of the
// slots (CLUSTER SHARDS/SLOTS), CLUSTER NODES parsing, and key slots.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// poll calls check, backing off from 10ms to 100ms, until it succeeds or
// ctx ends; without a deadline in ctx it gives up after clusterWait.
func poll(ctx context.Context, what string, check func(context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, clusterWait)
		defer cancel()
	}
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("harness: waiting for %s: %w; last: %v", what, ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}

// nodeView is what one node reports about the cluster.
type nodeView struct {
	node  *ClusterNode
	self  nodeEntry            // the node's own line of CLUSTER NODES
	byID  map[string]nodeEntry // CLUSTER NODES by node ID
	info  string               // CLUSTER INFO, when asked for
	repl  string               // INFO replication, when asked for
	slots string               // CLUSTER SLOTS in canonical form, when asked for
	// shards maps each master in CLUSTER SLOTS to its replicas' IDs.
	shards map[string][]string
	ranges [][2]int // the slot ranges of CLUSTER SLOTS
}

// coverage returns the number of slots CLUSTER SLOTS assigns.
func (v *nodeView) coverage() int {
	n := 0
	for _, r := range v.ranges {
		n += r[1] - r[0] + 1
	}
	return n
}

// view asks n for CLUSTER NODES and, if full, CLUSTER INFO, CLUSTER SLOTS
// and INFO replication, on one connection.
func (c *Cluster) view(ctx context.Context, n *ClusterNode, full bool) (*nodeView, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	conn, err := dialRESP(ctx, "tcp", n.Addr, nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ask := func(args ...string) (string, any, error) {
		reply, err := conn.do(args...)
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
	v := &nodeView{node: n, byID: make(map[string]nodeEntry)}
	for _, e := range parseClusterNodes(nodes) {
		v.byID[e.id] = e
		if e.flags["myself"] {
			v.self = e
		}
	}
	if v.self.id == "" {
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
	if err := v.parseSlots(slots); err != nil {
		return nil, fmt.Errorf("CLUSTER SLOTS on %s: %w", n.Addr, err)
	}
	return v, nil
}

// parseSlots fills v.slots, v.shards and v.ranges from a CLUSTER SLOTS
// reply: ranges of [start, end, master, replicas...], each node as
// [ip, port, id, ...].
func (v *nodeView) parseSlots(reply any) error {
	entries, ok := reply.([]any)
	if !ok {
		return fmt.Errorf("unexpected reply %T", reply)
	}
	type rng struct {
		lo, hi int
		ids    []string
	}
	var rs []rng
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
		r := rng{lo: int(lo), hi: int(hi)}
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
	slices.SortFunc(rs, func(a, b rng) int { return a.lo - b.lo })
	v.shards = make(map[string][]string)
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%d-%d:%s ", r.lo, r.hi, strings.Join(r.ids, ","))
		v.shards[r.ids[0]] = r.ids[1:]
		v.ranges = append(v.ranges, [2]int{r.lo, r.hi})
	}
	v.slots = strings.TrimSpace(b.String())
	return nil
}

// nodeEntry is one line of CLUSTER NODES:
//
//	<id> <ip:port@cport[,hostname]> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>...
type nodeEntry struct {
	id       string
	addr     string // ip:port
	flagList string // as reported: "myself,master"
	flags    map[string]bool
	master   string // the master's ID for a replica, else ""
	epoch    int64
	slots    [][2]int // owned ranges; migration annotations are left out
}

func (e nodeEntry) isMaster() bool  { return e.flags["master"] }
func (e nodeEntry) isReplica() bool { return e.flags["slave"] || e.flags["replica"] }

// owns reports whether slot is in one of the entry's ranges.
func (e nodeEntry) owns(slot int) bool {
	for _, r := range e.slots {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// parseClusterNodes parses a CLUSTER NODES reply, skipping malformed lines.
func parseClusterNodes(s string) []nodeEntry {
	var out []nodeEntry
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		e := nodeEntry{id: f[0], flagList: f[2], flags: make(map[string]bool)}
		e.addr, _, _ = strings.Cut(f[1], "@")
		e.addr, _, _ = strings.Cut(e.addr, ",")
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
			b := a
			var err2 error
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

// SlotOf returns the hash slot of key: CRC16 (XMODEM) of the key modulo
// 16384, where a key holding "{...}" with at least one byte between the first
// "{" and the first "}" after it is hashed by that part only.
func SlotOf(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key)) % SlotCount
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
