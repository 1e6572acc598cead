package transport

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Mux multiplexes requests over Config.Connections connections to one
// node, reconnecting each one when it breaks. It is safe for concurrent use.
type Mux struct {
	cfg Config
	// slots holds the Connections routed slots, then the BatchLanes lanes
	// (lanes.go).
	slots  []*slot
	routed int             // len(slots) - BatchLanes
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	closed atomic.Bool
	wg     sync.WaitGroup
	info   atomic.Pointer[ConnInfo]
	nodeID atomic.Pointer[string] // set by ExpectNodeID, overrides cfg.NodeID
	// gone is closed, and replaced, by BreakStalled: callers waiting for a
	// connection give up then (slot.get).
	gone atomic.Pointer[goneSignal]
}

// goneSignal wakes the callers waiting for a connection of a Mux whose
// server no longer serves them; cause is set before ch is closed.
type goneSignal struct {
	ch    chan struct{}
	cause error
}

// notHere wraps the cause of a break after which the Mux does not send
// the requests again itself, even those never written or allowed to
// retry: its server no longer serves them (BreakStalled), and the caller
// routes them anew.
type notHere struct{ error }

func (e notHere) Unwrap() error { return e.error }

// NotHere reports whether err is the error of a request that the Mux gave
// back because its server no longer serves it (BreakStalled).
func NotHere(err error) bool {
	var nh notHere
	return errors.As(err, &nh)
}

// ExpectNodeID makes every connection dialed from now on check that the
// server is the cluster node id (Config.NodeID): for a Mux opened to an
// address before the node's id was known (a seed, a redirect's target).
func (m *Mux) ExpectNodeID(id string) { m.nodeID.Store(&id) }

// ServerInfo describes the server as of the newest handshake; nil before
// the first connection. The value is replaced, never changed, on reconnect.
func (m *Mux) ServerInfo() *ConnInfo { return m.info.Load() }

// NewMux returns a Mux for cfg. It dials nothing until the first request or
// Connect.
func NewMux(cfg Config) *Mux {
	cfg = cfg.withDefaults()
	m := &Mux{cfg: cfg}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.gone.Store(&goneSignal{ch: make(chan struct{})})
	m.routed = cfg.Connections
	m.slots = make([]*slot, cfg.Connections+cfg.BatchLanes)
	for i := range m.slots {
		m.slots[i] = &slot{m: m, changed: make(chan struct{})}
	}
	cfg.Credentials.addMux(m)
	m.wg.Add(1)
	go func() { defer m.wg.Done(); m.monitor() }()
	return m
}

// Config returns the configuration in use, defaults applied.
func (m *Mux) Config() Config { return m.cfg }

// Connect dials every connection now (batch lanes excepted: they are
// dialed when batches need them) and returns the first error, such as a
// refused connection (matching ErrUnavailable) or a wrong password (a
// permanent *HandshakeError).
func (m *Mux) Connect(ctx context.Context) error {
	for _, s := range m.slots[:m.routed] {
		if _, err := s.get(ctx, true); err != nil {
			return err
		}
	}
	return nil
}

// Do sends r and waits for its reply, which the request's Handler has
// received by the time Do returns nil. On any error, the Mux owns r: its
// Handler's Recycle is called (now or when the connection lets go of it),
// and the caller must not touch r again. Errors wrap ctx.Err() when the
// context ended, ErrClosed after Close, ErrUnavailable while the server
// cannot be reached, a permanent *HandshakeError when it refuses the
// client's configuration, and a *ConnError when the connection broke.
// Errors of requests that certainly never reached the server match
// ErrNotSent.
//
// A request whose connection broke before its bytes were written is sent
// again on the next connection, within ctx. One whose connection broke
// after that is sent again only if r.Retries is not zero: as long as ctx
// allows when the network broke it (a reset, an end of stream) and ctx has
// a deadline; else at most r.Retries times (see free). A large write (not
// read-only, a payload of DirectPayload or more) may first wait, unwritten,
// for room in its connection's write window (window.go).
func (m *Mux) Do(ctx context.Context, r *Request) error {
	abandoned, err := m.Try(ctx, r)
	if err != nil && !abandoned {
		r.handler.Recycle()
	}
	return err
}

