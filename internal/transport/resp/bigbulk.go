package resp

import (
	"strings"
	"unsafe"
)

// Large bulk strings.
//
// A bulk string of SideBulk bytes or more whose payload has not arrived yet
// is not read into the read buffer: it gets a buffer of its own, of its
// exact size, and the reads go straight into it. The read buffer stays
// small and is not moved or grown for it, and a consumer that keeps the
// value (a string reply) takes the buffer over with Msg.Take instead of
// copying it: one copy of every byte, by the kernel, instead of two. A
// buffer nobody took is reused for the next large bulk string.
//
// The buffer is allocated from the declared length, which the read buffer
// never is; so only lengths up to maxSideBulk get one, and a larger value
// is read into the read buffer as it arrives, as before.

// SideBulk is the bulk string length from which the payload is read into a
// buffer of its own (see Msg.Take).
const SideBulk = 64 << 10

const (
	// maxSideBulk bounds what a declared length alone may make the reader
	// allocate.
	maxSideBulk = 16 << 20
	// keepSpareFor is how many values without a large bulk string the
	// reader keeps a side buffer nobody took.
	keepSpareFor = 16
)

// sideBuf is the payload of node node, read into buf (payload and CRLF).
type sideBuf struct {
	node int
	buf  []byte
}

// startSide moves the bytes of the pending bulk payload (n bytes) already
// read to a buffer of their own, into which the rest is read.
func (r *Reader) startSide(n int) {
	var b []byte
	if cap(r.spare) >= n+2 {
		b, r.spare = r.spare[:n+2], nil
	} else {
		b = makeNoZero(n + 2)
	}
	r.sideN = copy(b, r.buf[r.pos:r.end])
	r.end = r.pos
	r.side = b
	r.spans[len(r.spans)-1].n = -1 // the payload is not in buf
}

// fillSide reads more of the pending bulk payload into its buffer.
func (r *Reader) fillSide() (int, error) {
	n, err := r.readInto(r.side[r.sideN:])
	r.sideN += n
	return n, err
}

// sidePayload completes the pending bulk payload once its buffer is full.
func (r *Reader) sidePayload() (ok bool, err error) {
	if r.sideN < len(r.side) {
		return false, nil
	}
	n := len(r.side) - 2
	if r.side[n] != '\r' || r.side[n+1] != '\n' {
		return false, r.errorf(r.pos, "%d-byte bulk payload not followed by CRLF (got %q)", n, r.side[n:])
	}
	r.sides = append(r.sides, sideBuf{node: len(r.nodes) - 1, buf: r.side})
	// The stream went on past the bytes in buf by the payload's length.
	r.base += int64(len(r.side))
	r.side, r.sideN = nil, 0
	r.pendingBulk, r.bulkLen = false, 0
	return true, nil
}

// finishSides points the nodes read into side buffers at them.
func (r *Reader) finishSides() {
	for _, s := range r.sides {
		n := len(s.buf) - 2
		nd := &r.nodes[s.node]
		nd.Data = s.buf[:n:n]
		nd.side = true
	}
}

// releaseSides forgets the side buffers of the previous value, keeping one
// nobody took for reuse, for a while.
func (r *Reader) releaseSides() {
	if len(r.sides) == 0 {
		if r.spare != nil {
			if r.noSide++; r.noSide > keepSpareFor {
				r.spare = nil
			}
		}
		return
	}
	r.noSide = 0
	for i, s := range r.sides {
		if s.node < len(r.nodes) && !r.nodes[s.node].taken && cap(s.buf) > cap(r.spare) {
			r.spare = s.buf
		}
		r.sides[i] = sideBuf{}
	}
	r.sides = r.sides[:0]
}

// resetSides drops all side buffers.
func (r *Reader) resetSides() {
	clear(r.sides)
	r.sides = r.sides[:0]
	r.side, r.sideN, r.spare, r.noSide = nil, 0, nil, 0
}

// Take returns the payload of node i and whether the caller may keep it
// after the next Reader.Next: true for a large bulk string read into a
// buffer of its own, which the reader then never reuses; false for
// anything else, whose Data aliases the read buffer and must be copied.
func (m Msg) Take(i int) ([]byte, bool) {
	n := &m[i]
	if !n.side || n.taken {
		return n.Data, false
	}
	n.taken = true
	return n.Data, true
}

// makeNoZero returns a new n-byte slice whose bytes are not zeroed first:
// every one of them is read from the stream before anything looks at it,
// and zeroing a megabyte costs as much as copying it. strings.Builder is
// the standard library's way to such memory.
func makeNoZero(n int) []byte {
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte(0)
	return unsafe.Slice(unsafe.StringData(sb.String()), n)
}
