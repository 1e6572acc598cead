//go:build linux

package transport

import (
	"errors"
	"io"
	"net"
	"os"
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
// On a busy host polling stops. A sched_yield hands the thread's CPU to
// any other runnable thread, and one that runs for its whole time slice
// (a neighbour's CPU-bound work, another process's busy loop) keeps it for
// milliseconds: measured with two busy loops on 2 cores, polling made
// sequential calls 3-10x slower than parking, and such a poll still ends
// with the reply in hand, so the back-off above never saw it. So every
// yield is timed. One that kept the thread away for longer than the whole
// budget ends the poll (the read parks). One that kept it away for a time
// slice (sliceStall, 500 µs) means the cores are contended, and polling
// cannot pay for itself there. A shorter stall is the server, or another
// thread of the process, running for a moment (50-100 µs on an idle 2-core
// VM): pausing the process for those too paused polling for 85% of a lone
// caller's reads on an idle machine (20,700 GETs/s, against 24,900 with
// pauses for lost slices only; 1 s runs alternated 12 times; the same with
// a busy loop bound to each core). Contention is a property of the host,
// not of one connection, so the whole process then stops polling
// (contention below) for 16 ms, doubling with each stalled poll up to 1 s.
// Polls that meet no stall in between do not shorten the next pause: on a
// busy host most polls find a free core and some lose a time slice, so a
// level reset by the first clean poll kept the pause at 16-64 ms and cost
// a stalled time slice every few tens of milliseconds (measured with two
// busy loops on 2 cores: 25-65 ms stalled per second of sequential GETs).
// The pause goes back to 16 ms only after contendedForget without a stall.
// A GOMAXPROCS of 1 (which Go sets from a cgroup CPU quota under 2 cores)
// never polls at all.
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
	// yield and now are sched_yield and monoNow; tests replace them.
	yield func()
	now   func() int64

	// the state of one poll (see poll) or read (see readNow)
	pollFn func(fd uintptr) bool
	readFn func(fd uintptr) bool

	// The state of one write (writeNow), which belongs to whoever holds
	// the connection's writing role, not to its reader.
	writeFn func(fd uintptr) bool
	wp      []byte
	wn      int
	werr    error
	p       []byte
	n       int
	rerr    error
	got     bool
	stall   bool // a yield of this poll kept the thread away > max
	hogged  bool // ... and for a time slice (sliceStall) or longer
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
	s := &spinReader{nc: nc, rc: rc, max: max, slots: int32(procs - 1), yield: schedYield, now: monoNow}
	s.pollFn = s.pollOnce
	s.readFn = s.readOnce
	s.writeFn = s.writeOnce
	return s
}

func (s *spinReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return s.nc.Read(p)
	}
	if !s.on {
		return s.readNow(p)
	}
	if s.skip > 0 {
		s.skip--
		return s.readNow(p)
	}
	if contended(s.now) {
		return s.nc.Read(p) // not readNow: see "Not on a busy host"
	}
	n, err, res := s.poll(p)
	if s.hogged {
		contention.stalled(s.now())
	}
	switch res {
	case pollDone:
		s.fails = 0
		return n, err
	case pollStalled:
		if s.onGiveUp != nil {
			s.onGiveUp()
		}
	case pollTimedOut:
		s.fails++
		s.skip = min(1<<min(s.fails, 6), maxSpinSkip)
		if s.onGiveUp != nil {
			s.onGiveUp()
		}
	}
	// pollBusy: no slot free; park without counting it as slowness.
	return s.readNow(p)
}

// The outcomes of a poll.
const (
	pollDone     = iota // the read finished: data, end of stream or an error
	pollTimedOut        // nothing came within the budget
	pollBusy            // GOMAXPROCS-1 goroutines were polling already
	pollStalled         // a yield kept the thread away for longer than the budget
)

