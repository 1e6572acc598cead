package transport

import (
	"context"
	"fmt"
	"sync"
)

// The write window.
//
// A write whose connection breaks after its bytes were handed to the
// socket fails with its outcome unknown: the server may have run it. A
// connection would otherwise hand the socket every write its callers
// send, and the kernel's buffers on both sides (and any proxy between)
// hold megabytes, so under many callers of large SETs a break caught tens
// of them written and not yet answered, every one failed with its outcome
// unknown. A few on their way keep the server busy: so each route lets at
// most two writes of hugeWrite bytes or more, or four smaller large writes
// (payloads of DirectPayload and more, of commands that are not
// read-only), be written and unanswered at a time (windowMax,
// writeWeight). The others wait here, unwritten, in order,
// within their callers' contexts; when the connection breaks they are
// still unsent and go to the next connection, instead of failing. Small
// writes never wait: their bytes leave at once with the others', and many
// of them fit in what one large write holds.
//
// A caller that leaves while its write is in flight (its context ended)
// gives its place back at once, so the bound holds for the callers that
// wait for their replies. With at most two in flight, SETs of 1 MiB from
// 16 goroutines ran within the noise of no window at all; SETs of 128 KiB
// need four (windowMax).

// windowMax is how much a route has written and unanswered at most, in
// units of writeWeight: two writes of hugeWrite bytes or more (one being
// answered while the next is on its way), or four smaller ones. A batch
// that weighs more goes alone.
//
// Two writes in flight keep the server busy only while the caller whose
// turn is next is woken and writes before the server has read the one
// before: with writes of 128 KiB from 16 goroutines on a 2-core machine
// the wake-up took longer than the server's read, the server waited, and
// SETs ran at 0.6x go-redis's rate (16 connections, one write each); four
// in flight ran 1.7x faster, level with it (docs/reliability.md, "The
// write window"). A break still catches at most four such writes, about
// a megabyte.
const windowMax = 4

// hugeWrite is the payload from which a large write weighs a whole half of
// the window (writeWeight).
const hugeWrite = 256 << 10

// writeWeight is what r takes of its route's window: 0 for a read-only
// command or a small payload, 2 for a payload of hugeWrite bytes or more,
// 1 for one in between.
func writeWeight(r *Request) int {
	switch {
	case !largeWrite(r):
		return 0
	case r.size() >= hugeWrite:
		return windowMax / 2
	}
	return 1
}

// window admits large writes to a route's connection.
type window struct {
	mu sync.Mutex
	n  int // the weight of the large writes in flight (writeWeight)
	// queue holds the callers waiting, oldest first: admitted in order,
	// so that a large batch is not passed over for ever by single writes.
	queue []*windowWait
}

// windowWait is a caller waiting in a window. Each Request carries one,
// reused from call to call, so that waiting costs no allocation.
type windowWait struct {
	n     int           // the weight asked for
	ready chan struct{} // one signal when admitted (capacity 1)
}

// fits reports whether large writes weighing n more may go now. w.mu is
// held.
func (w *window) fits(n int) bool { return w.n == 0 || w.n+n <= windowMax }

// acquire waits until large writes weighing n may be sent, or until ctx
// or the Mux (closed) ends; its errors match ErrNotSent. Each successful
// acquire is followed by one release of the same n.
func (w *window) acquire(ctx, closed context.Context, n int) error {
	return w.acquireAs(ctx, closed, n, &windowWait{})
}

// acquireAs is acquire for the caller whose waiting place is q (the
// Request's), made ready on first use.
func (w *window) acquireAs(ctx, closed context.Context, n int, q *windowWait) error {
	w.mu.Lock()
	if len(w.queue) == 0 && w.fits(n) {
		w.n += n
		w.mu.Unlock()
		return nil
	}
	if q.ready == nil {
		q.ready = make(chan struct{}, 1)
	}
	q.n = n
	w.queue = append(w.queue, q)
	w.mu.Unlock()
	var err error
	select {
	case <-q.ready:
		return nil
	case <-ctx.Done():
		err = fmt.Errorf("waiting to write: %w", ctx.Err())
	case <-closed.Done():
		err = ErrClosed
	}
	w.mu.Lock()
	for i, x := range w.queue {
		if x == q {
			w.queue = append(w.queue[:i], w.queue[i+1:]...)
			w.admit()
			w.mu.Unlock()
			return NotSent(err)
		}
	}
	// Admitted meanwhile (the signal is there, sent under w.mu): take
	// the signal, and give the place back.
	w.mu.Unlock()
	<-q.ready
	w.release(n)
	return NotSent(err)
}

// release ends large writes weighing n (answered, failed or abandoned)
// and admits the callers waiting that now fit.
func (w *window) release(n int) {
	w.mu.Lock()
	w.n -= n
	w.admit()
	w.mu.Unlock()
}

// admit lets the oldest waiting callers go while they fit. w.mu is held.
func (w *window) admit() {
	i := 0
	for ; i < len(w.queue) && w.fits(w.queue[i].n); i++ {
		w.n += w.queue[i].n
		w.queue[i].ready <- struct{}{}
	}
	if i > 0 {
		clear(w.queue[:i])
		w.queue = w.queue[i:]
	}
}

// largeWrite reports whether r is a large write.
func largeWrite(r *Request) bool { return !r.ReadOnly && r.large() }

// windowWeight is what the batch rs takes of its route's window.
func windowWeight(rs []*Request) int {
	n := 0
	for _, r := range rs {
		n += writeWeight(r)
	}
	return n
}
