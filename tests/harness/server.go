package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

// Config describes the server a test needs. The zero value is a plain
// server of DefaultFlavor with no password.
type Config struct {
	// Flavor selects the server product and version. Empty means
	// DefaultFlavor, or whatever runs at REDIS_ADDR when that is set.
	Flavor Flavor
	// TLS serves TLS only: the plain port is disabled and Server.Addr is the
	// TLS port. The certificate, signed by a CA generated for the test run,
	// is valid for 127.0.0.1 and "localhost"; Server.TLSConfig trusts it.
	// Clients are not asked for certificates unless ClientAuth is set.
	TLS bool
	// ClientAuth, with TLS, makes the server require a client certificate
	// signed by the test CA (tls-auth-clients yes). Server.TLSConfig then
	// presents one whose common name is "default"; ClientCert makes
	// others.
	ClientAuth bool
	// Password is the default user's password (requirepass).
	Password string
	// Users are ACL users created at startup.
	Users []User
	// Unix also listens on a unix socket, at Server.UnixSocket.
	Unix bool
	// Args are extra configuration directives, each "name value...", as in
	// redis.conf: "maxmemory 10mb". Values are split at white space. They
	// come last, so they override the harness's own directives.
	Args []string

	// pickPort, when set, chooses the port instead of freePort: a cluster
	// node needs its bus port (port+10000) free as well.
	pickPort func() (int, error)
}

// User is an ACL user, enabled at startup.
type User struct {
	// Name is the user name.
	Name string
	// Password is the user's password; empty means nopass.
	Password string
	// Rules are ACL rules, as "~* &* +@all". Empty grants nothing.
	Rules string
}

// plain reports whether c asks for nothing but a flavor.
func (c Config) plain() bool {
	return !c.TLS && c.Password == "" && len(c.Users) == 0 && !c.Unix && len(c.Args) == 0
}

// Server is a running server started by Start. Its methods are safe for
// concurrent use.
type Server struct {
	// Flavor is the server's flavor. For an external server it is derived
	// from its version and may lie outside AllFlavors.
	Flavor Flavor
	// Version is the product version from INFO server: redis_version, or
	// valkey_version on Valkey ("8.1.1").
	Version string
	// Addr is the TCP address clients dial, "127.0.0.1:port". With
	// Config.TLS it is the TLS port.
	Addr string
	// UnixSocket is the unix socket path when Config.Unix is set.
	UnixSocket string
	// TLSConfig is a client configuration for Addr when Config.TLS is set:
	// it trusts the test CA and expects the server name "localhost"; with
	// Config.ClientAuth it presents the harness's client certificate. Clone
	// it before changing it.
	TLSConfig *tls.Config
	// CAFile is the PEM file of the test CA when Config.TLS is set.
	CAFile string
	// Dir is the server's working directory, removed after the test.
	Dir string
	// LogPath is the server's log file.
	LogPath string
	// Config is the configuration the server was started with.
	Config Config
	// External is true when the server is the one at REDIS_ADDR, which the
	// harness neither started nor may stop.
	External bool

	t         testing.TB // the test that started the server
	logLogged bool       // the log tail is already in the test log
	bin       string     // executable, for local processes
	mu        sync.Mutex // serializes run
	run       runner
	port      int
}

