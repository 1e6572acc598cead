package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respiretest/testserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// ctx returns a context bounded for one harness round trip.
func ctx(t *testing.T) context.Context { return bounded(t, 5*time.Second) }

// clusterCtx returns a context bounded for one cluster operation.
func clusterCtx(t *testing.T) context.Context { return bounded(t, 30*time.Second) }

// bounded returns a context that ends after d or with the test.
func bounded(t *testing.T, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return c
}

func TestStartEachFlavor(t *testing.T) {
	t.Parallel()
	ForEachFlavor(t, func(t *testing.T, f Flavor) {
		t.Parallel()
		s := Start(t, Config{Flavor: f})
		assert.Equal(t, f, s.Flavor)
		assert.True(t, strings.HasPrefix(s.Version, f.versionPrefix()),
			"version %q of %s", s.Version, f)
		assert.True(t, strings.HasPrefix(s.Addr, "127.0.0.1:"), s.Addr)
		reply, err := s.Do(ctx(t), "PING")
		require.NoError(t, err)
		assert.Equal(t, "PONG", reply)
		if f == Valkey81 {
			info, err := s.Do(ctx(t), "INFO", "server")
			require.NoError(t, err)
			assert.Contains(t, info, "server_name:valkey")
		}
	})
}

func TestDefaultFlavor(t *testing.T) {
	t.Parallel()
	if os.Getenv("REDIS_ADDR") != "" {
		t.Skip("REDIS_ADDR decides the flavor of a zero Config")
	}
	s := Start(t, Config{})
	assert.Equal(t, DefaultFlavor, s.Flavor)
}

func TestTLS(t *testing.T) {
	t.Parallel()
	ForEachFlavor(t, func(t *testing.T, f Flavor) {
		t.Parallel()
		s := Start(t, Config{Flavor: f, TLS: true})
		require.NotNil(t, s.TLSConfig)
		assert.FileExists(t, s.CAFile)

		c, err := tls.Dial("tcp", s.Addr, s.TLSConfig)
		require.NoError(t, err)
		require.NoError(t, c.Handshake())
		assert.True(t, c.ConnectionState().HandshakeComplete)
		c.Close()

		reply, err := s.Do(ctx(t), "PING")
		require.NoError(t, err)
		assert.Equal(t, "PONG", reply)

		// The certificate is also valid for 127.0.0.1 by IP.
		byIP := s.TLSConfig.Clone()
		byIP.ServerName = "127.0.0.1"
		c, err = tls.Dial("tcp", s.Addr, byIP)
		require.NoError(t, err)
		c.Close()

		// A client that does not trust the test CA is refused.
		_, err = tls.Dial("tcp", s.Addr, &tls.Config{ServerName: "localhost"})
		var unknown x509.UnknownAuthorityError
		assert.True(t, errors.As(err, &unknown), "got %v", err)
	})
}

func TestPassword(t *testing.T) {
	t.Parallel()
	s := Start(t, Config{Flavor: Redis80, Password: "s3cret"})
	reply, err := s.Do(ctx(t), "PING")
	require.NoError(t, err)
	assert.Equal(t, "PONG", reply)

	c, err := testserver.Dial(ctx(t), "tcp", s.Addr, nil)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Do("GET", "k")
	var se ServerError
	require.ErrorAs(t, err, &se)
	assert.True(t, strings.HasPrefix(string(se), "NOAUTH"), string(se))
}

func TestACLUsers(t *testing.T) {
	t.Parallel()
	ForEachFlavor(t, func(t *testing.T, f Flavor) {
		t.Parallel()
		s := Start(t, Config{Flavor: f, Users: []User{
			{Name: "alice", Password: "wonder land", Rules: "~* &* +@all"},
			{Name: "reader", Password: "r", Rules: "~* +@read"},
		}})
		c, err := testserver.Dial(ctx(t), "tcp", s.Addr, nil)
		require.NoError(t, err)
		defer c.Close()

		_, err = c.Do("AUTH", "alice", "wrong")
		var se ServerError
		require.ErrorAs(t, err, &se)
		assert.True(t, strings.HasPrefix(string(se), "WRONGPASS"), string(se))

		reply, err := c.Do("AUTH", "alice", "wonder land")
		require.NoError(t, err)
		assert.Equal(t, "OK", reply)
		reply, err = c.Do("ACL", "WHOAMI")
		require.NoError(t, err)
		assert.Equal(t, "alice", reply)
		_, err = c.Do("SET", "k", "v")
		require.NoError(t, err)

		_, err = c.Do("AUTH", "reader", "r")
		require.NoError(t, err)
		reply, err = c.Do("GET", "k")
		require.NoError(t, err)
		assert.Equal(t, "v", reply)
		_, err = c.Do("SET", "k", "w")
		require.ErrorAs(t, err, &se)
		assert.True(t, strings.HasPrefix(string(se), "NOPERM"), string(se))
	})
}

