package respiretest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/respiretest/testserver"
)

// SentinelOptions configure a Sentinel deployment started by
// StartSentinel or NewSentinel: a primary, its replicas and the sentinels
// that watch it. The zero value (or a nil *SentinelOptions) is a primary
// without replicas watched by three sentinels, on a binary found as for
// Start.
type SentinelOptions struct {
	// Server is the path of the redis-server or valkey-server binary of
	// every process (sentinels run it with --sentinel), found as
	// Options.Server is; "" uses $RESPIRETEST_SERVER, then redis-server or
	// valkey-server on PATH. A deployment never runs in Docker.
	Server string
	// Args are extra arguments of the data nodes (the primary and its
	// replicas), as on their command line.
	Args []string
	// MasterName is the name the sentinels monitor the primary under.
	// Default "mymaster".
	MasterName string
	// Replicas is the number of replicas; 0 means none (a failover needs
	// at least one).
	Replicas int
	// Sentinels is the number of sentinels; a majority of them is the
	// quorum. Default 3.
	Sentinels int
	// DownAfter is the sentinels' down-after-milliseconds: how long the
	// primary may not answer before it is failed over. Default 1s; a
	// failover takes a few seconds more.
	DownAfter time.Duration
	// FailoverTimeout is the sentinels' failover-timeout. Default 10s.
	FailoverTimeout time.Duration
	// StartTimeout bounds the start of the deployment, until every
	// sentinel sees the primary, its replicas and the other sentinels.
	// Default 30s.
	StartTimeout time.Duration
	// SkipIfUnavailable makes StartSentinel skip the test, rather than
	// fail it, when no server binary can be found.
	SkipIfUnavailable bool
	// Client are the options of the client StartSentinel returns; its
	// Sentinel.MasterName and Sentinel.Addrs are set to the deployment's
	// (and Sentinel to a new SentinelOptions when nil).
	Client respire.Options
}

// withDefaults checks o and fills in its zero fields.
func (o SentinelOptions) withDefaults() (SentinelOptions, error) {
	switch {
	case o.Replicas < 0:
		return o, fmt.Errorf("%w: SentinelOptions.Replicas is %d", ErrInvalidOptions, o.Replicas)
	case o.Sentinels < 0:
		return o, fmt.Errorf("%w: SentinelOptions.Sentinels is %d", ErrInvalidOptions, o.Sentinels)
	case o.DownAfter < 0, o.FailoverTimeout < 0, o.StartTimeout < 0:
		return o, fmt.Errorf("%w: a negative duration in SentinelOptions (DownAfter %v, FailoverTimeout %v, StartTimeout %v)",
			ErrInvalidOptions, o.DownAfter, o.FailoverTimeout, o.StartTimeout)
	case strings.ContainsAny(o.MasterName, " \t\r\n\"'"):
		return o, fmt.Errorf("%w: SentinelOptions.MasterName %q has a space or a quote", ErrInvalidOptions, o.MasterName)
	}
	if o.MasterName == "" {
		o.MasterName = "mymaster"
	}
	if o.Sentinels == 0 {
		o.Sentinels = 3
	}
	o.DownAfter = orDefault(o.DownAfter, time.Second)
	o.FailoverTimeout = orDefault(o.FailoverTimeout, 10*time.Second)
	o.StartTimeout = orDefault(o.StartTimeout, 30*time.Second)
	return o, nil
}

// Sentinel is a Redis Sentinel (or Valkey Sentinel) deployment of local
// server processes, started by StartSentinel or NewSentinel: a primary,
// its replicas and the sentinels that watch it, on free ports of
// 127.0.0.1, killed and their directories removed by Close. Its methods
// are safe for concurrent use.
type Sentinel struct {
	// Binary is the path of the processes' server binary.
	Binary string

	opts      SentinelOptions
	data      []*Node // the first primary, then the replicas
	sentinels []*Node
}

