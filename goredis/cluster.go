package goredis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
)

// The methods of go-redis's *redis.ClusterClient that cluster-shaped
// programs call on every node (ForEachShard, ForEachMaster, ForEachSlave)
// or on one (MasterForKey, SlaveForKey), with the same signatures, so that
// code written against an interface of them runs on the adapter.
//
// Respire routes every command by its keys and has no "this node" call in
// its public API, so on a cluster the adapter gives each node a client of
// its own: a *respire.Client on that node's address alone (Options copied
// from the cluster client's, without Cluster, ClientCache, ReadFrom and
// AvailabilityZone, with NoFollowRedirect), made on first use, cached by
// address, and closed by Client.Close or when the cluster no longer lists
// the node. The nodes come from CLUSTER SHARDS, asked afresh at every call
// (one round trip; the nodes whose health is not "online" are left out).
// On a single server or with Sentinel, the one primary is the adapter
// itself and there are no replicas.

// errNoShard is wrapped when no primary serves a key's slot.
var errNoShard = errors.New("goredis: no primary of the cluster serves the slot")

// ForEachShard calls fn concurrently for every node of the cluster,
// primaries and replicas, with a *redis.Client that runs its commands on
// that node, and returns the first error fn returned, or the error of
// asking the cluster for its nodes. On a single server, fn is called once,
// with the adapter's own *redis.Client.
//
// The *redis.Client given to fn runs commands and pipelines on its node;
// its Watch, Conn, Subscribe and PoolStats are go-redis's own, which the
// adapter does not carry (as those of Client's embedded *redis.Client).
func (a *Client) ForEachShard(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error {
	return a.forEach(ctx, true, true, fn)
}

// ForEachMaster calls fn concurrently for every primary of the cluster,
// as ForEachShard does for every node. A SCAN on each primary covers the
// whole cluster.
func (a *Client) ForEachMaster(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error {
	return a.forEach(ctx, true, false, fn)
}

// ForEachSlave calls fn concurrently for every replica of the cluster, as
// ForEachShard does for every node. On a single server it calls nothing.
// A replica's client is not in READONLY mode: a keyed read there is
// answered with the server's MOVED error, as on go-redis without
// ClusterOptions.ReadOnly; its READWRITE (which go-redis code sends to
// end a replica's read-only session) is answered OK without a round trip,
// since that is the mode its connections are in.
func (a *Client) ForEachSlave(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error {
	return a.forEach(ctx, false, true, fn)
}

// MasterForKey returns a *redis.Client that runs its commands on the
// primary serving key's slot (the adapter's own on a single server), as
// ForEachShard gives fn.
func (a *Client) MasterForKey(ctx context.Context, key string) (*redis.Client, error) {
	return a.forKey(ctx, key, false)
}

// SlaveForKey returns a *redis.Client that runs its commands on a replica
// of the primary serving key's slot, or on that primary when it has none
// online (the adapter's own on a single server).
func (a *Client) SlaveForKey(ctx context.Context, key string) (*redis.Client, error) {
	return a.forKey(ctx, key, true)
}

// ReloadState does nothing: the adapter asks the cluster for its nodes at
// every ForEach and ForKey call, and Respire keeps its own routing up to
// date. It is here for code that calls it on a *redis.ClusterClient.
func (a *Client) ReloadState(context.Context) {}

// Close closes the go-redis side, the subscriptions of its PubSubs and the
// clients the adapter made for the cluster's nodes; the *respire.Client
// given to New stays open and remains the caller's to close.
func (a *Client) Close() error {
	a.nodes.closeAll()
	return a.Client.Close()
}

// shard is one primary of the cluster and its replicas, by address.
type shard struct {
	slots    []respire.SlotRange
	primary  string
	replicas []string
}

// nodeClients are the clients made for the cluster's nodes, by address.
type nodeClients struct {
	mu     sync.Mutex
	m      map[string]*Client
	closed bool
}

// forEach calls fn for the primaries, the replicas or both.
func (a *Client) forEach(ctx context.Context, primaries, replicas bool, fn func(context.Context, *redis.Client) error) error {
	if a.rc == nil {
		return ErrNilClient
	}
	if !a.sharded {
		if !primaries {
			return nil
		}
		return fn(ctx, a.Client)
	}
	shards, err := a.shards(ctx)
	if err != nil {
		return err
	}
	var addrs []string
	for _, s := range shards {
		if primaries && s.primary != "" {
			addrs = append(addrs, s.primary)
		}
		if replicas {
			addrs = append(addrs, s.replicas...)
		}
	}
	clients, err := a.nodes.get(a, addrs, liveAddrs(shards))
	if err != nil {
		return err
	}
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for _, c := range clients {
		wg.Go(func() {
			if err := fn(ctx, c.Client); err != nil {
				once.Do(func() { first = err })
			}
		})
	}
	wg.Wait()
	return first
}

// forKey is MasterForKey (replica false) and SlaveForKey.
func (a *Client) forKey(ctx context.Context, key string, replica bool) (*redis.Client, error) {
	if a.rc == nil {
		return nil, ErrNilClient
	}
	if !a.sharded {
		return a.Client, nil
	}
	slot, err := a.rc.ClusterKeySlot(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("goredis: the slot of %q: %w", key, err)
	}
	shards, err := a.shards(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range shards {
		if !s.serves(slot) || s.primary == "" {
			continue
		}
		addr := s.primary
		if replica && len(s.replicas) > 0 {
			addr = s.replicas[int(a.seq.Add(1)%uint64(len(s.replicas)))]
		}
		clients, err := a.nodes.get(a, []string{addr}, liveAddrs(shards))
		if err != nil {
			return nil, err
		}
		return clients[0].Client, nil
	}
	return nil, fmt.Errorf("%w: slot %d (of key %q)", errNoShard, slot, key)
}

func (s shard) serves(slot int64) bool {
	for _, r := range s.slots {
		if slot >= r.Start && slot <= r.End {
			return true
		}
	}
	return false
}

// shards asks the cluster for its shards (CLUSTER SHARDS), the nodes that
// are online.
func (a *Client) shards(ctx context.Context) ([]shard, error) {
	cs, err := a.rc.ClusterShards(ctx)
	if err != nil {
		return nil, fmt.Errorf("goredis: asking the cluster for its nodes (CLUSTER SHARDS): %w", err)
	}
	tls := a.rc.Options().TLSConfig != nil
	out := make([]shard, 0, len(cs))
	for _, s := range cs {
		sh := shard{slots: s.Slots}
		for _, n := range s.Nodes {
			if n.Health != "online" {
				continue
			}
			addr := nodeAddr(n, tls)
			if addr == "" {
				continue
			}
			switch n.Role {
			case "master", "primary":
				sh.primary = addr
			case "replica", "slave":
				sh.replicas = append(sh.replicas, addr)
			}
		}
		if sh.primary != "" || len(sh.replicas) > 0 {
			out = append(out, sh)
		}
	}
	return out, nil
}

// nodeAddr is the address clients reach node at: its endpoint (the
// server's cluster-preferred-endpoint-type) or IP, and its port (its TLS
// port with TLS); "" when the node does not know it.
func nodeAddr(n respire.ClusterShardNode, tls bool) string {
	host := n.Endpoint
	if host == "" || host == "?" {
		host = n.IP
	}
	port := n.Port
	if tls && n.TLSPort > 0 {
		port = n.TLSPort
	}
	if host == "" || host == "?" || port <= 0 {
		return ""
	}
	return net.JoinHostPort(host, strconv.FormatInt(port, 10))
}

func liveAddrs(shards []shard) map[string]bool {
	m := map[string]bool{}
	for _, s := range shards {
		if s.primary != "" {
			m[s.primary] = true
		}
		for _, r := range s.replicas {
			m[r] = true
		}
	}
	return m
}

// get returns the clients of addrs, making those missing, and closes those
// of the nodes not in live (gone from the cluster).
func (n *nodeClients) get(a *Client, addrs []string, live map[string]bool) ([]*Client, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, fmt.Errorf("goredis: the adapter is closed: %w", respire.ErrClosed)
	}
	for addr, c := range n.m {
		if !live[addr] {
			delete(n.m, addr)
			c.closeNode()
		}
	}
	out := make([]*Client, 0, len(addrs))
	for _, addr := range addrs {
		c, ok := n.m[addr]
		if !ok {
			o := a.rc.Options()
			o.Addr = addr
			o.Cluster = nil
			o.ClientCache = nil
			o.ReadFrom = respire.ReadPrimary
			o.AvailabilityZone = ""
			o.NoFollowRedirect = true
			rc, err := respire.NewClient(o)
			if err != nil {
				return nil, fmt.Errorf("goredis: a client for the cluster node %s: %w", addr, err)
			}
			c = New(rc)
			c.node = true
			if n.m == nil {
				n.m = map[string]*Client{}
			}
			n.m[addr] = c
		}
		out = append(out, c)
	}
	return out, nil
}

func (n *nodeClients) closeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	for addr, c := range n.m {
		delete(n.m, addr)
		c.closeNode()
	}
}

// closeNode closes a node's adapter and the Respire client it was made on.
func (c *Client) closeNode() {
	c.Client.Close()
	c.rc.Close()
}
