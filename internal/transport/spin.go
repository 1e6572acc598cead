//go:build linux

package transport

import (
	"errors"
	"io"
	"net"
	"runtime"
	"sync/atomic"
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
// when the reply has not come by then. Between tries the polling thread
// gives its CPU to any other thread that wants it (sched_yield), such as
// the server on a shared machine or a thread the kernel woke for another
// socket. When replies keep taking longer than the budget (a distant or
// busy server), polling is skipped for 2, 4, ... up to 64 reads before it
// is tried again, which bounds the CPU spent on it. It needs a socket that
// exposes its file descriptor (TCP, Unix); TLS connections never poll.
//
// At most GOMAXPROCS-1 goroutines of the process poll at once, so that a
// processor is always left to go idle and watch the network poller, which
// wakes every other goroutine waiting for I/O; others park as before. Even
// so, a goroutine that polls delays the wake-ups of its own process's
// other connections now and then (measured: invalidations of the
// client-side cache applied up to 10-20 ms late while the same client
// polled), so the respire package turns polling off for clients with a
// client-side cache.

// spinReader reads from a socket, polling first when its owner says so.
type spinReader struct {
	nc  net.Conn
	rc  syscall.RawConn
	max time.Duration
	// slots is how many goroutines may poll at once: GOMAXPROCS-1 when
	// the reader was made.
	slots int32
	// on is set by the goroutine holding the read role while it reads for
	// itself alone; only that goroutine reads, so no atomics are needed.
	on    bool
	skip  int // reads left before polling is tried again
	fails int // consecutive polls that gave up
	// onGiveUp, when set (by tests), runs when a poll has given up and
	// before the read parks.
	onGiveUp func()

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
	procs := runtime.GOMAXPROCS(0)
	if !ok || max <= 0 || procs < 2 {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &spinReader{nc: nc, rc: rc, max: max, slots: int32(procs - 1)}
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
	n, err, res := s.poll(p)
	switch res {
	case pollDone:
		s.fails = 0
		return n, err
	case pollTimedOut:
		s.fails++
		s.skip = min(1<<min(s.fails, 6), maxSpinSkip)
		if s.onGiveUp != nil {
			s.onGiveUp()
		}
	}
	// pollBusy: no slot free; park without counting it as slowness.
	return s.nc.Read(p)
}

// The outcomes of a poll.
const (
	pollDone     = iota // the read finished: data, end of stream or an error
	pollTimedOut        // nothing came within the budget
	pollBusy            // GOMAXPROCS-1 goroutines were polling already
)

// poll tries to read for up to s.max. Its state lives in s, and pollFn is
// bound once, so that a poll does not allocate.
func (s *spinReader) poll(p []byte) (n int, err error, res int) {
	if pollers.Add(1) > s.slots {
		pollers.Add(-1)
		return 0, nil, pollBusy
	}
	defer pollers.Add(-1)
	s.p, s.n, s.rerr, s.got, s.start = p, 0, nil, false, time.Time{}
	cerr := s.rc.Read(s.pollFn)
	s.p = nil
	n, rerr, got := s.n, s.rerr, s.got
	switch {
	case !got && cerr != nil:
		return 0, cerr, pollDone
	case !got:
		return 0, nil, pollTimedOut
	case rerr != nil:
		la := s.nc.LocalAddr()
		return 0, &net.OpError{Op: "read", Net: la.Network(), Source: la, Addr: s.nc.RemoteAddr(), Err: rerr}, pollDone
	case n == 0:
		return 0, io.EOF, pollDone
	}
	return n, nil, pollDone
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
		// Give the CPU to any other thread that wants it (a thread woken
		// by the kernel for another socket, the server on a shared
		// machine).
		_, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
	}
}

// pollers counts the goroutines of the process polling a socket.
var pollers atomic.Int32
