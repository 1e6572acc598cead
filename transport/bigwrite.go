package transport

import "net"

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

// DirectPayload is the payload length from which a request's bytes are
// written from its own buffer rather than copied into the write buffer.
const DirectPayload = 64 << 10

// bigSeg is a large payload queued for writing at offset at of wbuf.
type bigSeg struct {
	at   int
	data []byte
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

// write writes buf with the large payloads big placed at their offsets.
// Only the goroutine holding c.writing calls it, so c.iov is its own.
func (c *conn) write(buf []byte, big []bigSeg) error {
	if len(big) == 0 {
		_, err := c.nc.Write(buf)
		return err
	}
	iov := c.iov[:0]
	from := 0
	for _, s := range big {
		if s.at > from {
			iov = append(iov, buf[from:s.at])
		}
		iov = append(iov, s.data)
		from = s.at
	}
	if from < len(buf) {
		iov = append(iov, buf[from:])
	}
	c.iov = iov
	bufs := net.Buffers(iov)
	_, err := bufs.WriteTo(c.nc)
	clear(c.iov[:cap(c.iov)])
	return err
}
