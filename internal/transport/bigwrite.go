package transport

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// Large payloads.
//
// Commands are copied into the connection's write buffer so that many
// small ones leave in one write. A large one (a SET of a 1 MiB value)
// gains nothing from that and pays for a second copy of every byte, and
// for a buffer too large to keep: it is written from the request's own
// buffer instead, between the buffered bytes before and after it, in one
// vectored write (writev on TCP and Unix sockets).
//
// The request's buffer must then stay as it is while the write may still
// run, which is until the reply arrived or the connection broke and its
// write returned. The respire package never reuses a buffer longer than
// DirectPayload (it drops it when the command is recycled), so nothing
// writes to one while a write may still read it.
//
// A send that queues a large payload writes it inline for a bounded time,
// then leaves the rest to the writer goroutine (see Inline writes below),
// so that the caller waits where its context can end the wait.
//
// Large arguments (Request.SetRefs) go one step further: the caller's own
// bytes are written, never copied into a command buffer at all. Those
// bytes are the caller's again once Do returns, so Do (and DoMulti) return
// only when no write reads them any more (letGo): after the write that
// carried them returned. A caller whose context ends first does not wait
// for its reply, but its bytes may still be queued or being written:
// queued, they are copied and the copy is written; being written, the
// write is cut (see Cutting a write below): what it has not written yet is
// copied and the copy written instead, so the stream stays whole and the
// other callers on the connection never learn of it. On a connection whose
// writes cannot be cut part way (TLS), large arguments are copied when
// they are queued instead.

// DirectPayload is the payload length from which a request's bytes are
// written from its own buffer rather than copied into the write buffer.
const DirectPayload = 64 << 10

// Ref is a large argument of a request, written from the caller's memory:
// Data goes after the first At bytes of the payload.
type Ref struct {
	At   int
	Data []byte
}

// SetRefs sets the large arguments written between the payload's bytes (at
// increasing offsets into it), or none; call it after SetPayload, which
// clears them. Do and DoMulti return only once no write reads them any
// more, so the caller may reuse them then, whatever the outcome.
func (r *Request) SetRefs(refs []Ref) { r.refs = refs }

// flat returns r's payload with its large arguments in place, for a
// connection that writes it whole and waits for its reply (the blocking
// pool's): a copy when r has any.
func (r *Request) flat() []byte {
	if len(r.refs) == 0 {
		return r.payload
	}
	return JoinRefs(r.payload, r.refs)
}

// JoinRefs returns a new buffer holding payload with the large arguments
// refs in place (their offsets are into payload).
func JoinRefs(payload []byte, refs []Ref) []byte {
	n := len(payload)
	for _, f := range refs {
		n += len(f.Data)
	}
	b := make([]byte, 0, n)
	from := 0
	for _, f := range refs {
		b = append(b, payload[from:f.At]...)
		b = append(b, f.Data...)
		from = f.At
	}
	return append(b, payload[from:]...)
}

// large reports whether r's payload is written from its own memory.
func (r *Request) large() bool { return len(r.refs) > 0 || len(r.payload) >= DirectPayload }

// bigSeg is a large payload queued for writing at offset at of wbuf; owner
// is the request whose caller's bytes data are, nil for a command buffer.
type bigSeg struct {
	at    int
	data  []byte
	owner *Request
}

// queuePayload appends r's payload to what is queued for writing. c.mu is
// held.
func (c *conn) queuePayload(p []byte) {
	if len(p) < DirectPayload {
		c.wbuf = append(c.wbuf, p...)
		return
	}
	c.big = append(c.big, bigSeg{at: len(c.wbuf), data: p})
	c.bigLen += len(p)
}

// queue appends r's payload and large arguments to what is queued for
// writing and notes the write that will carry them. c.mu is held.
func (c *conn) queue(r *Request) {
	if len(r.refs) == 0 {
		c.queuePayload(r.payload)
		return
	}
	owner := r
	if c.boundable {
		r.bigSeq = c.wseq + 1
	} else {
		// A write that cannot be cut part way would hold the caller's
		// bytes for as long as it runs: copy them now.
		r.bigSeq, owner = 0, nil
	}
	from := 0
	for _, f := range r.refs {
		c.wbuf = append(c.wbuf, r.payload[from:f.At]...)
		data := f.Data
		if owner == nil {
			data = append([]byte(nil), data...)
		}
		c.big = append(c.big, bigSeg{at: len(c.wbuf), data: data, owner: owner})
		c.bigLen += len(f.Data)
		from = f.At
	}
	c.wbuf = append(c.wbuf, r.payload[from:]...)
}

// hasRefs reports whether any of rs has large arguments, and the write that
// carries them (one send puts all of rs in the same write).
func hasRefs(rs []*Request) (seq uint64, ok bool) {
	for _, r := range rs {
		if len(r.refs) > 0 {
			return r.bigSeq, true
		}
	}
	return 0, false
}

