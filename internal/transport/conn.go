package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// maxInlineRounds bounds how many write system calls a caller performs for
// others before it hands the writing to the connection's writer goroutine,
// so that no caller waits long on traffic that is not its own.
const maxInlineRounds = 4

// keepBuf is the largest write buffer kept for reuse after a write.
const keepBuf = 1 << 20

// conn is one live, handshaken connection with its reader goroutine, its
// background writer and, optionally, its filler.
type conn struct {
	cfg  *Config
	nc   net.Conn
	rd   *resp.Reader
	info ConnInfo

	mu    sync.Mutex
	wbuf  []byte
	spare []byte
	// big holds the large payloads queued with wbuf (bigwrite.go),
	// bigLen their bytes; bigSpare and iov are reused by writes.
	big, bigSpare []bigSeg
	bigLen        int
	iov           [][]byte
	writing       bool
	pending       fifo
	// unwritten counts the requests at the tail of pending whose bytes are
	// still in wbuf, never handed to a write: if the connection breaks now,
	// they certainly did not reach the server.
	unwritten int
	err       error // set once, when the connection breaks

	kick chan struct{}
	dead chan struct{} // closed when broken

	// direct lets callers read their own replies (see direct.go); reading
	// (under mu) tells whether a goroutine holds the read role, and rkick
	// wakes the background reader to take it.
	direct  bool
	reading bool
	rkick   chan struct{}
	// roleWaiters counts the batch callers waiting for the read role (or
	// their replies); roleFree passes the role to one of them.
	roleWaiters atomic.Int32
	roleFree    chan struct{}

	inflight atomic.Int64
	replies  atomic.Uint64
	// largeAt is the count of replies at the last large one (lanes.go).
	largeAt atomic.Uint64
	sends   atomic.Uint64

	readCalls, readBytes atomic.Int64
	writes               atomic.Uint64
	fill                 *filler // nil without the filler
	spin                 *spinReader
	// poll, on a tracking connection, lets Mux.Poll read between cache
	// hits (tracking_drain.go); nil when the socket cannot be read so.
	poll *pollConn
	// peek checks an idle connection for a close by its peer (idle.go);
	// nil when the socket cannot be peeked at. lastRead is when a read
	// last returned data, or the peek last found the connection open
	// (mono).
	peek     *peeker
	lastRead atomic.Int64

	ping     Request
	onBroken func(*conn)

	// wseq counts the writes handed out, wdone those that returned (under
	// mu); wrote, made when first needed, wakes callers waiting in letGo.
	wseq, wdone uint64
	wrote       *sync.Cond
	wv          net.Buffers // the vectored write in progress (bigwrite.go)
	// boundable says a write's deadline can end it part way and the
	// write can go on (TCP and Unix sockets, not TLS); held is a write
	// with large payloads begun by a caller and handed over to the
	// writer goroutine (bigwrite.go). Both belong to whoever holds
	// c.writing.
	boundable bool
	held      heldWrite
	rest      [][]byte // the bytes of held still to write
	// cutWanted asks the write in progress to copy what it has left
	// (bigwrite.go); wdl says a write deadline is set on nc; freed is
	// the last write whose callers' memory was copied. All under mu.
	cutWanted, wdl bool
	freed          uint64
	// writerGone says the writer goroutine has ended (under mu): a write
	// handed over after that is finished by whoever handed it.
	writerGone bool
}

