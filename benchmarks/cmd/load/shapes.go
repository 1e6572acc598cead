package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
	"github.com/respire-go/respire/benchmarks/internal/hist"
)

// mode is how a shape drives a client.
type mode int

const (
	modeSeq  mode = iota // one goroutine, one command at a time
	modeConc             // Callers goroutines, one command at a time each
	modePipe             // Callers goroutines, pipelines of Width commands each
)

// shape is one scenario of the load harness.
type shape struct {
	Name  string
	Cmd   string // GET, SET, INCR, MGET, or MIX (80% GET, 20% SET)
	Key   string // the key of a GET, SET or INCR on one key
	Value string // the value that GET expects or SET writes
	// Keys, when set, is where the keys come from instead: pipelines and
	// MGET take Width consecutive keys, MIX draws them Zipf-distributed.
	Keys *fixture.Keyset
	Mode mode
	// Width is the commands per pipeline (pipe) or the keys of an MGET.
	Width int
	// Callers is the number of goroutines (1 when 0).
	Callers int
	// Group names the set of shapes this one belongs to (-shapes GROUP).
	Group string
}

func (s shape) callers() int { return max(s.Callers, 1) }

// The groups of shapes: the standard ones of the first suite, the
// concurrent pipelines, and those that show how cost grows with the size
// of values, the number of callers and the kind of work.
const (
	groupStandard = "standard"
	groupPipes    = "pipes"
	groupGrowth   = "growth"
)

