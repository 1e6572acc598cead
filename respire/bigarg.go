package respire

import (
	"strconv"

	"github.com/respire-go/respire/internal/transport"
)

// Large arguments.
//
// An argument of transport.DirectPayload bytes or more (a SET of a 1 MiB
// value) is not copied into the command's buffer: only its bulk header
// is, and the transport writes the caller's bytes from where they are,
// between the buffered bytes around them (transport.Request.SetRefs). The
// buffer stays small and pooled, and every byte of the value is copied
// once, by the kernel.
//
// A string's bytes never change, and a []byte is the caller's to reuse
// once the call returns: the transport returns only when no write reads
// them any more, a cancelled call included.
//
// Paths that need the whole command in one buffer (transactions, the
// blocking pool, tracing, cluster fan-out, cache keys) call seal or
// flatten, which copy the large arguments in, as before; only the
// multiplexed paths seal with sealRefs.

// argRef appends the bulk header of b and refers to b for its bytes.
func (x *cmd) argRef(b []byte) {
	x.buf = append(x.buf, '$')
	x.buf = strconv.AppendInt(x.buf, int64(len(b)), 10)
	x.buf = append(x.buf, '\r', '\n')
	x.refs = append(x.refs, transport.Ref{At: len(x.buf), Data: b})
	x.buf = append(x.buf, '\r', '\n')
	x.nargs++
}

// sealRefs is seal for the multiplexed paths: large arguments stay
// referenced, not copied.
func (x *cmd) sealRefs() {
	x.sealHeader()
	if len(x.refs) == 0 {
		return
	}
	x.wrefs = x.wrefs[:0]
	for _, f := range x.refs {
		x.wrefs = append(x.wrefs, transport.Ref{At: f.At - x.start, Data: f.Data})
	}
	x.SetRefs(x.wrefs)
}

// flatten copies the large arguments into buf, for a path that needs the
// command in one buffer; a sealed command must be sealed again. The
// buffer then grows past what is pooled, and is dropped when x is
// recycled.
func (x *cmd) flatten() {
	if len(x.refs) == 0 {
		return
	}
	x.buf = transport.JoinRefs(x.buf, x.refs)
	x.dropRefs()
}

// dropRefs forgets the large arguments.
func (x *cmd) dropRefs() {
	clear(x.refs)
	x.refs = x.refs[:0]
	clear(x.wrefs)
	x.wrefs = x.wrefs[:0]
	x.SetRefs(nil)
}
