package topology

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Sentinel watches the master of one Redis Sentinel (or Valkey Sentinel)
// deployment for a client: which address serves as master now, which
// replicas are in sync with it, and whether a failover may be under way.
//
// The master is found by asking any reachable sentinel (SENTINEL
// GET-MASTER-ADDR-BY-NAME), with backoff while none answers. The watcher
// then subscribes to the events of every sentinel it knows (the list grows
// from SENTINEL SENTINELS), so that one dead or stopped sentinel hides no
// failover, and polls them as a backstop for lost events. It moves to a new
// master on +promoted-slave (the leader's word that the replica now runs as
// master) or +switch-master, or when a poll finds most answering sentinels
// naming another address.
//
// From the first sign of a failover of the master (+sdown, +odown,
// +try-failover and the failover's states) until the switch, or until every
// answering sentinel reports the master healthy again, the watcher is
// fenced: the client holds writes back instead of sending them to a master
// that is about to be demoted (whose acknowledged writes the failover would
// drop).
//
// The switch comes as soon as the replica the failover's leader promotes
// runs as master (sentinel_promote.go): once the leader announces that it
// sent it REPLICAOF NO ONE (+failover-state-wait-promotion), the watcher
// asks that replica for its ROLE until it answers master, instead of
// waiting up to a second for the leader's own INFO poll to see it.
type Sentinel struct {
	opts SentinelOptions
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup
	kick chan struct{} // a poll now, please

	master   atomic.Pointer[string]
	replicas atomic.Pointer[[]string]
	fenced   atomic.Bool

	mu        sync.Mutex
	sentinels []string // known, in order of discovery
	conns     map[string]*sentinelConn
	hubs      map[string]*transport.PubSub
	unfenced  chan struct{} // closed when the fence is lifted
	found     chan struct{} // closed at the first discovery
	lastErr   error         // of the last failed discovery
	// refused is lastErr when every sentinel that answered refused the
	// client for good (a wrong password, a certificate that does not
	// verify): WaitMaster returns it at once instead of waiting.
	refused error
	failed  chan struct{} // closed and replaced when a discovery fails
	// names resolves the hostnames of addresses (sameNode).
	names    hostCache
	fencedAt time.Time
	fencedBy string // the sentinel that announced the failure
	fencedOn string // the event that raised the fence, "" for a switch's own
	// fencedMaster is the master when the fence was raised: the one the
	// failure or failover is about, which FenceCause names even while a
	// switch away from it is lifting the fence.
	fencedMaster string
	// probing is the replica being asked for its ROLE (sentinel_promote.go),
	// and prov the switch to it before the sentinels confirmed it.
	probing string
	prov    *provisional
	// epoch is the configuration epoch of the master in use: the newest
	// a poll saw for it, or one more than the last after a switch that an
	// event announced.
	epoch  int64
	closed bool
}

// SentinelOptions configures a Sentinel watcher.
type SentinelOptions struct {
	// MasterName is the name the sentinels monitor the master under.
	MasterName string
	// Addrs are "host:port" addresses of sentinels; more are learnt.
	Addrs []string
	// Conn describes connections to the sentinels (credentials, TLS,
	// timeouts); its Addr and Resolve are ignored.
	Conn transport.Config
	// PollInterval is how often the sentinels are asked while nothing
	// happens. Default 1s; while fenced, every 100ms.
	PollInterval time.Duration
	// EarlySwitch switches to the replica a failover promotes as soon as
	// it answers ROLE master, provisionally, before the leader announces
	// the promotion (sentinel_promote.go).
	EarlySwitch bool
	// OnSwitch, when set, runs on the watcher's goroutine after the master
	// changed from old ("" at the first discovery) to addr.
	OnSwitch func(old, addr string)
	// OnFence, when set, runs when the watcher becomes fenced (true) or
	// not (false).
	OnFence func(on bool)
	// OnReplicas, when set, runs on the watcher's goroutine when the set
	// of replicas in sync with the master changed (sorted addresses).
	OnReplicas func(addrs []string)
	// Data, when set, describes connections to the data nodes
	// (credentials, TLS, timeouts; its Addr, Resolve and Role are
	// ignored): the watcher asks the replica a failover promotes for its
	// ROLE on such a connection, and switches once it answers master.
	// Without it, the switch waits for the sentinels' word.
	Data *transport.Config
}

