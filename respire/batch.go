package respire

import (
	"context"
	"errors"
	"sync"

	"github.com/respire-go/respire/internal/transport"
)

// Batch is an explicit pipeline: commands queued on it are sent together,
// in one write, when Exec is called, and their replies are read in one go.
// Every command method of Client has a Batch twin that takes the same
// arguments (without ctx) and returns a *Future for its typed result:
//
//	b := client.NewBatch()
//	n := b.Incr("hits")
//	v := b.Get("greeting")
//	if err := b.Exec(ctx); err != nil { ... } // the batch as a whole failed
//	hits, err := n.Result()                   // each command has its own outcome
//
// A Batch is not safe for concurrent use, and is used once: Exec a second
// time returns ErrBatchDone.
type Batch struct {
	c    *Client
	cmds []*cmd
	futs []settler
	done bool
	// lists holds the pooled slices behind cmds and futs (set by
	// NewBatch); Exec gives them back.
	lists *batchLists
	// Futures of the most common result types are carved from slabs, one
	// allocation per slab rather than one per command. A slab is never
	// reused: callers keep pointers into it.
	strs   []Future[string]
	ints   []Future[int64]
	leases []Future[*Lease]
	// nexted and icGen are the state of the batch interceptors' call
	// (intercept_client.go).
	nexted bool
	icGen  uint32
}

// batchLists are the per-batch slices, pooled across batches.
type batchLists struct {
	cmds []*cmd
	futs []settler
	reqs []*transport.Request
}

// maxPooledBatch is the longest batch whose slices are pooled again.
const maxPooledBatch = 4096

var batchListPool = sync.Pool{New: func() any { return new(batchLists) }}

// NewBatch returns an empty batch that runs on c.
func (c *Client) NewBatch() *Batch {
	l := batchListPool.Get().(*batchLists)
	a := new(batchAlloc)
	a.b = Batch{c: c, cmds: l.cmds[:0], futs: l.futs[:0], lists: l, strs: a.strs[:0]}
	return &a.b
}

// batchAlloc is a Batch with the first slab of its string futures, the
// result type of most batched commands (GET), in the same allocation: a
// batch of 8 GETs or fewer allocates no slab, one of 32 one (8 here, then
// 24). Its futures, like a slab's, are never reused: a caller's pointer
// to one keeps the whole allocation alive.
type batchAlloc struct {
	b    Batch
	strs [firstSlab]Future[string]
}

// firstSlab is the length of a batch's first slab of futures (takeFuture).
const firstSlab = 8

// recycleLists gives the batch's slices back to the pool once its commands
// are settled and recycled.
func (b *Batch) recycleLists(cmds []*cmd, futs []settler) {
	l := b.lists
	b.lists = nil
	if l == nil || cap(cmds) > maxPooledBatch {
		return
	}
	clear(cmds)
	clear(futs)
	clear(l.reqs)
	l.cmds, l.futs = cmds[:0], futs[:0]
	batchListPool.Put(l)
}

// refuse ends a batch that sends nothing: every Future gets err, the
// commands are given back, and err is returned.
func (b *Batch) refuse(cmds []*cmd, futs []settler, err error) error {
	for i, x := range cmds {
		futs[i].settle(nil, err)
		x.Recycle()
	}
	b.recycleLists(cmds, futs)
	return err
}

// slabFuture returns a zeroed Future from a slab when T has one, or nil.
// The type switch on a pointer to the slab matches only when T is the
// slab's type, and costs one comparison.
func slabFuture[T any](b *Batch) *Future[T] {
	switch s := any(&b.strs).(type) {
	case *[]Future[T]:
		return takeFuture(b, s)
	}
	switch s := any(&b.ints).(type) {
	case *[]Future[T]:
		return takeFuture(b, s)
	}
	switch s := any(&b.leases).(type) {
	case *[]Future[T]:
		return takeFuture(b, s)
	}
	return nil
}

