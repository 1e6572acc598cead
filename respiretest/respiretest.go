package respiretest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/respiretest/testserver"
)

// EnvServer is the environment variable that names the server binary to
// run when Options.Server is empty: a path to redis-server or
// valkey-server.
const EnvServer = "RESPIRETEST_SERVER"

// DefaultImage is the Docker image run when no server binary is found.
const DefaultImage = "redis:7.4"

// ErrNoServer is wrapped by the error of StartServer when neither a server
// binary nor a Docker engine could be found.
var ErrNoServer = errors.New("respiretest: no Redis or Valkey server available")

// installHint says how to get a server, for the error of a failed search.
const installHint = `install one:
  Debian/Ubuntu: apt-get install redis-server   (or valkey-server)
  macOS:         brew install redis             (or valkey)
  or start a Docker engine (the image ` + DefaultImage + ` is run), or set ` + EnvServer + `=/path/to/redis-server`

// Options configure the server and the client. The zero value (or a nil
// *Options) finds a server as the package documentation says and connects
// with respire's defaults.
type Options struct {
	// Server is the path of the redis-server or valkey-server binary to
	// run. "" uses $RESPIRETEST_SERVER, then redis-server or valkey-server
	// on PATH, then Docker. A path that cannot be run is an error.
	Server string
	// Args are extra server arguments, as on its command line:
	// []string{"--maxmemory", "10mb"}.
	Args []string
	// Image is the Docker image (repository:tag) run when no binary is
	// found. Default DefaultImage.
	Image string
	// NoDocker never falls back on Docker.
	NoDocker bool
	// StartTimeout bounds the start of the server, until it answers PING.
	// Default 10s for a local binary, 2m for Docker (which may pull the
	// image first).
	StartTimeout time.Duration
	// SkipIfUnavailable makes Start skip the test, rather than fail it,
	// when no server can be found.
	SkipIfUnavailable bool
	// Client are the options of the client Start returns; its Addr (and,
	// for the server, nothing else) is set by Start.
	Client respire.Options
}

// Server is a throwaway server started by Start or StartServer.
type Server struct {
	// Addr is the server's address, "127.0.0.1:port".
	Addr string
	// Binary is the path of the server binary; "" when it runs in Docker.
	Binary string
	// Image is the Docker image it runs; "" for a local binary.
	Image string
	// Dir is the temporary directory of a local binary, which holds its
	// log (server.log); removed by Close. "" under Docker.
	Dir string

	stop func() error
	// proc is a local process, for the nodes of a Cluster or a Sentinel
	// deployment.
	proc *testserver.Process
}

// Start starts a server for the test and returns a client connected to
// it, and the server (for its address). The client is closed and the
// server stopped, its files removed, when the test ends (t.Cleanup). When
// no server can be found, or it does not start, the test fails with a
// message saying why (and how to install one), or is skipped with
// SkipIfUnavailable. opts may be nil.
func Start(t testing.TB, opts *Options) (*respire.Client, *Server) {
	t.Helper()
	opts = cmp.Or(opts, &Options{})
	srv := startFor(t, opts.SkipIfUnavailable, "the server", func() (*Server, error) {
		return StartServer(context.Background(), opts)
	}, nil)
	return srv.Connect(t, opts.Client), srv
}

// startFor starts a server or a deployment for t with start, and closes
// it when t ends, after logs writes the end of its logs to the test log
// if t failed (logs may be nil). An error fails t, or skips it with skip
// when no server was found.
func startFor[D interface{ Close() error }](t testing.TB, skip bool, what string, start func() (D, error), logs func(D)) D {
	t.Helper()
	d, err := start()
	if err != nil {
		if skip && errors.Is(err, ErrNoServer) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if logs != nil && t.Failed() {
			logs(d)
		}
		if err := d.Close(); err != nil {
			t.Errorf("respiretest: stopping %s: %v", what, err)
		}
	})
	return d
}

// Connect returns another client of the server, with the given options
// (their Addr is the server's), closed when the test ends.
func (s *Server) Connect(t testing.TB, opts respire.Options) *respire.Client {
	t.Helper()
	opts.Addr = s.Addr
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, opts)
	if err != nil {
		t.Fatalf("respiretest: connecting to the server at %s: %v", s.Addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// StartServer starts a server without a test: for TestMain, to share one
// server among the tests of a package (each under its own key prefix), or
// for programs. The caller must Close it. ctx bounds the start only. The
// error wraps ErrNoServer when no server binary or Docker engine was found.
func StartServer(ctx context.Context, opts *Options) (*Server, error) {
	opts = cmp.Or(opts, &Options{})
	bin, err := findBinary(opts.Server, "Options.Server")
	switch {
	case err != nil:
		return nil, err
	case bin != "":
		return startProcess(ctx, bin, opts)
	case opts.NoDocker:
		return nil, fmt.Errorf("%w: no redis-server or valkey-server on PATH, %s is not set, and Docker is turned off (Options.NoDocker); %s", ErrNoServer, EnvServer, installHint)
	}
	srv, derr := startDocker(ctx, opts)
	if errors.Is(derr, errNoEngine) {
		return nil, fmt.Errorf("%w: no redis-server or valkey-server on PATH, %s is not set, and %v; %s", ErrNoServer, EnvServer, derr, installHint)
	}
	return srv, derr
}

// Close stops the server and removes its files. It is safe to call more
// than once.
func (s *Server) Close() error {
	if s.stop == nil {
		return nil
	}
	stop := s.stop
	s.stop = nil
	return stop()
}

// findBinary returns the server binary to run: the explicit path, else
// $RESPIRETEST_SERVER, else redis-server or valkey-server on PATH; "" when
// there is none. A named binary that cannot be run is an error, which
// names the field it came from (from) or the environment variable.
func findBinary(path, from string) (string, error) {
	if path == "" {
		path, from = os.Getenv(EnvServer), EnvServer
	}
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("respiretest: %s names %q, which cannot be run: %w", from, path, err)
		}
		return p, nil
	}
	for _, name := range []string{"redis-server", "valkey-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", nil
}