// StartSentinel starts a Sentinel deployment for the test and returns a
// client of it (opts.Client with Sentinel.MasterName and Sentinel.Addrs
// set, so that it follows failovers) and the deployment, ready: every
// replica is in sync and every sentinel sees the primary, its replicas
// and the other sentinels. That takes about two seconds, the time the
// sentinels need to find each other. The client is closed, every process
// killed and its directory removed when the test ends (t.Cleanup), after
// the end of each log is written to the test log if it failed. When no
// server binary can be found, or the deployment does not start, the test
// fails with a message saying why, or is skipped with SkipIfUnavailable.
// opts may be nil.
func StartSentinel(t testing.TB, opts *SentinelOptions) (*respire.Client, *Sentinel) {
	t.Helper()
	opts = cmp.Or(opts, &SentinelOptions{})
	s := startFor(t, opts.SkipIfUnavailable, "the Sentinel deployment", func() (*Sentinel, error) {
		return NewSentinel(context.Background(), opts)
	}, func(s *Sentinel) {
		logNodes(t, "data node", s.data)
		logNodes(t, "sentinel", s.sentinels)
	})
	return s.Connect(t, opts.Client), s
}

// NewSentinel starts a Sentinel deployment without a test: for TestMain
// or for programs. The caller must Close it. ctx bounds the start only.
// The error wraps ErrNoServer when no server binary was found,
// ErrInvalidOptions for bad options.
func NewSentinel(ctx context.Context, opts *SentinelOptions) (*Sentinel, error) {
	o, err := cmp.Or(opts, &SentinelOptions{}).withDefaults()
	if err != nil {
		return nil, err
	}
	bin, err := localBinary(o.Server, "SentinelOptions.Server", "Sentinel")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	s := &Sentinel{Binary: bin, opts: o}
	if err := s.start(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("respiretest: starting the Sentinel deployment: %w", err)
	}
	return s, nil
}