// Try is Do for a caller that may send r elsewhere when it fails: on an
// error r is still the caller's, not recycled, unless abandoned is true
// (the context ended while r was in flight), in which case the Mux owns it
// as after Do.
func (m *Mux) Try(ctx context.Context, r *Request) (abandoned bool, err error) {
	r.err = nil
	r.quiet = false
	if err := ctx.Err(); err != nil {
		return false, NotSent(err)
	}
	route := m.slots[0]
	if m.routed > 1 {
		route = m.slots[r.Route%uint32(m.routed)]
	}
	if n := writeWeight(r); n > 0 {
		if err := route.win.acquireAs(ctx, m.ctx, n, &r.wait); err != nil {
			return false, err
		}
		defer route.win.release(n)
	}
	resends, retries := maxResends, r.Retries
	for {
		// A read picks its connection anew for each attempt: the lane
		// of the one before may be redialing, waiting out a backoff,
		// while the routed connection is up again.
		s := route
		if r.ReadOnly {
			s = m.largeLane(route)
		}
		c, err := s.get(ctx, m.cfg.FailFast)
		if err != nil {
			return false, err
		}
		r.state.Store(stateWaiting)
		if err := c.sendCtx(ctx, r); err != nil {
			r.state.Store(stateIdle)
			s.drop(c)
			continue
		}
		seq, big := hasRefs([]*Request{r})
		if c.direct {
			abandoned, err = c.waitDirect(ctx, r, 1)
		} else {
			abandoned, err = c.wait(ctx, r)
		}
		if big {
			c.letGo([]*Request{r}, seq, abandoned)
		}
		if err == nil || abandoned {
			return abandoned, err
		}
		if again(ctx, err, &resends, &retries) {
			r.err = nil
			continue
		}
		return false, err
	}
}

// maxResends bounds how often a request whose connection broke before it
// was written is sent again, when that is counted (see free).
const maxResends = 3

// again reports whether a request that failed with err, its reply not
// handled, should be sent again, and counts the attempt unless it is free.
// A request never written is sent again (resends bounding the attempts);
// one written is only while retries, its Retries, allows.
func again(ctx context.Context, err error, resends *int, retries *uint8) bool {
	if ctx.Err() != nil || errors.Is(err, ErrClosed) || NotHere(err) {
		return false
	}
	var ce *ConnError
	switch {
	case errors.Is(err, ErrNotSent):
		if free(ctx, err) {
			return true
		}
		if *resends > 0 {
			*resends--
			return true
		}
	case errors.As(err, &ce) && *retries > 0:
		if !free(ctx, err) {
			*retries--
		}
		return true
	}
	return false
}

// free reports whether sending again a request that failed with err, a
// broken connection's error, costs none of its attempts: when ctx has a
// deadline, which bounds the attempts by itself, and the request cannot
// have broken the connection itself. A reset, an end of stream or a failed
// write comes from the network or the server, and a request caught in it
// (a read of a large value, cut in the middle of its reply as often as
// the connection is) is sent again for as long as its context allows. A
// reply the client could not read (ErrProtocol: malformed, or beyond
// Limits) or one that made no progress (ErrStalled) may be the request's
// own doing, and would be again: those retries are counted, as every
// retry is under a context without a deadline.
func free(ctx context.Context, err error) bool {
	if _, ok := ctx.Deadline(); !ok {
		return false
	}
	var ce *ConnError
	if !errors.As(err, &ce) {
		return false
	}
	return !errors.Is(ce.Err, resp.ErrProtocol) && !errors.Is(ce.Err, ErrStalled) &&
		!errors.Is(ce.Err, os.ErrDeadlineExceeded) && !errors.Is(ce.Err, io.ErrNoProgress)
}

