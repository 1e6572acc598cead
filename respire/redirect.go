package respire

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/respire-go/respire/internal/transport"
)

// Following Valkey's REDIRECT from a standalone replica.
//
// Valkey 8 and later answer a client that declared CLIENT CAPA redirect,
// connected to a replica, with -REDIRECT host:port (the replica's primary)
// for a data-access command it would not serve there: a write, or any such
// command without READONLY. The handshake declares the capability, and
// sends READONLY, on a standalone Valkey 8 or later only
// (transport.Config.Redirect): reads stay on the replica, as on a server
// that declared nothing, and a write that used to fail with -READONLY
// runs on the primary. Other servers see neither command.
//
// A client whose Options.Addr is a replica keeps a connection to the
// primary that the last REDIRECT named (sticky): later writes go there at
// once, without a first trip to the replica; reads stay on Options.Addr. A
// Sentinel client follows a REDIRECT only for the command that met it (a
// write reaching a primary that a failover just demoted), and otherwise
// sends its writes where Sentinel says. A command follows at most
// maxReplicaRedirects of them (chained replication may take more than
// one), each within the caller's context.

// maxReplicaRedirects bounds the REDIRECTs one command follows.
const maxReplicaRedirects = 4

// replicaRedirect is the primary a client follows REDIRECT to: nil on a
// cluster and with Options.NoFollowRedirect.
type replicaRedirect struct {
	base   transport.Config // the client's, Addr set per primary
	sticky bool             // later writes go to the last primary at once
	pool   int              // Options.BlockingPoolSize

	// cur is the last primary named, nil before any: read without mu on
	// every write, set under it.
	cur    atomic.Pointer[redirectTarget]
	mu     sync.Mutex
	closed bool
	old    []*redirectTarget // replaced targets, closed with the client
}

// redirectTarget is the connections to one primary a REDIRECT named.
type redirectTarget struct {
	addr string
	mux  *transport.Mux
	pool *transport.BlockingPool
}

func newReplicaRedirect(opts *Options, cfg transport.Config) *replicaRedirect {
	cfg.Resolve, cfg.Role = nil, ""
	// A primary that cannot be reached fails the command at once, with an
	// error naming the redirect, rather than when its context ends.
	cfg.FailFast = true
	return &replicaRedirect{base: cfg, sticky: opts.Sentinel == nil, pool: opts.BlockingPoolSize}
}

// target returns the connections to the primary at addr, made when new.
func (r *replicaRedirect) target(addr string) (*redirectTarget, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, transport.NotSent(transport.ErrClosed)
	}
	cur := r.cur.Load()
	if cur != nil && cur.addr == addr {
		return cur, nil
	}
	cfg := r.base
	cfg.Addr = addr
	t := &redirectTarget{addr: addr, mux: transport.NewMux(cfg), pool: transport.NewBlockingPool(cfg, r.pool)}
	if cur != nil {
		// Callers may still use it: it is closed with the client.
		r.old = append(r.old, cur)
	}
	r.cur.Store(t)
	return t, nil
}

// first returns the primary a write goes to at once: the last one named,
// on a sticky client; nil for a read, or before any REDIRECT.
func (r *replicaRedirect) first(x *cmd) *redirectTarget {
	if !r.sticky || x.info.flags&flagReadonly != 0 {
		return nil
	}
	return r.cur.Load()
}

// primary returns the last primary named on a sticky client, nil when
// there is none (or r is nil).
func (r *replicaRedirect) primary() *redirectTarget {
	if r == nil || !r.sticky {
		return nil
	}
	return r.cur.Load()
}

func (r *replicaRedirect) close() {
	r.mu.Lock()
	r.closed = true
	ts := append(r.old, r.cur.Swap(nil))
	r.old = nil
	r.mu.Unlock()
	for _, t := range ts {
		if t != nil {
			t.pool.Close()
			t.mux.Close()
		}
	}
}

// replicaRedirectOf returns the address x's reply redirects to, if it is a
// REDIRECT.
func replicaRedirectOf(x *cmd) (string, bool) {
	if x.replyErr == nil {
		return "", false
	}
	se, ok := serverError(x.replyErr)
	if !ok || se.Prefix != "REDIRECT" {
		return "", false
	}
	addr := se.Message
	if len(addr) > len("REDIRECT ") {
		addr = addr[len("REDIRECT "):]
	}
	return addr, addr != "" && addr != se.Message
}

// RedirectError is the error of a command that followed Valkey's
// -REDIRECT from a replica (From) to its primary (To) and failed there, or
// that was redirected more than the client follows. It wraps the cause:
// the transport's error (errors.Is(err, ErrNotSent) holds when the command
// never reached the primary), or the last REDIRECT, an *Error.
type RedirectError struct {
	From, To string
	// Hops is the number of REDIRECTs followed.
	Hops int
	Err  error
}

func (e *RedirectError) Error() string {
	if e.Hops > maxReplicaRedirects {
		return "respire: more than " + strconv.Itoa(maxReplicaRedirects) + " REDIRECTs, the last from " + e.From + " to " + e.To + ": " + transport.Trim(e.Err)
	}
	return "respire: following REDIRECT from " + e.From + " to " + e.To + ": " + transport.Trim(e.Err)
}

// Unwrap returns the cause.
func (e *RedirectError) Unwrap() error { return e.Err }

// batchMux is the connection a batch xs goes to: the primary a REDIRECT
// named when the batch holds a write and the client is sticky, else the
// client's own.
func (s *singleBackend) batchMux(xs []*cmd) *transport.Mux {
	for _, x := range xs {
		if t := s.redir.first(x); t != nil {
			return t.mux
		}
	}
	return s.mux
}

// followBatch sends the commands of a batch that a replica answered with
// REDIRECT to the primary it names, in their order, until none is left or
// too many were followed: execBatch's contract (on error the transport owns
// xs).
func (s *singleBackend) followBatch(ctx context.Context, xs []*cmd, from string) error {
	var again []*cmd
	var reqs []*transport.Request
	for hops := 0; ; hops++ {
		again, reqs = again[:0], reqs[:0]
		to := ""
		for _, x := range xs {
			if a, ok := replicaRedirectOf(x); ok && (to == "" || a == to) {
				to = a
				again = append(again, x)
			}
		}
		if len(again) == 0 {
			return nil
		}
		if hops >= maxReplicaRedirects {
			for _, x := range again {
				x.replyErr = &RedirectError{From: from, To: to, Hops: hops + 1, Err: x.replyErr}
			}
			return nil
		}
		t, err := s.redir.target(to)
		if err != nil {
			return err
		}
		for _, x := range again {
			x.ClearReply()
			reqs = append(reqs, &x.Request)
		}
		if err := t.mux.DoMulti(ctx, reqs); err != nil {
			return &RedirectError{From: from, To: to, Hops: hops + 1, Err: err}
		}
		from = to
	}
}
