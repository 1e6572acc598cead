package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

// SentinelConfig describes a Sentinel deployment: one master, its
// replicas and the sentinels that watch it, all on free loopback ports.
type SentinelConfig struct {
	// Flavor of every process; empty means DefaultFlavor.
	Flavor Flavor
	// MasterName is the name the sentinels monitor; default "mymaster".
	MasterName string
	// Replicas is the number of replicas; default 2.
	Replicas int
	// Sentinels is the number of sentinels; default 3 (quorum 2).
	Sentinels int
	// DownAfter is down-after-milliseconds; default 1s.
	DownAfter time.Duration
	// FailoverTimeout is failover-timeout; default 5s.
	FailoverTimeout time.Duration

	// TLS serves TLS only on every data node and sentinel (port 0,
	// tls-port, tls-replication yes), with the certificate of Config.TLS;
	// Sentinels.TLSConfig trusts it.
	TLS bool
	// SentinelPassword, when set, protects the sentinels: the password of
	// the ACL user SentinelUser (with ~* &* +@all; the default user is then
	// off), or requirepass when SentinelUser is empty. The sentinels
	// authenticate to each other with them (sentinel sentinel-user and
	// sentinel-pass), and the harness's own connections to them too.
	SentinelUser     string
	SentinelPassword string
	// DataPassword, when set, is the data nodes' requirepass (and their
	// masterauth); the sentinels reach them with sentinel auth-pass.
	DataPassword string
	// Hostnames makes every process announce the name "localhost" instead
	// of an IP address: the data nodes replicate from "localhost" and
	// announce it (replica-announce-ip), the sentinels monitor it and run
	// with resolve-hostnames, announce-hostnames and announce-ip localhost,
	// so that their replies and events name "localhost:port".
	Hostnames bool
}

func (c SentinelConfig) withDefaults() SentinelConfig {
	if c.Flavor == "" {
		c.Flavor = DefaultFlavor
	}
	if c.MasterName == "" {
		c.MasterName = "mymaster"
	}
	if c.Replicas <= 0 {
		c.Replicas = 2
	}
	if c.Sentinels <= 0 {
		c.Sentinels = 3
	}
	if c.DownAfter <= 0 {
		c.DownAfter = time.Second
	}
	if c.FailoverTimeout <= 0 {
		c.FailoverTimeout = 5 * time.Second
	}
	return c
}

// Sentinels is a running Sentinel deployment started by StartSentinels.
// Data[0] was the first master; after a failover any data node may be.
// Its methods are safe for concurrent use.
type Sentinels struct {
	Config SentinelConfig
	// Data are the data nodes: the master and its replicas.
	Data []*Server
	// Sentinel are the sentinel processes.
	Sentinel []*SentinelProc
	// Events records the events of every sentinel, from the start.
	Events *EventLog
	// TLSConfig is a client configuration for the sentinels and the data
	// nodes when Config.TLS is set (nil otherwise): it trusts the test CA
	// and expects the server name "localhost". Clone it before changing it.
	TLSConfig *tls.Config
	t         testing.TB

	mu     sync.Mutex
	paused []*Server // data nodes stopped with PauseData
}

// PauseData stops a data node with SIGSTOP: it keeps its sockets open and
// answers nothing, as a hung master would. WaitStable resumes it.
func (d *Sentinels) PauseData(s *Server) error {
	if err := pauseProcess(s, true); err != nil {
		return fmt.Errorf("harness: pausing %s: %w", s.Addr, err)
	}
	d.mu.Lock()
	d.paused = append(d.paused, s)
	d.mu.Unlock()
	return nil
}

// resumeData continues the data nodes PauseData stopped.
func (d *Sentinels) resumeData() error {
	d.mu.Lock()
	paused := d.paused
	d.paused = nil
	d.mu.Unlock()
	for _, s := range paused {
		if err := pauseProcess(s, false); err != nil {
			return fmt.Errorf("harness: resuming %s: %w", s.Addr, err)
		}
	}
	return nil
}

