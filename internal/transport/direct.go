package transport

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Direct reads.
//
// A goroutine parked on a channel while another goroutine reads its reply
// costs two hand-offs per call (the reader wakes, then wakes the caller).
// For a lone sequential caller that is most of the latency. So, unless
// something must consume the socket at all times (the filler, a push
// handler, client-side tracking), the read role is taken by whoever needs
// it: a caller waiting for its reply, when it is the only one waiting,
// reads its reply itself. It then
// gives the role back and, if replies are still owed to others, wakes the
// connection's background reader, which reads while anything is pending.
//
// Invariant: while a request is pending, some goroutine holds the read role
// or the background reader has been kicked to take it. c.reading (under
// c.mu) says whether the role is held.
//
// A caller reading for itself must still return promptly when its context
// ends: the socket's read deadline is the context's deadline (or, for a
// context that may only be cancelled, a short interval after which the
// read looks at the context and goes on; see cancelCheck), the read
// returns os.ErrDeadlineExceeded, and resp.Reader resumes the partly read
// value on the next call.

// Concurrent batches. A batch (DoMulti) takes the read role whenever it is
// free, however much is pending, and reads until its own last reply,
// answering the requests queued before it on the way. Batch callers that
// find the role taken wait for their replies or for the role, whichever
// comes first: a caller giving the role up while batches wait hands it to
// one of them (roleFree) instead of waking the background reader, and the
// background reader gives it up as soon as a batch waits. Each pipeline
// then costs one wake-up (the role passed to its caller, who then reads
// and polls for itself) instead of two (the background reader woken by
// the network poller, then the caller by the reader).
//
// The hand-over keeps the invariant: the goroutine letting go of the role
// clears c.reading before it looks at roleWaiters, and a waiter leaves
// roleWaiters before it looks at c.reading (ensureReader), so either the
// role is passed to a waiter that is still there, or the background
// reader is kicked.

// takeReadRole claims the read role for a caller whose own requests (own of
// them: one for Do, the batch for DoMulti) are all that is pending: a lone
// caller then reads its own replies. With more pending, the background
// reader serves everyone (it is kicked here if idle), which keeps replies
// and writes batched under concurrency; a batch (own > 1) takes the role
// anyway.
//
// lone reports that nothing but the caller's requests is pending: only
// then does the caller poll (spin.go), since polling while other callers
// wait for replies would keep a processor from them.
func (c *conn) takeReadRole(own int) (ok, lone bool) {
	c.mu.Lock()
	if c.reading || c.err != nil {
		c.mu.Unlock()
		return false, false
	}
	lone = c.pending.size <= own
	if !lone && own == 1 {
		c.mu.Unlock()
		c.kickReader()
		return false, false
	}
	c.reading = true
	c.mu.Unlock()
	return true, lone
}

// releaseReadRole gives the role back, waking the background reader when
// replies are still owed. Bytes already read while no reply is owed are
// a reply nobody asked for: a protocol error, found here rather than
// handed to the next caller as its reply.
func (c *conn) releaseReadRole() {
	c.mu.Lock()
	c.reading = false
	owed := c.pending.size > 0 && c.err == nil
	stray := c.pending.size == 0 && c.err == nil && c.rd.Buffered() > 0
	c.mu.Unlock()
	if stray {
		c.fail(&resp.ProtocolError{Reason: "bytes received with no request pending"})
		return
	}
	if owed {
		c.passRole()
	}
}

// passRole wakes whoever should take the read role, given up (c.reading
// cleared) with replies still owed: a waiting batch caller, or else the
// background reader.
func (c *conn) passRole() {
	if c.roleWaiters.Load() > 0 {
		select {
		case c.roleFree <- struct{}{}:
		default:
		}
		return
	}
	c.kickReader()
}

// waitRole waits, for a batch whose last request is r, until r is answered
// or failed, or the read role may be free (role true: try to take it), or
// ctx ends. Its other results are wait's.
func (c *conn) waitRole(ctx context.Context, r *Request) (role, abandoned bool, err error) {
	c.roleWaiters.Add(1)
	if beforeRoleSelect != nil {
		beforeRoleSelect()
	}
	select {
	case <-r.done:
		c.roleWaiters.Add(-1)
		c.ensureReader()
		r.state.Store(stateIdle)
		return false, false, r.err
	case <-c.roleFree:
		c.roleWaiters.Add(-1)
		return true, false, nil
	case <-ctx.Done():
		c.roleWaiters.Add(-1)
		c.ensureReader()
		if left, withdrawn := c.leave(r); left {
			return false, true, leftErr(ctx, withdrawn)
		}
		<-r.done
		r.state.Store(stateIdle)
		return false, false, r.err
	}
}

