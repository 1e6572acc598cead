package respire

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Fan-out on a cluster, as the spec's tips say.
//
// request_policy all_shards sends a command to every primary (DBSIZE,
// KEYS, FLUSHALL, SCRIPT EXISTS), all_nodes to every node the client knows
// (SCRIPT LOAD, CONFIG SET), and multi_shard splits a command whose keys
// span slots into one command per slot (MGET, DEL, EXISTS, MSET, TOUCH,
// UNLINK). The parts run in parallel, each with the redirect handling of a
// single command; their replies are merged as response_policy says (agg_sum,
// agg_min, agg_max, agg_logical_and/or, all_succeeded, one_succeeded; the
// elements of a split command's replies go back to their keys' places; the
// arrays of an unsplit fan-out are concatenated; otherwise the first
// node's reply), and the merged reply goes through the command's own
// decoder, so the typed result is the one a single node would give.
// A command without a tip that spans slots is refused (ErrCrossSlot):
// splitting MSETNX, say, would break its all-or-nothing promise.

// fanOut reports whether x is to be fanned out on a cluster.
func fanOut(x *cmd) bool {
	switch x.info.requestPolicy {
	case "all_shards", "all_nodes":
		return true
	case "multi_shard":
		if len(x.keys) < 2 {
			return false
		}
		s := topology.Slot(x.keys[0])
		for _, k := range x.keys[1:] {
			if topology.Slot(k) != s {
				return true
			}
		}
	}
	return false
}

// part is one piece of a fanned-out command.
type part struct {
	x    *cmd
	node *topology.Node // set for all_shards / all_nodes
	keys []int          // for multi_shard: the key indexes it carries
	v    resp.Value
	err  error
}

// execFanOut runs a fanned-out x (sealed, decoder set) and leaves the
// merged outcome in x, as execCluster does. The contract is execCluster's.
func (k *clusterBackend) execFanOut(ctx context.Context, x *cmd) error {
	x.seal() // the parts are built from the whole command
	args, err := commandArgs(x.buf[x.start:])
	if err != nil {
		x.Recycle()
		return err
	}
	var parts []*part
	split := x.info.requestPolicy == "multi_shard"
	if split {
		parts, err = k.splitBySlot(x, args)
	} else {
		parts, err = k.perNode(ctx, x, args)
	}
	if err != nil {
		x.Recycle()
		return err
	}
	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.err = k.runPart(ctx, p)
		}()
	}
	wg.Wait()
	for _, p := range parts {
		if p.err != nil {
			x.Recycle()
			return p.err
		}
	}
	merged, err := merge(x, parts, split)
	if err != nil {
		x.Recycle()
		return err
	}
	// The merged reply goes through x's own decoder.
	buf := resp.AppendValue(nil, merged)
	m, err := resp.NewReader(bytes.NewReader(buf), resp.Limits{}).Next()
	if err != nil {
		x.Recycle()
		return fmt.Errorf("merging replies: %w", err)
	}
	x.HandleReply(m)
	return nil
}

// runPart sends one part and keeps its reply as a tree.
func (k *clusterBackend) runPart(ctx context.Context, p *part) error {
	c := k.c
	p.x.dec = decodeReply
	p.x.seal()
	name := p.x.info.name // p.x is given back on error
	var err error
	if p.node != nil {
		err = k.onNode(ctx, p.node, p.x)
	} else {
		err = k.execCluster(ctx, p.x)
	}
	if err != nil {
		return c.wrapCluster(ctx, name, err)
	}
	if p.x.replyErr != nil {
		p.v = resp.Value{Type: resp.TypeSimpleError, Str: p.x.replyErr.Error()}
		if se, ok := p.x.replyErr.(*Error); ok {
			p.v.Str = se.Message
		}
	} else {
		r, _ := p.x.res.Any.(Reply)
		p.v = r.v
	}
	p.x.Recycle()
	return nil
}

