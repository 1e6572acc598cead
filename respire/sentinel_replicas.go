package respire

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/transport"
)

// replicaReads sends read-only commands of a Sentinel client to the
// replicas that the sentinels report up and in sync (ReadFrom other than
// ReadPrimary). Each replica has a Mux of its own, whose connections check
// during the handshake that the server is a replica linked to its master.
type replicaReads struct {
	cfg transport.Config

	mu     sync.Mutex
	closed bool
	live   atomic.Pointer[[]*replica]
}

// replica is one replica's connections, and when it last failed a read.
type replica struct {
	addr     string
	mux      *transport.Mux
	failedAt atomic.Int64 // unix nanoseconds, 0 when it never failed
}

// replicaQuarantine is how long a replica that failed a read is tried only
// when no other is left.
const replicaQuarantine = time.Second

func newReplicaReads(cfg transport.Config) *replicaReads {
	cfg.Resolve, cfg.Role, cfg.Tracking, cfg.OnPush = nil, "replica", nil, nil
	// A replica that cannot be reached fails the read at once, which then
	// goes to another node, instead of waiting for a reconnect.
	cfg.FailFast = true
	cfg.Connections = 1
	return &replicaReads{cfg: cfg}
}

// set replaces the replicas: new ones get a Mux, gone ones are closed once
// no read can pick them any more.
func (r *replicaReads) set(addrs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	var old []*replica
	if p := r.live.Load(); p != nil {
		old = *p
	}
	next := make([]*replica, 0, len(addrs))
	for _, a := range addrs {
		i := slices.IndexFunc(old, func(x *replica) bool { return x.addr == a })
		if i >= 0 {
			next = append(next, old[i])
			continue
		}
		cfg := r.cfg
		cfg.Addr = a
		next = append(next, &replica{addr: a, mux: transport.NewMux(cfg)})
	}
	r.live.Store(&next)
	for _, x := range old {
		if !slices.Contains(next, x) {
			// A read in flight on it fails with ErrClosed and tries
			// another node (reads are safe to send again).
			x.mux.Close()
		}
	}
}

func (r *replicaReads) close() {
	r.mu.Lock()
	r.closed = true
	p := r.live.Swap(nil)
	r.mu.Unlock()
	if p != nil {
		for _, x := range *p {
			x.mux.Close()
		}
	}
}

// pick orders the replicas for one read: from a random start, those that
// did not fail lately first.
func (r *replicaReads) pick() []*replica {
	p := r.live.Load()
	if p == nil || len(*p) == 0 {
		return nil
	}
	all := *p
	start := rand.N(len(all))
	out := make([]*replica, 0, len(all))
	now := time.Now().UnixNano()
	var later []*replica
	for i := range all {
		x := all[(start+i)%len(all)]
		if f := x.failedAt.Load(); f != 0 && now-f < int64(replicaQuarantine) {
			later = append(later, x)
			continue
		}
		out = append(out, x)
	}
	return append(out, later...)
}

// exec runs the read-only x on a replica. done false (x still the
// caller's, unsent to any node that answered) sends it to the master:
// with ReadPreferReplica when no replica could serve it.
func (r *replicaReads) exec(ctx context.Context, c *Client, x *cmd, dec decoder) (done bool, err error) {
	x.dec = dec
	x.seal()
	x.Retries = c.retries
	name := x.info.name
	var last error
	for _, rep := range r.pick() {
		abandoned, err := rep.mux.Try(ctx, &x.Request)
		if abandoned {
			return true, c.wrapErr(name, err)
		}
		if err != nil {
			last = err
			rep.failedAt.Store(time.Now().UnixNano())
			var ce *ConnError
			if ctx.Err() != nil || errors.As(err, &ce) && !errors.Is(err, ErrClosed) {
				// Its outcome is unknown (and the mux used up its
				// retries): report it, as on a single server.
				x.Recycle()
				return true, c.wrapErr(name, err)
			}
			continue
		}
		var se *Error
		if errors.As(x.replyErr, &se) && (se.Prefix == "LOADING" || se.Prefix == "MASTERDOWN") {
			last = x.replyErr
			x.replyErr = nil
			rep.failedAt.Store(time.Now().UnixNano())
			continue
		}
		if x.replyErr != nil {
			err := x.replyErr
			x.Recycle()
			return true, err
		}
		return true, nil
	}
	if c.opts.ReadFrom == ReadPreferReplica {
		return false, nil
	}
	x.Recycle()
	return true, c.wrapErr(name, transport.NotSent(&noReplicaError{last: last}))
}

// noReplicaError is the error of a read with ReadReplica that no replica
// could serve; it matches ErrNoReplica.
type noReplicaError struct{ last error }

func (e *noReplicaError) Error() string {
	if e.last == nil {
		return "respire: sentinel: no replica of the master is known"
	}
	return "respire: sentinel: no replica could serve the read: " + transport.Trim(e.last)
}

func (e *noReplicaError) Unwrap() []error {
	if e.last == nil {
		return []error{ErrNoReplica}
	}
	return []error{ErrNoReplica, e.last}
}
