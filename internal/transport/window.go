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
// unknown. Only the next one needs to be on its way to keep the server
// busy: so each route lets at most windowMax large writes (payloads of
// DirectPayload and more, of commands that are not read-only) be written
// and unanswered at a time. The others wait here, unwritten, in order,
// within their callers' contexts; when the connection breaks they are
// still unsent and go to the next connection, instead of failing. Small
// writes never wait: their bytes leave at once with the others', and many
// of them fit in what one large write holds.
//
// A caller that leaves while its write is in flight (its context ended)
// gives its place back at once, so the bound holds for the callers that
// wait for their replies. It costs concurrent large writes no throughput
// measured: on loopback, SETs of 100 KiB from 16 goroutines went faster
// with it than without, SETs of 1 MiB within the noise
// (docs/reliability.md).

// windowMax is how many large writes a route has written and unanswered
// at most: one being answered while the next is on its way. A batch with
// more goes alone.
const windowMax = 2

// window admits large writes to a route's connection.
type window struct {
	mu sync.Mutex
	n  int // large writes in flight
	// queue holds the callers waiting, oldest first: admitted in order,
	// so that a large batch is not passed over for ever by single writes.
	queue []*windowWait
}

// windowWait is a caller waiting in a window. Each Request carries one,
// reused from call to call, so that waiting costs no allocation.
type windowWait struct {
	n     int
	ready chan struct{} // one signal when admitted (capacity 1)
}

// fits reports whether n more large writes may go now. w.mu is held.
func (w *window) fits(n int) bool { return w.n == 0 || w.n+n <= windowMax }

// acquire waits until n large writes may be sent, or until ctx or the Mux
// (closed) ends; its errors match ErrNotSent. Each successful acquire is
// followed by one release of the same n.
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

// release ends n large writes (answered, failed or abandoned) and admits
// the callers waiting that now fit.
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

// largeWrites returns how many of rs are large writes.
func largeWrites(rs []*Request) int {
	n := 0
	for _, r := range rs {
		if largeWrite(r) {
			n++
		}
	}
	return n
}
