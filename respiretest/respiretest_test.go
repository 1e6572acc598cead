package respiretest

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// binaries are the servers the repository's Makefile installs.
var binaries = []string{"redis-7.0-server", "redis-8.0-server", "valkey-8.1-server"}

// serverBin returns the path of one of the repository's servers, under
// $RESPIRE_SERVERS_DIR/bin when that is set (as for make servers), else
// under the repository's .servers/bin.
func serverBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("RESPIRE_SERVERS_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".servers")
	}
	p, err := filepath.Abs(filepath.Join(dir, "bin", name))
	require.NoError(t, err)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run make servers at the repository root (%v)", p, err)
	}
	return p
}

// noServer leaves the test nothing to find: a PATH with only the tools
// the repository's server wrappers use (dirname), no RESPIRETEST_SERVER,
// and a Docker endpoint where nothing listens. It returns the PATH.
func noServer(t *testing.T) string {
	tools := t.TempDir()
	dirname, err := exec.LookPath("dirname")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(dirname, filepath.Join(tools, "dirname")))
	t.Setenv("PATH", tools)
	t.Setenv(EnvServer, "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	t.Setenv("DOCKER_HOST", "tcp://"+addr)
	return tools
}

// assertGone checks that srv's process and directory are gone.
func assertGone(t *testing.T, srv *Server) {
	t.Helper()
	_, err := net.DialTimeout("tcp", srv.Addr, time.Second)
	assert.Error(t, err, "the server at %s still listens", srv.Addr)
	_, err = os.Stat(srv.Dir)
	assert.True(t, os.IsNotExist(err), "%s is still there: %v", srv.Dir, err)
}

// TestStartExplicitPath: each server, named by Options.Server, answers a
// client of either protocol; when the test ends the process is killed and
// its directory removed.
func TestStartExplicitPath(t *testing.T) {
	for _, name := range binaries {
		for _, proto := range []int{2, 3} {
			var srv *Server
			t.Run(name+"/resp"+strconv.Itoa(proto), func(t *testing.T) {
				bin := serverBin(t, name)
				var c *respire.Client
				c, srv = Start(t, &Options{Server: bin, Client: respire.Options{Protocol: proto}})
				assert.Equal(t, bin, srv.Binary)
				assert.Empty(t, srv.Image)
				ctx := context.Background()
				require.NoError(t, c.Set(ctx, "k", "v", nil))
				v, err := c.Get(ctx, "k")
				require.NoError(t, err)
				assert.Equal(t, "v", v)
				info, err := c.Do(ctx, "CLIENT", "INFO")
				require.NoError(t, err)
				assert.Regexp(t, `\bresp=`+strconv.Itoa(proto)+`\b`, info.String())
				assert.FileExists(t, filepath.Join(srv.Dir, "server.log"))

				// Another client of the same server.
				c2 := srv.Connect(t, respire.Options{})
				v, err = c2.Get(ctx, "k")
				require.NoError(t, err)
				assert.Equal(t, "v", v)
			})
			require.NotNil(t, srv)
			assertGone(t, srv)
		}
	}
}

// TestStartFromEnvAndPath: without Options.Server the binary comes from
// RESPIRETEST_SERVER, else from redis-server or valkey-server on PATH.
func TestStartFromEnvAndPath(t *testing.T) {
	t.Run("env", func(t *testing.T) {
		noServer(t)
		bin := serverBin(t, "redis-8.0-server")
		t.Setenv(EnvServer, bin)
		c, srv := Start(t, nil)
		assert.Equal(t, bin, srv.Binary)
		_, err := c.Ping(context.Background())
		require.NoError(t, err)
	})
	for _, tc := range []struct{ name, bin string }{
		{"redis-server", "redis-7.0-server"},
		{"valkey-server", "valkey-8.1-server"},
	} {
		t.Run("path/"+tc.name, func(t *testing.T) {
			tools := noServer(t)
			dir := t.TempDir()
			link := filepath.Join(dir, tc.name)
			script := "#!/bin/sh\nexec " + serverBin(t, tc.bin) + ` "$@"` + "\n"
			require.NoError(t, os.WriteFile(link, []byte(script), 0o755))
			t.Setenv("PATH", dir+string(os.PathListSeparator)+tools)
			c, srv := Start(t, nil)
			assert.Equal(t, link, srv.Binary)
			_, err := c.Ping(context.Background())
			require.NoError(t, err)
		})
	}
}

