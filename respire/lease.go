package respire

// Leased replies: the allocation-free forms of the commands whose reply is
// one bulk string (Get, HGet, LIndex, ...). The generator emits, next to
// each such method M, two more:
//
//	MLease(ctx, args...) (*Lease, error)          // the value in a pooled buffer
//	MAppend(ctx, dst, args...) ([]byte, error)    // the value appended to dst
//
// Both decode the same way: on the reader goroutine, while the read buffer
// is valid, the decoder copies the value into a Lease taken from a pool
// and leaves it in the command's result. The caller's buffer is never
// written there: a caller whose context ends may return while its reply is
// still being decoded (the transport then recycles the command), so the
// reader goroutine must only write memory that the command owns. MAppend
// copies from the Lease into dst on the caller's goroutine once the reply
// is in, then gives the Lease back: one more copy of the value, no
// allocation. A Lease whose caller left is released when the transport
// recycles the command (Recycle in command.go).
//
// The multi-element forms (MGetLease, HMGetLease, LRangeLease) are written
// by hand in lease_multi.go; the pool behind both is in lease_pool.go.

import (
	"context"
	"math/bits"
	"runtime"
	"strconv"
	"sync/atomic"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Lease holds the bytes of a reply in a buffer borrowed from a pool, so that
// reading a value does not allocate. It is what the ...Lease methods
// (GetLease, HGetLease, ...) return. Use them on hot paths where the value
// is consumed at once (written to a socket, decoded, compared) and the
// allocation of the plain form shows up in profiles; use the ...Append
// methods to collect values into a buffer of your own; use the plain
// methods (Get, HGet) everywhere else, since their strings need no care.
//
// The bytes are valid until Release, which must be called exactly once,
// after the last use of the bytes; the buffer then serves another reply.
// Keeping a Lease without releasing it is safe but wastes the pool. Values
// over 4 MiB get a buffer of their own, which Release drops. The pool is
// process-wide and bounded; see SetLeasePoolLimit.
//
// Misuse (a second Release, or Bytes, Len or String after Release) panics
// with a message naming it in builds with the race detector (go test
// -race) or with the respire_leasecheck build tag (go test -tags
// respire_leasecheck), which turns the checks on without the cost of the
// race detector. Without either, a second Release is ignored and Bytes
// after Release returns nil, as long as the Lease has not been handed out
// again; once it has, the stale pointer reads or releases another caller's
// value. Run tests with -race or the tag.
//
// The methods of a nil *Lease treat it as empty, and its Release does
// nothing, so that "defer l.Release()" is fine after a Nil reply.
type Lease struct {
	b []byte
	// spans are the bounds of the elements in b when the Lease serves a
	// LeaseList; they are pooled with b.
	spans []span
	class int8          // pool index, or -1 for a buffer too big to pool
	state atomic.Uint32 // leaseLive, leaseReleased
	// releasedAt says where Release was called, when checks are on.
	releasedAt string
}

const (
	leaseLive uint32 = iota
	leaseReleased
)

// leaseChecks turns on the detection of misuse: a released Lease is never
// handed out again (only its buffer is pooled), so that any later use of
// it is caught. It is on in race builds and with the respire_leasecheck
// tag; the package's tests may set it.
var leaseChecks = leaseChecksBuild

// Buffers are pooled by capacity, in powers of two from 64 bytes to 4 MiB:
// a value gets a buffer at most twice its size. Larger values get a buffer
// of their own, dropped on Release, so that a rare huge value does not
// stay pinned in the pool.
const (
	leaseMinShift = 6
	leaseMaxShift = 22
)

// leaseClass returns the pool index for a value of n bytes, or -1.
func leaseClass(n int) int {
	shift := leaseMinShift
	if n > 1<<leaseMinShift {
		shift = bits.Len(uint(n - 1))
	}
	if shift > leaseMaxShift {
		return -1
	}
	return shift - leaseMinShift
}

// getLease returns an empty live Lease with room for n bytes.
func getLease(n int) *Lease {
	c := leaseClass(n)
	if c < 0 {
		return &Lease{b: make([]byte, 0, n), class: -1}
	}
	if l := leasePool.lists[c].take(); l != nil {
		l.b = l.b[:0]
		l.spans = l.spans[:0]
		l.state.Store(leaseLive)
		return l
	}
	return &Lease{b: make([]byte, 0, 1<<(c+leaseMinShift)), class: int8(c)}
}

// Bytes returns the leased bytes. They are valid until Release; copy what
// must outlive it.
func (l *Lease) Bytes() []byte {
	if l == nil {
		return nil
	}
	if l.state.Load() != leaseLive {
		l.misuse("Lease", "Bytes")
		return nil
	}
	return l.b
}

// Len returns the number of leased bytes.
func (l *Lease) Len() int { return len(l.Bytes()) }

// String returns a copy of the leased bytes as a new string (it
// allocates; a string sharing the pooled buffer would change under its
// reader after Release).
func (l *Lease) String() string { return string(l.Bytes()) }

// Release gives the buffer back to the pool. Call it exactly once, after
// the last use of Bytes.
func (l *Lease) Release() {
	if l != nil {
		l.release("Lease")
	}
}

// release is Release for a Lease or a LeaseList (typ, for messages). It
// must be called by their Release methods, so that the caller it records
// is theirs.
func (l *Lease) release(typ string) {
	if !l.state.CompareAndSwap(leaseLive, leaseReleased) {
		l.misuse(typ, "Release")
		return
	}
	if l.class < 0 {
		l.b, l.spans = nil, nil
		return
	}
	if cap(l.spans)*spanSize > cap(l.b) {
		// Spans of many short elements: keep them no bigger than the
		// buffer they describe (lease_multi.go sizes buffers so that
		// they fit).
		l.spans = nil
	}
	if !leaseChecks {
		leasePool.lists[l.class].put(l)
		return
	}
	// Pool the buffers under a new Lease and keep this one released for
	// good, so that a stale pointer is caught however late it is used.
	if _, file, line, ok := runtime.Caller(2); ok {
		l.releasedAt = file + ":" + strconv.Itoa(line)
	}
	leasePool.lists[l.class].put(&Lease{b: l.b, spans: l.spans, class: l.class})
	l.b, l.spans = nil, nil
}

// misuse reports a use (what) of a released Lease or LeaseList (typ): a
// panic when checks are on, nothing otherwise (the caller then does
// nothing).
func (l *Lease) misuse(typ, what string) {
	if !leaseChecks {
		return
	}
	msg := "respire: " + typ + "." + what + " called after Release"
	if what == "Release" {
		msg = "respire: " + typ + ".Release called twice"
	}
	if l.releasedAt != "" {
		msg += " (released at " + l.releasedAt + ")"
	}
	panic(msg)
}

// Decoding and running, for the generated methods.

// readLease copies a string reply into a new Lease; it accepts what
// readStr accepts.
func readLease(m resp.Msg) (*Lease, error) {
	j, err := node(m, 0)
	if err != nil {
		return nil, err
	}
	n := &m[j]
	size, ok := leaseValueSize(n)
	if !ok {
		return nil, want(m, j, "a string")
	}
	l := getLease(size)
	l.b = appendLeaseValue(l.b, n)
	return l, nil
}

// leaseValueSize returns the most bytes appendLeaseValue writes for n, and
// whether n is a value a Lease holds: a string (simple, bulk, verbatim),
// a big number, a double, or an integer (in decimal).
func leaseValueSize(n *resp.Node) (int, bool) {
	switch {
	case isText(n), n.Type == resp.TypeBigNumber, n.Type == resp.TypeDouble:
		return len(n.Data), true
	case n.Type == resp.TypeInteger:
		return 20, true // the longest int64
	}
	return 0, false
}

// appendLeaseValue appends the bytes of n, which leaseValueSize accepted.
func appendLeaseValue(b []byte, n *resp.Node) []byte {
	if n.Type == resp.TypeInteger {
		return strconv.AppendInt(b, n.Int, 10)
	}
	return append(b, n.Data...)
}

// decLease is decStr into a Lease, left in r.Any.
func decLease(m resp.Msg, r *result) error {
	l, err := readLease(m)
	if err != nil {
		return err
	}
	r.Any = l
	return nil
}

// decLeaseNull is decStrNull into a Lease.
func decLeaseNull(m resp.Msg, r *result) error {
	if _, null := isNull(m, 0); null {
		return Nil
	}
	return decLease(m, r)
}

// execLease runs x, decoded by decLease or decLeaseNull, and hands its
// Lease to the caller.
func execLease(ctx context.Context, c *Client, x *cmd, dec decoder) (*Lease, error) {
	info := x.info
	if err := c.exec(ctx, x, dec); err != nil {
		return nil, withCommand(info, err)
	}
	l, _ := x.res.Any.(*Lease)
	x.res.Any = nil
	c.release(x)
	return l, nil
}

// execAppend runs x like execLease and appends the value to dst on the
// caller's goroutine; see the file comment for why not in the decoder.
func execAppend(ctx context.Context, c *Client, x *cmd, dst []byte, dec decoder) ([]byte, error) {
	l, err := execLease(ctx, c, x, dec)
	if err != nil {
		return dst, err
	}
	dst = append(dst, l.b...)
	l.Release()
	return dst, nil
}