var shapes = []shape{
	{Name: "get-1k-seq", Cmd: "GET", Key: fixture.KeyGet1K, Value: fixture.Value1K, Mode: modeSeq},
	{Name: "get-8k-seq", Cmd: "GET", Key: fixture.KeyGet8K, Value: fixture.Value8K, Mode: modeSeq},
	{Name: "incr-seq", Cmd: "INCR", Key: fixture.KeyIncr, Mode: modeSeq},
	{Name: "get-1k-conc64", Cmd: "GET", Key: fixture.KeyGet1K, Value: fixture.Value1K, Mode: modeConc, Callers: 64},
	{Name: "get-8k-conc64", Cmd: "GET", Key: fixture.KeyGet8K, Value: fixture.Value8K, Mode: modeConc, Callers: 64},
	{Name: "incr-conc64", Cmd: "INCR", Key: fixture.KeyIncr, Mode: modeConc, Callers: 64},
	{Name: "get-1k-pipe32", Cmd: "GET", Key: fixture.KeyGet1K, Value: fixture.Value1K, Mode: modePipe, Width: 32},
	{Name: "get-8k-pipe32", Cmd: "GET", Key: fixture.KeyGet8K, Value: fixture.Value8K, Mode: modePipe, Width: 32},

	{Name: "get-1k-pipe32x1", Cmd: "GET", Keys: fixture.Pipe1K, Mode: modePipe, Width: 32, Callers: 1, Group: groupPipes},
	{Name: "get-1k-pipe32x4", Cmd: "GET", Keys: fixture.Pipe1K, Mode: modePipe, Width: 32, Callers: 4, Group: groupPipes},
	{Name: "get-1k-pipe32x16", Cmd: "GET", Keys: fixture.Pipe1K, Mode: modePipe, Width: 32, Callers: 16, Group: groupPipes},
	{Name: "get-8k-pipe32x1", Cmd: "GET", Keys: fixture.Pipe8K, Mode: modePipe, Width: 32, Callers: 1, Group: groupPipes},
	{Name: "get-8k-pipe32x4", Cmd: "GET", Keys: fixture.Pipe8K, Mode: modePipe, Width: 32, Callers: 4, Group: groupPipes},
	{Name: "get-8k-pipe32x16", Cmd: "GET", Keys: fixture.Pipe8K, Mode: modePipe, Width: 32, Callers: 16, Group: groupPipes},

	{Name: "get-100k-seq", Cmd: "GET", Key: fixture.KeyGet100K, Value: fixture.Value100K, Mode: modeSeq, Group: groupGrowth},
	{Name: "get-100k-conc16", Cmd: "GET", Key: fixture.KeyGet100K, Value: fixture.Value100K, Mode: modeConc, Callers: 16, Group: groupGrowth},
	{Name: "get-1m-seq", Cmd: "GET", Key: fixture.KeyGet1M, Value: fixture.Value1M, Mode: modeSeq, Group: groupGrowth},
	{Name: "get-1m-conc16", Cmd: "GET", Key: fixture.KeyGet1M, Value: fixture.Value1M, Mode: modeConc, Callers: 16, Group: groupGrowth},
	{Name: "set-100k-seq", Cmd: "SET", Key: fixture.KeySet100K, Value: fixture.Value100K, Mode: modeSeq, Group: groupGrowth},
	{Name: "set-100k-conc16", Cmd: "SET", Key: fixture.KeySet100K, Value: fixture.Value100K, Mode: modeConc, Callers: 16, Group: groupGrowth},
	{Name: "set-1m-seq", Cmd: "SET", Key: fixture.KeySet1M, Value: fixture.Value1M, Mode: modeSeq, Group: groupGrowth},
	{Name: "set-1m-conc16", Cmd: "SET", Key: fixture.KeySet1M, Value: fixture.Value1M, Mode: modeConc, Callers: 16, Group: groupGrowth},
	{Name: "get-1k-conc1024", Cmd: "GET", Key: fixture.KeyGet1K, Value: fixture.Value1K, Mode: modeConc, Callers: 1024, Group: groupGrowth},
	{Name: "mget-100-seq", Cmd: "MGET", Keys: fixture.MGet, Mode: modeSeq, Width: 100, Group: groupGrowth},
	{Name: "mget-100-conc16", Cmd: "MGET", Keys: fixture.MGet, Mode: modeConc, Width: 100, Callers: 16, Group: groupGrowth},
	{Name: "mix-1k-conc64", Cmd: "MIX", Keys: fixture.Mix, Mode: modeConc, Callers: 64, Group: groupGrowth},

	{Name: "set-1k-seq", Cmd: "SET", Key: fixture.KeySet1K, Value: fixture.Value1K, Mode: modeSeq, Group: groupRound4},
	{Name: "set-1k-conc64", Cmd: "SET", Key: fixture.KeySet1K, Value: fixture.Value1K, Mode: modeConc, Callers: 64, Group: groupRound4},
}

// groupRound4 is the selection of the busy-host and link runs of issue 33:
// the standard shapes, SET of 1 KiB, 1, 4, 64 and 1,024 callers, batches
// of 1 and 10, and 4 concurrent pipelines. Besides its own two SET shapes
// it takes shapes of other groups, by name.
const groupRound4 = "round4"

var round4Shapes = []string{
	"get-1k-seq", "get-8k-seq", "incr-seq", "set-1k-seq",
	"callers-get-1k-x4",
	"get-1k-conc64", "get-8k-conc64", "incr-conc64", "set-1k-conc64",
	"get-1k-conc1024",
	"batch-get-1k-b1-x1", "batch-get-1k-b10-x1",
	"get-1k-pipe32", "get-8k-pipe32", "get-1k-pipe32x4", "get-8k-pipe32x4",
}

func init() {
	for i := range shapes {
		if shapes[i].Group == "" {
			shapes[i].Group = groupStandard
		}
	}
}