// TestStartArgs: extra server arguments reach the server; a bad one is an
// error that carries the server's own complaint.
func TestStartArgs(t *testing.T) {
	bin := serverBin(t, "redis-8.0-server")
	c, _ := Start(t, &Options{Server: bin, Args: []string{"--maxmemory", "10mb"}})
	r, err := c.Do(context.Background(), "CONFIG", "GET", "maxmemory")
	require.NoError(t, err)
	m, err := r.Map()
	require.NoError(t, err)
	assert.Equal(t, "10485760", m["maxmemory"].String())

	_, err = StartServer(context.Background(), &Options{Server: bin, Args: []string{"--no-such-directive", "1"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not start")
	assert.Contains(t, err.Error(), "no-such-directive", "the server's log is in the error")
}

// TestNoServer: with nothing to run, the error says what was looked for
// and how to install a server; an explicit path that cannot run is its
// own error, never a fallback.
func TestNoServer(t *testing.T) {
	noServer(t)
	ctx := context.Background()

	_, err := StartServer(ctx, nil)
	require.ErrorIs(t, err, ErrNoServer)
	assert.Contains(t, err.Error(), "redis-server or valkey-server on PATH")
	assert.Contains(t, err.Error(), "no Docker engine answered at tcp://")
	assert.Contains(t, err.Error(), "apt-get install redis-server")
	assert.Contains(t, err.Error(), EnvServer)

	t.Setenv("DOCKER_HOST", "")
	if _, serr := os.Stat("/var/run/docker.sock"); serr != nil {
		_, err = StartServer(ctx, nil)
		require.ErrorIs(t, err, ErrNoServer)
		assert.Contains(t, err.Error(), "/var/run/docker.sock does not exist")
	}

	_, err = StartServer(ctx, &Options{NoDocker: true})
	require.ErrorIs(t, err, ErrNoServer)
	assert.Contains(t, err.Error(), "Options.NoDocker")

	_, err = StartServer(ctx, &Options{Server: "/no/such/redis-server"})
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrNoServer))
	assert.Contains(t, err.Error(), `Options.Server names "/no/such/redis-server", which cannot be run`)

	t.Setenv(EnvServer, "/no/such/valkey-server")
	_, err = StartServer(ctx, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), EnvServer+` names "/no/such/valkey-server"`)
}

// TestSkipIfUnavailable: with SkipIfUnavailable, a test with no server to
// run is skipped, not failed.
func TestSkipIfUnavailable(t *testing.T) {
	noServer(t)
	reached := false
	var skipped bool
	ok := t.Run("inner", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		Start(t, &Options{SkipIfUnavailable: true})
		reached = true
	})
	assert.True(t, ok)
	assert.True(t, skipped)
	assert.False(t, reached)
}

// TestStartServerShared: StartServer, for TestMain, gives a server that
// lives until Close, which may be called twice.
func TestStartServerShared(t *testing.T) {
	srv, err := StartServer(context.Background(), &Options{Server: serverBin(t, "valkey-8.1-server")})
	require.NoError(t, err)
	c := srv.Connect(t, respire.Options{})
	_, err = c.Ping(context.Background())
	require.NoError(t, err)
	c.Close()
	require.NoError(t, srv.Close())
	require.NoError(t, srv.Close())
	assertGone(t, srv)
}

func TestSplitImage(t *testing.T) {
	for image, want := range map[string][2]string{
		"redis:7.4":                 {"redis", "7.4"},
		"valkey/valkey:8.1":         {"valkey/valkey", "8.1"},
		"redis":                     {"redis", "latest"},
		"registry:5000/redis":       {"registry:5000/redis", "latest"},
		"registry:5000/redis:7.4.1": {"registry:5000/redis", "7.4.1"},
	} {
		repo, tag := splitImage(image)
		assert.Equal(t, want, [2]string{repo, tag}, image)
	}
}

// TestMiniredisWorks: the in-process fake that the package documentation
// mentions for unit tests serves Respire's everyday commands on both
// protocols; client-side caching (CLIENT TRACKING) is refused at Connect.
func TestMiniredisWorks(t *testing.T) {
	m := miniredis.RunT(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c, err := respire.Connect(ctx, respire.Options{Addr: m.Addr(), Protocol: proto})
		require.NoError(t, err)
		require.NoError(t, c.Set(ctx, "k", "v", nil))
		v, err := c.Get(ctx, "k")
		require.NoError(t, err)
		assert.Equal(t, "v", v)
		_, err = c.HSet(ctx, "h", respire.FieldValue{Field: "f", Value: "v"})
		require.NoError(t, err)
		h, err := c.HGetAll(ctx, "h")
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"f": "v"}, h)
		r, err := respire.NewScript(`return ARGV[1]`).Run(ctx, c, nil, 7)
		require.NoError(t, err)
		assert.Equal(t, "7", r.Any())
		keys := 0
		for _, err := range c.ScanAll(ctx, nil) {
			require.NoError(t, err)
			keys++
		}
		assert.Equal(t, 2, keys)
		c.Close()
	}
	_, err := respire.Connect(ctx, respire.Options{Addr: m.Addr(), ClientCache: &respire.CacheOptions{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "CLIENT TRACKING")
}
