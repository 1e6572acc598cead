package topology

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/respire-go/respire/internal/transport/resp"
)

// NodeInfo is one node as the cluster describes it.
type NodeInfo struct {
	ID      string
	Addr    string // host:port to dial
	Primary bool
	// Healthy is false for a node the cluster reports as failed or still
	// loading; it is not routed to.
	Healthy bool
	// Zone is the node's availability zone as the cluster reports it
	// (Valkey 9.1 CLUSTER SHARDS "availability-zone"), "" when it does
	// not say.
	Zone string
}

// Shard is a set of slot ranges served by one primary and its replicas.
type Shard struct {
	Ranges  [][2]int // inclusive slot ranges
	Primary NodeInfo
	// Replicas are the healthy replicas.
	Replicas []NodeInfo
}

// View is a cluster topology as one node reported it.
type View struct {
	Shards []Shard
}

// owners returns, for every slot, the id of its primary ("" if none).
func (v *View) owners() []string {
	o := make([]string, SlotCount)
	for _, s := range v.Shards {
		for _, r := range s.Ranges {
			for i := r[0]; i <= r[1]; i++ {
				o[i] = s.Primary.ID
			}
		}
	}
	return o
}

// sameOwners reports whether two views give every slot the same primary.
func sameOwners(a, b *View) bool { return slices.Equal(a.owners(), b.owners()) }

// ids returns the ids of every node of the view.
func (v *View) ids() []string {
	var out []string
	for _, s := range v.Shards {
		out = append(out, s.Primary.ID)
		for _, r := range s.Replicas {
			out = append(out, r.ID)
		}
	}
	return out
}

var errBadTopology = errors.New("respire: malformed cluster topology reply")

// ParseShards reads a CLUSTER SHARDS reply (RESP2 or RESP3). tls selects
// the nodes' TLS ports; from is the address the reply came from, used for
// nodes that report no endpoint of their own.
//
// The parser is tolerant: keys it does not know (servers add fields, as
// Valkey 9.1 did with availability-zone), whatever their type, are
// skipped, and so is a node entry that is not a map or names no id or
// port. Only what makes the slot map wrong is an error: a reply or shard
// that is not a list or map, or a slot range out of bounds.
func ParseShards(v resp.Value, tls bool, from string) (*View, error) {
	if !isList(v) {
		return nil, fmt.Errorf("%w: CLUSTER SHARDS gave %s", errBadTopology, v.Type)
	}
	view := &View{}
	for _, sv := range v.Elems {
		fields := pairs(sv)
		if fields == nil {
			return nil, fmt.Errorf("%w: shard is %s", errBadTopology, sv.Type)
		}
		var sh Shard
		slots := fields["slots"]
		for i := 0; i+1 < len(slots.Elems); i += 2 {
			lo, okLo := integer(slots.Elems[i])
			hi, okHi := integer(slots.Elems[i+1])
			if !okLo || !okHi || lo < 0 || hi >= SlotCount || lo > hi {
				return nil, fmt.Errorf("%w: slot range %s-%s", errBadTopology, show(slots.Elems[i]), show(slots.Elems[i+1]))
			}
			sh.Ranges = append(sh.Ranges, [2]int{int(lo), int(hi)})
		}
		havePrimary := false
		for _, nv := range fields["nodes"].Elems {
			n, ok := shardNode(nv, tls, from)
			if !ok {
				continue
			}
			switch {
			// A shard can list two masters: a failed one that its replica
			// replaced (Valkey keeps it there, role master, health fail,
			// until it comes back as a replica) and the new one. The
			// healthy one is the primary.
			case n.Primary && (!havePrimary || n.Healthy && !sh.Primary.Healthy):
				sh.Primary, havePrimary = n, true
			case !n.Primary && n.Healthy:
				sh.Replicas = append(sh.Replicas, n)
			}
		}
		if havePrimary && len(sh.Ranges) > 0 {
			view.Shards = append(view.Shards, sh)
		}
	}
	return view, nil
}

// shardNode reads one node entry of CLUSTER SHARDS; false for an entry
// that is not a map or lacks an id or a port, which is skipped.
func shardNode(nv resp.Value, tls bool, from string) (NodeInfo, bool) {
	nf := pairs(nv)
	if nf == nil {
		return NodeInfo{}, false
	}
	n := NodeInfo{ID: text(nf["id"]), Primary: text(nf["role"]) == "master", Zone: text(nf["availability-zone"])}
	// Every server since 7.0 reports health; one that would not is taken
	// at its word that the node is in the shard.
	h, ok := nf["health"]
	n.Healthy = !ok || text(h) == "online"
	host := text(nf["endpoint"])
	if host == "" || host == "?" {
		host = text(nf["ip"])
	}
	if host == "" || host == "?" {
		host, _, _ = net.SplitHostPort(from)
	}
	port, _ := integer(nf["port"])
	if tls {
		if p, _ := integer(nf["tls-port"]); p > 0 {
			port = p
		}
	}
	if n.ID == "" || port <= 0 || port > 65535 {
		return NodeInfo{}, false
	}
	n.Addr = net.JoinHostPort(host, strconv.FormatInt(port, 10))
	return n, true
}

