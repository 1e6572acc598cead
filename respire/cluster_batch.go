package respire

import (
	"context"
	"errors"
	"sync"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
)

// execBatchCluster runs a batch on a cluster. The commands are grouped by
// the node that serves their slot; each group goes as one pipeline, the
// groups in parallel, so commands for one node keep their order while
// those for different nodes may run in any order. A command answered with
// a redirect (MOVED, ASK, TRYAGAIN, ...) goes again on its own, as a single
// command would; blocking commands (on their nodes' pools) and commands
// fanned out by their tips run one at a time after the pipelines. errs[i]
// is nil when xs[i] holds its outcome; otherwise xs[i] is gone (given back
// to the transport) and errs[i] is its error. first is the first such
// error, or an *ArgError (a command whose keys span slots) for which
// nothing was sent.
func (c *Client) execBatchCluster(ctx context.Context, xs []*cmd) (errs []error, first error) {
	errs = make([]error, len(xs))
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
	type group struct {
		n   *topology.Node
		idx []int
	}
	var groups []*group
	byNode := map[*topology.Node]*group{}
	var alone []int
	var anyNode *topology.Node
	for i, x := range xs {
		x.seal()
		readonly := x.info.flags&flagReadonly != 0
		if readonly {
			x.Retries = c.retries
		}
		if fanned[i] || x.info.flags&flagBlocking != 0 {
			alone = append(alone, i)
			continue
		}
		var n *topology.Node
		var err error
		switch {
		case keyed[i] && readonly:
			n, err = c.cl.Route(ctx, slots[i], topology.ReadFrom(c.opts.ReadFrom))
		case keyed[i]:
			n, err = c.cl.Route(ctx, slots[i], topology.ReadPrimary)
		case anyNode != nil:
			n = anyNode
		default:
			n, err = c.cl.Any(ctx)
			anyNode = n
		}
		if err != nil {
			errs[i] = c.wrapErr("batch", err)
			x.Recycle()
			continue
		}
		g := byNode[n]
		if g == nil {
			g = &group{n: n}
			byNode[n] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, i)
	}
	run := func(g *group) {
		reqs := make([]*transport.Request, len(g.idx))
		for j, i := range g.idx {
			reqs[j] = &xs[i].Request
		}
		if err := g.n.Mux.DoMulti(ctx, reqs); err != nil {
			var ce *ConnError
			if errors.Is(err, ErrNotSent) || errors.As(err, &ce) {
				c.cl.Urgent()
			}
			err = c.wrapErr("batch", err)
			for _, i := range g.idx {
				errs[i] = err
			}
		}
	}
	if len(groups) == 1 {
		run(groups[0])
	} else {
		var wg sync.WaitGroup
		for _, g := range groups {
			wg.Add(1)
			go func() { defer wg.Done(); run(g) }()
		}
		wg.Wait()
	}
	for _, g := range groups {
		for _, i := range g.idx {
			x := xs[i]
			if errs[i] != nil {
				continue
			}
			rd, ok := redirectOf(x.replyErr, g.n.Addr)
			if !ok {
				continue
			}
			if rd.Kind == "MOVED" {
				c.cl.Moved(rd.Slot, rd.Addr)
			}
			x.replyErr = nil
			name := x.info.name
			if err := c.execCluster(ctx, x); err != nil {
				errs[i] = c.wrapCluster(name, err)
			}
		}
	}
	for _, i := range alone {
		name := xs[i].info.name
		if err := c.execCluster(ctx, xs[i]); err != nil {
			errs[i] = c.wrapCluster(name, err)
		}
	}
	for _, err := range errs {
		if err != nil {
			return errs, err
		}
	}
	return errs, nil
}