// takeFuture carves a Future from *slab, starting a new slab when it is
// used up: as long as the batch so far (8 at least, 256 at most), so that
// the slabs of a batch of 32, 64, 128 ... futures of one type add up to
// exactly that many; but 24 when the batch has 8 commands, so that a batch
// of up to 32 GETs, the common pipeline, allocates one slab after the
// Batch's own 8 futures, not two (8 and 16).
func takeFuture[T any](b *Batch, slab *[]Future[T]) *Future[T] {
	s := *slab
	if len(s) == cap(s) {
		n := len(b.cmds)
		switch {
		case n < firstSlab:
			n = firstSlab
		case n == firstSlab:
			n = 3 * firstSlab
		}
		s = make([]Future[T], 0, min(n, 256))
	}
	s = s[:len(s)+1]
	*slab = s
	return &s[len(s)-1]
}

// Len is the number of commands queued.
func (b *Batch) Len() int { return len(b.cmds) }

// ErrNotExecuted is the error of a Future whose batch has not run yet.
var ErrNotExecuted = errors.New("respire: batch not executed yet")

// ErrBatchDone is returned by Exec on a batch that already ran.
var ErrBatchDone = errors.New("respire: batch already executed")

// Exec sends the queued commands and waits for all their replies. It
// returns an error only when the batch as a whole failed: an invalid
// argument in any command (then nothing is sent), the context, or the
// connection. Replies of the server, errors included, are in each
// command's Future; a null is Nil there, never an error of Exec.
func (b *Batch) Exec(ctx context.Context) error {
	if b.c.ibatch != nil && !b.done {
		return b.c.interceptBatch(ctx, b, nil)
	}
	if b.c.trace != nil && b.c.trace.batch != nil && !b.done {
		return b.execTraced(ctx)
	}
	return b.execNow(ctx)
}

// execNow is Exec without tracing.
func (b *Batch) execNow(ctx context.Context) error {
	if b.done {
		return ErrBatchDone
	}
	b.done = true
	cmds, futs := b.cmds, b.futs
	b.cmds, b.futs = nil, nil
	for _, x := range cmds {
		if x.argErr != nil {
			return b.refuse(cmds, futs, x.argErr)
		}
	}
	if len(cmds) == 0 {
		b.recycleLists(cmds, futs)
		return nil
	}
	return b.c.be.batch(ctx, b, cmds, futs)
}

// newCmd takes a command for b.
func (b *Batch) newCmd(info *cmdInfo) *cmd { return b.c.newCmd(info) }

// queue adds x, decoded by dec, and returns its future.
func queue[T any](b *Batch, x *cmd, dec decoder, pick func(*result) T) *Future[T] {
	f := slabFuture[T](b)
	if f == nil {
		f = new(Future[T])
	}
	f.pick = pick
	if b.done {
		f.err = ErrBatchDone
		f.done = true
		x.Recycle()
		return f
	}
	x.dec = dec
	b.cmds = append(b.cmds, x)
	b.futs = append(b.futs, f)
	return f
}

// settler is a Future of any type.
type settler interface {
	settle(r *result, err error)
}

// Future is the deferred result of a command queued on a Batch. It is set
// when the batch's Exec returns.
type Future[T any] struct {
	val  T
	err  error
	done bool
	pick func(*result) T
}

func (f *Future[T]) settle(r *result, err error) {
	f.done = true
	if err != nil {
		f.err = err
		return
	}
	f.val = f.pick(r)
}

// Result returns the command's value and error, as the Client method of the
// same command would have; ErrNotExecuted before the batch ran.
func (f *Future[T]) Result() (T, error) {
	if !f.done {
		var zero T
		return zero, ErrNotExecuted
	}
	return f.val, f.err
}

// Val returns the value, the zero value when Err is not nil.
func (f *Future[T]) Val() T {
	v, _ := f.Result()
	return v
}

// Err returns the command's error.
func (f *Future[T]) Err() error {
	_, err := f.Result()
	return err
}