// letGo returns once no write of c reads the large arguments of rs, sent
// together to be carried by write seq: at once when that write returned
// or will never run; after copying them when it has not started; after it
// returned otherwise. abandoned says the caller left before its reply: a
// write in progress is then cut, the rest of it copied (cutWrite), and
// letGo returns once the copy is made. The requests are only compared,
// never read, since an abandoned one may be in use elsewhere already.
func (c *conn) letGo(rs []*Request, seq uint64, abandoned bool) {
	c.mu.Lock()
	if c.wseq < seq {
		// Queued, not yet handed to a write: unless the connection
		// broke (then it never will be), write a copy instead.
		if c.err == nil {
			for i := range c.big {
				s := &c.big[i]
				if s.owner != nil && owns(rs, s.owner) {
					s.data = append([]byte(nil), s.data...)
					s.owner = nil
				}
			}
		}
		c.mu.Unlock()
		return
	}
	if c.wdone >= seq {
		c.mu.Unlock()
		return
	}
	if abandoned {
		c.cutWrite()
	}
	if c.wrote == nil {
		c.wrote = sync.NewCond(&c.mu)
	}
	for c.wdone < seq && c.freed < seq {
		c.wrote.Wait()
	}
	c.mu.Unlock()
}

func owns(rs []*Request, r *Request) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// kickWriter hands the writing to the writer goroutine.
func (c *conn) kickWriter() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// wroteOne counts a write that returned and wakes callers waiting in
// letGo. A cut asked for too late to matter, and the write deadline of a
// bounded or cut write, end with the write: nothing of one write outlives
// it on the connection. c.mu is held.
func (c *conn) wroteOne() {
	c.wdone++
	c.cutWanted = false
	if c.wdl {
		_ = c.nc.SetWriteDeadline(time.Time{})
		c.wdl = false
	}
	if c.wrote != nil {
		c.wrote.Broadcast()
	}
}

// leadBytes is how much of the first large payload of a vectored write
// its first write system call carries; the rest follows in a second one.
// Measured on loopback against Redis 7.0 and 8.0 (issue 26): a SET of
// 1 MiB sent as header and value in one writev cost the client 1.5-1.8x
// the CPU of the same bytes sent as header plus 4-16 KiB of the value,
// then the rest; the server starts on the command before the bulk of it
// arrives. At 32 KiB to 4 MiB the split changed nothing beyond the noise.
const leadBytes = 8 << 10

// vector lays buf with the large payloads big placed at their offsets out
// in c.iov, the first payload longer than 2*leadBytes split after
// leadBytes, and returns where the first write's part ends.
func (c *conn) vector(buf []byte, big []bigSeg) (cut int) {
	iov := c.iov[:0]
	from := 0
	cut = -1
	for _, s := range big {
		if s.at > from {
			iov = append(iov, buf[from:s.at])
		}
		if cut < 0 && len(s.data) > 2*leadBytes {
			iov = append(iov, s.data[:leadBytes])
			cut = len(iov)
			iov = append(iov, s.data[leadBytes:])
		} else {
			iov = append(iov, s.data)
		}
		from = s.at
	}
	if from < len(buf) {
		iov = append(iov, buf[from:])
	}
	c.iov = iov
	if cut < 0 {
		cut = len(iov)
	}
	return cut
}

// writev writes v with one vectored write, leaving in c.wv what it could
// not write. WriteTo consumes the slice it is called on, through a pointer
// that escapes: a field of c costs no allocation, a local would.
func (c *conn) writev(v [][]byte) (int64, error) {
	c.wv = net.Buffers(v)
	return c.wv.WriteTo(c.nc)
}

// Inline writes of large payloads. A caller that sends a large payload on
// an idle connection writes it itself, as it does small ones: handing every
// such write to the writer goroutine cost a wake-up and a context switch
// per command, and made a SET of 1 MiB from one caller 1.6x slower than a
// client writing from the caller (issue 26). Its context must still end
// its wait, so the write runs under a deadline: the context's, or
// cancelCheck from now when that comes first. A write that has not ended
// by then is handed over, the rest of it to be written by the writer
// goroutine, and the caller goes on to wait for its reply where its
// context can end the wait. A deadline cannot cut a TLS write part way
// without breaking the TLS stream, so on other connections than TCP and
// Unix sockets every write of large payloads is the writer goroutine's.

// errHandOver reports a write that its deadline cut short: the rest is in
// c.rest, for the writer goroutine.
var errHandOver = errors.New("respire: write handed over")

// heldWrite is a write of large payloads handed over part way: what flush
// took for it and the bytes already written.
type heldWrite struct {
	buf   []byte
	big   []bigSeg
	batch int
	n     int64
}