// MaxSentinels bounds the sentinels one watcher follows.
const MaxSentinels = 16

// fencedPoll is the poll interval while a failover may be under way.
const fencedPoll = 100 * time.Millisecond

// maxFence bounds a fence that no sentinel lifts (they all stopped
// answering): past it, writes go to the last known master again, which
// the ROLE check still guards.
const maxFence = 30 * time.Second

// ErrNoMaster is wrapped by the error of a discovery that found no
// sentinel naming a master: none answered, or none knows the name.
var ErrNoMaster = errors.New("respire: sentinel: no master known")

// NewSentinel starts watching; it returns at once. Close stops it.
func NewSentinel(opts SentinelOptions) *Sentinel {
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	opts.Conn.Resolve, opts.Conn.Role, opts.Conn.DB, opts.Conn.Tracking = nil, "", 0, nil
	opts.Conn.OnPush, opts.Conn.OnConnect, opts.Conn.NodeID, opts.Conn.ReadOnly = nil, nil, "", false
	// The sentinels have credentials of their own, and take few commands:
	// the data nodes' provider and setup hook are not theirs. A Dialer
	// applies to them too.
	opts.Conn.Credentials, opts.Conn.Setup = nil, nil
	s := &Sentinel{
		opts:     opts,
		kick:     make(chan struct{}, 1),
		conns:    make(map[string]*sentinelConn),
		hubs:     make(map[string]*transport.PubSub),
		unfenced: make(chan struct{}),
		found:    make(chan struct{}),
		failed:   make(chan struct{}),
	}
	close(s.unfenced)
	s.ctx, s.stop = context.WithCancel(context.Background())
	for _, a := range opts.Addrs {
		s.addSentinelLocked(a)
	}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.run() }()
	return s
}

// Master returns the master's address, "" before the first discovery.
func (s *Sentinel) Master() string {
	if p := s.master.Load(); p != nil {
		return *p
	}
	return ""
}

// Replicas returns the replicas the sentinels report up and in sync.
func (s *Sentinel) Replicas() []string {
	if p := s.replicas.Load(); p != nil {
		return *p
	}
	return nil
}

// Sentinels returns the sentinels known now.
func (s *Sentinel) Sentinels() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sentinels)
}

// WaitMaster waits for the first discovery and returns the master, or an
// error wrapping ErrNoMaster and the last failure when ctx ends first. When
// every sentinel that answered refused the client for good (a permanent
// *transport.HandshakeError: wrong credentials, a certificate that does
// not verify), it returns at once with ErrNoMaster and those errors; the
// watcher goes on trying in the background.
func (s *Sentinel) WaitMaster(ctx context.Context) (string, error) {
	for {
		select {
		case <-s.found:
			return s.Master(), nil
		default:
		}
		s.mu.Lock()
		refused, failed := s.refused, s.failed
		s.mu.Unlock()
		if refused != nil {
			return "", s.Refused()
		}
		select {
		case <-s.found:
			return s.Master(), nil
		case <-failed:
		case <-ctx.Done():
			s.mu.Lock()
			last := s.lastErr
			s.mu.Unlock()
			if last != nil {
				return "", fmt.Errorf("%w for %q: %w (last error: %w)", ErrNoMaster, s.opts.MasterName, ctx.Err(), last)
			}
			return "", fmt.Errorf("%w for %q: %w", ErrNoMaster, s.opts.MasterName, ctx.Err())
		}
	}
}

