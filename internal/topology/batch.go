package topology

import (
	"context"
	"errors"
	"sync"

	"github.com/respire-go/respire/internal/transport"
)

// BatchItem is one command of a batch run on a cluster.
type BatchItem struct {
	Cmd   Command
	Route Route
	// Alone runs the command on its own, after the pipelines (a blocking
	// command, or one a caller fans out to several nodes).
	Alone bool
}

// ExecBatch runs a batch on the cluster. The commands are grouped by the
// node that serves their slot; each group goes as one pipeline, the groups
// in parallel, so commands for one node keep their order while those for
// different nodes may run in any order. A command answered with a redirect
// (MOVED, ASK, TRYAGAIN, ...) goes again on its own through again, as a
// single command would, and so do the Alone ones after the pipelines.
// errs[i] is nil when item i's command holds its outcome; otherwise the
// command is gone (given back, or the transport's) and errs[i] is its
// error: wrap's of the routing or pipeline error, or again's.
func (c *Cluster) ExecBatch(ctx context.Context, items []BatchItem, again func(i int) error, wrap func(error) error) []error {
	errs := make([]error, len(items))
	type group struct {
		n   *Node
		idx []int
	}
	var groups []*group
	byNode := map[*Node]*group{}
	var alone []int
	var anyNode *Node
	for i, it := range items {
		if it.Alone {
			alone = append(alone, i)
			continue
		}
		var n *Node
		var err error
		switch {
		case it.Route.Keyed:
			n, err = c.Route(ctx, it.Route.Slot, it.Route.ReadFrom)
		case anyNode != nil:
			n = anyNode
		default:
			n, err = c.Any(ctx)
			anyNode = n
		}
		if err != nil {
			errs[i] = wrap(err)
			it.Cmd.Recycle()
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
			reqs[j] = items[i].Cmd.Req()
		}
		if err := g.n.Mux.DoMulti(ctx, reqs); err != nil {
			var ce *transport.ConnError
			if errors.Is(err, transport.ErrNotSent) || errors.As(err, &ce) {
				c.Urgent()
			}
			err = wrap(err)
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
			if errs[i] != nil {
				continue
			}
			cmd := items[i].Cmd
			rd, ok := cmd.Redirect(g.n.Addr)
			if !ok {
				continue
			}
			// MOVED patches the map; again sends the command on its own,
			// through Exec, which follows whatever else it meets.
			c.Redirected(ctx, rd, 0, FollowMoved)
			cmd.ClearReply()
			errs[i] = again(i)
		}
	}
	for _, i := range alone {
		errs[i] = again(i)
	}
	return errs
}