// inlineUntil is the deadline of a caller's inline write under ctx (nil
// for none).
func inlineUntil(ctx context.Context) time.Time {
	t := time.Now().Add(cancelCheck)
	if ctx != nil {
		if dl, ok := ctx.Deadline(); ok && dl.Before(t) {
			t = dl
		}
	}
	return t
}

// write writes buf with the large payloads big placed at their offsets.
// Only the goroutine holding c.writing calls it, so c.iov is its own. A
// write of large payloads runs under the deadline until when set: when it
// passes with bytes left, write returns errHandOver and those bytes in
// c.rest.
func (c *conn) write(buf []byte, big []bigSeg, until time.Time) (int64, error) {
	if len(big) == 0 {
		var n int
		var err error
		if c.spin != nil {
			n, err = c.spin.writeNow(buf) // raw system calls (spin.go)
		} else {
			n, err = c.nc.Write(buf)
		}
		return int64(n), err
	}
	lead := c.vector(buf, big)
	return c.writeVec(c.iov, lead, until)
}

// writeVec writes v, its first system call carrying v[:lead] at most
// (leadBytes), under the deadline until when set (errHandOver, the bytes
// left in c.rest, when it passes), and copies what is left of it when a
// caller asks for a cut (cutWrite). v is c.iov or a part of its array.
func (c *conn) writeVec(v [][]byte, lead int, until time.Time) (int64, error) {
	c.armWrite(until)
	var n int64
	var err error
	for len(v) > 0 {
		part := v
		if lead > 0 && lead < len(v) {
			part = v[:lead]
		}
		lead = 0
		var m int64
		m, err = c.writev(part)
		n += m
		// What is left: the rest of part, then what follows it. c.wv is
		// part's tail in v's array, so this moves nothing.
		v = append(c.wv, v[len(part):]...)
		if err == nil {
			continue
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		err = nil
		if c.takeCut() {
			v = [][]byte{flatten(v)}
			c.release()
			c.armWrite(until)
			continue
		}
		if !until.IsZero() && !time.Now().Before(until) {
			c.rest = v
			c.wv = nil
			return n, errHandOver
		}
		c.armWrite(until) // a cut already made; go on
	}
	c.wv = nil
	clear(c.iov[:cap(c.iov)])
	return n, err
}

// Cutting a write. A caller that leaves while its large argument is being
// written must get its memory back without waiting for the write, which
// may last as long as the server takes to read, and without cutting the
// stream short, which would break the connection for every caller on it.
// So it asks for a cut (cutWanted) and sets a write deadline in the past,
// which ends the system call in progress, or the next one, with
// os.ErrDeadlineExceeded; the writer copies what is left of the write,
// says so (freed), and writes the copy. Deadlines are set under c.mu, by
// the writer (armWrite) and the leaving caller alike, so the writer cannot
// set one after the caller's without seeing the cut; wroteOne clears both
// once the write returned.

// aLongTimeAgo is a write deadline that ends a write at once.
var aLongTimeAgo = time.Unix(1, 0)

// cutWrite asks the write in progress to copy what it has left and let
// go of its callers' memory. c.mu is held.
func (c *conn) cutWrite() {
	c.cutWanted = true
	c.wdl = true
	_ = c.nc.SetWriteDeadline(aLongTimeAgo)
}

// armWrite sets the write deadline of a write of large payloads: until,
// or at once when a cut is wanted.
func (c *conn) armWrite(until time.Time) {
	c.mu.Lock()
	if c.cutWanted {
		until = aLongTimeAgo
	}
	if !until.IsZero() || c.wdl {
		_ = c.nc.SetWriteDeadline(until)
		c.wdl = !until.IsZero()
	}
	c.mu.Unlock()
}

// takeCut reports whether a cut is wanted, and takes it: the writer then
// copies what is left of its write and calls release before it writes
// again.
func (c *conn) takeCut() bool {
	c.mu.Lock()
	cut := c.cutWanted
	c.cutWanted = false
	c.mu.Unlock()
	return cut
}

// release marks the write in progress as holding no caller's memory any
// more, waking the callers waiting for that in letGo.
func (c *conn) release() {
	c.mu.Lock()
	c.freed = c.wseq
	if c.wrote != nil {
		c.wrote.Broadcast()
	}
	c.mu.Unlock()
}

// flatten copies v into one new buffer.
func flatten(v [][]byte) []byte {
	n := 0
	for _, b := range v {
		n += len(b)
	}
	out := make([]byte, 0, n)
	for _, b := range v {
		out = append(out, b...)
	}
	return out
}

// finishHeld, on the writer goroutine, writes the rest of the write handed
// over and does what follows it (wrote1). Its result is wrote1's: true
// with c.mu held when the connection is still usable.
func (c *conn) finishHeld() bool {
	w := c.held
	c.held = heldWrite{}
	rest := c.rest
	c.rest = nil
	m, err := c.writeVec(rest, 0, time.Time{})
	w.n += m
	c.mu.Lock()
	return c.wrote1(w, err)
}