// Refused returns, before the first discovery, the error with which every
// sentinel that answered refused the client for good (wrapping
// ErrNoMaster, as WaitMaster's); nil otherwise.
func (s *Sentinel) Refused() error {
	if s.Master() != "" {
		return nil
	}
	s.mu.Lock()
	refused := s.refused
	s.mu.Unlock()
	if refused == nil {
		return nil
	}
	return fmt.Errorf("%w for %q: %w", ErrNoMaster, s.opts.MasterName, refused)
}

// Fenced reports whether a failover may be under way.
func (s *Sentinel) Fenced() bool { return s.fenced.Load() }

// WaitUnfenced waits until the watcher is not fenced or ctx ends (its
// error then).
func (s *Sentinel) WaitUnfenced(ctx context.Context) error {
	s.mu.Lock()
	ch := s.unfenced
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the watcher and waits for its goroutines.
func (s *Sentinel) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	hubs := s.hubs
	s.mu.Unlock()
	s.stop()
	for _, h := range hubs {
		h.Close()
	}
	s.wg.Wait()
	s.mu.Lock()
	for _, c := range s.conns {
		c.close()
	}
	s.mu.Unlock()
}

// Poll asks for a poll of the sentinels now (after a master refused a
// connection, say).
func (s *Sentinel) Poll() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// addSentinelLocked adds a sentinel and starts following its events once
// the watcher runs. s.mu must be held, or s not yet shared.
func (s *Sentinel) addSentinelLocked(addr string) {
	if s.closed || len(s.sentinels) >= MaxSentinels || slices.Contains(s.sentinels, addr) {
		return
	}
	s.sentinels = append(s.sentinels, addr)
	cfg := s.opts.Conn
	cfg.Addr = addr
	s.conns[addr] = &sentinelConn{cfg: cfg}
	hub := transport.NewPubSub(cfg)
	s.hubs[addr] = hub
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.follow(addr, hub) }()
}

// run discovers the master with backoff, then polls.
func (s *Sentinel) run() {
	delay := 25 * time.Millisecond
	for s.ctx.Err() == nil {
		err := s.discover()
		if err == nil {
			break
		}
		s.failedDiscovery(err)
		if !s.sleep(delay/2 + rand.N(delay/2+1)) {
			return
		}
		delay = min(2*delay, 2*time.Second)
	}
	for {
		d := s.opts.PollInterval
		if s.fenced.Load() {
			d = fencedPoll
		}
		if !s.sleep(d) {
			return
		}
		s.poll()
	}
}

// sleep waits d or for a kick; false when the watcher stops.
func (s *Sentinel) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.kick:
	case <-s.ctx.Done():
		return false
	}
	return true
}

// discover asks the sentinels in turn for the master, taking the first
// answer: the polls that follow check it against the others.
func (s *Sentinel) discover() error {
	var addrs []string
	var errs []error
	for _, a := range s.Sentinels() {
		addr, err := s.masterOf(a)
		if err == nil {
			s.setMaster(addr, "discovered by "+a)
			s.poll()
			return nil
		}
		addrs = append(addrs, a)
		errs = append(errs, err)
	}
	return &discoveryError{addrs: addrs, errs: errs}
}

// discoveryError is the failure of a discovery: the error of each
// sentinel asked (addrs[i]'s is errs[i]).
type discoveryError struct {
	addrs []string
	errs  []error
}

// Error lists the sentinels with their errors, each error once: "a, b:
// WRONGPASS ...; c: i/o timeout".
func (e *discoveryError) Error() string {
	var msgs []string
	by := map[string][]string{}
	for i, err := range e.errs {
		m := err.Error()
		if _, seen := by[m]; !seen {
			msgs = append(msgs, m)
		}
		if i < len(e.addrs) {
			by[m] = append(by[m], e.addrs[i])
		}
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m
		if a := by[m]; len(a) > 0 {
			out[i] = strings.Join(a, ", ") + ": " + m
		}
	}
	return strings.Join(out, "; ")
}

