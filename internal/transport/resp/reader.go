package resp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"
)

// Buffer sizing. The read buffer starts at initialBufSize and doubles while a
// single reply needs more. A buffer that grew past maxRetainBuf is dropped in
// favour of a fresh small one once small replies follow again, so one huge
// reply does not pin its memory for the life of the connection. The node
// slice follows the same rule.
//
// A buffer also doubles, up to streamBufSize, when reads keep filling it
// (the socket holds more than the buffer takes: pipelined or concurrent
// replies arrive faster than one read drains them), so that a stream of
// replies is read in few large reads rather than many small ones. It only
// grows for bytes that actually arrived.
const (
	initialBufSize   = 16 << 10
	streamBufSize    = 256 << 10
	maxRetainBuf     = 1 << 20
	smallMsgBytes    = 64 << 10
	maxRetainNodes   = 1 << 15
	smallMsgNodes    = 1 << 10
	maxEmptyReads    = 100
	initialStackSize = 8
)

// ReaderStats counts what a Reader has done since it was created or Reset.
type ReaderStats struct {
	// Reads is the number of calls to the underlying reader that returned data.
	Reads int64
	// Bytes is the total number of bytes read from the underlying reader.
	Bytes int64
	// Values is the number of top-level values returned by Next.
	Values int64
}

// Reader parses RESP2 and RESP3 values from a byte stream.
//
// It parses incrementally: when a value is not complete yet, Reader keeps its
// position, its stack of open aggregates and the nodes built so far, reads
// more and resumes where it stopped, so a reply that arrives in many small
// reads costs time in proportion to its size. A Reader is not safe for
// concurrent use.
type Reader struct {
	rd  io.Reader
	lim Limits

	buf   []byte
	base  int64 // stream offset of buf[0], for error offsets
	start int   // first byte of the value being parsed (or last returned)
	pos   int   // next byte to parse
	end   int   // end of the bytes read so far
	// scanned counts bytes after the type byte at pos already known to hold
	// no CR, so a long line arriving in pieces is scanned once.
	scanned int

	nodes []Node
	spans []span // payload of nodes[i] at buf[start+off:][:n]; n < 0: none
	stack []frame

	// pendingBulk is set when the last node's header has been parsed and its
	// payload of bulkLen bytes (plus CRLF) has not fully arrived yet.
	pendingBulk bool
	bulkLen     int

	err   error // sticky
	rdErr error // error returned by rd together with data, reported later
	// inMsg is set while a value is partly parsed, so that Next resumes it
	// after a read deadline instead of starting over.
	inMsg bool

	lastBytes int // size of the last returned value
	// lastLarge is set when the last returned value was large (LastLarge).
	lastLarge bool
	lastNodes int
	// filled is set when the last read filled all the free space of the
	// buffer: the source may hold more than the buffer took.
	filled bool
	stats  ReaderStats

	// side is the buffer of the large bulk payload being read, sideN the
	// bytes of it read; sides are the large payloads of the current value,
	// spare a side buffer kept for reuse (bigbulk.go).
	side   []byte
	sideN  int
	sides  []sideBuf
	spare  []byte
	noSide int
}

// span locates a node's payload relative to the start of its message, so the
// buffer may move while the message is parsed.
type span struct{ off, n int }

// frame is an open aggregate: the number of elements still expected and
// whether it is an attribute (whose completion is not an element itself).
type frame struct {
	rem  int64
	attr bool
}

// NewReader returns a Reader reading from rd with limits lim; zero fields of
// lim mean their defaults.
func NewReader(rd io.Reader, lim Limits) *Reader {
	return &Reader{
		rd:    rd,
		lim:   lim.WithDefaults(),
		buf:   make([]byte, initialBufSize),
		stack: make([]frame, 0, initialStackSize),
	}
}

// LastLarge reports whether the value Next returned last took 64 KiB or
// more, in its buffer or in payloads of its own.
func (r *Reader) LastLarge() bool { return r.lastLarge }