func newConn(cfg *Config, nc net.Conn, rd *resp.Reader, info ConnInfo, wg *sync.WaitGroup, onBroken func(*conn)) *conn {
	c := &conn{
		cfg:      cfg,
		nc:       nc,
		rd:       rd,
		info:     info,
		kick:     make(chan struct{}, 1),
		dead:     make(chan struct{}),
		rkick:    make(chan struct{}, 1),
		roleFree: make(chan struct{}, 1),
		onBroken: onBroken,
		direct:   !cfg.Filler && cfg.OnPush == nil && cfg.Tracking == nil && !cfg.NoDirectRead,
	}
	c.ping.Init(pingHandler{})
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
		c.boundable = true
	}
	if c.direct {
		if c.spin = newSpinReader(nc, cfg.ReadSpin); c.spin != nil {
			rd.Reset(c.spin)
		}
	}
	c.peek = newPeeker(nc)
	c.lastRead.Store(mono())
	if cfg.Tracking != nil && !cfg.Filler {
		if c.poll = newPollConn(nc); c.poll != nil {
			rd.Reset(c.poll)
		}
	}
	wg.Add(2)
	if cfg.Filler {
		f := newFiller(nc, c.dead)
		c.fill = f
		rd.Reset(f)
		wg.Add(1)
		go func() { defer wg.Done(); f.run() }()
	}
	go func() { defer wg.Done(); c.readLoop() }()
	go func() { defer wg.Done(); c.writeLoop() }()
	return c
}

// send queues requests for writing, in order, and writes them unless
// another goroutine is writing already. It fails only when the connection
// is already broken, in which case nothing was queued. Each request's state
// must be stateWaiting before the call.
func (c *conn) send(rs ...*Request) error { return c.sendCtx(nil, rs...) }

// sendCtx is send for callers under ctx (nil for none): a large payload
// is written inline only until ctx's deadline at the latest (bigwrite.go).
func (c *conn) sendCtx(ctx context.Context, rs ...*Request) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	from, bigs := len(c.wbuf), len(c.big)
	for _, r := range rs {
		c.queue(r)
		c.pending.push(r)
	}
	c.mark(rs[len(rs)-1], len(rs), from, bigs)
	c.unwritten += len(rs)
	if c.inflight.Add(int64(len(rs))) == int64(len(rs)) && c.peek == nil {
		// Nothing was in flight: lastRead, which BreakStalled reads as
		// the last sign of life, restarts here. With a peeker it did at
		// the idle check (idle.go) already.
		c.lastRead.Store(mono())
	}
	c.sends.Add(1)
	if c.writing {
		c.mu.Unlock()
		return nil
	}
	c.writing = true
	if c.bigLen > 0 {
		// A large payload: written inline for a bounded time at most,
		// the rest then handed to the writer goroutine, or handed to it
		// at once where a write cannot be bounded (bigwrite.go).
		if !c.boundable {
			c.mu.Unlock()
			c.kickWriter()
			return nil
		}
		c.flush(maxInlineRounds, inlineUntil(ctx))
		return nil
	}
	if len(rs) == 1 && c.inflight.Load() > 1 {
		// Others' requests are in flight, so other callers are likely
		// runnable right now (woken by their replies) and about to send:
		// let them queue behind this write before making it. One yield
		// turns a write per command into a write per wave of callers. A
		// batch is a full write already: it does not yield.
		c.mu.Unlock()
		runtime.Gosched()
		c.mu.Lock()
	}
	c.flush(maxInlineRounds, time.Time{})
	return nil
}

// flush writes the buffer until nothing more is queued. It is called with
// c.mu held and c.writing set, and returns with c.mu released. After
// maxRounds writes (maxRounds > 0) it passes the job to the writer
// goroutine instead. A write with large payloads that has not ended by
// until (when set) is left to the writer goroutine to finish
// (bigwrite.go).
func (c *conn) flush(maxRounds int, until time.Time) {
	for round := 0; ; round++ {
		if len(c.wbuf)+c.bigLen == 0 || c.err != nil {
			c.writing = false
			c.mu.Unlock()
			return
		}
		if maxRounds > 0 && round == maxRounds {
			c.mu.Unlock()
			c.kickWriter()
			return
		}
		w := heldWrite{buf: c.wbuf, big: c.big, batch: c.unwritten}
		c.unwritten = 0
		c.wbuf = c.spare[:0]
		c.spare = nil
		c.big, c.bigSpare, c.bigLen = c.bigSpare[:0], nil, 0
		c.wseq++
		c.mu.Unlock()
		var err error
		w.n, err = c.write(w.buf, w.big, until)
		if err == errHandOver {
			// The writer goroutine finishes this write and whatever
			// is queued meanwhile; when it has ended (the connection
			// broke), this goroutine does, the write failing at once,
			// so that no caller waits in letGo for a write that never
			// returns.
			c.mu.Lock()
			c.held = w
			if !c.writerGone {
				c.mu.Unlock()
				c.kickWriter()
				return
			}
			c.mu.Unlock()
			if !c.finishHeld() {
				return
			}
			continue
		}
		c.mu.Lock()
		if !c.wrote1(w, err) {
			return
		}
	}
}

