package transport

import (
	"net"
	"sync/atomic"
)

const (
	fillChunk  = 32 << 10 // bytes per socket read
	fillQueued = 8        // chunks read ahead before the filler waits
)

// filler keeps reading from the socket into chunks while the reader
// goroutine parses and dispatches, so that each parse pass under load finds
// more bytes. It implements io.Reader for resp.Reader: Read returns as many
// queued bytes as fit, blocking only when nothing is queued.
type filler struct {
	nc   net.Conn
	dead <-chan struct{}
	full chan []byte
	free chan []byte
	err  error // set before full is closed

	cur []byte
	off int

	// socket reads that returned data, and their bytes
	reads, bytes atomic.Int64
}

func newFiller(nc net.Conn, dead <-chan struct{}) *filler {
	return &filler{
		nc:   nc,
		dead: dead,
		full: make(chan []byte, fillQueued),
		free: make(chan []byte, fillQueued+2),
	}
}

func (f *filler) run() {
	defer close(f.full)
	for {
		var buf []byte
		select {
		case buf = <-f.free:
		default:
			buf = make([]byte, fillChunk)
		}
		n, err := f.nc.Read(buf[:cap(buf)])
		if n > 0 {
			f.reads.Add(1)
			f.bytes.Add(int64(n))
			select {
			case f.full <- buf[:n]:
			case <-f.dead:
				f.err = net.ErrClosed
				return
			}
		}
		if err != nil {
			f.err = err
			return
		}
	}
}

// Read implements io.Reader on the queued chunks.
func (f *filler) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if f.off == len(f.cur) {
			if f.cur != nil {
				select {
				case f.free <- f.cur[:cap(f.cur)]:
				default:
				}
				f.cur, f.off = nil, 0
			}
			var ok bool
			if n == 0 {
				f.cur, ok = <-f.full
			} else {
				select {
				case f.cur, ok = <-f.full:
				default:
					return n, nil
				}
			}
			if !ok {
				if n > 0 {
					return n, nil
				}
				return 0, f.err
			}
			f.off = 0
		}
		k := copy(p[n:], f.cur[f.off:])
		f.off += k
		n += k
	}
	return n, nil
}