func TestUnixSocket(t *testing.T) {
	t.Parallel()
	s := Start(t, Config{Flavor: Valkey81, Unix: true})
	require.NotEmpty(t, s.UnixSocket)
	c, err := testserver.Dial(ctx(t), "unix", s.UnixSocket, nil)
	require.NoError(t, err)
	defer c.Close()
	reply, err := c.Do("PING")
	require.NoError(t, err)
	assert.Equal(t, "PONG", reply)
}

func TestArgs(t *testing.T) {
	t.Parallel()
	s := Start(t, Config{Flavor: Redis70, Args: []string{"maxmemory 10mb", "maxmemory-policy allkeys-lru"}})
	for name, want := range map[string]string{"maxmemory": "10485760", "maxmemory-policy": "allkeys-lru"} {
		reply, err := s.Do(ctx(t), "CONFIG", "GET", name)
		require.NoError(t, err)
		assert.Equal(t, []any{name, want}, reply)
	}
}

func TestKillRestart(t *testing.T) {
	t.Parallel()
	ForEachFlavor(t, func(t *testing.T, f Flavor) {
		t.Parallel()
		s := Start(t, Config{Flavor: f, TLS: f == Redis80, Password: "pw"})
		addr := s.Addr
		_, err := s.Do(ctx(t), "SET", "k", "v")
		require.NoError(t, err)

		s.Kill()
		_, err = s.Do(ctx(t), "PING")
		require.Error(t, err, "the server answered after Kill")

		s.Restart(t)
		assert.Equal(t, addr, s.Addr)
		reply, err := s.Do(ctx(t), "GET", "k")
		require.NoError(t, err)
		assert.Nil(t, reply, "nothing is persisted across a restart")

		s.Stop()
		_, err = s.Do(ctx(t), "PING")
		require.Error(t, err, "the server answered after Stop")
		s.Restart(t)
		reply, err = s.Do(ctx(t), "PING")
		require.NoError(t, err)
		assert.Equal(t, "PONG", reply)
	})
}

func TestServerLogInDir(t *testing.T) {
	t.Parallel()
	s := Start(t, Config{Flavor: Redis80})
	assert.Equal(t, s.Dir, filepath.Dir(s.LogPath))
	data, err := os.ReadFile(s.LogPath)
	require.NoError(t, err)
	assert.Contains(t, string(data), "Ready to accept connections")
}

func TestExternalServer(t *testing.T) {
	if os.Getenv("REDIS_ADDR") != "" {
		t.Skip("REDIS_ADDR is already set")
	}
	real := Start(t, Config{Flavor: Redis80})
	t.Setenv("REDIS_ADDR", real.Addr)

	s := Start(t, Config{})
	assert.True(t, s.External)
	assert.Equal(t, real.Addr, s.Addr)
	assert.Equal(t, Redis80, s.Flavor)
	assert.Equal(t, real.Version, s.Version)

	s = Start(t, Config{Flavor: Redis80})
	assert.True(t, s.External)

	for _, cfg := range []Config{
		{Flavor: Redis70},
		{Flavor: Redis80, Password: "pw"},
		{Flavor: Redis80, Args: []string{"maxmemory 1mb"}},
	} {
		s := Start(t, cfg)
		assert.False(t, s.External, "%+v", cfg)
		assert.NotEqual(t, real.Addr, s.Addr)
	}
}

func TestBinaryOverride(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "redis-server")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	t.Setenv(Valkey81.envVar(), notExec)
	_, err := Binary(Valkey81)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "RESPIRE_SERVER_VALKEY_8_1")
}

func TestFlavorNames(t *testing.T) {
	assert.Equal(t, "RESPIRE_SERVER_REDIS_7_0", Redis70.envVar())
	assert.Equal(t, "8.1.", Valkey81.versionPrefix())
	assert.Equal(t, Flavor("valkey-8.1"), flavorOf("valkey", "8.1.1"))
	assert.Equal(t, Flavor("redis-7.2"), flavorOf("redis", "7.2.4"))
	assert.NotEmpty(t, repoRoot(), "the repository root was not found")
}