// ParseSlots reads a CLUSTER SLOTS reply, for servers without CLUSTER
// SHARDS. Of the elements after a node entry's host, port and id, the
// networking metadata map is read for the availability zone; the rest
// (whatever servers add later) is skipped, as are
// replica entries that are not host-port-id lists.
func ParseSlots(v resp.Value, from string) (*View, error) {
	if !isList(v) {
		return nil, fmt.Errorf("%w: CLUSTER SLOTS gave %s", errBadTopology, v.Type)
	}
	byPrimary := map[string]*Shard{}
	var order []string
	for _, rv := range v.Elems {
		if len(rv.Elems) < 3 {
			return nil, fmt.Errorf("%w: slot entry of %d elements", errBadTopology, len(rv.Elems))
		}
		lo, okLo := integer(rv.Elems[0])
		hi, okHi := integer(rv.Elems[1])
		if !okLo || !okHi || lo < 0 || hi >= SlotCount || lo > hi {
			return nil, fmt.Errorf("%w: slot range %s-%s", errBadTopology, show(rv.Elems[0]), show(rv.Elems[1]))
		}
		var nodes []NodeInfo
		for i, nv := range rv.Elems[2:] {
			n, ok := slotNode(nv, from)
			switch {
			case !ok && i == 0:
				return nil, fmt.Errorf("%w: slots %d-%d: primary entry is not host, port and id", errBadTopology, lo, hi)
			case !ok:
				continue
			}
			n.Primary = i == 0
			nodes = append(nodes, n)
		}
		p := nodes[0]
		sh := byPrimary[p.ID]
		if sh == nil {
			sh = &Shard{Primary: p, Replicas: nodes[1:]}
			byPrimary[p.ID] = sh
			order = append(order, p.ID)
		}
		sh.Ranges = append(sh.Ranges, [2]int{int(lo), int(hi)})
	}
	view := &View{}
	for _, id := range order {
		view.Shards = append(view.Shards, *byPrimary[id])
	}
	return view, nil
}

// slotNode reads a CLUSTER SLOTS node entry: host, port, id, then
// anything.
func slotNode(nv resp.Value, from string) (NodeInfo, bool) {
	if nv.Type != resp.TypeArray || len(nv.Elems) < 3 {
		return NodeInfo{}, false
	}
	host := text(nv.Elems[0])
	if host == "" || host == "?" {
		host, _, _ = net.SplitHostPort(from)
	}
	port, ok := integer(nv.Elems[1])
	id := text(nv.Elems[2])
	if !ok || port <= 0 || port > 65535 || id == "" {
		return NodeInfo{}, false
	}
	n := NodeInfo{ID: id, Healthy: true, Addr: net.JoinHostPort(host, strconv.FormatInt(port, 10))}
	if len(nv.Elems) > 3 {
		// Networking metadata (Redis 7+, Valkey): hostname, and the
		// availability zone on Valkey 9.1.
		n.Zone = text(pairs(nv.Elems[3])["availability-zone"])
	}
	return n, true
}

func isList(v resp.Value) bool {
	return !v.Null && (v.Type == resp.TypeArray || v.Type == resp.TypeSet)
}

// pairs reads a map (RESP3) or a flat key-value array (RESP2).
func pairs(v resp.Value) map[string]resp.Value {
	if v.Null || (v.Type != resp.TypeMap && v.Type != resp.TypeArray) || len(v.Elems)%2 != 0 {
		return nil
	}
	m := make(map[string]resp.Value, len(v.Elems)/2)
	for i := 0; i+1 < len(v.Elems); i += 2 {
		m[v.Elems[i].Str] = v.Elems[i+1]
	}
	return m
}

// text is the text of a string value; "" for anything else (an unknown
// field's map or array, a null).
func text(v resp.Value) string {
	switch v.Type {
	case resp.TypeSimpleString, resp.TypeBulkString, resp.TypeVerbatim:
		return v.Str
	}
	return ""
}

// integer reads an integer, or a string holding one.
func integer(v resp.Value) (int64, bool) {
	switch v.Type {
	case resp.TypeInteger:
		return v.Int, true
	case resp.TypeSimpleString, resp.TypeBulkString:
		n, err := strconv.ParseInt(v.Str, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// show is a scalar's text for an error message.
func show(v resp.Value) string {
	if v.Type == resp.TypeInteger {
		return strconv.FormatInt(v.Int, 10)
	}
	if v.Type.IsAggregate() {
		return v.Type.String()
	}
	return strconv.Quote(v.Str)
}