// poll tries to read for up to s.max. Its state lives in s, and pollFn is
// bound once, so that a poll does not allocate.
func (s *spinReader) poll(p []byte) (n int, err error, res int) {
	s.stall, s.hogged = false, false
	if pollers.Add(1) > s.slots {
		pollers.Add(-1)
		return 0, nil, pollBusy
	}
	defer pollers.Add(-1)
	s.p, s.n, s.rerr, s.got = p, 0, nil, false
	cerr := s.rc.Read(s.pollFn)
	s.p = nil
	switch {
	case !s.got && cerr == nil && s.stall:
		return 0, nil, pollStalled
	case !s.got && cerr == nil:
		return 0, nil, pollTimedOut
	}
	n, err = s.result(cerr)
	return n, err, pollDone
}

// result is what a read returns after s.rc.Read returned cerr, with the
// outcome of the last read system call in s.n, s.rerr and s.got.
func (s *spinReader) result(cerr error) (int, error) {
	switch {
	case !s.got && cerr != nil:
		// Closed, or the read deadline passed: named as net.Conn.Read
		// names them.
		if oe, ok := cerr.(*net.OpError); ok && oe.Op == "raw-read" {
			oe.Op = "read"
		}
		return 0, cerr
	case s.rerr != nil:
		la := s.nc.LocalAddr()
		return 0, &net.OpError{Op: "read", Net: la.Network(), Source: la, Addr: s.nc.RemoteAddr(), Err: s.rerr}
	case s.n == 0:
		return 0, io.EOF
	}
	return s.n, nil
}

// Reads that park.
//
// A read that finds nothing parks on the network poller, polling or not.
// net.Conn.Read enters the runtime's system-call state for every read
// (syscall.Read), and when every processor of the process was idle, as
// they mostly are while a caller waits for a distant or busy server,
// entering it wakes the runtime's monitor thread: one futex call and one
// thread wake-up more per read (7.5% of the client's CPU in 4 x 32-GET
// pipelines across a 0.5 ms link). A read of a non-blocking socket never
// blocks, so the reader makes it as a raw system call, as the poll does,
// and parks through the descriptor's RawConn only when it finds nothing.
// Writes of the connection's buffer (writeNow) and the idle check's peek
// (peekFD) are raw too: whichever system call comes first after an idle
// spell would wake the monitor. (Under the race detector reads and writes
// go through syscall.Read and syscall.Write, which tell the detector what
// they wrote and read: raceread.go.)
//
// Not on a busy host. While polling is paused for contention (a poll's
// yield lost a whole time slice to a CPU-bound thread), a lone caller reads
// and writes through net.Conn, as ReadModeDirect does. Measured with a busy
// loop bound to each of 2 cores (sequential GETs of 1 KiB, 1 s runs
// alternated 15 times): with the raw calls, the median round trip was
// 70-90 µs in every run, 5,412 GETs/s at the median; through net.Conn it
// was under 50 µs in 7 of 15 runs, 7,636 GETs/s (ReadModeDirect: 11 of 15,
// 8,228). Why the kernel wakes a thread that entered the runtime's
// system-call state sooner there was not found. Idle, the raw calls stay:
// taking net.Conn also in the pauses that shorter stalls then caused
// (see "On a busy host") made a lone caller's 26,600 GETs/s 20,600.

// readNow reads as net.Conn.Read does, parking until data, an error or
// the read deadline.
func (s *spinReader) readNow(p []byte) (int, error) {
	s.p, s.n, s.rerr, s.got = p, 0, nil, false
	cerr := s.rc.Read(s.readFn)
	s.p = nil
	return s.result(cerr)
}

// writeNow writes p whole, or fails, as net.Conn.Write does, parking
// while the socket cannot take more. Only the goroutine holding the
// connection's writing role calls it.
func (s *spinReader) writeNow(p []byte) (int, error) {
	if len(p) == 0 || contended(s.now) {
		return s.nc.Write(p) // see "Not on a busy host"
	}
	s.wp, s.wn, s.werr = p, 0, nil
	cerr := s.rc.Write(s.writeFn)
	n, werr := s.wn, s.werr
	s.wp, s.werr = nil, nil
	switch {
	case werr != nil:
		la := s.nc.LocalAddr()
		return n, &net.OpError{Op: "write", Net: la.Network(), Source: la, Addr: s.nc.RemoteAddr(), Err: os.NewSyscallError("write", werr)}
	case cerr != nil:
		if oe, ok := cerr.(*net.OpError); ok && oe.Op == "raw-write" {
			oe.Op = "write"
		}
		return n, cerr
	}
	return n, nil
}

