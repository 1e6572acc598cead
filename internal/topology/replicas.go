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
	cfg  transport.Config
	zone string // the client's availability zone, "" for none

	mu     sync.Mutex
	closed bool
	live   atomic.Pointer[[]*replica]
	set    chan struct{} // closed by the first Set

	// probes are the dials that learn new replicas' zones from HELLO;
	// stop ends them at Close.
	probes sync.WaitGroup
	stop   context.Context
	cancel context.CancelFunc
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
// with cfg (a data node's), as replicas. With a zone (the client's
// availability zone), reads prefer the replicas whose HELLO reports that
// zone, and every new replica is dialed at once to learn its zone.
func NewReplicas(cfg transport.Config, zone string) *Replicas {
	cfg.Resolve, cfg.Role, cfg.Tracking, cfg.OnPush = nil, "replica", nil, nil
	// A replica that cannot be reached fails the read at once, which then
	// goes to another node, instead of waiting for a reconnect.
	cfg.FailFast = true
	cfg.Connections = 1
	r := &Replicas{cfg: cfg, zone: zone, set: make(chan struct{})}
	r.stop, r.cancel = context.WithCancel(context.Background())
	return r
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
		x := &replica{addr: a, mux: transport.NewMux(cfg)}
		next = append(next, x)
		if r.zone != "" {
			r.probes.Go(func() {
				ctx, cancel := context.WithTimeout(r.stop, zoneProbeTimeout)
				defer cancel()
				// An error leaves the zone unknown: another zone.
				_ = x.mux.Connect(ctx)
			})
		}
	}
	first := r.live.Load() == nil
	r.live.Store(&next)
	if first {
		close(r.set)
	}
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
	r.cancel()
	r.probes.Wait()
	if p != nil {
		for _, x := range *p {
			x.mux.Close()
		}
	}
}

// down reports that the replica's connections were established once
// (it reported its HELLO) and none is now.
func (x *replica) down() bool { return x.mux.Open() == 0 && x.mux.ServerInfo() != nil }

// Zone returns the availability zone the replica's newest connection
// reported in HELLO, "" when none did.
func (x *replica) Zone() string {
	if info := x.mux.ServerInfo(); info != nil {
		return info.Zone
	}
	return ""
}

// Connect waits, within ctx, for the first set of replicas (which the
// sentinels' answer that named the master gives right after), so that the
// first reads after the client's Connect go to replicas, not to the
// primary for want of any known. When reads prefer a zone it also
// connects the replicas whose zone is not known yet. A replica that cannot
// be reached is left out, not an error: it counts as another zone.
func (r *Replicas) Connect(ctx context.Context) {
	select {
	case <-r.set:
	case <-ctx.Done():
		return
	}
	if r.zone == "" {
		return
	}
	p := r.live.Load()
	if p == nil {
		return
	}
	var wg sync.WaitGroup
	for _, x := range *p {
		if x.mux.ServerInfo() == nil {
			wg.Go(func() { _ = x.mux.Connect(ctx) })
		}
	}
	wg.Wait()
}

// Pick says which replicas a read may go to, and whether it may end on
// the primary.
type Pick int

const (
	// PickAny tries every replica (those in the client's zone first, when
	// it has one) and fails the read when none serves it.
	PickAny Pick = iota
	// PickAnyThenPrimary is PickAny, then the primary.
	PickAnyThenPrimary
	// PickZoneThenPrimary tries only the replicas in the client's zone,
	// then the primary.
	PickZoneThenPrimary
)

// pick orders the replicas for one read: those in the client's zone
// first (only those with zoneOnly), each group from a random start, and in
// each those that did not fail lately and whose connection is not down
// first. With skipDown (the primary may serve the read) those whose
// connection is down are left out.
func (r *Replicas) pick(zoneOnly, skipDown bool) []*replica {
	p := r.live.Load()
	if p == nil || len(*p) == 0 {
		return nil
	}
	all := *p
	start := rand.N(len(all))
	out := make([]*replica, 0, len(all))
	now := time.Now().UnixNano()
	var later, other, otherLater []*replica
	for i := range all {
		x := all[(start+i)%len(all)]
		failing := false
		if f := x.failedAt.Load(); f != 0 && now-f < int64(replicaQuarantine) {
			failing = true
		} else if x.down() {
			// Restarting or gone: a read would wait there for a dial
			// (of up to DialTimeout when the process accepts but does
			// not answer, as while it shuts down). Dial it for later
			// reads, and try it after the others, or not at all when
			// the primary serves the read meanwhile.
			x.mux.Redial()
			if skipDown {
				continue
			}
			failing = true
		}
		local := r.zone == "" || x.Zone() == r.zone
		switch {
		case local && !failing:
			out = append(out, x)
		case local:
			later = append(later, x)
		case !failing:
			other = append(other, x)
		default:
			otherLater = append(otherLater, x)
		}
	}
	out = append(out, later...)
	if zoneOnly {
		return out
	}
	return append(append(out, other...), otherLater...)
}

// Exec runs the read-only cmd (sealed) on a replica that how allows. With
// done, it ended there: err nil and its reply in cmd (an error reply
// included), or err, not yet wrapped with the command's name, and cmd
// given back (or the transport's). done false (cmd still the caller's,
// unsent to any node that answered) means no replica could serve it and
// how allows the primary; with PickAny that ends as an error matching
// ErrNoReplica.
func (r *Replicas) Exec(ctx context.Context, cmd Command, how Pick) (done bool, err error) {
	x := cmd.Req()
	var last error
	for _, rep := range r.pick(how == PickZoneThenPrimary, how != PickAny) {
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
		if rd, ok := cmd.Redirect(rep.addr); ok && (rd.Kind == Loading || rd.Kind == MasterDown) {
			last = cmd.ClearReply()
			rep.failedAt.Store(time.Now().UnixNano())
			continue
		}
		return true, nil
	}
	if how != PickAny {
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