// DoMulti sends rs in one write on one connection (chosen by rs[0].Route,
// or a batch lane when that one is busy: lanes.go) and waits for all their
// replies. On error, as for Do, every request belongs to the Mux. When the
// connection broke before any of them was written, they are all sent
// again, as Do does. When it broke after, the requests left unanswered (a
// tail of the batch, replies coming in order) are sent again on the next
// connection if every one of them either was never written or allows a
// retry (Retries, the smallest of theirs bounding the attempts that count,
// as for Do); those answered before keep their replies. A batch with large
// writes waits for room in the write window for all of them at once.
func (m *Mux) DoMulti(ctx context.Context, rs []*Request) error {
	if len(rs) == 0 {
		return nil
	}
	s := m.slots[0]
	if m.routed > 1 {
		s = m.slots[rs[0].Route%uint32(m.routed)]
	}
	if err := ctx.Err(); err != nil {
		for _, r := range rs {
			r.handler.Recycle()
		}
		return NotSent(err)
	}
	if n := windowWeight(rs); n > 0 {
		if err := s.win.acquireAs(ctx, m.ctx, n, &rs[len(rs)-1].wait); err != nil {
			for _, r := range rs {
				r.handler.Recycle()
			}
			return err
		}
		defer s.win.release(n)
	}
	all := rs
	resends, retries := maxResends, -1
	for {
		from := 0
		err := m.doMultiOnce(ctx, m.lane(s, len(rs)), rs, &from)
		if err == nil {
			return nil
		}
		var none uint8
		switch {
		case err == errResend && again(ctx, rs[len(rs)-1].err, &resends, &none):
			continue
		case err == errRetry:
			if retries < 0 {
				retries = int(minRetries(rs[from:]))
			}
			cause := rs[len(rs)-1].err
			if retries > 0 && ctx.Err() == nil && !m.closed.Load() && !NotHere(cause) {
				if !free(ctx, cause) {
					retries--
				}
				rs = rs[from:]
				continue
			}
		}
		if err == errResend || err == errRetry {
			// Still the caller's: recycle them here. Any other error
			// comes with the requests recycled, or owned by the
			// connection, already.
			err = rs[len(rs)-1].err
			for _, r := range rs {
				r.handler.Recycle()
			}
		}
		// Requests answered by an earlier attempt are the caller's too.
		for _, r := range all[:len(all)-len(rs)] {
			r.handler.Recycle()
		}
		return err
	}
}

// minRetries is the smallest Retries of the requests of rs that were
// written (whose outcome is unknown).
func minRetries(rs []*Request) uint8 {
	least := uint8(255)
	for _, r := range rs {
		if !errors.Is(r.err, ErrNotSent) {
			least = min(least, r.Retries)
		}
	}
	return least
}

// errResend is doMultiOnce's report that every request failed unsent and
// is still the caller's; the requests' own errors say why. errRetry says
// that the requests from *from on failed, each unsent or allowing a retry,
// and that all are still the caller's.
var (
	errResend = errors.New("resend")
	errRetry  = errors.New("retry")
)

