// Package linkproxy is a TCP proxy on loopback that delays every chunk of
// bytes it forwards, in both directions: a stand-in for a network link
// between a client and its server where the kernel offers no netem.
//
// Each direction of a connection has a reader and a writer goroutine. The
// reader stamps every chunk it reads with the time it arrived and queues
// it; the writer writes each chunk once its stamp plus the one-way delay has
// passed, together with every later chunk that is also due (one writev).
// (One goroutine, the proxy's clock, times every chunk: see clock.)
// Reading never waits for the delay, so the link holds as many bytes in
// flight as the sender gives it (a long fat pipe, not a slow one): ordering
// and throughput are kept and only latency is added. The queue of a
// direction is bounded (queueChunks chunks of up to chunkSize bytes); a
// sender that outruns it waits, as it would on a full socket buffer.
package linkproxy

import (
	"errors"
	"net"
	"runtime"
	"sync"
	"time"
)

const (
	chunkSize   = 64 << 10 // bytes per read
	queueChunks = 256      // chunks in flight per direction
)

// Proxy forwards connections accepted on a loopback listener to one
// upstream address, delaying every byte by OneWay in each direction.
type Proxy struct {
	// OneWay is the delay added in each direction: a round trip through the
	// proxy takes 2*OneWay longer than without it.
	OneWay time.Duration

	ln       net.Listener
	upstream string
	clock    *clock
	wg       sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// Listen starts a proxy on a free loopback port that forwards to upstream
// with oneWay added to each direction. Close stops it.
func Listen(upstream string, oneWay time.Duration) (*Proxy, error) {
	if oneWay < 0 {
		return nil, errors.New("linkproxy: negative delay")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{OneWay: oneWay, ln: ln, upstream: upstream, clock: newClock(), conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting, closes every forwarded connection and waits for
// the proxy's goroutines to end. Closing again does nothing more.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	p.clock.close()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		down, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(down)
	}
}

// serve forwards one connection until either side closes it.
func (p *Proxy) serve(down net.Conn) {
	defer p.wg.Done()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		down.Close()
		return
	}
	for _, c := range []net.Conn{down, up} {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		if !p.track(c) {
			down.Close()
			up.Close()
			return
		}
		defer p.untrack(c)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(up, down) }()
	go func() { defer wg.Done(); p.pipe(down, up) }()
	wg.Wait()
	down.Close()
	up.Close()
}

// chunk is bytes read at one time, due at due, for the writer of out.
type chunk struct {
	b   *[]byte
	due time.Time
	out chan chunk
}

var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// pipe forwards src to dst with the delay: this goroutine reads and hands
// each chunk to the proxy's clock, which passes it to the writer of this
// direction when it is due. When src ends, dst's write side is shut once
// every byte read is written; when a write fails, both connections are
// closed.
func (p *Proxy) pipe(dst, src net.Conn) {
	out := make(chan chunk, queueChunks)
	// tokens bounds the chunks of this direction in flight, so that the
	// clock never waits on out.
	tokens := make(chan struct{}, queueChunks)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.write(dst, src, out, tokens)
	}()
	for {
		tokens <- struct{}{}
		bp := chunks.Get().(*[]byte)
		n, err := src.Read((*bp)[:chunkSize])
		if n > 0 {
			*bp = (*bp)[:n]
			p.clock.push(chunk{b: bp, out: out}, p.OneWay)
		} else {
			chunks.Put(bp)
			<-tokens
		}
		if err != nil {
			break
		}
	}
	p.clock.push(chunk{out: out}, p.OneWay) // the end, after every byte
	<-done
}

// write writes the chunks of one direction as the clock hands them over,
// each with every later one already handed over (one writev), until the
// end of the direction (a chunk without bytes).
func (p *Proxy) write(dst, src net.Conn, out chan chunk, tokens chan struct{}) {
	var (
		bufs   net.Buffers
		held   []*[]byte
		failed bool
		ended  bool
	)
	for !ended {
		bufs, held = bufs[:0], held[:0]
		c := <-out
		for {
			if c.b == nil {
				ended = true
				break
			}
			bufs = append(bufs, *c.b)
			held = append(held, c.b)
			select {
			case c = <-out:
				continue
			default:
			}
			break
		}
		if !failed && len(bufs) > 0 {
			w := bufs // WriteTo consumes the slice it is called on
			if _, err := w.WriteTo(dst); err != nil {
				// The far side is gone: end both directions, and keep
				// taking chunks until the reader's end.
				failed = true
				dst.Close()
				src.Close()
			}
		}
		for _, b := range held {
			*b = (*b)[:chunkSize]
			chunks.Put(b)
			<-tokens
		}
	}
	if !failed {
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
}

// clock holds every chunk of the proxy in flight, in the order read, and
// hands each to its writer when due. With one delay for all, due times
// grow in the order of arrival, so a FIFO is a timer queue. One goroutine
// on a thread of its own sleeps until the next due time with the
// operating system's precise sleep (see sleepUntil): the runtime's
// timers wake at a millisecond's granularity on Linux, as long as a
// fraction of a link's round trip.
type clock struct {
	mu   sync.Mutex
	q    []chunk
	head int
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func newClock() *clock {
	c := &clock{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

func (c *clock) push(ch chunk, delay time.Duration) {
	c.mu.Lock()
	ch.due = time.Now().Add(delay) // under the lock: due times only grow
	c.q = append(c.q, ch)
	first := len(c.q)-c.head == 1
	c.mu.Unlock()
	if first {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

func (c *clock) close() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}

func (c *clock) run() {
	defer close(c.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	preciseSleeps()
	for {
		c.mu.Lock()
		if c.head == len(c.q) {
			c.q, c.head = c.q[:0], 0
			c.mu.Unlock()
			select {
			case <-c.wake:
				continue
			case <-c.stop:
				return
			}
		}
		due := c.q[c.head].due
		c.mu.Unlock()
		sleepUntil(due)
		now := time.Now()
		c.mu.Lock()
		for c.head < len(c.q) && !c.q[c.head].due.After(now) {
			ch := c.q[c.head]
			c.q[c.head] = chunk{}
			c.head++
			ch.out <- ch // never blocks: the direction's tokens bound it
		}
		c.mu.Unlock()
	}
}
