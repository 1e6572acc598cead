package respire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Sentinel mode.
//
// A client with Options.Sentinel is a single-server client whose address
// follows the master that a Redis Sentinel (or Valkey Sentinel) deployment
// names: the multiplexed connections, the blocking pool, the pub/sub hub
// and the client-side cache dial the address topology.Sentinel's Master
// gives, none while it is fenced (dialer), and every new connection checks
// ROLE during its handshake, so that a demoted (or restarted, still
// self-declared) master never carries a write. On a
// switch the live connections are broken and redialed to the new master;
// subscriptions are restored with a gap. While the watcher is fenced (a
// failover may be under way), writes wait instead of being sent; read-only
// commands go to replicas when ReadFrom asks. See docs/sentinel.md.

// SentinelOptions configures a client of a master watched by Redis Sentinel
// or Valkey Sentinel (Options.Sentinel).
type SentinelOptions struct {
	// MasterName is the name the sentinels monitor the master under
	// ("sentinel monitor <name> ..."). Required.
	MasterName string
	// Addrs are "host:port" addresses of one or more sentinels; the client
	// learns the others from them (SENTINEL SENTINELS). Required.
	Addrs []string
	// Username and Password authenticate to the sentinels, which often
	// have credentials of their own; Options.Username and Options.Password
	// are those of the data nodes.
	Username string
	Password string
	// TLSConfig, when set, wraps connections to the sentinels in TLS.
	// When it is nil, the sentinels get Options.TLSConfig, the data
	// nodes': sentinels that reach TLS data nodes (tls-replication yes)
	// speak TLS among themselves, so one configuration usually serves
	// both. Set it when the sentinels need another one (another
	// ServerName or CA), and NoTLS when they listen in plain text beside
	// TLS data nodes. Its ServerName defaults to the host of each
	// sentinel's address, so their certificates are verified.
	TLSConfig *tls.Config
	// NoTLS connects to the sentinels in plain text although
	// Options.TLSConfig is set. It cannot be set with TLSConfig.
	NoTLS bool
	// PollInterval is how often the sentinels are asked for the master, its
	// replicas and the other sentinels, besides the events the client
	// subscribes to on every sentinel. Default 1s.
	PollInterval time.Duration
	// SwitchAtPromotion moves writes to the replica a failover promotes
	// as soon as it answers ROLE master, before the failover's leader has
	// seen the promotion and committed to it (up to a second later, in its
	// next INFO of the replica). Writes held back by a graceful failover
	// then wait about 0.2s instead of about 1s. The price: should the
	// leader die or be cut off in that second, the other sentinels make
	// the promoted node a replica again, and the writes it acknowledged
	// until the client notices (3s at most) are lost.
	// Off by default: the client switches when the leader announces the
	// promotion (+promoted-slave), and a failover loses no acknowledged
	// write of this client. See docs/sentinel.md, "Failover".
	SwitchAtPromotion bool
}

// ErrNoPrimary is wrapped by the error of Connect when no sentinel named a
// primary for Options.Sentinel.MasterName before its context ended.
var ErrNoPrimary = topology.ErrNoMaster

// ErrWrongRole is wrapped by the handshake error of a connection whose
// server is not in the role the client expects (a master that a failover
// demoted, a replica not in sync); the client tries again, not a permanent
// error.
var ErrWrongRole = transport.ErrWrongRole

// ErrFailover is wrapped, beside ErrNotSent and the context's error, by the
// error of a write that waited for a failover to end until its context
// ended, or for a connection that the failover held back: it was never
// sent. Its text says why it waited (the master is down, it is being
// failed over, as which sentinel announced).
var ErrFailover = errors.New("respire: sentinel: failover under way")

// ErrPrimarySwitched is the cause wrapped by the *ConnError of a command in
// flight on the old primary's connection when the client moved to a new
// primary: its outcome is unknown.
var ErrPrimarySwitched = errors.New("respire: sentinel: primary switched")

// sentinelMaxBackoff caps the redial delay of a Sentinel client's data
// connections when Options.MaxRetryBackoff is zero, so that they reach a
// new master soon after the switch however long the old one was down.
const sentinelMaxBackoff = 100 * time.Millisecond

