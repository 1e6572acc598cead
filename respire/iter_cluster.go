package respire

import (
	"context"
	"errors"
	"fmt"

	"github.com/respire-go/respire/internal/topology"
)

// Scans on a cluster. A cursor means something only to the server process
// that gave it (its hash tables, its hash seed), so every page of one scan
// goes to one node, chosen once, never to a replica picked at random; when
// that node fails or the slot moves away, the scan of that node's part
// starts again from cursor 0 on the node that serves the slot now. SCAN
// goes to every primary in turn; HSCAN, SSCAN and ZSCAN to their key's.

// scanShard is one node's part of a scan: a slot it serves (to find the
// node that serves it after a failover or a migration) and the node.
type scanShard struct {
	slot uint16
	node *topology.Node // nil until the first page
}

// scan is backend.scan on a cluster: every primary in turn for SCAN, the
// primary of key's slot for a keyed scan.
func (k *clusterBackend) scan(ctx context.Context, sc *scanSpec, key string, keyed bool) ([]pager, error) {
	if keyed {
		sh := &scanShard{slot: topology.Slot(key)}
		return []pager{func(cursor int64) (any, error) { return k.shardPage(ctx, sh, sc, cursor) }}, nil
	}
	shards, err := k.scanShards(ctx)
	if err != nil {
		return nil, k.c.wrapCluster(ctx, sc.info.name, err)
	}
	parts := make([]pager, len(shards))
	for i := range shards {
		sh := &shards[i]
		parts[i] = func(cursor int64) (any, error) { return k.shardPage(ctx, sh, sc, cursor) }
	}
	return parts, nil
}

// scanShards returns one shard per primary of the current topology, in the
// order of their first slots.
func (k *clusterBackend) scanShards(ctx context.Context) ([]scanShard, error) {
	if _, err := k.cl.Primaries(ctx); err != nil { // waits for a topology
		return nil, err
	}
	var out []scanShard
	seen := make(map[*topology.Node]bool)
	for s := range topology.SlotCount {
		n, err := k.cl.Route(ctx, uint16(s), topology.ReadPrimary)
		if err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, scanShard{slot: uint16(s), node: n})
		}
	}
	return out, nil
}

// shardPage returns one page of sh's part from cursor. When sh's node
// fails, or answers MOVED (the slot has moved), it asks for the node that
// serves sh's slot now (the same one until the cluster has promoted
// another) and starts the part again from cursor 0 there. The first page
// of the new start is returned as the page for cursor, which is fine,
// since the caller only follows the returned cursor.
func (k *clusterBackend) shardPage(ctx context.Context, sh *scanShard, sc *scanSpec, cursor int64) (any, error) {
	c := k.c
	for attempt := 0; ; attempt++ {
		var err error
		if sh.node == nil {
			if sh.node, err = k.cl.Route(ctx, sh.slot, topology.ReadPrimary); err != nil {
				return nil, c.wrapCluster(ctx, sc.info.name, err)
			}
		}
		v, err := k.pageOn(ctx, sh.node, sc, cursor)
		if err == nil {
			return v, nil
		}
		rd, isRedirect := redirectOf(err, sh.node.Addr)
		var ce *ConnError
		failed := errors.Is(err, ErrNotSent) || errors.As(err, &ce)
		switch {
		case ctx.Err() != nil || attempt >= maxAttempts || c.closed.Load():
		case isRedirect:
			// MOVED: the part starts again on the slot's new owner. ASK
			// (the key is being migrated), LOADING, TRYAGAIN, ...: ask
			// again once the cluster has moved on, since a cursor belongs
			// to its node.
			if _, again := k.cl.Redirected(ctx, rd, attempt, topology.FollowNoAsk); again {
				if rd.Kind == topology.Moved {
					sh.node, cursor = nil, 0
				}
				continue
			}
		case failed:
			k.cl.Suspect(sh.node)
			if k.pause(ctx, clusterPause(attempt)) {
				sh.node, cursor = nil, 0
				continue
			}
		}
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w; the context ended waiting for the slot's primary: %w", err, cerr)
		}
		return nil, fmt.Errorf("respire: %s on the node serving slot %d (%s): %w", sc.info.name, sh.slot, sh.node.Addr, err)
	}
}

// pageOn sends one page command to node n and returns its decoded reply.
func (k *clusterBackend) pageOn(ctx context.Context, n *topology.Node, sc *scanSpec, cursor int64) (any, error) {
	c := k.c
	x := c.newCmd(sc.info)
	sc.args(x, cursor)
	if x.argErr != nil {
		err := x.argErr
		x.Recycle()
		return nil, err
	}
	x.dec = sc.dec
	x.seal()
	if c.conns > 1 {
		x.Route = c.rr.Add(1)
	}
	if err := k.onNode(ctx, n, x); err != nil {
		return nil, err // the transport gave x back
	}
	if x.replyErr != nil {
		err := x.replyErr
		x.Recycle()
		return nil, err
	}
	v := x.res.Any
	x.Recycle()
	return v, nil
}
