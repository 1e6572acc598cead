package topology

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Running a command on a cluster: the redirect loop. The command goes to
// the node that serves its slot; MOVED patches the slot map and the command
// goes to the new owner; ASK sends ASKING and the command once to the
// target; TRYAGAIN, CLUSTERDOWN, LOADING and MASTERDOWN, which say the
// command did not run, are retried after a short pause within the caller's
// context. A command whose connection broke after it was written (outcome
// unknown) is resent only if it allows retries (read-only ones).

// Command is a command the cluster runs: package respire's commands
// implement it. Its reply is decoded into it by its transport handler.
type Command interface {
	// Req is the request to send, sealed.
	Req() *transport.Request
	// Redirect reports the redirect its last reply asks for, if any; from
	// is the address of the node that replied.
	Redirect(from string) (Redirect, bool)
	// ClearReply forgets the last reply before the command is sent again,
	// and returns its error.
	ClearReply() error
	// Recycle gives the command back.
	Recycle()
}

// Route is where a Command goes.
type Route struct {
	// Slot is its keys' slot, when Keyed; a command without keys goes to
	// any primary.
	Slot  uint16
	Keyed bool
	// Blocking commands go to the node's blocking pool.
	Blocking bool
	// ReadFrom chooses the node of a read-only command; ReadPrimary for
	// the others.
	ReadFrom ReadFrom
	// Retries is how many times the command may be sent again after its
	// connection broke with its outcome unknown.
	Retries int
}

// Redirect is a cluster error reply that asks for the command again.
type Redirect struct {
	Kind RedirectKind
	Slot uint16 // of a MOVED or ASK
	Addr string // of a MOVED or ASK
}

// RedirectKind is what a Redirect asks for: to go to another node (Moved,
// Ask) or to try again later (the others).
type RedirectKind uint8

const (
	// Moved: the slot is served by Addr from now on.
	Moved RedirectKind = iota + 1
	// Ask: Addr serves the key during a slot migration, for this command
	// only, after ASKING.
	Ask
	// TryAgain: the keys are being migrated (a multi-key command).
	TryAgain
	// ClusterDown: the cluster cannot serve the slot for now.
	ClusterDown
	// Loading: the node is loading its data set.
	Loading
	// MasterDown: a replica lost its link to its master.
	MasterDown
)

var redirectKinds = [...]string{Moved: "MOVED", Ask: "ASK", TryAgain: "TRYAGAIN", ClusterDown: "CLUSTERDOWN", Loading: "LOADING", MasterDown: "MASTERDOWN"}

// String returns the error prefix of the kind.
func (k RedirectKind) String() string {
	if int(k) < len(redirectKinds) && redirectKinds[k] != "" {
		return redirectKinds[k]
	}
	return "RedirectKind(" + strconv.Itoa(int(k)) + ")"
}

// Follow reports whether the kind sends the command to another node
// (MOVED, ASK), rather than asking to try again later.
func (k RedirectKind) Follow() bool { return k == Moved || k == Ask }

// ParseRedirect parses an error reply (its first word prefix, its whole
// text message) as a redirect; from is the address of the node that
// replied, for a MOVED or ASK with an empty host.
func ParseRedirect(prefix, message, from string) (Redirect, bool) {
	switch prefix {
	case "MOVED", "ASK":
		f := strings.Fields(message)
		if len(f) != 3 {
			return Redirect{}, false
		}
		slot, err := strconv.Atoi(f[1])
		if err != nil || slot < 0 || slot >= SlotCount {
			return Redirect{}, false
		}
		addr := f[2]
		if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
			h, _, _ := net.SplitHostPort(from)
			addr = net.JoinHostPort(h, port)
		}
		kind := Moved
		if prefix == "ASK" {
			kind = Ask
		}
		return Redirect{Kind: kind, Slot: uint16(slot), Addr: addr}, true
	case "TRYAGAIN":
		return Redirect{Kind: TryAgain}, true
	case "CLUSTERDOWN":
		return Redirect{Kind: ClusterDown}, true
	case "LOADING":
		return Redirect{Kind: Loading}, true
	case "MASTERDOWN":
		return Redirect{Kind: MasterDown}, true
	}
	return Redirect{}, false
}