// writeOnce is the body of writeNow: false asks the runtime to wait for
// the socket to take more and call it again.
func (s *spinReader) writeOnce(fd uintptr) bool {
	for s.wn < len(s.wp) {
		n, err := rawWrite(fd, s.wp[s.wn:])
		switch err {
		case nil:
			s.wn += n
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.werr = err
			return true
		}
	}
	return true
}

// readOnce is the body of readNow: false asks the runtime to wait for the
// socket to be readable and call it again.
func (s *spinReader) readOnce(fd uintptr) bool {
	for {
		s.n, s.rerr = rawRead(fd, s.p)
		switch s.rerr {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		s.got = true
		return true
	}
}

// pollOnce is the body of poll, called by the runtime with the descriptor.
func (s *spinReader) pollOnce(fd uintptr) bool {
	max := int64(s.max)
	start := s.now()
	for {
		s.n, s.rerr = rawRead(fd, s.p)
		if s.rerr == nil || !errors.Is(s.rerr, syscall.EAGAIN) && !errors.Is(s.rerr, syscall.EINTR) {
			s.got = true
			return true
		}
		if s.stall {
			return true // give up; the caller parks
		}
		before := s.now()
		if before-start > max {
			return true // give up; the caller parks
		}
		// Give the CPU to any other thread that wants it (a thread woken
		// by the kernel for another socket, the server on a shared
		// machine). Taking it back later than the whole budget means
		// another thread held it for a time slice: read once more, since
		// the reply may have come meanwhile, and stop.
		s.yield()
		if d := s.now() - before; d > max {
			s.stall = true
			s.hogged = d >= int64(sliceStall)
		}
	}
}

func schedYield() { _, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }

// contention is the process's view of whether the cores are contended:
// polling is off until the instant in until (monoNow), set by a poll whose
// yield lost a time slice (sliceStall), for a period that doubles with each
// such poll less than contendedForget after the one before.
var contention spinContention

type spinContention struct {
	until atomic.Int64
	level atomic.Int32 // stalled polls, each within contendedForget of the last
	last  atomic.Int64 // when the last stalled poll was (monoNow)
}

// The back-off after a stalled poll: the first is contendedMin, each
// next one twice the last, up to contendedMax. A stall more than
// contendedForget after the last one starts again from contendedMin.
const (
	// sliceStall is how long a yield must keep the thread away to count
	// as a time slice lost to a CPU-bound thread. Measured on 2 cores,
	// idle, polls' yields stalled for 50-100 µs (the server or a thread
	// of the process ran meanwhile), now and then up to 1 ms; with a
	// busy loop bound to each core, for 0.5-4 ms, most of them 2-4 ms.
	sliceStall = 500 * time.Microsecond

	contendedMin    = 16 * time.Millisecond
	contendedMax    = time.Second
	contendedForget = 4 * contendedMax
)

func (c *spinContention) active(now int64) bool { return now < c.until.Load() }

// contended reports whether polling is paused for contention now
// (contention.active), reading the clock (now) only when contention was
// ever seen: a write on a host where it never was costs one atomic load.
func contended(now func() int64) bool {
	u := contention.until.Load()
	return u != 0 && now() < u
}

// stalled records a poll whose yield stalled, at now. Concurrent calls
// (at most GOMAXPROCS-1 goroutines poll) may count one stall too few or
// too many, which only moves the pause by a factor of two.
func (c *spinContention) stalled(now int64) {
	if last := c.last.Swap(now); now-last > int64(contendedForget) {
		c.level.Store(0)
	}
	l := min(c.level.Add(1)-1, 16)
	d := min(contendedMin<<l, contendedMax)
	c.until.Store(now + int64(d))
}

// pollers counts the goroutines of the process polling a socket.
var pollers atomic.Int32