// Unwrap returns the sentinels' errors.
func (e *discoveryError) Unwrap() []error { return e.errs }

// refused reports a discovery that trying again will not fix: at least
// one sentinel refused the client with a permanent handshake error (or
// refused the SENTINEL command to its user: NOPERM), and none of the
// others answered at all (the rest were unreachable).
func (e *discoveryError) refused() bool {
	refused := false
	for _, err := range e.errs {
		var he *transport.HandshakeError
		var se *transport.ServerError
		var oe *net.OpError
		switch {
		case errors.As(err, &he) && he.Permanent():
			refused = true
		case errors.As(err, &se) && se.Prefix == "NOPERM":
			refused = true
		case errors.As(err, &oe) && oe.Op == "dial" && !errors.As(err, &he):
		default:
			return false
		}
	}
	return refused
}

// failedDiscovery records the error of a discovery, and wakes WaitMaster.
func (s *Sentinel) failedDiscovery(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastErr = err
	s.refused = nil
	if de, ok := err.(*discoveryError); ok && de.refused() {
		s.refused = err
	}
	close(s.failed)
	s.failed = make(chan struct{})
}

// masterOf asks one sentinel for the master's address.
func (s *Sentinel) masterOf(sentinel string) (string, error) {
	v, err := s.ask(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.opts.MasterName)
	if err != nil {
		return "", err
	}
	if v.Null || len(v.Elems) != 2 {
		return "", fmt.Errorf("%w: the sentinel does not monitor %q", ErrNoMaster, s.opts.MasterName)
	}
	return net.JoinHostPort(v.Elems[0].Str, v.Elems[1].Str), nil
}

// pollResult is what one sentinel said in a poll.
type pollResult struct {
	master  string
	healthy bool  // flags of the master without a failure or failover
	epoch   int64 // config-epoch of the master's configuration
	// failingOver: the sentinel leads a failover of the master it names,
	// whose config-epoch it raises at the promotion, before it names the
	// new master (+switch-master): the pair is no configuration.
	failingOver bool
	replicas    []string
	sentinels   []string
	err         error
}

// poll asks every known sentinel at once for the master, its health, its
// replicas and the other sentinels, and acts on the answers.
func (s *Sentinel) poll() {
	addrs := s.Sentinels()
	res := make([]pollResult, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Add(1)
		go func() { defer wg.Done(); res[i] = s.pollOne(a) }()
	}
	wg.Wait()
	votes := map[string]int{}
	top := int64(-1) // the newest configuration epoch reported
	answered, healthy := 0, 0
	byHealthy := false
	s.mu.Lock()
	by := s.fencedBy
	s.mu.Unlock()
	// Sentinels, the master and replicas may be named by IP address by
	// some sentinels and by hostname by others: each node is counted
	// under one name, the one known already.
	known := addrs
	var more []string
	for _, r := range res {
		for _, o := range r.sentinels {
			if o = s.spelled(o, known); !slices.Contains(known, o) {
				known = append(slices.Clip(known), o)
				more = append(more, o)
			}
		}
	}
	s.mu.Lock()
	for _, o := range more {
		s.addSentinelLocked(o)
	}
	s.mu.Unlock()
	master := s.Master()
	for i := range res {
		if res[i].err == nil {
			res[i].master = s.spelled(res[i].master, []string{master})
		}
	}
	for i, r := range res {
		if r.err != nil {
			continue
		}
		answered++
		switch {
		case r.failingOver:
		case r.epoch > top:
			top = r.epoch
			clear(votes)
			fallthrough
		case r.epoch == top:
			votes[s.spelled(r.master, slices.Collect(maps.Keys(votes)))]++
		}
		if r.healthy {
			healthy++
			byHealthy = byHealthy || addrs[i] == by
		}
	}
	if answered == 0 {
		// No sentinel answers: past maxFence, writes go to the last
		// known master again (the ROLE check still guards new
		// connections).
		if s.fenced.Load() && time.Since(s.fencedAtTime()) > maxFence {
			s.setFence(false, "")
		}
		return
	}
	// The master of the newest configuration epoch wins: a sentinel that
	// has not heard of a failover yet names the old master with an older
	// epoch, and must not move the client back.
	best, n := "", 0
	for a, v := range votes {
		if v > n || v == n && a == s.Master() {
			best, n = a, v
		}
	}
	s.mu.Lock()
	newer := top > s.epoch
	if best == s.Master() || newer {
		s.epoch = max(s.epoch, top)
	}
	confirm := best == s.Master() && s.prov != nil && s.prov.addr == best && top > s.prov.epoch
	if confirm {
		s.prov = nil // the sentinels name the node promoted early
	}
	prov := s.prov
	s.mu.Unlock()
	if confirm {
		s.confirmed()
	}
	if best != s.Master() && newer {
		s.setMaster(best, "named with the newest configuration epoch")
	}
	if prov != nil {
		// The sentinels list the replicas of the old master until they
		// confirm the early switch: they are kept as they are.
		s.checkProvisional(prov, addrs, res)
	} else {
		s.pollReplicas(res)
	}
	// The sentinel that announced the failure must have seen it end: the
	// failover's leader may be the only one that knows of it.
	if s.fenced.Load() && (healthy == answered && byHealthy || time.Since(s.fencedAtTime()) > maxFence) {
		s.setFence(false, "")
	}
}