func (o *SentinelOptions) validate(opts *Options) error {
	if o == nil {
		return nil
	}
	if opts.Cluster != nil {
		return optErr("Sentinel", "Sentinel and Cluster cannot be used together: a cluster fails over by itself")
	}
	if o.MasterName == "" {
		return optErr("Sentinel.MasterName", "empty: name the master the sentinels monitor")
	}
	for i := 0; i < len(o.MasterName); i++ {
		if c := o.MasterName[i]; c <= ' ' || c > '~' {
			return optErr("Sentinel.MasterName", "%q has the character %q; a master name is printable ASCII without spaces", o.MasterName, c)
		}
	}
	if len(o.Addrs) == 0 {
		return optErr("Sentinel.Addrs", "no sentinel address given")
	}
	if len(o.Addrs) > topology.MaxSentinels {
		return optErr("Sentinel.Addrs", "%d addresses, more than %d", len(o.Addrs), topology.MaxSentinels)
	}
	for _, a := range o.Addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			return optErr("Sentinel.Addrs", "%q is not host:port", a)
		}
		if err := checkHost("Sentinel.Addrs", host); err != nil {
			return err
		}
		if err := checkPort("Sentinel.Addrs", port); err != nil {
			return err
		}
	}
	if o.PollInterval < 0 {
		return optErr("Sentinel.PollInterval", "%v is negative", o.PollInterval)
	}
	if o.NoTLS && o.TLSConfig != nil {
		return optErr("Sentinel.NoTLS", "set with Sentinel.TLSConfig: choose plain text or TLS to the sentinels")
	}
	if opts.Addr != "" {
		return optErr("Addr", "%q given with Sentinel: the sentinels name the master's address", opts.Addr)
	}
	if opts.Network == "unix" {
		return optErr("Network", "unix with Sentinel: the sentinels name TCP addresses")
	}
	return nil
}

// sentinelTLS is the TLS configuration of connections to the sentinels:
// TLSConfig, else the data nodes' unless NoTLS; nil for plain text.
func (o *SentinelOptions) sentinelTLS(opts *Options) *tls.Config {
	switch {
	case o.TLSConfig != nil:
		return o.TLSConfig
	case o.NoTLS:
		return nil
	}
	return opts.TLSConfig
}

// sentinelClient is the Sentinel state of a client.
type sentinelClient struct {
	c      *Client
	single *singleBackend   // the connections to the master, set once made
	cfg    transport.Config // of the data nodes, as the client was given it
	w      *topology.Sentinel
	reads  *topology.Replicas // nil with ReadPrimary

	// unblocks are the CLIENT UNBLOCK calls to old masters under way, off
	// the watcher's goroutine (an old master that hangs must not hold up
	// the switch); stop ends them when the client closes.
	unblocks sync.WaitGroup
	stop     context.Context
	cancel   context.CancelFunc
}

// newSentinelClient prepares cfg, the data nodes' configuration, to follow
// the master; start begins watching once the client is built.
func newSentinelClient(c *Client, opts *Options, cfg *transport.Config) *sentinelClient {
	so := opts.Sentinel
	scfg := *cfg
	scfg.Username, scfg.Password, scfg.TLS = so.Username, so.Password, so.sentinelTLS(opts)
	scfg.ClientName, scfg.Connections, scfg.Protocol = "", 1, 0
	sc := &sentinelClient{c: c, cfg: *cfg}
	sc.stop, sc.cancel = context.WithCancel(context.Background())
	if opts.ReadFrom != ReadPrimary {
		sc.reads = topology.NewReplicas(*cfg, opts.AvailabilityZone)
	}
	sc.w = topology.NewSentinel(topology.SentinelOptions{
		MasterName:   so.MasterName,
		Addrs:        so.Addrs,
		Conn:         scfg,
		PollInterval: so.PollInterval,
		EarlySwitch:  so.SwitchAtPromotion,
		OnSwitch:     sc.switched,
		OnReplicas:   sc.replicasChanged,
		Data:         &sc.cfg,
	})
	// Only Resolve gives addresses; Addr names the master in errors.
	cfg.Addr = "sentinel master " + so.MasterName
	cfg.Resolve = sc.w.Master
	cfg.Dialer = sc.dialer(cfg.Dialer)
	cfg.Role = "master"
	if opts.MaxRetryBackoff == 0 {
		cfg.MaxBackoff = max(sentinelMaxBackoff, opts.MinRetryBackoff)
	}
	return sc
}