// Reset makes r read from rd as if it were new, keeping its buffers (unless
// they grew past the size a Reader retains) and its limits. Stats restart at
// zero.
func (r *Reader) Reset(rd io.Reader) {
	r.rd = rd
	r.base, r.start, r.pos, r.end, r.scanned = 0, 0, 0, 0, 0
	r.nodes, r.spans, r.stack = r.nodes[:0], r.spans[:0], r.stack[:0]
	r.pendingBulk, r.bulkLen = false, 0
	r.err, r.rdErr, r.inMsg = nil, nil, false
	r.lastBytes, r.lastNodes, r.filled, r.lastLarge = 0, 0, false, false
	r.stats = ReaderStats{}
	r.resetSides()
	if len(r.buf) > maxRetainBuf || r.buf == nil {
		r.buf = make([]byte, initialBufSize)
	}
	if cap(r.nodes) > maxRetainNodes {
		r.nodes, r.spans = nil, nil
	}
}

// Shrink gives back what r holds beyond keep bytes of read buffer and
// keep bytes of nodes, and any spare buffer for large bulk strings, for a
// connection about to sit idle or blocked; a buffer that must grow later
// grows as usual. It does nothing while r holds unread bytes or a value in
// progress. The last Msg returned, and its Data, are invalid afterwards,
// except payloads taken with Msg.Take.
func (r *Reader) Shrink(keep int) {
	if r.inMsg || r.end != r.pos || r.err != nil {
		return
	}
	r.base += int64(r.end)
	r.start, r.pos, r.end, r.scanned = 0, 0, 0, 0
	r.lastBytes, r.lastNodes, r.filled, r.lastLarge = 0, 0, false, false
	r.nodes, r.spans = r.nodes[:0], r.spans[:0]
	r.resetSides()
	keep = max(keep, 0)
	if len(r.buf) > keep {
		r.buf = make([]byte, keep)
	}
	if cap(r.nodes)*int(unsafe.Sizeof(Node{}))+cap(r.spans)*int(unsafe.Sizeof(span{})) > keep {
		r.nodes, r.spans = nil, nil
	}
}

// Buffered returns the number of bytes read from the stream and not yet
// returned as part of a value.
func (r *Reader) Buffered() int { return r.end - r.pos }

// Stats returns the counters of r.
func (r *Reader) Stats() ReaderStats { return r.stats }

// Next reads one complete top-level value.
//
// The returned Msg and every Data slice in it alias the reader's buffers and
// are valid only until the next call to Next or Reset.
//
// Errors from the underlying reader are returned as they are, with one
// exception: io.EOF is returned only when the stream ends cleanly between
// values; a stream that ends inside a value gives an error wrapping
// io.ErrUnexpectedEOF. Malformed or over-limit input gives a *ProtocolError
// (errors.Is(err, ErrProtocol)). Every error is sticky: once Next fails, it
// keeps failing with the same error until Reset, except a read deadline
// (os.ErrDeadlineExceeded from the underlying reader): that error is
// returned as it is and the next call resumes the same value, so a caller
// may bound a read in time without losing its place in the stream.
func (r *Reader) Next() (Msg, error) {
	if r.err != nil {
		return nil, r.err
	}
	if !r.inMsg {
		r.beginMessage()
		r.inMsg = true
	}
	empty := 0
	for {
		done, err := r.parse()
		if err != nil {
			r.err = err
			return nil, err
		}
		if done {
			return r.finishMessage(), nil
		}
		n, err := r.fill()
		if n > 0 {
			empty = 0
			continue
		}
		if err == nil {
			if empty++; empty < maxEmptyReads {
				continue
			}
			err = io.ErrNoProgress
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, err
		}
		if errors.Is(err, io.EOF) && r.end > r.start {
			err = fmt.Errorf("respire: stream ended inside a value at byte %d: %w",
				r.base+int64(r.end), io.ErrUnexpectedEOF)
		}
		r.err = err
		return nil, err
	}
}