// wrote1 does what follows a write of w that returned err: it counts the
// write, keeps the buffers for reuse and, on an error, breaks the
// connection. It is called with c.mu held and reports whether the
// connection is still usable; when not, it has released c.mu.
func (c *conn) wrote1(w heldWrite, err error) bool {
	c.writes.Add(1)
	if err != nil {
		// The requests whose bytes the write did not all hand to the
		// socket (every one when the socket refused it: a reset from
		// the peer, already received) certainly did not run: the server
		// drops a command cut short with its connection. They sit right
		// before the ones queued meanwhile, at the tail of pending.
		c.unwritten += c.cutShortOf(w)
	}
	c.wroteOne()
	if cap(w.buf) <= keepBuf {
		c.spare = w.buf[:0]
	}
	clear(w.big) // let the payloads go
	c.bigSpare = w.big[:0]
	if err != nil {
		c.writing = false
		c.mu.Unlock()
		c.fail(err)
		return false
	}
	return true
}

// cutShortOf counts the requests of w, a write that failed, whose bytes
// it did not hand to the socket in full: walking back from the last, each
// whose frame ends past the w.n bytes written. (When the reader sees the
// break first, the requests of the write in progress fail before it
// returns, as written: their outcome stays unknown.) c.mu is held.
func (c *conn) cutShortOf(w heldWrite) int {
	end := int64(len(w.buf))
	for _, s := range w.big {
		end += int64(len(s.data))
	}
	written := c.pending.size - c.unwritten // w's requests end these
	k := 0
	for k < w.batch && k < written && end > w.n {
		r := c.pending.at(written - 1 - k)
		end -= int64(r.size())
		k++
	}
	return k
}

func (c *conn) writeLoop() {
	for {
		select {
		case <-c.kick:
			if c.held.big == nil {
				c.mu.Lock()
			} else if !c.finishHeld() {
				continue
			}
			c.flush(0, time.Time{})
		case <-c.dead:
			c.mu.Lock()
			c.writerGone = true
			held := c.held.big != nil
			c.mu.Unlock()
			if held && c.finishHeld() {
				// A write handed over as the connection broke
				// ended (its socket is closed), which lets go of
				// any caller waiting for it (letGo).
				c.mu.Unlock()
			}
			return
		}
	}
}

func (c *conn) readLoop() {
	if c.direct {
		c.backgroundReader()
		return
	}
	if c.poll != nil {
		c.pollLoop()
		return
	}
	for {
		m, err := c.rd.Next()
		if err != nil {
			c.fail(err)
			return
		}
		if _, ok := c.dispatch(m); !ok {
			return
		}
	}
}

// dispatch handles one message read from the connection: a push goes
// aside, a reply to the oldest pending request. It returns the request it
// answered (nil for a push), and false when the message broke the
// connection.
func (c *conn) dispatch(m resp.Msg) (*Request, bool) {
	if st := c.rd.Stats(); st.Reads != c.readCalls.Load() {
		// Once per read, not per reply: a socket read holds many
		// replies of a pipeline, and a store is a full barrier.
		c.readCalls.Store(st.Reads)
		c.readBytes.Store(st.Bytes)
		c.lastRead.Store(mono())
	}
	if m[m.Value(0)].Type == resp.TypePush {
		if c.cfg.Tracking != nil && c.cfg.Tracking.handlePush(m) {
			return nil, true
		}
		if kind := pubsubPush(m); kind != "" {
			// The multiplexed connection never subscribes: a subscribe
			// confirmation or a message means some command put it in a
			// state its FIFO does not account for (the push may even be
			// the reply a pending request waits for). Nothing read from it
			// can be trusted to belong to the caller it would go to.
			c.fail(&resp.ProtocolError{Reason: fmt.Sprintf("%q push on a connection without subscriptions: replies out of step", kind)})
			return nil, false
		}
		if c.cfg.OnPush != nil {
			c.cfg.OnPush(m)
		}
		return nil, true
	}
	c.mu.Lock()
	r := c.pending.pop()
	c.mu.Unlock()
	if r == nil {
		c.fail(&resp.ProtocolError{Reason: "reply received with no request pending"})
		return nil, false
	}
	c.inflight.Add(-1)
	if n := c.replies.Add(1); c.rd.LastLarge() {
		c.largeAt.Store(n)
	}
	r.deliver(m)
	return r, true
}

