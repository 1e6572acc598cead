package respire

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/respire-go/respire/topology"
)

// A cluster-wide SCAN: every primary in turn, each with its own cursor.

// scanShard is one shard's part of a cluster-wide scan: a slot it serves
// (to find its primary again after a failover) and the node being scanned.
type scanShard struct {
	slot uint16
	node *topology.Node
}

// scanShards returns the shards of the current topology, one per primary,
// in the order of their first slots.
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

func (c *Client) scanCluster(ctx context.Context, opts *ScanOptions) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		shards, err := c.scanShards(ctx)
		if err != nil {
			yield("", c.wrapCluster("SCAN", err))
			return
		}
		for _, sh := range shards {
			ok := yieldPages(yield, func(cursor int64) ([]string, int64, error) {
				return c.scanShardPage(ctx, &sh, cursor, opts)
			})
			if !ok {
				return
			}
		}
	}
}

// scanShardPage returns one page of sh's keys from cursor. When sh's node
// fails, it asks for the node that serves sh's slot now (the same one
// until the cluster has promoted another) and starts the shard again from
// cursor 0 there: a node whose connection broke may be a new process, to
// which the old cursor means nothing. The first page of the new start is
// returned as the page for cursor, which is fine, since the caller only
// follows the returned cursor.
func (c *Client) scanShardPage(ctx context.Context, sh *scanShard, cursor int64, opts *ScanOptions) ([]string, int64, error) {
	for attempt := 0; ; attempt++ {
		p, err := c.scanOn(ctx, sh.node, cursor, opts)
		if err == nil {
			return p.Items, p.Cursor, nil
		}
		rd, isRedirect := redirectOf(err, sh.node.Addr)
		var ce *ConnError
		failed := errors.Is(err, ErrNotSent) || errors.As(err, &ce)
		switch {
		case ctx.Err() != nil || attempt >= maxAttempts || c.closed.Load():
		case isRedirect && rd.kind != "MOVED" && rd.kind != "ASK":
			// LOADING, TRYAGAIN, ...: the node is there; ask it again.
			if c.pause(ctx, clusterPause(attempt)) {
				continue
			}
		case failed:
			c.cl.Suspect(sh.node)
			if !c.pause(ctx, clusterPause(attempt)) {
				break
			}
			n, rerr := c.cl.Route(ctx, sh.slot, topology.ReadPrimary)
			if rerr != nil {
				err = rerr
				break
			}
			sh.node, cursor = n, 0
			continue
		}
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w; the context ended waiting for the shard's primary: %w", err, cerr)
		}
		return nil, 0, fmt.Errorf("respire: SCAN of the shard serving slot %d (node %s): %w", sh.slot, sh.node.Addr, err)
	}
}

// scanOn sends SCAN to node n.
func (c *Client) scanOn(ctx context.Context, n *topology.Node, cursor int64, opts *ScanOptions) (ScanPage, error) {
	x := c.newCmd(&cmdSCAN)
	argsScan(x, cursor, opts)
	if x.argErr != nil {
		err := x.argErr
		x.Recycle()
		return ScanPage{}, err
	}
	x.dec = decScanPage
	x.seal()
	if c.conns > 1 {
		x.Route = c.rr.Add(1)
	}
	if err := c.onNode(ctx, n, x); err != nil {
		return ScanPage{}, err // the transport gave x back
	}
	if x.replyErr != nil {
		err := x.replyErr
		x.Recycle()
		return ScanPage{}, err
	}
	p, _ := x.res.Any.(ScanPage)
	x.Recycle()
	return p, nil
}