// start starts the primary, then its replicas, and once they are in sync
// the sentinels (whose first look at the primary then finds them), and
// waits until every sentinel knows the others.
func (s *Sentinel) start(ctx context.Context) error {
	o := s.opts
	dataArgs := func(replicaOf int) func(i, port int, dir string) ([]string, error) {
		return func(i, port int, dir string) ([]string, error) {
			args := append(serverArgs(port, dir), "--repl-diskless-sync-delay", "0")
			if replicaOf > 0 {
				args = append(args, "--replicaof", "127.0.0.1", strconv.Itoa(replicaOf))
			}
			return append(args, o.Args...), nil
		}
	}
	primary, err := startNodes(ctx, s.Binary, 1, o.StartTimeout, dataArgs(0))
	if err != nil {
		return err
	}
	s.data = primary
	replicas, err := startNodes(ctx, s.Binary, o.Replicas, o.StartTimeout, dataArgs(primary[0].port()))
	if err != nil {
		return err
	}
	s.data = append(s.data, replicas...)
	err = poll(ctx, "the replicas to sync", func(ctx context.Context) error {
		for _, r := range replicas {
			if err := replicaOf(ctx, r, primary[0]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.sentinels, err = startNodes(ctx, s.Binary, o.Sentinels, o.StartTimeout, func(i, port int, dir string) ([]string, error) {
		// Sentinel rewrites its configuration file with what it learns.
		conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\ndir %q\nlogfile %q\n"+
			"sentinel monitor %s 127.0.0.1 %d %d\n"+
			"sentinel down-after-milliseconds %[4]s %[7]d\n"+
			"sentinel failover-timeout %[4]s %[8]d\n"+
			"sentinel parallel-syncs %[4]s 1\n",
			port, dir, filepath.Join(dir, logName),
			o.MasterName, primary[0].port(), o.Sentinels/2+1,
			max(o.DownAfter.Milliseconds(), 1), max(o.FailoverTimeout.Milliseconds(), 1))
		path := filepath.Join(dir, "sentinel.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			return nil, err
		}
		return []string{path, "--sentinel"}, nil
	})
	if err != nil {
		return err
	}
	return poll(ctx, "the sentinels to see each other", func(ctx context.Context) error {
		for _, sn := range s.sentinels {
			m, err := s.masterState(ctx, sn)
			if err != nil {
				return err
			}
			if a := m["ip"] + ":" + m["port"]; a != primary[0].Addr {
				return fmt.Errorf("sentinel %s watches %s, not %s", sn.Addr, a, primary[0].Addr)
			}
			if m["num-slaves"] != strconv.Itoa(o.Replicas) {
				return fmt.Errorf("sentinel %s sees %s replicas, not %d", sn.Addr, m["num-slaves"], o.Replicas)
			}
			if m["num-other-sentinels"] != strconv.Itoa(o.Sentinels-1) {
				return fmt.Errorf("sentinel %s sees %s other sentinels, not %d", sn.Addr, m["num-other-sentinels"], o.Sentinels-1)
			}
		}
		return nil
	})
}

// masterState returns what sentinel sn says of the primary (SENTINEL
// MASTER): its ip, port, flags, num-slaves, num-other-sentinels...
func (s *Sentinel) masterState(ctx context.Context, sn *Node) (map[string]string, error) {
	v, err := sn.do(ctx, "SENTINEL", "MASTER", s.opts.MasterName)
	if err != nil {
		return nil, err
	}
	return testserver.Pairs(v), nil
}

// replicaOf checks that r reports itself a replica of p with its link up.
func replicaOf(ctx context.Context, r, p *Node) error {
	info, err := doString(ctx, r.Addr, "INFO", "replication")
	if err != nil {
		return err
	}
	if role := testserver.InfoField(info, "role"); role != "slave" {
		return fmt.Errorf("%s reports role:%s", r.Addr, role)
	}
	if port := testserver.InfoField(info, "master_port"); port != strconv.Itoa(p.port()) {
		return fmt.Errorf("%s replicates port %s, not %s", r.Addr, port, p.Addr)
	}
	if st := testserver.InfoField(info, "master_link_status"); st != "up" {
		return fmt.Errorf("%s reports master_link_status:%s", r.Addr, st)
	}
	return nil
}

// MasterName returns the name the sentinels monitor the primary under.
func (s *Sentinel) MasterName() string { return s.opts.MasterName }

// Addrs returns the sentinels' addresses, killed ones included: what
// respire.SentinelOptions.Addrs wants.
func (s *Sentinel) Addrs() []string {
	out := make([]string, len(s.sentinels))
	for i, n := range s.sentinels {
		out[i] = n.Addr
	}
	return out
}

// Nodes returns the data nodes: the first primary, then the replicas.
// Roles change with failovers: Primary and Replicas ask the sentinels.
func (s *Sentinel) Nodes() []*Node { return slices.Clone(s.data) }

// Sentinels returns the sentinel processes.
func (s *Sentinel) Sentinels() []*Node { return slices.Clone(s.sentinels) }

// Connect returns another client of the deployment's primary, with the
// given options (their Sentinel.MasterName and Sentinel.Addrs are the
// deployment's), closed when the test ends. opts.Addr must be empty.
func (s *Sentinel) Connect(t testing.TB, opts respire.Options) *respire.Client {
	t.Helper()
	so := respire.SentinelOptions{}
	if opts.Sentinel != nil {
		so = *opts.Sentinel
	}
	so.MasterName, so.Addrs = s.opts.MasterName, s.Addrs()
	opts.Sentinel = &so
	return connect(t, opts, "the primary "+s.opts.MasterName+" through Sentinel")
}

// Primary returns the data node that most of the sentinels that are up
// name as the primary now (SENTINEL GET-MASTER-ADDR-BY-NAME).
func (s *Sentinel) Primary(ctx context.Context) (*Node, error) {
	votes := map[string]int{}
	last := errors.New("every sentinel is killed or stopped")
	for _, sn := range s.sentinels {
		if !sn.up() {
			continue
		}
		a, err := s.primaryAddr(ctx, sn)
		if err != nil {
			last = err
			continue
		}
		votes[a]++
	}
	best := ""
	for a, n := range votes {
		if n > votes[best] || (n == votes[best] && a < best) {
			best = a
		}
	}
	if best == "" {
		return nil, fmt.Errorf("respiretest: no sentinel names the primary: %w", last)
	}
	if n := s.dataNode(best); n != nil {
		return n, nil
	}
	return nil, fmt.Errorf("respiretest: the sentinels name %s, not a data node of this deployment", best)
}

// Replicas returns the data nodes other than the primary that Primary
// names, killed and stopped ones included.
func (s *Sentinel) Replicas(ctx context.Context) ([]*Node, error) {
	p, err := s.Primary(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Node
	for _, n := range s.data {
		if n != p {
			out = append(out, n)
		}
	}
	return out, nil
}

// KillPrimary kills the data node that the sentinels name as the primary
// and returns it, for WaitFailover.
func (s *Sentinel) KillPrimary(ctx context.Context) (*Node, error) {
	p, err := s.Primary(ctx)
	if err != nil {
		return nil, err
	}
	return p, p.Kill()
}

// WaitFailover waits until the sentinels have replaced old, a primary
// that was killed or stopped: every sentinel that is up names the same
// new primary and reports no failover in progress, that node reports
// itself a primary, and every other data node that is up replicates it
// with its link up. It fails at once when no replica is left to promote.
// Without a deadline in ctx it waits at most 30s. A client with
// Options.Sentinel follows on its own; its writes fail while the
// failover lasts.
func (s *Sentinel) WaitFailover(ctx context.Context, old *Node) error {
	if old == nil || s.dataNode(old.Addr) != old {
		return fmt.Errorf("respiretest: WaitFailover(%v): not a data node of this deployment", old)
	}
	return poll(ctx, "a failover of "+old.Addr, func(ctx context.Context) error {
		candidates := 0
		for _, n := range s.data {
			if n != old && n.up() {
				candidates++
			}
		}
		if candidates == 0 {
			return testserver.Permanent(fmt.Errorf("%s has no replica to promote", old.Addr))
		}
		var primary *Node
		for _, sn := range s.sentinels {
			if !sn.up() {
				continue
			}
			m, err := s.masterState(ctx, sn)
			if err != nil {
				return err
			}
			a := m["ip"] + ":" + m["port"]
			switch {
			case a == old.Addr:
				return fmt.Errorf("sentinel %s still names %s", sn.Addr, a)
			case m["flags"] != "master":
				return fmt.Errorf("sentinel %s reports the primary %s with flags %s", sn.Addr, a, m["flags"])
			case primary == nil:
				if primary = s.dataNode(a); primary == nil {
					return testserver.Permanent(fmt.Errorf("sentinel %s names %s, not a data node of this deployment", sn.Addr, a))
				}
			case primary.Addr != a:
				return fmt.Errorf("sentinels name %s and %s", primary.Addr, a)
			}
		}
		if primary == nil {
			return testserver.Permanent(errors.New("every sentinel is killed or stopped"))
		}
		info, err := doString(ctx, primary.Addr, "INFO", "replication")
		if err != nil {
			return err
		}
		if role := testserver.InfoField(info, "role"); role != "master" {
			return fmt.Errorf("the new primary %s reports role:%s", primary.Addr, role)
		}
		for _, n := range s.data {
			if n == primary || n == old || !n.up() {
				continue
			}
			if err := replicaOf(ctx, n, primary); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close kills every process, the sentinels first, and removes their
// directories. It is safe to call more than once.
func (s *Sentinel) Close() error {
	return errors.Join(closeNodes(s.sentinels), closeNodes(s.data))
}

// primaryAddr asks sentinel sn for the primary's address.
func (s *Sentinel) primaryAddr(ctx context.Context, sn *Node) (string, error) {
	v, err := sn.do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.opts.MasterName)
	if err != nil {
		return "", err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return "", fmt.Errorf("SENTINEL GET-MASTER-ADDR-BY-NAME on %s: %v", sn.Addr, v)
	}
	return fmt.Sprint(a[0]) + ":" + fmt.Sprint(a[1]), nil
}

// dataNode returns the data node at addr, or nil.
func (s *Sentinel) dataNode(addr string) *Node {
	for _, n := range s.data {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}