// SentinelProc is one sentinel process.
type SentinelProc struct {
	// Addr is "127.0.0.1:port".
	Addr string
	// LogPath is the sentinel's log file.
	LogPath string
	dir     string
	conf    string
	port    int
	bin     string
	// tls, user and pass are how the harness reaches the sentinel.
	tls        *tls.Config
	user, pass string
	mu         sync.Mutex
	run        *procRunner
	stopped    bool // SIGSTOPped
}

// StartSentinels starts a deployment and waits until every sentinel knows
// the master, its replicas and the other sentinels. Everything stops when
// t ends. Subtests of t may share it: each keeps to keys of its own and
// calls WaitStable first.
func StartSentinels(t testing.TB, cfg SentinelConfig) *Sentinels {
	t.Helper()
	cfg = cfg.withDefaults()
	bin, err := Binary(cfg.Flavor)
	if err != nil {
		t.Skipf("harness: Sentinel needs a local %s binary: %v", cfg.Flavor, err)
	}
	d := &Sentinels{Config: cfg, t: t}
	dcfg := Config{Flavor: cfg.Flavor, TLS: cfg.TLS, Password: cfg.DataPassword, Args: cfg.dataArgs()}
	master := Start(t, dcfg)
	d.Data = append(d.Data, master)
	d.TLSConfig = master.TLSConfig
	masterAddr := cfg.announced(master.Addr)
	for range cfg.Replicas {
		rcfg := dcfg
		rcfg.Args = replicaOfArgs(dcfg.Args, masterAddr)
		d.Data = append(d.Data, Start(t, rcfg))
	}
	for range cfg.Sentinels {
		sp := &SentinelProc{bin: bin, dir: t.TempDir(), tls: d.TLSConfig, user: cfg.SentinelUser, pass: cfg.SentinelPassword}
		sp.conf = filepath.Join(sp.dir, "sentinel.conf")
		sp.LogPath = filepath.Join(sp.dir, "sentinel.log")
		if err := sp.start(cfg, masterAddr); err != nil {
			t.Fatalf("harness: starting a sentinel: %v\n%s", err, sp.logTail(30))
		}
		t.Cleanup(func() {
			sp.mu.Lock()
			defer sp.mu.Unlock()
			if sp.stopped {
				_ = sp.run.pause(false)
			}
			sp.run.close()
			if t.Failed() {
				t.Logf("harness: sentinel %s:\n%s", sp.Addr, sp.logTail(40))
			}
		})
		d.Sentinel = append(d.Sentinel, sp)
	}
	d.Events = newEventLog(d.Sentinel)
	t.Cleanup(d.Events.close)
	// Before the data nodes' own cleanups: a paused node cannot stop.
	t.Cleanup(func() { _ = d.resumeData() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := d.WaitStable(ctx); err != nil {
		t.Fatalf("harness: the Sentinel deployment did not settle: %v", err)
	}
	return d
}

// start writes the configuration and launches the sentinel on a free port.
func (sp *SentinelProc) start(cfg SentinelConfig, master string) error {
	host, port, _ := strings.Cut(master, ":")
	for attempt := 0; ; attempt++ {
		p, err := testserver.FreePort()
		if err != nil {
			return err
		}
		conf, err := sp.confText(cfg, p, host, port)
		if err != nil {
			return err
		}
		if err := os.WriteFile(sp.conf, []byte(conf), 0o644); err != nil {
			return err
		}
		sp.port = p
		sp.Addr = "127.0.0.1:" + strconv.Itoa(p)
		err = sp.launch()
		if err == nil {
			return nil
		}
		if attempt >= 4 || !strings.Contains(sp.logTail(10), "in use") {
			return err
		}
	}
}

// confText is the sentinel's configuration file, listening on port p and
// monitoring the master at host:port.
func (sp *SentinelProc) confText(cfg SentinelConfig, p int, host, port string) (string, error) {
	var b strings.Builder
	if cfg.TLS {
		pk, err := pki()
		if err != nil {
			return "", err
		}
		files, err := pk.write(sp.dir)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "port 0\ntls-port %d\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\n"+
			"tls-auth-clients no\ntls-replication yes\n", p, files.cert, files.key, files.ca)
	} else {
		fmt.Fprintf(&b, "port %d\n", p)
	}
	fmt.Fprintf(&b, "bind 127.0.0.1\ndaemonize no\ndir %s\nlogfile %s\n", sp.dir, sp.LogPath)
	if cfg.Hostnames {
		b.WriteString("sentinel resolve-hostnames yes\nsentinel announce-hostnames yes\nsentinel announce-ip localhost\n")
	}
	if cfg.SentinelPassword != "" {
		if cfg.SentinelUser != "" {
			fmt.Fprintf(&b, "user default off\nuser %s on >%s ~* &* +@all\nsentinel sentinel-user %s\n",
				cfg.SentinelUser, cfg.SentinelPassword, cfg.SentinelUser)
		} else {
			fmt.Fprintf(&b, "requirepass %s\n", cfg.SentinelPassword)
		}
		fmt.Fprintf(&b, "sentinel sentinel-pass %s\n", cfg.SentinelPassword)
	}
	name := cfg.MasterName
	fmt.Fprintf(&b, "sentinel monitor %s %s %s %d\n", name, host, port, cfg.Sentinels/2+1)
	fmt.Fprintf(&b, "sentinel down-after-milliseconds %s %d\n", name, cfg.DownAfter.Milliseconds())
	fmt.Fprintf(&b, "sentinel failover-timeout %s %d\n", name, cfg.FailoverTimeout.Milliseconds())
	fmt.Fprintf(&b, "sentinel parallel-syncs %s 1\n", name)
	if cfg.DataPassword != "" {
		fmt.Fprintf(&b, "sentinel auth-pass %s %s\n", name, cfg.DataPassword)
	}
	return b.String(), nil
}

// launch runs the sentinel with its configuration file (which it rewrites
// with what it learns, so a restart remembers) and waits for PING.
func (sp *SentinelProc) launch() error {
	sp.run = newProcRunner(sp.bin, sp.dir, sp.LogPath)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // as Server.readyTimeout
	defer cancel()
	return sp.run.launch(ctx, sp.port, []string{sp.conf, "--sentinel"}, testserver.Probe{Addr: sp.Addr, TLS: sp.tls})
}

// dataArgs are the directives of a data node, a replica of master unless
// that is empty: replicas sync at once (no diskless-sync delay).
func dataArgs(master string) []string {
	return replicaOfArgs([]string{"repl-diskless-sync-delay 0"}, master)
}

// dataArgs are the directives every data node of the deployment has,
// master or replica (replicaOfArgs adds the replicaof).
func (c SentinelConfig) dataArgs() []string {
	a := dataArgs("")
	if c.TLS {
		a = append(a, "tls-replication yes")
	}
	if c.DataPassword != "" {
		a = append(a, "masterauth "+c.DataPassword)
	}
	if c.Hostnames {
		a = append(a, "replica-announce-ip localhost")
	}
	return a
}

// replicaOfArgs returns args without their replicaof directive, plus one
// for master unless that is empty.
func replicaOfArgs(args []string, master string) []string {
	out := make([]string, 0, len(args)+1)
	for _, a := range args {
		if !strings.HasPrefix(a, "replicaof ") {
			out = append(out, a)
		}
	}
	if master != "" {
		out = append(out, "replicaof "+strings.Replace(master, ":", " ", 1))
	}
	return out
}

// announced is the address the deployment names the data node at addr
// by: "localhost:port" with Hostnames.
func (c SentinelConfig) announced(addr string) string {
	if !c.Hostnames {
		return addr
	}
	_, port, _ := strings.Cut(addr, ":")
	return "localhost:" + port
}

// sameAddr reports whether a and b name the same loopback address, one by
// "localhost" and the other by 127.0.0.1 maybe.
func sameAddr(a, b string) bool {
	if a == b {
		return true
	}
	ha, pa, _ := strings.Cut(a, ":")
	hb, pb, _ := strings.Cut(b, ":")
	loop := func(h string) bool { return h == "localhost" || h == "127.0.0.1" }
	return pa == pb && loop(ha) && loop(hb)
}

// Kill ends the sentinel with SIGKILL.
func (sp *SentinelProc) Kill() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.stopped {
		_ = sp.run.pause(false)
		sp.stopped = false
	}
	sp.run.kill()
}