// Start returns a running server configured by cfg and stops it when t ends.
// It picks a free loopback port, runs the server in its own temporary
// directory, and waits (up to 10s) until it answers PING. When the test has
// failed, the end of the server's log is written to the test log.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	if s := startExternal(t, cfg); s != nil {
		return s
	}
	if cfg.Flavor == "" {
		cfg.Flavor = DefaultFlavor
	}
	if !cfg.Flavor.known() {
		t.Fatalf("harness: unknown flavor %q (known: %v)", cfg.Flavor, AllFlavors)
	}
	s := &Server{Flavor: cfg.Flavor, Config: cfg, t: t, Dir: t.TempDir()}
	s.LogPath = filepath.Join(s.Dir, "server.log")

	bin, err := Binary(cfg.Flavor)
	switch {
	case err == nil:
		s.bin = bin
		s.run = newProcRunner(bin, s.Dir, s.LogPath)
	case errors.Is(err, errNoBinary) && dockerAvailable():
		s.run, err = newDockerRunner(cfg.Flavor, s.Dir)
		if err != nil {
			t.Fatalf("harness: %v", err)
		}
	case errors.Is(err, errNoBinary):
		t.Fatal(installHint(cfg.Flavor))
	default:
		t.Fatalf("harness: %v", err)
	}
	t.Cleanup(func() {
		s.mu.Lock()
		s.run.close()
		logged := s.logLogged
		s.mu.Unlock()
		if t.Failed() && !logged {
			t.Logf("harness: %s server at %s:\n%s", s.Flavor, s.Addr, s.logTail(50))
		}
	})

	if cfg.TLS {
		p, err := pki()
		if err != nil {
			t.Fatalf("harness: generating test certificates: %v", err)
		}
		files, err := p.write(s.Dir)
		if err != nil {
			t.Fatalf("harness: %v", err)
		}
		s.TLSConfig, s.CAFile = p.clientConfig(cfg.ClientAuth), files.ca
	}
	if cfg.Unix {
		s.UnixSocket = socketPath(t, s.Dir)
	}

	const attempts = 5
	for i := 1; ; i++ {
		pick := testserver.FreePort
		if cfg.pickPort != nil {
			pick = cfg.pickPort
		}
		port, err := pick()
		if err != nil {
			t.Fatalf("harness: %v", err)
		}
		err = s.launch(port, s.readyTimeout())
		if err == nil {
			break
		}
		if errors.Is(err, testserver.ErrPortInUse) && i < attempts {
			continue // another process took the port between probe and bind
		}
		s.logLogged = true
		t.Fatalf("harness: starting %s: %v\n%s", s.Flavor, err, s.logTail(50))
	}
	s.Version = s.version()
	return s
}

// Kill ends the server with SIGKILL and waits until it is gone, as a crash
// would. On an external server it skips the test that started the server.
func (s *Server) Kill() {
	if s.External {
		s.t.Skip("harness: the server at REDIS_ADDR cannot be killed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run.kill()
}

// Stop shuts the server down gracefully and waits for it. It does nothing on
// an external server.
func (s *Server) Stop() {
	if s.External {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run.stop()
}

// Pause stops the server's process (SIGSTOP), as a stalled machine would:
// it holds its connections and answers nothing until Resume. A test that
// pauses a server resumes it before it ends (t.Cleanup), since a stopped
// process cannot shut down.
func (s *Server) Pause() error {
	if err := pauseProcess(s, true); err != nil {
		return fmt.Errorf("harness: pausing %s: %w", s.Addr, err)
	}
	return nil
}

// Resume continues a server Pause stopped (SIGCONT).
func (s *Server) Resume() error {
	if err := pauseProcess(s, false); err != nil {
		return fmt.Errorf("harness: resuming %s: %w", s.Addr, err)
	}
	return nil
}

// Restart stops the server if it runs and starts it again with the same
// configuration, directory and address. The dataset starts empty: nothing is
// persisted. On an external server it skips t.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	if s.External {
		t.Skip("harness: the server at REDIS_ADDR cannot be restarted")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run.stop()
	// The address may linger briefly after the old process is gone.
	deadline := time.Now().Add(5 * time.Second)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 250*time.Millisecond) {
		err := s.launch(s.port, s.readyTimeout())
		if err == nil {
			return
		}
		if !errors.Is(err, testserver.ErrPortInUse) || time.Now().After(deadline) {
			s.logLogged = true
			t.Fatalf("harness: restarting %s on %s: %v\n%s", s.Flavor, s.Addr, err, s.logTail(50))
		}
		time.Sleep(wait)
	}
}

// Do sends one command on a fresh connection, authenticated with
// Config.Password, and returns the reply: a string, int64, []any or nil. An
// error reply is returned as a ServerError. It is meant for test setup and
// inspection, independent of the client under test.
func (s *Server) Do(ctx context.Context, args ...string) (any, error) {
	c, err := testserver.Dial(ctx, "tcp", s.Addr, s.TLSConfig)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if s.Config.Password != "" {
		if _, err := c.Do("AUTH", s.Config.Password); err != nil {
			return nil, err
		}
	}
	return c.Do(args...)
}

// readyTimeout is how long a server may take to answer its first PING.
func (s *Server) readyTimeout() time.Duration {
	if _, ok := s.run.(*procRunner); ok {
		// Milliseconds as a rule; seconds on a machine loaded far beyond
		// its cores (seen: over 10s at a load average of 44 on 2).
		return 30 * time.Second
	}
	return 60 * time.Second // a container, maybe after pulling its image
}

// launch starts an incarnation on port and waits until it serves. Callers
// hold s.mu or own s exclusively.
func (s *Server) launch(port int, timeout time.Duration) error {
	s.port = port
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.run.launch(ctx, port, s.args(port), testserver.Probe{Addr: s.Addr, TLS: s.TLSConfig, Password: s.Config.Password})
}

// version asks INFO server for the product version. If the default user
// cannot run INFO (an Args directive may have disabled it), it falls back to
// the binary's --version output.
func (s *Server) version() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if info, err := s.Do(ctx, "INFO", "server"); err == nil {
		if str, ok := info.(string); ok {
			if v, _ := serverVersion(str); v != "" {
				return v
			}
		}
	}
	if s.bin != "" {
		out, _ := exec.Command(s.bin, "--version").Output()
		for _, f := range strings.Fields(string(out)) {
			if v, ok := strings.CutPrefix(f, "v="); ok {
				return v
			}
		}
	}
	return ""
}

