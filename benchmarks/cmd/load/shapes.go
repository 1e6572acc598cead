package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
	"github.com/respire-go/respire/benchmarks/internal/hist"
)

// mode is how a shape drives a client.
type mode int

const (
	modeSeq  mode = iota // one goroutine, one command at a time
	modeConc             // width goroutines, one command at a time each
	modePipe             // one goroutine, pipelines of width commands
)

// shape is one scenario of the load harness.
type shape struct {
	Name  string
	Cmd   string // GET or INCR
	Key   string
	Value string // expected GET reply
	Mode  mode
	Width int // goroutines (conc) or commands per pipeline (pipe)
}

var shapes = []shape{
	{Name: "get-1k-seq", Cmd: "GET", Key: fixture.KeyGet1K, Value: fixture.Value1K, Mode: modeSeq, Width: 1},
	{Name: "get-8k-seq", Cmd: "GET", Key: fixture.KeyGet8K, Value: fixture.Value8K, Mode: modeSeq, Width: 1},
	{Name: "incr-seq", Cmd: "INCR", Key: fixture.KeyIncr, Mode: modeSeq, Width: 1},
	{Name: "get-1k-conc64", Cmd: "GET", Key: fixture.KeyGet1K, Value: fixture.Value1K, Mode: modeConc, Width: 64},
	{Name: "get-8k-conc64", Cmd: "GET", Key: fixture.KeyGet8K, Value: fixture.Value8K, Mode: modeConc, Width: 64},
	{Name: "incr-conc64", Cmd: "INCR", Key: fixture.KeyIncr, Mode: modeConc, Width: 64},
	{Name: "get-1k-pipe32", Cmd: "GET", Key: fixture.KeyGet1K, Value: fixture.Value1K, Mode: modePipe, Width: 32},
	{Name: "get-8k-pipe32", Cmd: "GET", Key: fixture.KeyGet8K, Value: fixture.Value8K, Mode: modePipe, Width: 32},
}

func shapeByName(name string) (shape, error) {
	for _, s := range shapes {
		if s.Name == name {
			return s, nil
		}
	}
	names := make([]string, len(shapes))
	for i, s := range shapes {
		names[i] = s.Name
	}
	return shape{}, fmt.Errorf("unknown shape %q (known: %s)", name, strings.Join(names, ", "))
}

// loadResult is what one run of a shape did.
type loadResult struct {
	Ops  int64
	Lat  hist.H // per command (seq, conc) or per pipeline (pipe)
	Took time.Duration
}

// worker runs one goroutine's commands and checks every reply.
type worker struct {
	c     clients.Client
	ck    clients.Checker // non-nil when c checks values in place
	s     shape
	last  int64 // INCR: the counter only grows
	keys  []string
	vals  []string
	ops   int64
	lat   hist.H
	fault error
}

func newWorker(c clients.Client, s shape) *worker {
	w := &worker{c: c, s: s}
	w.ck, _ = c.(clients.Checker)
	if s.Mode == modePipe {
		w.keys = make([]string, s.Width)
		w.vals = make([]string, s.Width)
		for i := range w.keys {
			w.keys[i] = s.Key
		}
	}
	return w
}

// step runs one command (or one pipeline), records its latency and checks
// the replies byte for byte.
func (w *worker) step(ctx context.Context) error {
	start := time.Now()
	var err error
	n := int64(1)
	switch {
	case w.s.Mode == modePipe && w.ck != nil:
		err = w.ck.GetPipeCheck(ctx, w.keys, w.s.Value)
		n = int64(len(w.keys))
	case w.s.Cmd == "GET" && w.ck != nil:
		err = w.ck.GetCheck(ctx, w.s.Key, w.s.Value)
	case w.s.Mode == modePipe:
		clear(w.vals)
		err = w.c.GetPipe(ctx, w.keys, w.vals)
		n = int64(len(w.keys))
		for i := 0; err == nil && i < len(w.vals); i++ {
			err = w.checkGet(w.vals[i])
		}
	case w.s.Cmd == "GET":
		var v string
		v, err = w.c.Get(ctx, w.s.Key)
		if err == nil {
			err = w.checkGet(v)
		}
	case w.s.Cmd == "INCR":
		var v int64
		v, err = w.c.Incr(ctx, w.s.Key)
		if err == nil {
			if v <= w.last {
				err = fmt.Errorf("INCR %s: %d after %d", w.s.Key, v, w.last)
			}
			w.last = v
		}
	default:
		err = fmt.Errorf("shape %s: unknown command %s", w.s.Name, w.s.Cmd)
	}
	w.lat.Record(time.Since(start))
	if err != nil {
		return fmt.Errorf("%s: %w", w.s.Name, err)
	}
	w.ops += n
	return nil
}

func (w *worker) checkGet(v string) error {
	if v != w.s.Value {
		return fmt.Errorf("GET %s: reply of %d bytes differs from the %d bytes written", w.s.Key, len(v), len(w.s.Value))
	}
	return nil
}

// driver runs a shape against a client; newDriver allocates everything
// beforehand so that a run's allocations are the client's.
type driver struct {
	s       shape
	workers []*worker
}

func newDriver(c clients.Client, s shape) *driver {
	n := 1
	if s.Mode == modeConc {
		n = s.Width
	}
	d := &driver{s: s, workers: make([]*worker, n)}
	for i := range d.workers {
		d.workers[i] = newWorker(c, s)
	}
	return d
}

// run drives the client for d and returns what was done since the previous
// run. The first wrong reply or error ends the run with that error.
func (dr *driver) run(ctx context.Context, d time.Duration) (*loadResult, error) {
	workers := dr.workers
	n := len(workers)
	for _, w := range workers {
		w.ops, w.lat = 0, hist.H{}
	}
	var stop atomic.Bool
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
	start := time.Now()
	if n == 1 {
		w := workers[0]
		for !stop.Load() {
			if w.fault = w.step(ctx); w.fault != nil {
				break
			}
		}
	} else {
		var wg sync.WaitGroup
		for _, w := range workers {
			wg.Go(func() {
				for !stop.Load() {
					if w.fault = w.step(ctx); w.fault != nil {
						stop.Store(true)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	r := &loadResult{Took: time.Since(start)}
	for _, w := range workers {
		if w.fault != nil {
			return nil, w.fault
		}
		r.Ops += w.ops
		r.Lat.Merge(&w.lat)
	}
	return r, nil
}
