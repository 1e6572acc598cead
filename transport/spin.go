package transport

import (
	"errors"
	"io"
	"net"
	"runtime"
	"syscall"
	"time"
)

// Polling for a lone caller's reply.
//
// A goroutine parked on the network poller is woken by the thread that
// sees the socket readable, which on a virtual machine costs an
// inter-processor wake-up of several microseconds, often more than the
// server needs to answer a GET. So a caller that reads its own reply
// (direct.go) first polls the socket for up to ReadSpin, and parks only
// when the reply has not come by then. The poll is polite: between tries
// it yields (runtime.Gosched), so any other runnable goroutine of the
// process runs first and the poll only takes CPU nobody else wants. When
// replies keep taking longer than the budget (a distant or busy server),
// polling is skipped for 2, 4, ... up to 64 reads before it is tried
// again, which bounds the CPU spent on it. It needs a socket that exposes
// its file descriptor (TCP, Unix); TLS connections never poll.

// spinReader reads from a socket, polling first when its owner says so.
type spinReader struct {
	nc  net.Conn
	rc  syscall.RawConn
	max time.Duration
	// on is set by the goroutine holding the read role while it reads for
	// itself alone; only that goroutine reads, so no atomics are needed.
	on    bool
	skip  int // reads left before polling is tried again
	fails int // consecutive polls that gave up

	// the state of one poll (see poll)
	pollFn func(fd uintptr) bool
	p      []byte
	n      int
	rerr   error
	got    bool
	start  time.Time
}

// maxSpinSkip is the most reads polling is skipped for after it gave up.
const maxSpinSkip = 64

// newSpinReader returns nil when polling is off or nc has no descriptor.
func newSpinReader(nc net.Conn, max time.Duration) *spinReader {
	sc, ok := nc.(syscall.Conn)
	if !ok || max <= 0 || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &spinReader{nc: nc, rc: rc, max: max}
	s.pollFn = s.pollOnce
	return s
}

func (s *spinReader) Read(p []byte) (int, error) {
	if !s.on || len(p) == 0 {
		return s.nc.Read(p)
	}
	if s.skip > 0 {
		s.skip--
		return s.nc.Read(p)
	}
	n, err, got := s.poll(p)
	if got {
		s.fails = 0
		return n, err
	}
	s.fails++
	s.skip = min(1<<min(s.fails, 6), maxSpinSkip)
	return s.nc.Read(p)
}

// poll tries to read for up to s.max; got reports whether the read
// finished (with data, end of stream or an error) rather than timing out.
// Its state lives in s, and pollFn is bound once, so that a poll does not
// allocate.
func (s *spinReader) poll(p []byte) (n int, err error, got bool) {
	s.p, s.n, s.rerr, s.got, s.start = p, 0, nil, false, time.Time{}
	cerr := s.rc.Read(s.pollFn)
	s.p = nil
	n, rerr, got := s.n, s.rerr, s.got
	if !got {
		return 0, cerr, cerr != nil
	}
	switch {
	case rerr != nil:
		return 0, &net.OpError{Op: "read", Net: s.nc.LocalAddr().Network(), Source: s.nc.LocalAddr(), Addr: s.nc.RemoteAddr(), Err: rerr}, true
	case n == 0:
		return 0, io.EOF, true
	}
	return n, nil, true
}

// pollOnce is the body of poll, called by the runtime with the descriptor.
func (s *spinReader) pollOnce(fd uintptr) bool {
	for i := 0; ; i++ {
		s.n, s.rerr = syscall.Read(int(fd), s.p)
		if s.rerr == nil || !errors.Is(s.rerr, syscall.EAGAIN) && !errors.Is(s.rerr, syscall.EINTR) {
			s.got = true
			return true
		}
		if i&3 == 3 {
			now := time.Now()
			if s.start.IsZero() {
				s.start = now
			} else if now.Sub(s.start) > s.max {
				return true // give up; the caller parks
			}
		}
		runtime.Gosched()
	}
}
