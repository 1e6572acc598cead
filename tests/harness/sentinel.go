package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
	t      testing.TB

	mu     sync.Mutex
	paused []*Server // data nodes stopped with PauseData
}

// PauseData stops a data node with SIGSTOP: it keeps its sockets open and
// answers nothing, as a hung master would. WaitStable resumes it.
func (d *Sentinels) PauseData(s *Server) error {
	if err := signalProcess(s, "STOP"); err != nil {
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
		if err := signalProcess(s, "CONT"); err != nil {
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
	mu      sync.Mutex
	run     *procRunner
	stopped bool // SIGSTOPped
}

// StartSentinels starts a deployment and waits until every sentinel knows
// the master, its replicas and the other sentinels. Everything stops when
// t ends. Subtests of t may share it: each keeps to keys of its own and
// calls WaitStable first.
func StartSentinels(t testing.TB, cfg SentinelConfig) *Sentinels {
	t.Helper()
	cfg = cfg.withDefaults()
	bin, err := findBinary(cfg.Flavor)
	if err != nil {
		t.Skipf("harness: Sentinel needs a local %s binary: %v", cfg.Flavor, err)
	}
	d := &Sentinels{Config: cfg, t: t}
	master := Start(t, Config{Flavor: cfg.Flavor, Args: dataArgs("")})
	d.Data = append(d.Data, master)
	for range cfg.Replicas {
		d.Data = append(d.Data, Start(t, Config{Flavor: cfg.Flavor, Args: dataArgs(master.Addr)}))
	}
	for range cfg.Sentinels {
		sp := &SentinelProc{bin: bin, dir: t.TempDir()}
		sp.conf = filepath.Join(sp.dir, "sentinel.conf")
		sp.LogPath = filepath.Join(sp.dir, "sentinel.log")
		if err := sp.start(cfg, master.Addr); err != nil {
			t.Fatalf("harness: starting a sentinel: %v\n%s", err, sp.logTail(30))
		}
		t.Cleanup(func() {
			sp.mu.Lock()
			defer sp.mu.Unlock()
			if sp.stopped {
				_ = sp.signal("CONT")
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
		p, err := freePort()
		if err != nil {
			return err
		}
		conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\nlogfile %s\n"+
			"sentinel monitor %s %s %s %d\n"+
			"sentinel down-after-milliseconds %s %d\n"+
			"sentinel failover-timeout %s %d\n"+
			"sentinel parallel-syncs %s 1\n",
			p, sp.dir, sp.LogPath,
			cfg.MasterName, host, port, cfg.Sentinels/2+1,
			cfg.MasterName, cfg.DownAfter.Milliseconds(),
			cfg.MasterName, cfg.FailoverTimeout.Milliseconds(),
			cfg.MasterName)
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

// launch runs the sentinel with its configuration file (which it rewrites
// with what it learns, so a restart remembers) and waits for PING.
func (sp *SentinelProc) launch() error {
	sp.run = newProcRunner(sp.bin, sp.dir)
	if err := sp.run.launch(sp.port, []string{sp.conf, "--sentinel"}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := probe(ctx, "tcp", sp.Addr, nil, "")
		if err == nil {
			return nil
		}
		select {
		case <-sp.run.exited():
			return errors.New("sentinel exited during startup")
		case <-ctx.Done():
			sp.run.kill()
			return fmt.Errorf("no PING reply: %v", err)
		case <-time.After(wait):
		}
	}
}

// dataArgs are the directives of a data node, a replica of master unless
// that is empty: replicas sync at once (no diskless-sync delay).
func dataArgs(master string) []string {
	a := []string{"repl-diskless-sync-delay 0"}
	if master != "" {
		a = append(a, "replicaof "+strings.Replace(master, ":", " ", 1))
	}
	return a
}

// Kill ends the sentinel with SIGKILL.
func (sp *SentinelProc) Kill() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.stopped {
		_ = sp.signal("CONT")
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
	if err := sp.signal("STOP"); err != nil {
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
	return sp.signal("CONT")
}

func (sp *SentinelProc) running() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.run == nil || sp.run.cmd == nil {
		return false
	}
	select {
	case <-sp.run.done:
		return false
	default:
		return true
	}
}

// signal sends sig to the process; sp.mu is held.
func (sp *SentinelProc) signal(sig string) error {
	if runtime.GOOS == "windows" {
		return errors.New("no SIGSTOP on Windows")
	}
	if sp.run == nil || sp.run.cmd == nil || sp.run.cmd.Process == nil {
		return errors.New("the sentinel is not running")
	}
	out, err := exec.Command("/bin/sh", "-c", "kill -s "+sig+" "+strconv.Itoa(sp.run.cmd.Process.Pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("kill -s %s: %v: %s", sig, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Do sends one command to the sentinel.
func (sp *SentinelProc) Do(ctx context.Context, args ...string) (any, error) {
	c, err := dialRESP(ctx, "tcp", sp.Addr, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.do(args...)
}

func (sp *SentinelProc) logTail(n int) string {
	b, _ := os.ReadFile(sp.LogPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

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
	return err != nil || infoField(fmt.Sprint(v), "sentinel_tilt") != "0"
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
		if s.Addr == addr {
			return s
		}
	}
	return nil
}

// Replicas returns the data nodes other than the master at addr.
func (d *Sentinels) Replicas(master string) []*Server {
	var out []*Server
	for _, s := range d.Data {
		if s.Addr != master {
			out = append(out, s)
		}
	}
	return out
}