// Restart starts a killed sentinel again on its port, with the
// configuration it last wrote.
func (sp *SentinelProc) Restart() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.run.kill()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := sp.launch()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pause stops the sentinel with SIGSTOP: its sockets stay open, nothing
// answers. Resume undoes it.
func (sp *SentinelProc) Pause() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if err := sp.run.pause(true); err != nil {
		return err
	}
	sp.stopped = true
	return nil
}

// Resume continues a paused sentinel with SIGCONT.
func (sp *SentinelProc) Resume() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.stopped {
		return nil
	}
	sp.stopped = false
	return sp.run.pause(false)
}

func (sp *SentinelProc) running() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.run.running()
}

// Do sends one command to the sentinel, authenticated as the deployment's
// SentinelUser when it has a SentinelPassword.
func (sp *SentinelProc) Do(ctx context.Context, args ...string) (any, error) {
	c, err := sp.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(args...)
}

// dial connects to the sentinel, over TLS and authenticated as configured.
func (sp *SentinelProc) dial(ctx context.Context) (*testserver.Conn, error) {
	c, err := testserver.Dial(ctx, "tcp", sp.Addr, sp.tls)
	if err != nil {
		return nil, err
	}
	if sp.pass != "" {
		auth := []string{"AUTH", sp.pass}
		if sp.user != "" {
			auth = []string{"AUTH", sp.user, sp.pass}
		}
		if _, err := c.Do(auth...); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (sp *SentinelProc) logTail(n int) string { return testserver.Tail(sp.LogPath, n) }

// Addrs returns the sentinels' addresses.
func (d *Sentinels) Addrs() []string {
	out := make([]string, len(d.Sentinel))
	for i, sp := range d.Sentinel {
		out[i] = sp.Addr
	}
	return out
}

// MasterAddr asks the running sentinels for the master's address and
// returns the one most of them name.
func (d *Sentinels) MasterAddr(ctx context.Context) (string, error) {
	votes := map[string]int{}
	var last error
	for _, sp := range d.Sentinel {
		if !sp.running() || sp.isPaused() {
			continue
		}
		a, err := sp.masterAddr(ctx, d.Config.MasterName)
		if err != nil {
			last = err
			continue
		}
		votes[a]++
	}
	best, n := "", 0
	for a, v := range votes {
		if v > n {
			best, n = a, v
		}
	}
	if best == "" {
		return "", fmt.Errorf("no sentinel names a master: %v", last)
	}
	return best, nil
}

// tilted reports a sentinel in TILT mode, or one that does not answer.
func (sp *SentinelProc) tilted(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	v, err := sp.Do(ctx, "INFO", "sentinel")
	return err != nil || testserver.InfoField(fmt.Sprint(v), "sentinel_tilt") != "0"
}

func (sp *SentinelProc) isPaused() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.stopped
}

func (sp *SentinelProc) masterAddr(ctx context.Context, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	v, err := sp.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
	if err != nil {
		return "", err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return "", fmt.Errorf("GET-MASTER-ADDR-BY-NAME: %v", v)
	}
	return fmt.Sprint(a[0]) + ":" + fmt.Sprint(a[1]), nil
}

// Master returns the data node the sentinels name as master.
func (d *Sentinels) Master(ctx context.Context) (*Server, error) {
	a, err := d.MasterAddr(ctx)
	if err != nil {
		return nil, err
	}
	if s := d.Node(a); s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("the sentinels name %s, not a data node", a)
}

// Node returns the data node at addr, or nil.
func (d *Sentinels) Node(addr string) *Server {
	for _, s := range d.Data {
		if sameAddr(s.Addr, addr) {
			return s
		}
	}
	return nil
}

// Replicas returns the data nodes other than the master at addr.
func (d *Sentinels) Replicas(master string) []*Server {
	var out []*Server
	for _, s := range d.Data {
		if !sameAddr(s.Addr, master) {
			out = append(out, s)
		}
	}
	return out
}
