package integration

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

func TestTLS(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{TLS: true})
		c := connect(t, respire.Options{Addr: srv.Addr, TLSConfig: srv.TLSConfig})
		ctx := ctxT(t)
		require.NoError(t, c.Set(ctx, "tls", "secret", nil))
		v, err := c.Get(ctx, "tls")
		require.NoError(t, err)
		require.Equal(t, "secret", v)

		// The server name is verified: a config that trusts the CA but
		// expects another name fails the handshake.
		bad := srv.TLSConfig.Clone()
		bad.ServerName = "not-the-server"
		_, err = respire.Connect(ctx, respire.Options{Addr: srv.Addr, TLSConfig: bad})
		var he *respire.HandshakeError
		require.ErrorAs(t, err, &he)
		require.Equal(t, "TLS", he.Step)

		// A CA the client does not trust fails too.
		_, err = respire.Connect(ctx, respire.Options{Addr: srv.Addr, TLSConfig: &tls.Config{ServerName: "localhost"}})
		require.Error(t, err)
	})
}

func TestWrongPasswordIsAnAuthError(t *testing.T) {
	srv := harness.Start(t, harness.Config{Password: "right"})
	for _, proto := range []int{0, 2, 3} {
		// A refused password is permanent: Connect returns it at once
		// (milliseconds) instead of trying again until its context ends.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		_, err := respire.Connect(ctx, respire.Options{Addr: srv.Addr, Password: "wrong", Protocol: proto})
		cancel()
		var se *respire.Error
		require.ErrorAs(t, err, &se, "protocol %d: %v", proto, err)
		require.Equal(t, "WRONGPASS", se.Prefix)
		require.Less(t, time.Since(start), 10*time.Second)

		c := connect(t, respire.Options{Addr: srv.Addr, Password: "right", Protocol: proto})
		require.NoError(t, c.Set(ctxT(t), "auth", "ok", nil))
	}

	// With NewClient the error arrives with the first command, with or
	// without FailFast: it is a configuration mistake, not an outage.
	for _, failFast := range []bool{true, false} {
		c, err := respire.NewClient(respire.Options{Addr: srv.Addr, Password: "wrong", FailFast: failFast})
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Get(ctxT(t), "k")
		var se *respire.Error
		require.ErrorAs(t, err, &se)
		require.Equal(t, "WRONGPASS", se.Prefix)
		require.NotErrorIs(t, err, respire.ErrUnavailable)
		require.ErrorIs(t, err, respire.ErrNotSent)
	}
}

func TestACLUser(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{Users: []harness.User{
			{Name: "app", Password: "app-pw", Rules: "~app:* +@all"},
		}})
		for _, proto := range []int{2, 3} {
			c := connect(t, respire.Options{Addr: srv.Addr, Username: "app", Password: "app-pw", Protocol: proto, ClientName: "respire-test"})
			ctx := ctxT(t)
			require.NoError(t, c.Set(ctx, "app:k", "v", nil))
			err := c.Set(ctx, "other:k", "v", nil)
			var se *respire.Error
			require.ErrorAs(t, err, &se)
			require.Equal(t, "NOPERM", se.Prefix)
			r, err := c.Do(ctx, "CLIENT", "GETNAME")
			require.NoError(t, err)
			name, err := r.Text()
			require.NoError(t, err)
			require.Equal(t, "respire-test", name)
		}
	})
}

