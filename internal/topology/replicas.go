package topology

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

// Replicas sends read-only commands of a Sentinel client to the replicas
// that the sentinels report up and in sync (ReadFrom other than
// ReadPrimary). Each replica has a Mux of its own, whose connections check
// during the handshake that the server is a replica linked to its primary.
type Replicas struct {
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

// NewReplicas returns an empty set of replicas whose connections are made
// with cfg (a data node's), as replicas.
func NewReplicas(cfg transport.Config) *Replicas {
	cfg.Resolve, cfg.Role, cfg.Tracking, cfg.OnPush = nil, "replica", nil, nil
	// A replica that cannot be reached fails the read at once, which then
	// goes to another node, instead of waiting for a reconnect.
	cfg.FailFast = true
	cfg.Connections = 1
	return &Replicas{cfg: cfg}
}

// Set replaces the replicas: new ones get a Mux, gone ones are closed once
// no read can pick them any more.
func (r *Replicas) Set(addrs []string) {
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

// Close closes every replica's connections.
func (r *Replicas) Close() {
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
func (r *Replicas) pick() []*replica {
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

// Exec runs the read-only cmd (sealed) on a replica. With done, it ended
// there: err nil and its reply in cmd (an error reply included), or err,
// not yet wrapped with the command's name, and cmd given back (or the
// transport's). done false (cmd still the caller's, unsent to any node
// that answered) means no replica could serve it and fallback allows the
// primary; without fallback that ends as an error matching ErrNoReplica.
func (r *Replicas) Exec(ctx context.Context, cmd Command, fallback bool) (done bool, err error) {
	x := cmd.Req()
	var last error
	for _, rep := range r.pick() {
		abandoned, err := rep.mux.Try(ctx, x)
		if abandoned {
			return true, err
		}
		if err != nil {
			last = err
			rep.failedAt.Store(time.Now().UnixNano())
			var ce *transport.ConnError
			if ctx.Err() != nil || errors.As(err, &ce) && !errors.Is(err, transport.ErrClosed) {
				// Its outcome is unknown (and the mux used up its
				// retries): report it, as on a single server.
				cmd.Recycle()
				return true, err
			}
			continue
		}
		if rd, ok := cmd.Redirect(rep.addr); ok && (rd.Kind == "LOADING" || rd.Kind == "MASTERDOWN") {
			last = cmd.ClearReply()
			rep.failedAt.Store(time.Now().UnixNano())
			continue
		}
		return true, nil
	}
	if fallback {
		return false, nil
	}
	cmd.Recycle()
	return true, transport.NotSent(&noReplicaError{last: last})
}

// noReplicaError is the error of a read with ReadReplica that no replica
// could serve; it matches ErrNoReplica.
type noReplicaError struct{ last error }

func (e *noReplicaError) Error() string {
	if e.last == nil {
		return "respire: sentinel: no replica of the primary is known"
	}
	return "respire: sentinel: no replica could serve the read: " + transport.Trim(e.last)
}

func (e *noReplicaError) Unwrap() []error {
	if e.last == nil {
		return []error{ErrNoReplica}
	}
	return []error{ErrNoReplica, e.last}
}