// doMultiOnce is one attempt of DoMulti. On an error other than errResend
// the requests are recycled, or left to whoever finishes them.
func (m *Mux) doMultiOnce(ctx context.Context, s *slot, rs []*Request, from *int) error {
	for _, r := range rs {
		r.err = nil
		r.quiet = true
	}
	rs[len(rs)-1].quiet = false
	var c *conn
	for {
		var err error
		c, err = s.get(ctx, m.cfg.FailFast)
		if err != nil {
			for _, r := range rs {
				r.handler.Recycle()
			}
			return err
		}
		for _, r := range rs {
			r.state.Store(stateWaiting)
		}
		if err := c.sendCtx(ctx, rs...); err != nil {
			for _, r := range rs {
				r.state.Store(stateIdle)
			}
			s.drop(c)
			continue
		}
		break
	}
	// Replies come in order, so once the last is in, all are: wait for it
	// alone (reading directly when possible), then collect the rest.
	last := rs[len(rs)-1]
	var abandoned bool
	var err error
	seq, big := hasRefs(rs)
	if c.direct {
		abandoned, err = c.waitDirect(ctx, last, len(rs))
	} else {
		abandoned, err = c.wait(ctx, last)
	}
	if big {
		c.letGo(rs, seq, abandoned)
	}
	rest := rs[:len(rs)-1]
	if abandoned {
		// last was abandoned; the others may still be owed.
		for _, r := range rest {
			abandon(r)
		}
		return err
	}
	// The connection answered or failed last, so it answered or failed all
	// the others before it (or is handing one its reply right now, when
	// the connection failed meanwhile).
	for _, r := range rest {
		settled(r)
		r.state.Store(stateIdle)
	}
	if err != nil {
		if errors.Is(err, ErrNotSent) && allUnsent(rest) {
			return errResend
		}
		if i, ok := retryable(rs); ok {
			*from = i
			return errRetry
		}
		for _, r := range rs {
			r.handler.Recycle()
		}
		return err
	}
	var first error
	for _, r := range rest {
		if r.err != nil && first == nil {
			first = r.err
		}
	}
	if first != nil {
		for _, r := range rs {
			r.handler.Recycle()
		}
		return first
	}
	return nil
}

// retryable reports whether the requests of a failed batch that got no
// reply, from index i on, may all be sent again: each was never written,
// or allows a retry after its connection broke.
func retryable(rs []*Request) (i int, ok bool) {
	i = len(rs)
	for i > 0 && rs[i-1].err != nil {
		i--
	}
	for j, r := range rs {
		if j < i && r.err != nil {
			return 0, false // a failure before an answer: not a broken connection
		}
		if j >= i && !errors.Is(r.err, ErrNotSent) && (r.Retries == 0 || !isConnError(r.err)) {
			return 0, false
		}
	}
	return i, i < len(rs)
}

func isConnError(err error) bool {
	var ce *ConnError
	return errors.As(err, &ce)
}

func allUnsent(rs []*Request) bool {
	for _, r := range rs {
		if !errors.Is(r.err, ErrNotSent) {
			return false
		}
	}
	return true
}

// settled waits until a request of a batch, whose last request is
// answered or failed, is too: a reply handled (quietly) or a failure
// (signalled). Only when the connection failed while a reader was handing
// r its reply can r still be waiting here, for as long as that takes.
func settled(r *Request) {
	for {
		switch r.state.Load() {
		case stateDoneQuiet:
			return
		case stateDone:
			<-r.done
			return
		}
		runtime.Gosched()
	}
}

// abandon gives up on r after another request of its batch failed.
func abandon(r *Request) {
	if r.state.CompareAndSwap(stateWaiting, stateAbandoned) {
		return
	}
	settled(r)
	r.state.Store(stateIdle)
	r.handler.Recycle()
}

// wait waits for r to be answered or failed, or for ctx to end. It
// returns r's error, the request back in the caller's hands (idle, not
// recycled); or, abandoned, the context's error, the request then left to
// whoever finishes it, which recycles it.
func (c *conn) wait(ctx context.Context, r *Request) (abandoned bool, err error) {
	select {
	case <-r.done:
	default:
		select {
		case <-r.done:
		case <-ctx.Done():
			if left, withdrawn := c.leave(r); left {
				return true, leftErr(ctx, withdrawn)
			}
			<-r.done
		}
	}
	r.state.Store(stateIdle)
	return false, r.err
}

// Close closes every connection. Calls in flight and later calls fail with
// ErrClosed. Close waits for the Mux's goroutines to end.
func (m *Mux) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	m.cfg.Credentials.removeMux(m)
	m.cancel()
	for _, s := range m.slots {
		s.mu.Lock()
		c := s.cur.Swap(nil)
		s.mu.Unlock()
		if c != nil {
			c.fail(ErrClosed)
		}
	}
	m.wg.Wait()
	return nil
}

