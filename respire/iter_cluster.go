package respire

import (
	"context"
	"errors"
	"fmt"
	"iter"

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

// scanCmd describes the page command of a scan.
type scanCmd[T any] struct {
	info *cmdInfo
	args func(x *cmd, cursor int64)
	dec  decoder
	page func(v any) ([]T, int64) // the items and cursor of a decoded reply
}

// scanShards returns one shard per primary of the current topology, in the
// order of their first slots.
func (c *Client) scanShards(ctx context.Context) ([]scanShard, error) {
	if _, err := c.cl.Primaries(ctx); err != nil { // waits for a topology
		return nil, err
	}
	var out []scanShard
	seen := make(map[*topology.Node]bool)
	for s := range topology.SlotCount {
		n, err := c.cl.Route(ctx, uint16(s), topology.ReadPrimary)
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

// scanCluster is ScanAll on a cluster: every primary in turn.
func (c *Client) scanCluster(ctx context.Context, opts *ScanOptions) iter.Seq2[string, error] {
	sc := &scanCmd[string]{
		info: &cmdSCAN,
		args: func(x *cmd, cursor int64) { argsScan(x, cursor, opts) },
		dec:  decScanPage,
		page: func(v any) ([]string, int64) { p, _ := v.(ScanPage); return p.Items, p.Cursor },
	}
	return func(yield func(string, error) bool) {
		shards, err := c.scanShards(ctx)
		if err != nil {
			yield("", c.wrapCluster(ctx, "SCAN", err))
			return
		}
		for _, sh := range shards {
			ok := yieldPages(yield, func(cursor int64) ([]string, int64, error) {
				return shardPage(ctx, c, &sh, sc, cursor)
			})
			if !ok {
				return
			}
		}
	}
}

// scanKeyed is a keyed scan (HSCAN, SSCAN, ZSCAN) on a cluster: every page
// on the primary of key's slot.
func scanKeyed[T any](ctx context.Context, c *Client, key string, sc *scanCmd[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		sh := scanShard{slot: topology.Slot(key)}
		yieldPages(yield, func(cursor int64) ([]T, int64, error) {
			return shardPage(ctx, c, &sh, sc, cursor)
		})
	}
}

// shardPage returns one page of sh's part from cursor. When sh's node
// fails, or answers MOVED (the slot has moved), it asks for the node that
// serves sh's slot now (the same one until the cluster has promoted
// another) and starts the part again from cursor 0 there. The first page
// of the new start is returned as the page for cursor, which is fine,
// since the caller only follows the returned cursor.
func shardPage[T any](ctx context.Context, c *Client, sh *scanShard, sc *scanCmd[T], cursor int64) ([]T, int64, error) {
	for attempt := 0; ; attempt++ {
		var err error
		if sh.node == nil {
			if sh.node, err = c.cl.Route(ctx, sh.slot, topology.ReadPrimary); err != nil {
				return nil, 0, c.wrapCluster(ctx, sc.info.name, err)
			}
		}
		items, next, err := pageOn(ctx, c, sh.node, sc, cursor)
		if err == nil {
			return items, next, nil
		}
		rd, isRedirect := redirectOf(err, sh.node.Addr)
		var ce *ConnError
		failed := errors.Is(err, ErrNotSent) || errors.As(err, &ce)
		switch {
		case ctx.Err() != nil || attempt >= maxAttempts || c.closed.Load():
		case isRedirect && rd.Kind == topology.Moved:
			c.cl.Moved(rd.Slot, rd.Addr)
			sh.node, cursor = nil, 0
			continue
		case isRedirect:
			// ASK (the key is being migrated), LOADING, TRYAGAIN, ...: ask
			// again once the cluster has moved on.
			if c.pause(ctx, clusterPause(attempt)) {
				continue
			}
		case failed:
			c.cl.Suspect(sh.node)
			if c.pause(ctx, clusterPause(attempt)) {
				sh.node, cursor = nil, 0
				continue
			}
		}
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w; the context ended waiting for the slot's primary: %w", err, cerr)
		}
		return nil, 0, fmt.Errorf("respire: %s on the node serving slot %d (%s): %w", sc.info.name, sh.slot, sh.node.Addr, err)
	}
}

// pageOn sends one page command to node n.
func pageOn[T any](ctx context.Context, c *Client, n *topology.Node, sc *scanCmd[T], cursor int64) ([]T, int64, error) {
	x := c.newCmd(sc.info)
	sc.args(x, cursor)
	if x.argErr != nil {
		err := x.argErr
		x.Recycle()
		return nil, 0, err
	}
	x.dec = sc.dec
	x.seal()
	if c.conns > 1 {
		x.Route = c.rr.Add(1)
	}
	if err := c.onNode(ctx, n, x); err != nil {
		return nil, 0, err // the transport gave x back
	}
	if x.replyErr != nil {
		err := x.replyErr
		x.Recycle()
		return nil, 0, err
	}
	items, next := sc.page(x.res.Any)
	x.Recycle()
	return items, next, nil
}
