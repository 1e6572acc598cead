package transport

import (
	"context"
	"fmt"
	"strconv"
)

// Withdrawing a request.
//
// A caller whose context ends before its request was handed to a write
// (it waits in the write buffer behind a long write, or behind a socket
// the server reads slowly) leaves a request that has certainly not run
// yet. Left as it is, it would run later, perhaps after later commands of
// the same caller that went by another connection, and its caller would
// have to treat its outcome as unknown. Instead its bytes are replaced, in
// place, by as many PINGs as it had commands, of the same length in all:
// the replies still come one per pending request, so nothing moves in the
// connection's FIFO, the command never runs, and the caller's error
// matches ErrNotSent. Only requests wholly in the write buffer (no large
// payload written from elsewhere) are withdrawn so, and only when PINGs
// can make up their length (see fillPings).

// mark notes, on the last request of a send, where the send's bytes lie in
// the write buffer and which write will carry them, for withdraw; from is
// the write buffer's length before the send, bigs the count of large
// payloads queued then. c.mu is held.
func (c *conn) mark(last *Request, n, from, bigs int) {
	if len(c.big) != bigs {
		last.sent = span{} // a large payload: not withdrawn
		return
	}
	last.sent = span{write: c.wseq + 1, from: from, to: len(c.wbuf), n: n}
}

// span is where the bytes of a send lie in its connection's write buffer
// (from:to), how many commands they hold, and the write that carries them.
type span struct {
	write    uint64
	from, to int
	n        int
}

// leave abandons r, the last request of a send whose caller's context
// ended, and reports whether it did (false: r was answered or failed
// meanwhile, and is the caller's again). withdrawn reports that the send
// had not been handed to a write: its bytes are PINGs now, and none of its
// requests will run.
func (c *conn) leave(r *Request) (abandoned, withdrawn bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// r.sent is read before r is given up: once abandoned, the reader that
	// answers it recycles it at once, without c.mu, and another caller may
	// be sending it on another connection already.
	s := r.sent
	if !r.state.CompareAndSwap(stateWaiting, stateAbandoned) {
		return false, false
	}
	if c.err != nil || s.n == 0 || s.write <= c.wseq || s.to > len(c.wbuf) {
		return true, false
	}
	return true, fillPings(c.wbuf[s.from:s.to], s.n)
}

// leftErr is the error of a caller that left its request, withdrawn or
// not, when ctx ended.
func leftErr(ctx context.Context, withdrawn bool) error {
	if withdrawn {
		return NotSent(fmt.Errorf("withdrawn before it was written: %w", ctx.Err()))
	}
	return fmt.Errorf("waiting for reply: %w", ctx.Err())
}

// fillPings overwrites b with n PING commands whose lengths add up to
// len(b), and reports whether it could: a PING is "*1 $4 PING" (14 bytes,
// with the CRLFs) or "*2 $4 PING $m" and an m-byte message (19 bytes, the
// digits of m and m), which no length of 15 to 19 bytes, nor 30, 121,
// 1,022, 10,023, ... fits. The lengths are planned first and b is left as it is
// when they cannot be, so that the caller can leave the commands to run.
func fillPings(b []byte, n int) bool {
	if !planPings(len(b), n, nil) {
		return false
	}
	planPings(len(b), n, b)
	return true
}

// planPings shares size bytes out among n PINGs, each an equal share of
// what is left, made shorter to the nearest length a PING can have, the
// last taking the rest; it writes them to b unless b is nil.
func planPings(size, n int, b []byte) bool {
	left := size
	for i := 0; i < n; i++ {
		l := left
		if i < n-1 {
			l = left / (n - i)
			for l > 14 && pingMsg(l) < 0 {
				l--
			}
		}
		if l != 14 && pingMsg(l) < 0 {
			return false
		}
		if b != nil {
			putPing(b[:l])
			b = b[l:]
		}
		left -= l
	}
	return true
}

// pingMsg is the length of the message that makes a PING exactly l bytes
// long, or -1 when none does (0 for "PING" with an empty message).
func pingMsg(l int) int {
	for d := 1; d <= 19; d++ {
		if m := l - 19 - d; m >= 0 && len(strconv.Itoa(m)) == d {
			return m
		}
	}
	return -1
}

// putPing writes a PING of len(b) bytes, a length pingMsg accepts, or 14.
func putPing(b []byte) {
	if len(b) == 14 {
		copy(b, "*1\r\n$4\r\nPING\r\n")
		return
	}
	m := pingMsg(len(b))
	w := copy(b, "*2\r\n$4\r\nPING\r\n$")
	w += copy(b[w:], strconv.Itoa(m))
	w += copy(b[w:], "\r\n")
	for i := range m {
		b[w+i] = '.'
	}
	copy(b[w+m:], "\r\n")
}