// args builds the server's command line; every directive is "--name value...".
func (s *Server) args(port int) []string {
	cfg := s.Config
	a := []string{
		"--bind", s.run.bindAddr(),
		"--dir", s.Dir,
		"--logfile", s.LogPath,
		"--daemonize", "no",
		"--save", "",
		"--appendonly", "no",
		"--enable-debug-command", "local",
	}
	a = append(a, s.run.extraArgs()...)
	if cfg.TLS {
		clientAuth := "no"
		if cfg.ClientAuth {
			clientAuth = "yes"
		}
		a = append(a,
			"--port", "0",
			"--tls-port", strconv.Itoa(port),
			"--tls-cert-file", filepath.Join(s.Dir, "server.crt"),
			"--tls-key-file", filepath.Join(s.Dir, "server.key"),
			"--tls-ca-cert-file", filepath.Join(s.Dir, "ca.crt"),
			"--tls-auth-clients", clientAuth)
	} else {
		a = append(a, "--port", strconv.Itoa(port))
	}
	if cfg.Unix {
		a = append(a, "--unixsocket", s.UnixSocket, "--unixsocketperm", "777")
	}
	if cfg.Password != "" {
		a = append(a, "--requirepass", cfg.Password)
	}
	for _, u := range cfg.Users {
		a = append(a, "--user", u.Name, "reset", "on")
		if u.Password == "" {
			a = append(a, "nopass")
		} else {
			a = append(a, ">"+u.Password)
		}
		a = append(a, strings.Fields(u.Rules)...)
	}
	for _, d := range cfg.Args {
		f := strings.Fields(d)
		if len(f) == 0 {
			continue
		}
		a = append(a, "--"+f[0])
		a = append(a, f[1:]...)
	}
	return a
}

// logTail returns the last n lines of the server log and of its captured
// stdout and stderr.
func (s *Server) logTail(n int) string {
	var b strings.Builder
	for _, p := range []string{s.LogPath, s.run.outputPath()} {
		if t := testserver.Tail(p, n); p != "" && t != "" {
			fmt.Fprintf(&b, "--- %s (last %d lines)\n%s\n", filepath.Base(p), strings.Count(t, "\n")+1, t)
		}
	}
	if b.Len() == 0 {
		return "(no server output)"
	}
	return b.String()
}

// socketPath returns a unix socket path in dir, or in a shorter temporary
// directory when dir is too long for a socket address (108 bytes on Linux).
func socketPath(t testing.TB, dir string) string {
	p := filepath.Join(dir, "server.sock")
	if len(p) < 100 {
		return p
	}
	short, err := os.MkdirTemp("", "rs")
	if err != nil {
		t.Fatalf("harness: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	return filepath.Join(short, "server.sock")
}

// fileSize returns the size of the file at p, 0 if it does not exist.
func fileSize(p string) int64 {
	if p == "" {
		return 0
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// readFrom returns the contents of the file at p from offset on.
func readFrom(p string, offset int64) string {
	if p == "" {
		return ""
	}
	data, err := os.ReadFile(p)
	if err != nil || int64(len(data)) < offset {
		return ""
	}
	return string(data[offset:])
}