// beginMessage forgets the previous message, releasing oversized buffers when
// the previous message was small.
func (r *Reader) beginMessage() {
	r.releaseSides()
	r.start = r.pos
	r.nodes, r.spans, r.stack = r.nodes[:0], r.spans[:0], r.stack[:0]
	if r.start == r.end {
		r.base += int64(r.end)
		r.start, r.pos, r.end = 0, 0, 0
	}
	if len(r.buf) > maxRetainBuf && r.lastBytes <= smallMsgBytes && r.end-r.start <= initialBufSize/2 {
		nb := make([]byte, initialBufSize)
		r.moveTo(nb)
	}
	if cap(r.nodes) > maxRetainNodes && r.lastNodes <= smallMsgNodes {
		r.nodes, r.spans = nil, nil
	}
}

// finishMessage points the nodes' Data at the buffer, now that it no longer
// moves, and returns the message.
func (r *Reader) finishMessage() Msg {
	r.inMsg = false
	base := r.buf[r.start:r.pos]
	for i, s := range r.spans {
		if s.n >= 0 {
			r.nodes[i].Data = base[s.off : s.off+s.n : s.off+s.n]
		}
	}
	r.lastLarge = len(r.sides) > 0 || r.pos-r.start >= smallMsgBytes
	r.finishSides()
	r.lastBytes = r.pos - r.start
	r.lastNodes = len(r.nodes)
	r.stats.Values++
	return Msg(r.nodes)
}

// fill reads more bytes into the buffer, making room first when it is full.
func (r *Reader) fill() (int, error) {
	if r.rdErr != nil {
		err := r.rdErr
		r.rdErr = nil
		return 0, err
	}
	if r.side != nil {
		return r.fillSide()
	}
	if r.end == len(r.buf) {
		r.makeRoom()
	}
	n, err := r.readInto(r.buf[r.end:])
	if n > 0 {
		r.filled = r.end+n == len(r.buf)
		r.end += n
	}
	return n, err
}

// readInto reads into p once, counting what came. An error that came with
// data is kept for the next fill.
func (r *Reader) readInto(p []byte) (int, error) {
	n, err := r.rd.Read(p)
	if n < 0 || n > len(p) {
		return 0, fmt.Errorf("respire: reader returned invalid count %d", n)
	}
	if n > 0 {
		r.stats.Reads++
		r.stats.Bytes += int64(n)
		r.rdErr = err
		return n, nil
	}
	return 0, err
}

// makeRoom frees space at the end of a full buffer: it moves the current
// message to the front when that frees enough, and otherwise grows the buffer
// geometrically, never beyond what the pending bulk payload needs. Growth
// happens only when the buffer is full of bytes that actually arrived, so a
// declared length alone never makes the reader allocate.
func (r *Reader) makeRoom() {
	used := r.end - r.start
	need := 0
	if r.pendingBulk {
		need = r.pos - r.start + r.bulkLen + 2
	}
	stream := r.filled && len(r.buf) < streamBufSize
	if !stream && r.start > 0 && (used <= len(r.buf)/2 || (need > used && need <= len(r.buf))) {
		r.moveTo(r.buf)
		return
	}
	size := 2 * len(r.buf)
	if size < initialBufSize {
		size = initialBufSize
	}
	if need > used && need < size && need > len(r.buf) {
		size = need
	}
	r.moveTo(make([]byte, size))
}

// moveTo copies the unconsumed bytes (from start) to the front of nb and
// makes nb the buffer.
func (r *Reader) moveTo(nb []byte) {
	copy(nb, r.buf[r.start:r.end])
	shift := r.start
	r.base += int64(shift)
	r.start -= shift
	r.pos -= shift
	r.end -= shift
	r.buf = nb
}