// TestFallbackToRESP2: a server without HELLO (renamed away, as on old
// servers and some proxies) gets RESP2, AUTH and CLIENT SETNAME instead.
func TestFallbackToRESP2(t *testing.T) {
	srv := harness.Start(t, harness.Config{Password: "pw", Args: []string{`rename-command HELLO ""`}})
	var proto int
	c := connect(t, respire.Options{Addr: srv.Addr, Password: "pw", ClientName: "old", DB: 2})
	_ = proto
	ctx := ctxT(t)
	require.NoError(t, c.Set(ctx, "fb", "1", nil))
	r, err := c.Do(ctx, "CLIENT", "INFO")
	require.NoError(t, err)
	info, err := r.Text()
	require.NoError(t, err)
	require.Contains(t, info, "resp=2")
	require.Contains(t, info, "name=old")
	require.Contains(t, info, "db=2")

	// Asking for RESP3 explicitly does not fall back.
	_, err = respire.Connect(ctx, respire.Options{Addr: srv.Addr, Password: "pw", Protocol: 3})
	var he *respire.HandshakeError
	require.ErrorAs(t, err, &he)
	require.Equal(t, "HELLO", he.Step)
}

func TestProtocolAndDB(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	for _, proto := range []int{2, 3} {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto, DB: 3})
		r, err := c.Do(ctxT(t), "CLIENT", "INFO")
		require.NoError(t, err)
		info, _ := r.Text()
		require.Contains(t, info, "db=3")
		require.Contains(t, info, "resp="+string(rune('0'+proto)))
	}
}

func TestUnixSocketAndURL(t *testing.T) {
	srv := harness.Start(t, harness.Config{Unix: true, Password: "pw"})
	opts, err := respire.ParseURL("unix://:pw@" + srv.UnixSocket + "?db=1&client_name=sock")
	require.NoError(t, err)
	c := connect(t, opts)
	ctx := ctxT(t)
	require.NoError(t, c.Set(ctx, "unix", "yes", nil))
	v, err := c.Get(ctx, "unix")
	require.NoError(t, err)
	require.Equal(t, "yes", v)

	opts, err = respire.ParseURL("redis://:pw@" + srv.Addr + "/1")
	require.NoError(t, err)
	c2 := connect(t, opts)
	v, err = c2.Get(ctx, "unix")
	require.NoError(t, err, "same database over TCP")
	require.Equal(t, "yes", v)
}

func TestNilAndServerErrors(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	for _, proto := range []int{2, 3} {
		c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
		ctx := ctxT(t)
		_, err := c.Get(ctx, "missing")
		require.ErrorIs(t, err, respire.Nil)
		_, err = c.Do(ctx, "GET", "missing")
		require.ErrorIs(t, err, respire.Nil)

		_, err = c.Do(ctx, "LPUSH", "list", "a")
		require.NoError(t, err)
		_, err = c.Get(ctx, "list")
		var se *respire.Error
		require.ErrorAs(t, err, &se)
		require.Equal(t, "WRONGTYPE", se.Prefix)
		require.False(t, errors.Is(err, respire.Nil))
		_, err = c.Del(ctx, "list")
		require.NoError(t, err)

		_, err = c.Del(ctx)
		var ae *respire.ArgError
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "DEL", ae.Command)
	}
}

func TestFailFastWhileDown(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr, FailFast: true, MinRetryBackoff: 5 * time.Millisecond})
	ctx := ctxT(t)
	require.NoError(t, c.Set(ctx, "ff", "1", nil))
	srv.Kill()
	// The next calls fail rather than wait.
	require.Eventually(t, func() bool {
		_, err := c.Get(ctx, "ff")
		return errors.Is(err, respire.ErrUnavailable)
	}, 10*time.Second, time.Millisecond)

	// Without fail-fast, a call waits for the reconnect, bounded by its ctx.
	c2, err := respire.NewClient(respire.Options{Addr: srv.Addr, MinRetryBackoff: 5 * time.Millisecond})
	require.NoError(t, err)
	defer c2.Close()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c2.Get(short, "ff")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, respire.ErrUnavailable)
	require.Less(t, time.Since(start), 5*time.Second, "the call outlived its 100ms context")

	srv.Restart(t)
	v, err := c2.Get(ctx, "ff")
	require.True(t, err == nil || errors.Is(err, respire.Nil), "after restart: %v", err)
	_ = v
}