// pollReplicas takes the replicas of the master in use from a poll's
// answers.
func (s *Sentinel) pollReplicas(res []pollResult) {
	var replicas []string
	master := s.Master()
	prev := s.Replicas()
	for _, r := range res {
		if r.err != nil || !s.sameNode(r.master, master) {
			continue
		}
		for _, a := range r.replicas {
			if a = s.spelled(a, prev); !s.sameNode(a, master) {
				replicas = append(replicas, s.spelled(a, replicas))
			}
		}
	}
	slices.Sort(replicas)
	replicas = slices.Compact(replicas)
	s.storeReplicas(replicas)
}

// storeReplicas sets the replicas, and tells OnReplicas when they changed.
func (s *Sentinel) storeReplicas(replicas []string) {
	if old := s.Replicas(); !slices.Equal(old, replicas) || s.replicas.Load() == nil {
		s.replicas.Store(&replicas)
		if s.opts.OnReplicas != nil {
			s.opts.OnReplicas(replicas)
		}
	}
}

func (s *Sentinel) fencedAtTime() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fencedAt
}

// pollOne asks one sentinel, in one round trip.
func (s *Sentinel) pollOne(a string) pollResult {
	name := s.opts.MasterName
	vs, err := s.askN(a,
		[]string{"SENTINEL", "MASTER", name},
		[]string{"SENTINEL", "REPLICAS", name},
		[]string{"SENTINEL", "SENTINELS", name})
	if err != nil {
		return pollResult{err: err}
	}
	var r pollResult
	m := fields(vs[0])
	if m == nil {
		return pollResult{err: fmt.Errorf("%w: the sentinel does not monitor %q", ErrNoMaster, name)}
	}
	r.master = net.JoinHostPort(m["ip"], m["port"])
	r.epoch, _ = strconv.ParseInt(m["config-epoch"], 10, 64)
	r.healthy = !hasFlag(m["flags"], "s_down", "o_down", "failover_in_progress", "disconnected")
	r.failingOver = hasFlag(m["flags"], "failover_in_progress")
	for _, e := range vs[1].Elems {
		f := fields(e)
		// A sentinel refreshes a replica's link state every 10s only:
		// the replica's own ROLE, checked when the client connects,
		// says whether it is in sync.
		if f == nil || hasFlag(f["flags"], "s_down", "o_down", "disconnected") {
			continue
		}
		r.replicas = append(r.replicas, net.JoinHostPort(f["ip"], f["port"]))
	}
	for _, e := range vs[2].Elems {
		if f := fields(e); f != nil && f["ip"] != "" && f["port"] != "" && !hasFlag(f["flags"], "s_down", "o_down", "disconnected") {
			r.sentinels = append(r.sentinels, net.JoinHostPort(f["ip"], f["port"]))
		}
	}
	return r
}

