package respiretest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
)

// startProcess runs bin on a free loopback port in a new temporary
// directory and waits until it answers PING.
func startProcess(ctx context.Context, bin string, opts *Options) (*Server, error) {
	return startProcessArgs(ctx, bin, opts.StartTimeout, func(port int, dir string) ([]string, error) {
		return append(serverArgs(port, dir), opts.Args...), nil
	})
}

// serverArgs are the arguments of every data server: the port, loopback
// only, nothing persisted, the log in dir.
func serverArgs(port int, dir string) []string {
	return []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, logName), "--daemonize", "no",
	}
}

// logName is the name of a server's log file in its directory.
const logName = "server.log"

// startProcessArgs runs bin in a new temporary directory with the
// arguments that args returns for a free loopback port and that
// directory (args may write files there; the server must log to logName
// in it), and waits until it answers PING within timeout (default 10s).
func startProcessArgs(ctx context.Context, bin string, timeout time.Duration, args func(port int, dir string) ([]string, error)) (*Server, error) {
	ctx, cancel := context.WithTimeout(ctx, orDefault(timeout, 10*time.Second))
	defer cancel()
	dir, err := os.MkdirTemp("", "respiretest-")
	if err != nil {
		return nil, fmt.Errorf("respiretest: %w", err)
	}
	// A port found free may be taken before the server binds it: try a
	// few.
	for attempt := 1; ; attempt++ {
		srv, err := launch(ctx, bin, dir, args)
		if err == nil {
			return srv, nil
		}
		if !errors.Is(err, testserver.ErrPortInUse) || attempt == 3 {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("respiretest: %w", err)
		}
	}
}

// launch starts bin once, on a free port.
func launch(ctx context.Context, bin, dir string, argsFor func(port int, dir string) ([]string, error)) (*Server, error) {
	port, err := testserver.FreePort()
	if err != nil {
		return nil, err
	}
	args, err := argsFor(port, dir)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p, err := testserver.Launch(ctx, bin, dir, args, testserver.Probe{Addr: addr}, filepath.Join(dir, logName))
	if err != nil {
		return nil, err
	}
	stop := func() error {
		p.Kill()
		return os.RemoveAll(dir)
	}
	return &Server{Addr: addr, Binary: bin, Dir: dir, stop: stop, proc: p}, nil
}

// tail returns the last lines of a log file, indented, for an error.
func tail(path string) string {
	if t := testserver.Tail(path, 10); t != "" {
		return "  " + strings.ReplaceAll(t, "\n", "\n  ") + "\n"
	}
	return ""
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