// Follow is how far a caller follows the redirects it meets: every
// user of a cluster's redirects (commands, transactions, batches, scans,
// the client-side cache, sharded pub/sub) applies them through Redirected,
// and says with a Follow what it can do with the rest.
type Follow uint8

const (
	// FollowAll: MOVED, ASK and the retry-later kinds (commands and
	// transactions).
	FollowAll Follow = iota
	// FollowNoAsk: as FollowAll, but ASK is waited out as a retry-later
	// kind, for callers whose state belongs to one node (a scan's cursor).
	FollowNoAsk
	// FollowMoved: MOVED only; the other kinds are left to the caller,
	// which sends the command again the way of any command, through Exec
	// (batches, the client-side cache), or drops it (sharded pub/sub).
	FollowMoved
)

// Redirected applies rd, a redirect a command got from a node of the
// cluster, and says whether the command goes again (again), and where: MOVED
// patches the slot map (the command is routed anew by it); ASK returns the
// node to send it to once, after ASKING; the retry-later kinds (TRYAGAIN,
// CLUSTERDOWN, LOADING, MASTERDOWN) wait PauseFor(attempt), or less when
// the topology changes, and report false when ctx ended first. f says
// which kinds the caller follows; the others report false at once.
func (c *Cluster) Redirected(ctx context.Context, rd Redirect, attempt int, f Follow) (ask *Node, again bool) {
	switch {
	case rd.Kind == Moved:
		c.Moved(rd.Slot, rd.Addr)
		return nil, true
	case f == FollowMoved:
		return nil, false
	case rd.Kind == Ask && f == FollowAll:
		return c.Node(rd.Addr), true
	}
	return nil, c.Pause(ctx, PauseFor(attempt))
}

// WaitedOutError is the error of a command that the cluster kept refusing
// (CLUSTERDOWN, TRYAGAIN, an unreachable node, ...) until its context
// ended. It matches both causes.
type WaitedOutError struct{ Last, Ctx error }

func (e *WaitedOutError) Error() string {
	return "respire: the cluster answered " + transport.Trim(e.Last) + " until the context ended: " + e.Ctx.Error()
}

// Unwrap returns both causes.
func (e *WaitedOutError) Unwrap() []error { return []error{e.Last, e.Ctx} }

// MaxRedirects bounds the MOVED and ASK redirects one command follows.
// Waits for a cluster that cannot serve the command yet (CLUSTERDOWN,
// TRYAGAIN, an unreachable node) are bounded by the caller's context, and
// by MaxAttempts should that have no deadline.
const (
	MaxRedirects = 16
	MaxAttempts  = 1000
)

// PauseFor is the pause before trying again a command that the cluster
// could not run yet (TRYAGAIN, CLUSTERDOWN, ...) or whose node could not be
// reached; a new topology ends it early (Pause).
func PauseFor(attempt int) time.Duration {
	return min(time.Millisecond<<min(attempt, 7), 100*time.Millisecond)
}

// Pause waits for d, a topology change, or the end of ctx (false).
func (c *Cluster) Pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.Changed():
	case <-ctx.Done():
		return false
	}
	return true
}

// AskingPayload is ASKING, sent before a command redirected by ASK.
var AskingPayload = resp.AppendCommand(nil, "ASKING")

// askingReq is the ASKING sent before a command redirected by ASK; its
// reply is not looked at: the command's own reply tells.
type askingReq struct{ transport.Request }

func (a *askingReq) HandleReply(resp.Msg) {}
func (a *askingReq) Recycle()             {}