// fields reads a SENTINEL MASTER style reply (a flat list of names and
// values in RESP2, a map in RESP3); nil when it is not one.
func fields(v resp.Value) map[string]string {
	if len(v.Elems) == 0 || len(v.Elems)%2 != 0 {
		return nil
	}
	m := make(map[string]string, len(v.Elems)/2)
	for i := 0; i+1 < len(v.Elems); i += 2 {
		m[v.Elems[i].Str] = v.Elems[i+1].Str
	}
	return m
}

func hasFlag(flags string, names ...string) bool {
	for _, f := range strings.Split(flags, ",") {
		if slices.Contains(names, f) {
			return true
		}
	}
	return false
}

// setMaster moves to a new master address, on the sentinels' word.
func (s *Sentinel) setMaster(addr, why string) { s.switchMaster(addr, why, nil) }

// switchMaster moves to a new master address. With prov, it is an early
// switch to a promoted replica that the sentinels have not confirmed yet,
// made only if the master is still prov.old; without, it is the
// sentinels' word, which confirms an early switch to the same node.
func (s *Sentinel) switchMaster(addr, why string, prov *provisional) {
	raised := false
	was := s.Master()
	same := s.sameNode(was, addr)
	if was != "" && !same && !s.fenced.Load() {
		raised = true
		// A switch: writes wait and no connection is dialed (Resolve
		// gives "" while fenced) until OnSwitch has broken the old
		// master's connections. Otherwise a caller could write on a new
		// connection to the new master and read on an old one to the old
		// master, or write there.
		s.setFence(true, "")
	}
	s.mu.Lock()
	old := s.Master()
	if addr == old || old == was && same || s.closed || prov != nil && old != prov.old {
		confirm := prov == nil && s.prov != nil && s.prov.addr == old
		if confirm {
			s.prov = nil // the sentinels name the node promoted early
		}
		s.mu.Unlock()
		if raised {
			s.setFence(false, "")
		}
		if confirm {
			s.confirmed()
		}
		return
	}
	s.master.Store(&addr)
	s.prov = prov
	if prov != nil {
		// As a switch an event announces: the promotion is a newer
		// configuration than any a poll saw.
		prov.epoch = s.epoch
		s.epoch++
	}
	first := old == ""
	if first {
		close(s.found)
	}
	s.mu.Unlock()
	if s.opts.OnSwitch != nil {
		s.opts.OnSwitch(old, addr)
	}
	if prov != nil {
		// The sentinels still list the promoted node as a replica of the
		// old master until they confirm: the replicas are left as they
		// were, without it.
		s.dropReplica(addr)
	}
	s.setFence(false, "")
	if !first {
		s.Poll() // the replicas changed too
	}
}

// setFence turns the fence on or off; by is the sentinel whose event
// turned it on, whose word (or maxFence) is needed to lift it in a poll.
func (s *Sentinel) setFence(on bool, by string) { s.fence(on, by, "") }

// fence is setFence; on is the event that raised the fence, for
// FenceCause.
func (s *Sentinel) fence(on bool, by, event string) {
	s.mu.Lock()
	if s.fenced.Load() == on {
		s.mu.Unlock()
		return
	}
	s.fenced.Store(on)
	if on {
		s.unfenced = make(chan struct{})
		s.fencedAt = time.Now()
		s.fencedBy = by
		s.fencedOn = event
		s.fencedMaster = s.Master()
	} else {
		close(s.unfenced)
	}
	s.mu.Unlock()
	if s.opts.OnFence != nil {
		s.opts.OnFence(on)
	}
	if on {
		s.Poll()
	}
}