// beforeRoleSelect, set by tests only, runs in waitRole between counting
// the caller as a waiter and waiting: where a caller descheduled on a
// loaded machine finds its reply and the role both handed to it.
var beforeRoleSelect func()

func (c *conn) kickReader() {
	select {
	case c.rkick <- struct{}{}:
	default:
	}
}

// ensureReader makes sure a goroutine will read the pending replies, for
// requests whose senders do not read for themselves.
func (c *conn) ensureReader() {
	if !c.direct {
		return
	}
	c.mu.Lock()
	need := !c.reading && c.pending.size > 0
	c.mu.Unlock()
	if need {
		c.kickReader()
	}
}

// backgroundReader reads whenever it is kicked and replies are owed, and
// stops reading when none are.
func (c *conn) backgroundReader() {
	for {
		select {
		case <-c.rkick:
		case <-c.dead:
			return
		}
		c.mu.Lock()
		if c.reading || c.pending.size == 0 || c.err != nil {
			c.mu.Unlock()
			continue
		}
		c.reading = true
		c.mu.Unlock()
		for {
			m, err := c.rd.Next()
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					// A late deadline set for an earlier direct reader.
					_ = c.nc.SetReadDeadline(time.Time{})
					continue
				}
				c.fail(err)
				return
			}
			if _, ok := c.dispatch(m); !ok {
				return
			}
			c.mu.Lock()
			if c.pending.size > 0 && c.roleWaiters.Load() > 0 {
				// A batch waits: it reads for itself from here.
				c.reading = false
				c.mu.Unlock()
				c.passRole()
				break
			}
			if c.pending.size == 0 {
				c.reading = false
				stray := c.rd.Buffered() > 0
				c.mu.Unlock()
				if stray {
					c.fail(&resp.ProtocolError{Reason: "bytes received with no request pending"})
					return
				}
				break
			}
			c.mu.Unlock()
		}
	}
}

// waitDirect waits for r's reply, reading it (and any replies before it)
// itself while no other goroutine reads and at most own requests (the
// caller's) are pending. Its results are wait's.
func (c *conn) waitDirect(ctx context.Context, r *Request, own int) (abandoned bool, err error) {
	for r.state.Load() == stateWaiting {
		ok, lone := c.takeReadRole(own)
		if !ok {
			if own == 1 {
				return c.wait(ctx, r)
			}
			role, abandoned, err := c.waitRole(ctx, r)
			if role {
				if r.state.Load() != stateWaiting {
					// Handed the role for replies after r's, which
					// came meanwhile: whoever reads on must be woken,
					// or callers waiting for those replies wait forever.
					c.ensureReader()
				}
				continue
			}
			return abandoned, err
		}
		if r.state.Load() != stateWaiting {
			// The previous reader answered r between the check above
			// and taking the role: nothing more to read for it.
			c.releaseReadRole()
			break
		}
		armed := ctx.Done() != nil
		if armed {
			c.armDeadline(ctx)
		}
		if c.spin != nil {
			// A large payload keeps the server reading for longer than
			// a poll lasts (bigwrite.go): park at once.
			c.spin.on = lone && !r.large()
		}
		err := c.readFor(ctx, r)
		if c.spin != nil {
			c.spin.on = false
		}
		if armed {
			_ = c.nc.SetReadDeadline(time.Time{})
		}
		c.releaseReadRole()
		if err != nil {
			if left, withdrawn := c.leave(r); left {
				return true, leftErr(ctx, withdrawn)
			}
			break // answered meanwhile
		}
	}
	return c.wait(ctx, r)
}

// cancelCheck is how often a caller reading its own reply looks at its
// context, when the context has no deadline sooner: the read's deadline is
// the context's deadline or cancelCheck from now, whichever comes first,
// and a read that times out with the context still live goes on. This
// costs no allocation (context.AfterFunc costs three per call); the price
// is that a cancellation (as opposed to a deadline) is seen up to
// cancelCheck late while no reply comes.
const cancelCheck = 20 * time.Millisecond

// armDeadline sets the read deadline for a direct read under ctx.
func (c *conn) armDeadline(ctx context.Context) {
	t := time.Now().Add(cancelCheck)
	if dl, ok := ctx.Deadline(); ok && dl.Before(t) {
		t = dl
	}
	_ = c.nc.SetReadDeadline(t)
}

// readFor reads and dispatches replies until r is answered. It returns the
// context's error when the context ended first; any other failure breaks
// the connection, which fails r, and returns nil.
func (c *conn) readFor(ctx context.Context, r *Request) error {
	for {
		m, err := c.rd.Next()
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
				c.armDeadline(ctx)
				continue
			}
			c.fail(err)
			return nil
		}
		got, ok := c.dispatch(m)
		if !ok || got == r {
			return nil
		}
	}
}
