package respire

import (
	"context"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
)

// execBatchCluster runs a batch on a cluster (topology.Cluster.ExecBatch:
// one pipeline per node, in parallel; a redirected command again on its
// own, as a single command would); blocking commands (on their nodes'
// pools) and commands fanned out by their tips run one at a time after the
// pipelines. errs[i]
// is nil when xs[i] holds its outcome; otherwise xs[i] is gone (given back
// to the transport) and errs[i] is its error. first is the first such
// error, or an *ArgError (a command whose keys span slots) for which
// nothing was sent.
func (k *clusterBackend) execBatchCluster(ctx context.Context, xs []*cmd) (errs []error, first error) {
	c := k.c
	slots := make([]uint16, len(xs))
	keyed := make([]bool, len(xs))
	fanned := make([]bool, len(xs))
	for i, x := range xs {
		if fanOut(x) {
			fanned[i] = true
			continue
		}
		s, k, err := slotOf(x)
		if err != nil {
			return nil, err
		}
		slots[i], keyed[i] = s, k
	}
	// Read-only commands follow ReadFrom, unless ctx asks for primaries.
	replicas := c.opts.ReadFrom != ReadPrimary && !primaryReads(ctx)
	items := make([]topology.BatchItem, len(xs))
	for i, x := range xs {
		x.seal()
		readonly := x.info.flags&flagReadonly != 0
		if readonly {
			x.Retries = c.retries
		}
		rf := topology.ReadPrimary
		if readonly && replicas {
			rf = c.opts.ReadFrom.route()
		}
		items[i] = topology.BatchItem{
			Cmd:   x,
			Route: topology.Route{Slot: slots[i], Keyed: keyed[i], ReadFrom: rf},
			Alone: fanned[i] || x.info.flags&flagBlocking != 0,
		}
	}
	again := func(i int) error {
		x := xs[i]
		name := x.info.name
		if err := k.execCluster(ctx, x); err != nil {
			return c.wrapCluster(ctx, name, err)
		}
		return nil
	}
	errs = k.cl.ExecBatch(ctx, items, again, func(err error) error { return c.wrapErr(ctx, "batch", err) })
	for _, err := range errs {
		if err != nil {
			return errs, err
		}
	}
	return errs, nil
}

// batch is backend.batch on a cluster, where some commands of a batch may
// fail while others succeed: each Future gets its own outcome, and Exec
// returns the first error.
func (k *clusterBackend) batch(ctx context.Context, b *Batch, cmds []*cmd, futs []settler) error {
	for _, x := range cmds {
		if ownWritesName(x) != "" {
			return k.batchHeld(ctx, b, cmds, futs)
		}
	}
	errs, first := k.execBatchCluster(ctx, cmds)
	if errs == nil {
		return b.refuse(cmds, futs, first) // refused before sending
	}
	if b.c.cache != nil {
		b.c.afterWrites(ctx, answered(cmds, errs))
	}
	for i, x := range cmds {
		if errs[i] != nil {
			futs[i].settle(nil, errs[i])
			continue
		}
		futs[i].settle(&x.res, withCommand(x.info, x.replyErr))
		b.c.release(x)
	}
	if first != nil {
		// Failed commands belong to the transport: drop the slices.
		b.lists = nil
		return first
	}
	b.recycleLists(cmds, futs)
	return nil
}

// batchHeld runs a batch that holds WAIT or WAITAOF whole on one connection
// of the primary of its keys' slot (a connection of that node's blocking
// pool, as a Tx runs), in order, so that WAIT counts the batch's writes
// (wait.go). The keys must share a slot, and a command that fans out by
// its tips cannot join: both are refused before anything is sent. When
// every command but the WAIT was answered MOVED (none ran: the slot had
// moved), the batch runs again, whole, on the new owner (MaxRedirects times
// at most). Any other redirect is not followed, since WAIT would then count
// writes made elsewhere: the redirected command fails with its MOVED or
// ASK error and the topology is refreshed.
func (k *clusterBackend) batchHeld(ctx context.Context, b *Batch, cmds []*cmd, futs []settler) error {
	c := k.c
	for _, x := range cmds {
		if fanOut(x) && ownWritesName(x) == "" { // WAIT's own tip fans it out
			return b.refuse(cmds, futs, &ArgError{Command: x.info.name, Argument: "command", Reason: waitClusterFanOut})
		}
	}
	slot, keyed, err := oneSlot(cmds, ownWritesOf(cmds), waitClusterSlot)
	if err != nil {
		return b.refuse(cmds, futs, err)
	}
	for hop := 0; ; hop++ {
		n, err := k.primaryFor(ctx, slot, keyed)
		var h *transport.Held
		if err == nil {
			h, err = n.Pool.Hold(ctx)
		}
		if err != nil {
			return b.refuse(cmds, futs, c.wrapErr(ctx, "batch", err))
		}
		err = doHeld(ctx, h, cmds)
		h.Release()
		if err != nil {
			err = c.wrapErr(ctx, "batch", err)
			for _, f := range futs {
				f.settle(nil, err)
			}
			// A late reply may still be decoded into the commands: dropped,
			// not recycled.
			b.lists = nil
			return err
		}
		if rd, ok := allMoved(cmds, n.Addr); ok && hop < topology.MaxRedirects {
			k.cl.Redirected(ctx, rd, 0, topology.FollowMoved)
			for _, x := range cmds {
				x.ClearReply()
			}
			continue
		}
		break
	}
	if c.cache != nil {
		c.afterWrites(ctx, cmds)
	}
	for i, x := range cmds {
		if _, ok := redirectOf(x.replyErr, ""); ok {
			k.cl.Urgent()
		}
		futs[i].settle(&x.res, withCommand(x.info, x.replyErr))
		b.c.release(x)
	}
	b.recycleLists(cmds, futs)
	return nil
}

// allMoved returns the MOVED that every command of a held batch but its
// WAIT or WAITAOF was answered, from the node at from: none of them ran.
func allMoved(cmds []*cmd, from string) (topology.Redirect, bool) {
	var rd topology.Redirect
	seen := false
	for _, x := range cmds {
		if ownWritesName(x) != "" {
			continue
		}
		r, ok := redirectOf(x.replyErr, from)
		if !ok || r.Kind != topology.Moved || seen && r != rd {
			return topology.Redirect{}, false
		}
		rd, seen = r, true
	}
	return rd, seen
}

// ownWritesOf names the WAIT or WAITAOF of cmds, for errors.
func ownWritesOf(cmds []*cmd) string {
	for _, x := range cmds {
		if n := ownWritesName(x); n != "" {
			return n
		}
	}
	return "WAIT"
}
