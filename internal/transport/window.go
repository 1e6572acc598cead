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
// unknown. Only the next few need to be on their way to keep the server
// busy: so each routed connection lets at most windowBytes of large writes
// (payloads of DirectPayload and more, of commands that are not read-only)
// be in flight, and always at least windowMin of them. The others wait
// here, unwritten, within their callers' contexts; when the connection
// breaks they are still unsent and go to the next connection, instead of
// failing. Small writes never wait: their bytes leave at once with the
// others', and many of them fit in what one large write holds.

const (
	// windowBytes bounds the bytes of large writes in flight on a
	// connection.
	windowBytes = 2 << 20
	// windowMin is how many large writes may be in flight whatever their
	// size: one answered while the next is on its way.
	windowMin = 2
)

// window admits large writes to a slot's connection.
type window struct {
	mu    sync.Mutex
	n     int // large writes in flight
	bytes int // their bytes
	// queue holds the callers waiting, oldest first: admitted in order,
	// so that a large batch is not passed over for ever by smaller ones.
	queue []*windowWait
}

type windowWait struct {
	n, bytes int
	ready    chan struct{} // closed when admitted
}

// fits reports whether n writes of bytes may go now. w.mu is held.
func (w *window) fits(n, bytes int) bool {
	return w.n == 0 || w.n+n <= windowMin || w.bytes+bytes <= windowBytes
}

// acquire waits until n large writes of bytes in all may be sent, or until
// ctx or the Mux (closed) ends; its errors match ErrNotSent. Each
// successful acquire is followed by one release of the same amounts.
func (w *window) acquire(ctx, closed context.Context, n, bytes int) error {
	w.mu.Lock()
	if len(w.queue) == 0 && w.fits(n, bytes) {
		w.n += n
		w.bytes += bytes
		w.mu.Unlock()
		return nil
	}
	q := &windowWait{n: n, bytes: bytes, ready: make(chan struct{})}
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
	// Admitted meanwhile: give the place back.
	w.mu.Unlock()
	w.release(n, bytes)
	return NotSent(err)
}

// release ends n large writes of bytes (answered, failed or abandoned)
// and admits the callers waiting that now fit.
func (w *window) release(n, bytes int) {
	w.mu.Lock()
	w.n -= n
	w.bytes -= bytes
	w.admit()
	w.mu.Unlock()
}

// admit lets the oldest waiting callers go while they fit. w.mu is held.
func (w *window) admit() {
	i := 0
	for ; i < len(w.queue) && w.fits(w.queue[i].n, w.queue[i].bytes); i++ {
		q := w.queue[i]
		w.n += q.n
		w.bytes += q.bytes
		close(q.ready)
	}
	if i > 0 {
		clear(w.queue[:i])
		w.queue = w.queue[i:]
	}
}

// largeWrite returns the bytes of r when it is a large write, else 0.
func largeWrite(r *Request) int {
	if r.ReadOnly || !r.large() {
		return 0
	}
	n := len(r.payload)
	for _, f := range r.refs {
		n += len(f.Data)
	}
	return n
}

// largeWrites returns how many of rs are large writes, and their bytes.
func largeWrites(rs []*Request) (n, bytes int) {
	for _, r := range rs {
		if b := largeWrite(r); b > 0 {
			n++
			bytes += b
		}
	}
	return n, bytes
}