// fail breaks the connection: every pending request fails with an error
// wrapping cause, the socket is closed, and the owner is told so that it
// reconnects. Only the first call has an effect.
func (c *conn) fail(cause error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.breakLocked(cause, true)
}

// retireIdle closes c if nothing is pending, being written or read, and
// reports whether it did. Unlike fail, it does not tell the owner, which
// would dial a replacement: for a batch lane nobody used for a while.
func (c *conn) retireIdle() bool {
	c.mu.Lock()
	if c.err != nil || c.pending.size > 0 || c.writing || c.reading {
		c.mu.Unlock()
		return false
	}
	c.breakLocked(errLaneIdle, false)
	return true
}

// breakLocked is fail from the point where c.mu is held and c is not
// broken yet; it releases c.mu.
func (c *conn) breakLocked(cause error, tell bool) {
	if errors.Is(cause, ErrClosed) {
		c.err = ErrClosed
	} else {
		if errors.Is(cause, io.EOF) {
			cause = io.ErrUnexpectedEOF
		}
		c.err = &ConnError{Addr: c.cfg.Addr, Err: cause}
	}
	pend := c.pending
	sent := pend.size - c.unwritten
	c.pending = fifo{}
	c.unwritten = 0
	err := c.err
	c.mu.Unlock()

	if c.cfg.Tracking != nil {
		// Invalidations may be lost with the connection: forget everything
		// before a new connection can serve reads.
		c.cfg.Tracking.lost()
	}
	close(c.dead)
	_ = c.nc.Close()
	unsent := NotSent(err)
	for i, r := 0, pend.pop(); r != nil; i, r = i+1, pend.pop() {
		c.inflight.Add(-1)
		if i < sent {
			r.fail(err)
		} else {
			r.fail(unsent)
		}
	}
	if tell && c.onBroken != nil {
		c.onBroken(c)
	}
}

func (c *conn) broken() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

// sendPing sends a health-check PING unless the previous one is still in
// flight. Its reply only counts as progress.
func (c *conn) sendPing() {
	if c.ping.state.Load() == stateWaiting {
		return
	}
	select {
	case <-c.ping.done:
	default:
	}
	c.ping.payload = pingCmd
	c.ping.state.Store(stateWaiting)
	if c.send(&c.ping) != nil {
		c.ping.state.Store(stateIdle)
		return
	}
	c.ensureReader()
}

var pingCmd = resp.AppendCommand(nil, "PING")

type pingHandler struct{}

func (pingHandler) HandleReply(resp.Msg) {}
func (pingHandler) Recycle()             {}

// pubsubPush returns the kind of a pub/sub push frame (message, subscribe,
// unsubscribe, ...), or "" for any other push.
func pubsubPush(m resp.Msg) string {
	top := m.Value(0)
	if m[top].Int < 1 {
		return ""
	}
	k := m.Value(top + 1)
	if k >= len(m) {
		return ""
	}
	switch kind := m[k].Data; string(kind) {
	case "message", "pmessage", "smessage", "subscribe", "psubscribe", "ssubscribe",
		"unsubscribe", "punsubscribe", "sunsubscribe":
		return string(kind)
	}
	return ""
}
