package respire

import (
	"context"

	"github.com/respire-go/respire/internal/topology"
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
func (c *Client) execBatchCluster(ctx context.Context, xs []*cmd) (errs []error, first error) {
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
	items := make([]topology.BatchItem, len(xs))
	for i, x := range xs {
		x.seal()
		readonly := x.info.flags&flagReadonly != 0
		if readonly {
			x.Retries = c.retries
		}
		rf := topology.ReadPrimary
		if readonly {
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
		if err := c.execCluster(ctx, x); err != nil {
			return c.wrapCluster(ctx, name, err)
		}
		return nil
	}
	errs = c.cl.ExecBatch(ctx, items, again, func(err error) error { return c.wrapErr(ctx, "batch", err) })
	for _, err := range errs {
		if err != nil {
			return errs, err
		}
	}
	return errs, nil
}