// Break closes the current connections, failing the requests in flight
// on them with a *ConnError wrapping cause (those not yet written with
// ErrNotSent, and sent again); later requests dial anew. It is for a
// caller that knows the peer will not answer, such as a cluster node
// that was stopped and failed over.
func (m *Mux) Break(cause error) { m.BreakExcept(cause, "") }

// BreakExcept is Break for the connections to every address but keep
// (their ConnInfo.Addr; "" keeps none): when a Resolve-d address moved to
// keep, the connections already dialed there are the new address's and
// stay.
func (m *Mux) BreakExcept(cause error, keep string) {
	for _, s := range m.slots {
		if c := s.cur.Load(); c != nil && (keep == "" || c.info.Addr != keep) {
			c.fail(cause)
		}
	}
}

// BreakStalled breaks, with cause, the connections that have requests in
// flight and have read nothing for quiet: a node stopped or cut off, whose
// callers would otherwise wait for their deadlines. A connection that is
// answering, however slowly, is left alone, and so are its requests. It
// reports how many connections it broke. It is for a caller that learned
// the server no longer serves the requests sent to it (a cluster node
// whose slots went to another): the requests it fails are not sent again
// by the Mux (NotHere reports their errors), and callers waiting for a
// connection give up too, with ErrNotSent, so that they can go elsewhere.
func (m *Mux) BreakStalled(cause error, quiet time.Duration) int {
	n := 0
	now := mono()
	nh := notHere{cause}
	for _, s := range m.slots {
		if c := s.cur.Load(); c != nil && c.inflight.Load() > 0 && now-c.lastRead.Load() >= int64(quiet) {
			c.fail(nh)
			n++
		}
	}
	g := m.gone.Swap(&goneSignal{ch: make(chan struct{})})
	g.cause = nh
	close(g.ch)
	return n
}

// Stalled reports whether the Mux has requests in flight and every
// connection holding some has read nothing for quiet: its server is
// stopped, cut off, or busy with one long command. A connection that is
// answering, however slowly, reads, and the Mux is not stalled.
func (m *Mux) Stalled(quiet time.Duration) bool {
	now := mono()
	stalled := false
	for _, s := range m.slots {
		c := s.cur.Load()
		if c == nil || c.inflight.Load() == 0 {
			continue
		}
		if now-c.lastRead.Load() < int64(quiet) {
			return false
		}
		stalled = true
	}
	return stalled
}

// Stats reports counters summed over the live connections.
type Stats struct {
	// Reads is the number of socket reads that returned data; Bytes the
	// bytes they returned; Replies the replies parsed. Bytes/Reads is the
	// number of bytes each parse pass found.
	Reads, Bytes int64
	Replies      uint64
	// Sends is the number of send calls (one per request or batch);
	// Writes the number of write system calls that carried them.
	Sends, Writes uint64
	// SocketReads and SocketBytes count reads from the socket. Without
	// the filler they equal Reads and Bytes; with it, Reads counts the
	// parser's reads from the filler's queue, and these the filler's
	// reads from the socket.
	SocketReads, SocketBytes int64
}

// Stats returns counters of the current connections.
func (m *Mux) Stats() Stats {
	var st Stats
	for _, s := range m.slots {
		if c := s.cur.Load(); c != nil {
			st.Reads += c.readCalls.Load()
			st.Bytes += c.readBytes.Load()
			st.Replies += c.replies.Load()
			st.Sends += c.sends.Load()
			st.Writes += c.writes.Load()
			if c.fill != nil {
				st.SocketReads += c.fill.reads.Load()
				st.SocketBytes += c.fill.bytes.Load()
			} else {
				st.SocketReads += c.readCalls.Load()
				st.SocketBytes += c.readBytes.Load()
			}
		}
	}
	return st
}
