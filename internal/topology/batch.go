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
// different nodes may run in any order. The keyed commands answered MOVED
// go again the same way, grouped by their new nodes, in a next round
// (MaxRedirects rounds at most): a migration that moves many slots costs a
// batch a round trip per round, not one per moved command. A command
// answered with another redirect (ASK, TRYAGAIN, ...), a keyless one
// answered MOVED, and one still moved after the last round go again on
// their own through again, as single commands would, several at once; so
// do the Alone ones after the pipelines, one at a time.
// errs[i] is nil when item i's command holds its outcome; otherwise the
// command is gone (given back, or the transport's) and errs[i] is its
// error: wrap's of the routing or pipeline error, or again's.
func (c *Cluster) ExecBatch(ctx context.Context, items []BatchItem, again func(i int) error, wrap func(error) error) []error {
	errs := make([]error, len(items))
	var pending, alone []int
	for i, it := range items {
		if it.Alone {
			alone = append(alone, i)
		} else {
			pending = append(pending, i)
		}
	}
	for round := 0; len(pending) > 0; round++ {
		var single []int
		pending, single = c.batchRound(ctx, items, pending, errs, wrap, round < MaxRedirects)
		c.againEach(items, single, errs, again)
	}
	for _, i := range alone {
		errs[i] = again(i)
	}
	return errs
}

// batchRound sends the commands of items at idx, one pipeline per node,
// the nodes in parallel, and sorts out their replies: moved are the keyed
// commands answered MOVED when another round may follow, single the ones
// redirected otherwise, to go again on their own. The map is patched from
// every MOVED, and the replies of both are cleared.
func (c *Cluster) batchRound(ctx context.Context, items []BatchItem, idx []int, errs []error, wrap func(error) error, more bool) (moved, single []int) {
	type group struct {
		n   *Node
		idx []int
	}
	var groups []*group
	byNode := map[*Node]*group{}
	var anyNode *Node
	for _, i := range idx {
		it := items[i]
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
			// MOVED patches the map; again follows whatever else it meets.
			c.Redirected(ctx, rd, 0, FollowMoved)
			cmd.ClearReply()
			if rd.Kind == Moved && more && items[i].Route.Keyed {
				moved = append(moved, i)
			} else {
				single = append(single, i)
			}
		}
	}
	return moved, single
}

// againMax bounds how many slots' redirected commands of a batch go again
// at once.
const againMax = 16

// againEach runs again for the items at idx and keeps their errors in errs:
// the commands of one slot (and the keyless ones) one after the other, in
// their order in the batch, and different slots' at once.
func (c *Cluster) againEach(items []BatchItem, idx []int, errs []error, again func(i int) error) {
	switch len(idx) {
	case 0:
		return // most rounds: nothing redirected but MOVED
	case 1:
		errs[idx[0]] = again(idx[0])
		return
	}
	var lanes [][]int
	bySlot := map[int]int{}
	for _, i := range idx {
		key := -1
		if r := items[i].Route; r.Keyed {
			key = int(r.Slot)
		}
		l, ok := bySlot[key]
		if !ok {
			l = len(lanes)
			bySlot[key] = l
			lanes = append(lanes, nil)
		}
		lanes[l] = append(lanes[l], i)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, againMax)
	for _, lane := range lanes {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			for _, i := range lane {
				errs[i] = again(i)
			}
		}()
	}
	wg.Wait()
}