// selectShapes resolves a -shapes list of names and group names.
func selectShapes(list []string) ([]shape, error) {
	var sel []shape
	for _, name := range list {
		if name == groupRound4 {
			for _, r := range round4Shapes {
				s, err := shapeByName(r)
				if err != nil {
					return nil, err
				}
				sel = append(sel, s)
			}
			continue
		}
		n := len(sel)
		for _, s := range shapes {
			if s.Name == name || s.Group == name || name == "all" {
				sel = append(sel, s)
			}
		}
		if len(sel) == n {
			return nil, fmt.Errorf("unknown shape %q (known: the groups all, %s, %s, %s, %s, %s, %s, %s, %s and %s)",
				name, groupStandard, groupPipes, groupGrowth, groupCallers, groupValues, groupBatch, groupCluster, groupRound4, strings.Join(shapeNames(), ", "))
		}
	}
	return sel, nil
}

func shapeByName(name string) (shape, error) {
	sel, err := selectShapes([]string{name})
	if err != nil {
		return shape{}, err
	}
	if len(sel) != 1 {
		return shape{}, fmt.Errorf("%q names %d shapes", name, len(sel))
	}
	return sel[0], nil
}

func shapeNames() []string {
	names := make([]string, len(shapes))
	for i, s := range shapes {
		names[i] = s.Name
	}
	return names
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
	idx   []int // the keyset index of each of keys
	vals  []string
	next  int // the keyset index the next pipeline or MGET starts at
	zipf  *rand.Zipf
	rnd   *rand.Rand
	sbuf  []byte // MIX: the value a SET writes
	okFn  func(i int, v []byte) bool
	ops   int64
	lat   hist.H
	fault error
}

func newWorker(c clients.Client, s shape, n int) *worker {
	w := &worker{c: c, s: s}
	w.ck, _ = c.(clients.Checker)
	if s.Cmd == "MGET" || s.Cmd == "MIX" {
		w.ck = nil // the Lease forms are for GET
	}
	if s.Width > 0 {
		w.keys = make([]string, s.Width)
		w.idx = make([]int, s.Width)
		w.vals = make([]string, s.Width)
		for i := range w.keys {
			w.keys[i] = s.Key
		}
	}
	if ks := s.Keys; ks != nil {
		// Goroutines start at different keys.
		w.next = n * max(s.Width, 1) * 7 % ks.N
		keyOf(ks, 0)
		w.fillKeys()
	}
	if s.Cmd == "MIX" {
		w.rnd = rand.New(rand.NewPCG(uint64(n), 15))
		w.zipf = rand.NewZipf(w.rnd, 1.1, 1, uint64(s.Keys.N-1))
		w.sbuf = make([]byte, 0, s.Keys.Size)
	}
	w.okFn = func(i int, v []byte) bool {
		if w.s.Keys != nil {
			return fixture.Check(w.s.Keys, w.idx[i], v)
		}
		return string(v) == w.s.Value
	}
	return w
}

// fillKeys takes the next Width keys of the keyset.
func (w *worker) fillKeys() {
	ks := w.s.Keys
	for i := range w.keys {
		w.idx[i] = w.next
		w.keys[i] = keyOf(ks, w.next)
		w.next = (w.next + 1) % ks.N
	}
}

// keyNames holds every keyset's key strings, built before measuring so
// that the tool allocates none while it measures.
var keyNames = map[*fixture.Keyset][]string{}

func keyOf(ks *fixture.Keyset, i int) string {
	names := keyNames[ks]
	if names == nil {
		names = make([]string, ks.N)
		for j := range names {
			names[j] = ks.Key(j)
		}
		keyNames[ks] = names
	}
	return names[i]
}

