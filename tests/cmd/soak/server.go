package main

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
	"github.com/respire-go/respire/tests/harness"
)

// server is a redis-server child process on a fixed loopback port, so that
// it can be killed and started again on the same address.
type server struct {
	bin, dir string
	port     int
	proc     *testserver.Process // nil while killed
}

// findServer returns the server executable: the one named, else the
// harness's Redis 8.0 (.servers/bin, `make servers`), else its Redis 7.0
// (which may be redis-server on PATH).
func findServer(named string) (string, error) {
	if named != "" {
		return named, nil
	}
	for _, f := range []harness.Flavor{harness.Redis80, harness.Redis70} {
		if p, err := harness.Binary(f); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no server: run `make servers`, put redis-server on PATH, or pass -server")
}

// startServer starts bin on a free loopback port in dir.
func startServer(bin, dir string) (*server, error) {
	port, err := testserver.FreePort()
	if err != nil {
		return nil, err
	}
	s := &server{bin: bin, dir: dir, port: port}
	return s, s.start()
}

func (s *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// start runs a new process on s.port and waits until it answers PING. The
// port may linger for a moment after a kill: it tries again for 10s.
func (s *server) start() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	logPath := filepath.Join(s.dir, "server.log")
	args := []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(s.port),
		"--dir", s.dir, "--logfile", logPath, "--daemonize", "no", "--save", "", "--appendonly", "no"}
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 250*time.Millisecond) {
		p, err := testserver.Launch(ctx, s.bin, s.dir, args, testserver.Probe{Addr: s.addr()}, logPath)
		if err == nil {
			s.proc = p
			return nil
		}
		if !errors.Is(err, testserver.ErrPortInUse) || ctx.Err() != nil {
			return err
		}
		time.Sleep(wait)
	}
}

// kill ends the process with SIGKILL, as a crash would, and waits for it.
func (s *server) kill() {
	if s.proc != nil {
		s.proc.Kill()
		s.proc = nil
	}
}