// Exec runs cmd on the node that serves its slot, following redirects.
// On error cmd has been given back (or is the transport's, when it was
// abandoned in flight); on success its reply is in it, an error reply
// that is no redirect included. Transport errors are not wrapped with the
// command's name: the caller does that.
func (c *Cluster) Exec(ctx context.Context, cmd Command, r Route) error {
	rf := r.ReadFrom
	retries := r.Retries
	redirects := 0
	x := cmd.Req()
	// ask is the node of an ASK redirect; moved that of a MOVED one for a
	// command whose keys the client does not know (EVAL through Do, ...),
	// which a random primary would likely send elsewhere again.
	var ask, moved *Node
	for attempt := 0; ; attempt++ {
		var n *Node
		var err error
		switch {
		case ask != nil:
			n = ask
		case moved != nil:
			n, moved = moved, nil
		case r.Keyed:
			n, err = c.Route(ctx, r.Slot, rf)
		default:
			n, err = c.Any(ctx)
		}
		if err != nil {
			cmd.Recycle()
			return err
		}
		abandoned := false
		switch {
		case ask != nil:
			a := &askingReq{}
			a.Init(a)
			a.SetPayload(AskingPayload)
			err = n.Mux.DoMulti(ctx, []*transport.Request{&a.Request, x})
			ask = nil
			if err != nil {
				return err // DoMulti recycled the command
			}
		case r.Blocking:
			if err = n.Pool.Do(ctx, x); err != nil {
				return err // the pool recycled the command
			}
		default:
			abandoned, err = n.Mux.Try(ctx, x)
		}
		if err != nil {
			if abandoned || attempt >= MaxAttempts || ctx.Err() != nil {
				if !abandoned {
					cmd.Recycle()
				}
				// A node that let the deadline pass with the command in
				// flight, or that refused it, may be stopped or cut off:
				// the cluster may be failing it over. One that was only
				// slow to accept a new connection is not suspected.
				if abandoned || !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
					c.Suspect(n)
				}
				return err
			}
			var ce *transport.ConnError
			switch {
			case c.ctx.Err() != nil:
			case transport.NotHere(err) && errors.Is(err, transport.ErrNotSent):
				// The node lost its slots while failing, and the new
				// topology is in place (adopt): route the command anew.
				continue
			case errors.Is(err, transport.ErrNotSent):
				// The node could not be reached: the topology may have
				// moved on; ask for it and try again. A node that is down
				// fails the command at once (its connections fail fast),
				// so the command follows a new topology as soon as the
				// pause ends (early, on the change).
				c.Suspect(n)
				if rf != ReadPrimary && rf != ReadReplica {
					rf = ReadPrimary
				}
				if c.Pause(ctx, PauseFor(attempt)) {
					continue
				}
				err = transport.UntilDone(err, ctx.Err())
			case transport.NotHere(err) && retries > 0:
				// Sent to a node that lost its slots while failing: the
				// new topology is in place; a command that may be sent
				// again goes to the slot's new owner.
				retries--
				continue
			case errors.As(err, &ce) && retries > 0:
				retries--
				c.Suspect(n)
				if c.Pause(ctx, PauseFor(attempt)) {
					continue
				}
			case errors.As(err, &ce):
				c.Suspect(n)
			}
			cmd.Recycle()
			return err
		}
		rd, ok := cmd.Redirect(n.Addr)
		if ok && rd.Kind.Follow() {
			redirects++
		}
		if !ok || redirects > MaxRedirects || attempt >= MaxAttempts {
			return nil
		}
		last := cmd.ClearReply()
		if rd.Kind == Loading && (rf == ReadPreferReplica || rf == ReadNearest || rf.zoned()) {
			// A replica still loading: the primary serves the read.
			rf = ReadPrimary
			continue
		}
		next, ok := c.Redirected(ctx, rd, attempt, FollowAll)
		if !ok {
			cmd.Recycle()
			return transport.NotSent(&WaitedOutError{Last: last, Ctx: ctx.Err()})
		}
		ask = next
		if rd.Kind == Moved && !r.Keyed {
			// A command without keys follows the MOVED itself: a random
			// primary would likely send it elsewhere again.
			moved = c.Node(rd.Addr)
		}
	}
}