// step runs one command (or one pipeline, or one MGET), records its
// latency and checks the replies byte for byte.
func (w *worker) step(ctx context.Context) error {
	if w.s.Keys != nil && w.s.Width > 0 {
		w.fillKeys()
	}
	start := time.Now()
	var err error
	n := int64(1)
	switch {
	case w.s.Cmd == "GET" && w.s.Keys != nil && w.s.Width == 0:
		err = w.getNext(ctx)
	case w.s.Cmd == "MIX":
		err = w.mix(ctx)
	case w.s.Cmd == "MGET":
		clear(w.vals)
		err = w.c.MGet(ctx, w.keys, w.vals)
		for i := 0; err == nil && i < len(w.vals); i++ {
			err = w.checkAt(i, w.vals[i])
		}
	case w.s.Mode == modePipe && w.ck != nil:
		err = w.ck.GetPipeCheck(ctx, w.keys, w.okFn)
		n = int64(len(w.keys))
	case w.s.Cmd == "GET" && w.ck != nil:
		err = w.ck.GetCheck(ctx, w.s.Key, w.s.Value)
	case w.s.Mode == modePipe:
		clear(w.vals)
		err = w.c.GetPipe(ctx, w.keys, w.vals)
		n = int64(len(w.keys))
		for i := 0; err == nil && i < len(w.vals); i++ {
			err = w.checkAt(i, w.vals[i])
		}
	case w.s.Cmd == "GET":
		var v string
		v, err = w.c.Get(ctx, w.s.Key)
		if err == nil {
			err = w.checkGet(v)
		}
	case w.s.Cmd == "SET":
		err = w.c.Set(ctx, w.s.Key, w.s.Value)
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

// mix runs one command of the mixed workload: a GET (80%) or a SET (20%)
// of a Zipf-drawn key. Every SET writes the key's own value, so a GET
// must always find it.
func (w *worker) mix(ctx context.Context) error {
	ks := w.s.Keys
	i := int(w.zipf.Uint64())
	key := keyOf(ks, i)
	if w.rnd.IntN(5) == 0 {
		w.sbuf = ks.AppendValue(w.sbuf[:0], i)
		// The clients copy the value before Set returns (into their
		// write buffers), so the buffer is reused without a string copy.
		return w.c.Set(ctx, key, unsafe.String(unsafe.SliceData(w.sbuf), len(w.sbuf)))
	}
	v, err := w.c.Get(ctx, key)
	if err != nil {
		return err
	}
	if !fixture.Check(ks, i, v) {
		return fmt.Errorf("GET %s: reply of %d bytes differs from the value written", key, len(v))
	}
	return nil
}

// getNext GETs the keyset's next key (each goroutine walks the keys from
// its own start) and checks the value: GETs spread over many keys, and
// over a cluster's slots.
func (w *worker) getNext(ctx context.Context) error {
	ks := w.s.Keys
	i := w.next
	w.next = (w.next + 1) % ks.N
	key := keyOf(ks, i)
	v, err := w.c.Get(ctx, key)
	if err != nil {
		return err
	}
	if !fixture.Check(ks, i, v) {
		return fmt.Errorf("GET %s: reply of %d bytes differs from the value written", key, len(v))
	}
	return nil
}

func (w *worker) checkAt(i int, v string) error {
	if w.s.Keys == nil {
		return w.checkGet(v)
	}
	if !fixture.Check(w.s.Keys, w.idx[i], v) {
		return fmt.Errorf("GET %s: reply of %d bytes differs from the %d bytes written", w.keys[i], len(v), w.s.Keys.Size)
	}
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
	// deadline, when set, is the timeout of the context of each step.
	deadline time.Duration
}

func newDriver(c clients.Client, s shape) *driver {
	d := &driver{s: s, workers: make([]*worker, s.callers())}
	for i := range d.workers {
		d.workers[i] = newWorker(c, s, i)
	}
	return d
}

// step runs one step of w, under a context of its own when dr has a
// deadline.
func (dr *driver) step(ctx context.Context, w *worker) error {
	if dr.deadline <= 0 {
		return w.step(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, dr.deadline)
	err := w.step(ctx)
	cancel()
	return err
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
			if w.fault = dr.step(ctx, w); w.fault != nil {
				break
			}
		}
	} else {
		var wg sync.WaitGroup
		for _, w := range workers {
			wg.Go(func() {
				for !stop.Load() {
					if w.fault = dr.step(ctx, w); w.fault != nil {
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