// dialer wraps the data connections' dialer (inner, or a net.Dialer) so
// that no connection to the master is dialed while a failover may be under
// way: the dial fails instead, with an error matching ErrFailover that
// says why (the master is down, it is being failed over), which callers
// waiting for a connection get when their context ends. Other addresses
// (a Valkey REDIRECT's target) are dialed.
func (sc *sentinelClient) dialer(inner func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == sc.w.Master() {
			if cause := sc.w.FenceCause(); cause != nil {
				return nil, fmt.Errorf("%w: %w; no connection is dialed until the switch", ErrFailover, cause)
			}
		}
		if inner != nil {
			return inner(ctx, network, addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

// switched moves the client's connections to a new master: commands in
// flight on the old one fail with their outcome unknown (a *ConnError
// wrapping ErrPrimarySwitched), unsent ones go to the new master.
func (sc *sentinelClient) switched(old, addr string) {
	if old == "" {
		return
	}
	c := sc.c
	cause := fmt.Errorf("%w from %s to %s", ErrPrimarySwitched, old, addr)
	// A connection dialed to the new master in the meantime (a poll
	// that lifted a failover's fence may let one through) is the new
	// master's: breaking it would fail the writes sent there.
	sc.single.mux.BreakExcept(cause, addr)
	c.hub.Reconnect(cause)
	if c.cache != nil {
		c.cache.serverChanged(cause)
	}
	if ids := sc.single.blocking.BusyOn(old); len(ids) > 0 {
		sc.unblocks.Go(func() { sc.unblock(old, ids) })
	}
}

// unblock ends the blocking commands that callers wait on at the old
// master, with CLIENT UNBLOCK ... ERROR: their UNBLOCKED error reply says
// they did not run, so sentinelBackend.exec sends them to the new master. Were
// they left, they would wait there until the old master is demoted, whose
// sentinel then closes their connections (outcome unknown). An old master
// that refuses the connection has closed them already. The old master is
// asked again (unblockFor at most) when a dial or the reply times out: on
// a busy host one second was not always enough, and the callers then
// waited for the demotion, to fail with it.
func (sc *sentinelClient) unblock(old string, ids []int64) {
	cfg := sc.cfg
	cfg.Addr, cfg.Resolve, cfg.Role = old, nil, ""
	var payload []byte
	for _, id := range ids {
		payload = resp.AppendCommand(payload, "CLIENT", "UNBLOCK", strconv.FormatInt(id, 10), "ERROR")
	}
	until, cancelAll := context.WithTimeout(sc.stop, unblockFor)
	defer cancelAll()
	for until.Err() == nil {
		ctx, cancel := context.WithTimeout(until, unblockTry)
		d, err := transport.DialDedicated(ctx, cfg)
		if err == nil {
			err = d.DoN(ctx, payload, len(ids), func(int, resp.Msg) {})
			d.Close()
		}
		cancel()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
			return // done, or the old master is gone (refused, reset)
		}
	}
}

// unblockFor bounds how long the blocked callers' release is tried at an
// old master that does not answer in time, unblockTry each attempt.
const (
	unblockFor = 10 * time.Second
	unblockTry = 2 * time.Second
)

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (sc *sentinelClient) replicasChanged(addrs []string) {
	if sc.reads != nil {
		sc.reads.Set(addrs)
	}
}

func (sc *sentinelClient) close() {
	sc.w.Close()
	sc.cancel()
	sc.unblocks.Wait()
	if sc.reads != nil {
		sc.reads.Close()
	}
}

// discovered waits, before the first discovery, until the sentinels name
// a master. Its error (not sent, wrapping ErrNoPrimary) is the sentinels'
// at once when every one that answered refused the client for good
// (wrong credentials, a certificate that does not verify), or the last
// sentinel error with the context's when it ends first: a command of a
// client made with NewClient says why no master is known.
func (sc *sentinelClient) discovered(ctx context.Context) error {
	if sc.w.Master() != "" {
		return nil
	}
	if _, err := sc.w.WaitMaster(ctx); err != nil {
		return transport.NotSent(err)
	}
	return nil
}

// gate holds a write back while a failover may be under way; its error
// matches ErrNotSent, ErrFailover and the context's error. Before the
// first discovery it waits for it (discovered).
func (sc *sentinelClient) gate(ctx context.Context) error {
	if err := sc.discovered(ctx); err != nil {
		return err
	}
	if !sc.w.Fenced() {
		return nil
	}
	if err := sc.w.WaitUnfenced(ctx); err != nil {
		cause := sc.w.FenceCause()
		if cause == nil {
			cause = fmt.Errorf("master %s", sc.w.Master())
		}
		return transport.NotSent(fmt.Errorf("%w: %w: %w", ErrFailover, cause, err))
	}
	return nil
}

// sentinelBackend is the primary that Sentinel names, and its replicas:
// a single server whose address changes. Writes wait while a failover
// may be under way, reads may go to replicas
// (internal/topology/replicas.go), blocking commands that the old primary
// ended unrun go to the new one; the rest is as on one server (single.go).
type sentinelBackend struct {
	*singleBackend
	sc *sentinelClient
}

// exec is backend.exec on a Sentinel client: reads from replicas, writes
// held back during a failover, and blocking commands that the old master
// unblocked because it was demoted (UNBLOCKED, or Valkey's REDIRECT: they
// did not run) sent again to the new one; the rest as on one server.
func (s *sentinelBackend) exec(ctx context.Context, x *cmd, dec decoder) error {
	c, sc := s.c, s.sc
	flags := x.info.flags
	if err := sc.discovered(ctx); err != nil {
		name := x.info.name
		x.Recycle()
		return c.wrapErr(ctx, name, err)
	}
	if flags&flagReadonly != 0 && flags&flagBlocking == 0 && sc.reads != nil && !primaryReads(ctx) {
		x.dec = dec
		x.seal()
		x.Retries = c.retries
		name := x.info.name
		done, err := sc.reads.Exec(ctx, x, s.replicaPick())
		switch {
		case done && err != nil:
			return c.wrapErr(ctx, name, err)
		case done && x.replyErr != nil:
			err := x.replyErr
			x.Recycle()
			return err
		case done:
			return nil
		}
	}
	if flags&flagReadonly == 0 {
		if err := sc.gate(ctx); err != nil {
			name := x.info.name
			x.Recycle()
			return c.wrapErr(ctx, name, err)
		}
	}
	if flags&flagBlocking == 0 {
		return s.singleBackend.exec(ctx, x, dec)
	}
	x.dec = dec
	x.seal()
	name := x.info.name
	for {
		if err := s.blocking.Do(ctx, &x.Request); err != nil {
			return c.wrapErr(ctx, name, err)
		}
		var se *Error
		if !errors.As(x.replyErr, &se) || se.Prefix != "UNBLOCKED" && se.Prefix != "REDIRECT" || ctx.Err() != nil {
			break
		}
		// The old master is becoming a replica (Valkey 8+ ends the
		// commands blocked there with a REDIRECT to the new master, or
		// UNBLOCKED; neither ran): wait for the switch.
		x.replyErr = nil
		sc.w.Poll()
		if err := sc.gate(ctx); err != nil {
			x.Recycle()
			return c.wrapErr(ctx, name, err)
		}
		if err := pauseFor(ctx, 20*time.Millisecond); err != nil {
			x.Recycle()
			return c.wrapErr(ctx, name, transport.NotSent(err))
		}
	}
	if x.replyErr != nil {
		err := x.replyErr
		x.Recycle()
		return err
	}
	if c.cache != nil {
		c.afterWrite(ctx, x)
	}
	return nil
}

// send is backend.send: writes wait for a failover to end.
func (s *sentinelBackend) send(ctx context.Context, x *cmd) error {
	gate := s.sc.discovered
	if x.info.flags&flagReadonly == 0 {
		gate = s.sc.gate
	}
	if err := gate(ctx); err != nil {
		x.Recycle()
		return err
	}
	return s.singleBackend.send(ctx, x)
}

// batch is backend.batch: the batch waits for a failover to end.
func (s *sentinelBackend) batch(ctx context.Context, b *Batch, cmds []*cmd, futs []settler) error {
	if err := s.sc.gate(ctx); err != nil {
		return b.refuse(cmds, futs, s.c.wrapErr(ctx, "batch", err))
	}
	return s.singleBackend.batch(ctx, b, cmds, futs)
}

// hold is backend.hold: a connection to the primary once no failover is
// under way.
func (s *sentinelBackend) hold(ctx context.Context, _ uint16, _ bool, _ *topology.Node) (*transport.Held, error) {
	if err := s.sc.gate(ctx); err != nil {
		return nil, err
	}
	return s.blocking.Hold(ctx)
}

func (s *sentinelBackend) connect(ctx context.Context) error {
	if _, err := s.sc.w.WaitMaster(ctx); err != nil {
		return err
	}
	if err := s.mux.Connect(ctx); err != nil {
		return err
	}
	if s.sc.reads != nil {
		s.sc.reads.Connect(ctx)
	}
	return nil
}

func (s *sentinelBackend) closeWatch()             { s.sc.close() }
func (s *sentinelBackend) sentinelPrimary() string { return s.sc.w.Master() }

// replicaPick says which replicas a read may go to, and whether it may
// then go to the primary.
func (s *sentinelBackend) replicaPick() topology.Pick {
	switch s.c.opts.ReadFrom {
	case ReadReplica, ReadNearest:
		return topology.PickAny
	case ReadZone:
		// The primary in the zone comes before replicas of other zones.
		if info := s.mux.ServerInfo(); info != nil && info.Zone == s.c.opts.AvailabilityZone {
			return topology.PickZoneThenPrimary
		}
	}
	return topology.PickAnyThenPrimary
}

// pauseFor waits d or until ctx ends (its error).
func pauseFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SentinelMaster returns the address of the master a Sentinel client uses
// now, and "" on other clients or before the first discovery.
func (c *Client) SentinelMaster() string { return c.be.sentinelPrimary() }
