package transport

import (
	"sync/atomic"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Handler receives the outcome of a Request. The respire package implements
// it on its pooled command type.
type Handler interface {
	// HandleReply runs on the connection's reader goroutine with the reply
	// to the request. m aliases the read buffer and is valid only during the
	// call: copy what must outlive it.
	HandleReply(m resp.Msg)
	// Recycle is called, at most once per Do, when the caller gave up on the
	// request (its context ended, or Do returned an error) and the
	// connection no longer refers to it, so its owner may reuse it.
	Recycle()
}

const (
	stateIdle      uint32 = iota // not in flight
	stateWaiting                 // sent or queued, caller waiting
	stateDone                    // reply handled or failed, caller to be woken
	stateAbandoned               // caller left; whoever finishes it recycles it
	// stateDoneQuiet: a quiet request's reply was handled and nobody was
	// signalled; the caller learns it from a later request of its batch.
	stateDoneQuiet
)

// Request is one command in flight. Embed it in a pooled type, call Init
// once, then for each use set the payload and Route and pass it to Mux.Do.
type Request struct {
	payload []byte
	// refs are the large arguments written from the caller's memory
	// (bigwrite.go); bigSeq numbers the write that carries them.
	refs   []Ref
	bigSeq uint64
	// Route picks the connection when the Mux has several: requests with
	// equal Route values go to the same connection, in order.
	Route uint32
	// Retries is how often Mux.Do sends the request again when its
	// connection broke after it was written, so that it may have run: set
	// it only for commands that are safe to repeat (read-only ones).
	Retries uint8
	// ReadOnly marks a command that does not change data: while its
	// connection carries large replies, it may go to a batch lane, as a
	// batch does (lanes.go), instead of waiting behind them.
	ReadOnly bool
	handler  Handler
	// quiet is set by DoMulti on every request of a batch but the last:
	// a reply handled for it only sets its state, without waking anyone
	// (two channel operations per command saved), because the caller
	// waits for the last, which is answered after it.
	quiet bool
	state atomic.Uint32
	done  chan struct{}
	err   error
	// sent is where the send this request ends lies in the write buffer
	// (withdraw.go), under its connection's mutex.
	sent span
	// wait is its place in a write window (window.go).
	wait windowWait
}

// Init binds the request to its handler. Call it once, when the pooled
// object is created.
func (r *Request) Init(h Handler) {
	r.handler = h
	r.done = make(chan struct{}, 1)
}

// SetPayload sets the encoded command bytes. Shorter than DirectPayload,
// they are copied when the request is sent, so the buffer may be reused
// once Do returns; from DirectPayload on they are written from b itself,
// which must then not be written to again (drop it instead).
func (r *Request) SetPayload(b []byte) { r.payload, r.refs = b, nil }

// size is how many bytes r puts in a write: its payload and its large
// arguments.
func (r *Request) size() int {
	n := len(r.payload)
	for _, f := range r.refs {
		n += len(f.Data)
	}
	return n
}

// deliver hands the reply to the handler unless the caller left.
func (r *Request) deliver(m resp.Msg) {
	if r.state.Load() == stateAbandoned {
		r.handler.Recycle()
		return
	}
	r.handler.HandleReply(m)
	if r.quiet {
		if !r.state.CompareAndSwap(stateWaiting, stateDoneQuiet) {
			r.handler.Recycle() // abandoned meanwhile
		}
		return
	}
	r.finish()
}

// fail ends the request with err.
func (r *Request) fail(err error) {
	r.err = err
	r.finish()
}

func (r *Request) finish() {
	if r.state.CompareAndSwap(stateWaiting, stateDone) {
		r.done <- struct{}{}
		return
	}
	// The caller abandoned it meanwhile.
	r.handler.Recycle()
}
