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
// for its reply, but its bytes may still be queued or being written: queued,
// they are copied and the copy is written; being written, the write cannot
// be withdrawn part way through, so the connection is broken (its other
// requests fail as after any break) and Do returns once the write did.

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

// ErrAbandonedWrite is the cause of a connection broken because a caller
// left (its context ended) while its large argument was being written,
// which cannot be withdrawn part way through.
var ErrAbandonedWrite = errors.New("respire: a caller left while its large argument was being written")

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
	r.bigSeq = c.wseq + 1
	from := 0
	for _, f := range r.refs {
		c.wbuf = append(c.wbuf, r.payload[from:f.At]...)
		c.big = append(c.big, bigSeg{at: len(c.wbuf), data: f.Data, owner: r})
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
// write in progress is then cut short by breaking the connection. The
// requests are only compared, never read, since an abandoned one may be in
// use elsewhere already.
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
		c.mu.Unlock()
		c.fail(ErrAbandonedWrite)
		c.mu.Lock()
	}
	if c.wrote == nil {
		c.wrote = sync.NewCond(&c.mu)
	}
	for c.wdone < seq {
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
// letGo. c.mu is held.
func (c *conn) wroteOne() {
	c.wdone++
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

// write writes buf with the large payloads big placed at their offsets.
// Only the goroutine holding c.writing calls it, so c.iov is its own.
func (c *conn) write(buf []byte, big []bigSeg) (int64, error) {
	if len(big) == 0 {
		n, err := c.nc.Write(buf)
		return int64(n), err
	}
	cut := c.vector(buf, big)
	n, err := c.writev(c.iov[:cut])
	if err == nil && cut < len(c.iov) {
		var m int64
		m, err = c.writev(c.iov[cut:])
		n += m
	}
	c.wv = nil
	clear(c.iov[:cap(c.iov)])
	return n, err
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

// writeUntil is write under a deadline: when the deadline passes with
// bytes left, it returns errHandOver and the bytes left in c.rest.
func (c *conn) writeUntil(buf []byte, big []bigSeg, until time.Time) (int64, error) {
	_ = c.nc.SetWriteDeadline(until)
	cut := c.vector(buf, big)
	n, err := c.writev(c.iov[:cut])
	second := false
	if err == nil && cut < len(c.iov) {
		second = true
		var m int64
		m, err = c.writev(c.iov[cut:])
		n += m
	}
	_ = c.nc.SetWriteDeadline(time.Time{})
	if err != nil && len(c.wv) > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		c.rest = c.wv
		if !second {
			c.rest = append(c.rest, c.iov[cut:]...)
		}
		c.wv = nil
		return n, errHandOver
	}
	c.wv = nil
	clear(c.iov[:cap(c.iov)])
	return n, err
}

// finishHeld, on the writer goroutine, writes the rest of the write handed
// over and does what follows it (wrote1). Its result is wrote1's: true
// with c.mu held when the connection is still usable.
func (c *conn) finishHeld() bool {
	w := c.held
	c.held = heldWrite{}
	m, err := c.writev(c.rest)
	w.n += m
	c.wv, c.rest = nil, nil
	clear(c.iov[:cap(c.iov)])
	c.mu.Lock()
	return c.wrote1(w, err)
}
