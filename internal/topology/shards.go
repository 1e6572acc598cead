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
			lo, hi := slots.Elems[i].Int, slots.Elems[i+1].Int
			if lo < 0 || hi >= SlotCount || lo > hi {
				return nil, fmt.Errorf("%w: slot range %d-%d", errBadTopology, lo, hi)
			}
			sh.Ranges = append(sh.Ranges, [2]int{int(lo), int(hi)})
		}
		havePrimary := false
		for _, nv := range fields["nodes"].Elems {
			nf := pairs(nv)
			if nf == nil {
				return nil, fmt.Errorf("%w: node is %s", errBadTopology, nv.Type)
			}
			n := NodeInfo{ID: text(nf["id"]), Primary: text(nf["role"]) == "master"}
			n.Healthy = text(nf["health"]) == "online"
			host := text(nf["endpoint"])
			if host == "" || host == "?" {
				host = text(nf["ip"])
			}
			if host == "" || host == "?" {
				host, _, _ = net.SplitHostPort(from)
			}
			port := nf["port"].Int
			if tls {
				if p := nf["tls-port"].Int; p > 0 {
					port = p
				}
			}
			if n.ID == "" || port <= 0 {
				continue
			}
			n.Addr = net.JoinHostPort(host, strconv.FormatInt(port, 10))
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

// ParseSlots reads a CLUSTER SLOTS reply, for servers without CLUSTER
// SHARDS.
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
		lo, hi := rv.Elems[0].Int, rv.Elems[1].Int
		if lo < 0 || hi >= SlotCount || lo > hi {
			return nil, fmt.Errorf("%w: slot range %d-%d", errBadTopology, lo, hi)
		}
		var nodes []NodeInfo
		for i, nv := range rv.Elems[2:] {
			if len(nv.Elems) < 3 {
				return nil, fmt.Errorf("%w: slot node of %d elements", errBadTopology, len(nv.Elems))
			}
			host := nv.Elems[0].Str
			if host == "" || host == "?" {
				host, _, _ = net.SplitHostPort(from)
			}
			nodes = append(nodes, NodeInfo{ID: nv.Elems[2].Str, Primary: i == 0, Healthy: true,
				Addr: net.JoinHostPort(host, strconv.FormatInt(nv.Elems[1].Int, 10))})
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

func text(v resp.Value) string { return v.Str }