// onNode sends x to one given node (a fan-out to every node).
func (k *clusterBackend) onNode(ctx context.Context, n *topology.Node, x *cmd) error {
	if x.info.flags&flagBlocking != 0 {
		return n.Pool.Do(ctx, &x.Request)
	}
	return n.Mux.Do(ctx, &x.Request)
}

// perNode makes one copy of x for every primary (all_shards) or every node
// (all_nodes).
func (k *clusterBackend) perNode(ctx context.Context, x *cmd, args [][]byte) ([]*part, error) {
	var nodes []*topology.Node
	var err error
	if x.info.requestPolicy == "all_nodes" {
		nodes, err = k.cl.All(ctx)
	} else {
		nodes, err = k.cl.Primaries(ctx)
	}
	if err != nil {
		return nil, err
	}
	parts := make([]*part, len(nodes))
	for i, n := range nodes {
		parts[i] = &part{x: rebuild(x.info, args, nil), node: n}
	}
	return parts, nil
}

// splitBySlot makes one command per slot of x's keys, with the arguments
// that go with each key (the value after MSET's key, say), by the spec's
// key positions.
func (k *clusterBackend) splitBySlot(x *cmd, args [][]byte) ([]*part, error) {
	first, last, step := x.info.firstKey, x.info.lastKey, x.info.keyStep
	if first <= 0 || step <= 0 {
		return nil, &ArgError{Command: x.info.name, Argument: "key", Reason: ErrCrossSlot.Error() + " and the spec gives no key positions to split it"}
	}
	if last < 0 {
		last = len(args) + last
	}
	if last >= len(args) || first > last {
		return nil, &ArgError{Command: x.info.name, Argument: "key", Reason: "arguments do not match the command's key positions"}
	}
	// The key groups: a key and the step-1 arguments after it.
	end := first
	for end <= last {
		end += step
	}
	if end > len(args) {
		return nil, &ArgError{Command: x.info.name, Argument: "key", Reason: "arguments do not match the command's key positions"}
	}
	bySlot := map[uint16]*part{}
	var parts []*part
	for k, i := 0, first; i < end; k, i = k+1, i+step {
		s := topology.Slot(string(args[i]))
		p := bySlot[s]
		if p == nil {
			p = &part{}
			bySlot[s] = p
			parts = append(parts, p)
		}
		p.keys = append(p.keys, k)
	}
	for _, p := range parts {
		var pargs [][]byte
		pargs = append(pargs, args[:first]...)
		for _, k := range p.keys {
			i := first + k*step
			pargs = append(pargs, args[i:i+step]...)
		}
		pargs = append(pargs, args[end:]...)
		p.x = rebuild(x.info, pargs, func(px *cmd) {
			for _, k := range p.keys {
				px.keys = append(px.keys, string(args[first+k*step]))
			}
		})
	}
	return parts, nil
}

// rebuild encodes a command of info from its words.
func rebuild(info *cmdInfo, args [][]byte, keys func(*cmd)) *cmd {
	x := blankCmd(info)
	for _, a := range args {
		x.argBytes(a)
	}
	if keys != nil {
		keys(x)
	}
	return x
}

// commandArgs decodes an encoded command (an array of bulk strings).
func commandArgs(b []byte) ([][]byte, error) {
	m, err := resp.NewReader(bytes.NewReader(b), resp.Limits{}).Next()
	if err != nil {
		return nil, err
	}
	v := m.Tree()
	out := make([][]byte, len(v.Elems))
	for i, e := range v.Elems {
		out[i] = []byte(e.Str)
	}
	return out, nil
}

// merge combines the parts' replies as x's response policy says
// (topology.Merge).
func merge(x *cmd, parts []*part, split bool) (resp.Value, error) {
	replies := make([]resp.Value, len(parts))
	keys := make([][]int, len(parts))
	for i, p := range parts {
		replies[i], keys[i] = p.v, p.keys
	}
	return topology.Merge(x.info.responsePolicy, replies, keys, split)
}
