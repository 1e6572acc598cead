package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// renderings collects everything the client renders about commands:
// what a tracer and an interceptor record, log lines, error texts.
type renderings struct {
	mu   sync.Mutex
	seen []string
	logs logBuffer
}

func (r *renderings) add(s ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, s...)
}

func (r *renderings) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.seen, "\n") + "\n" + r.logs.String()
}

// options are Options whose tracer, interceptor and logger record into r.
func (r *renderings) options(addr string) respire.Options {
	return respire.Options{
		Addr:   addr,
		Logger: r.logs.logger(),
		Tracer: &respire.Tracer{
			CommandStart: func(ctx context.Context, _ *respire.Client, d respire.TraceCommandStartData) context.Context {
				r.add(d.Args.String(), strings.Join(d.Args.Redacted(), " "), fmt.Sprintf("%v %+v %#v", d.Args, d.Args, d.Args))
				return ctx
			},
			CommandEnd: func(_ context.Context, _ *respire.Client, d respire.TraceCommandEndData) {
				if d.Err != nil {
					r.add(d.Err.Error())
				}
			},
			BatchEnd: func(_ context.Context, _ *respire.Client, d respire.TraceBatchEndData) {
				if d.Err != nil {
					r.add(d.Err.Error())
				}
			},
		},
		Interceptors: []respire.Interceptor{{
			Command: func(ctx context.Context, cmd respire.Command, next respire.CommandFunc) error {
				r.add(cmd.Args().String())
				err := next(ctx, cmd)
				if err != nil {
					r.add(err.Error())
				}
				return err
			},
			Batch: func(ctx context.Context, b respire.BatchCall, next respire.BatchFunc) error {
				for i := 0; i < b.Len(); i++ {
					r.add(b.Command(i).Args().String())
				}
				return next(ctx, b)
			},
		}},
	}
}

// TestCredentialsNeverRendered runs every credential-bearing command form
// against a real server through every path that renders commands: the
// Tracer's and the Interceptors' views of Do, typed methods, a Batch and a
// Tx; the errors (the server quotes ACL SETUSER's rules in its own); the
// log; WithConn's Conn.Do for the forms a shared connection refuses (AUTH,
// HELLO). Every secret holds "S3CRET" (the hash is a hex digest): none may
// show anywhere, and the redacted forms must.
func TestCredentialsNeverRendered(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	var r renderings
	c := connect(t, r.options(srv.Addr))
	ctx := ctxT(t)
	host, port, err := net.SplitHostPort(srv.Addr)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte("S3CRET-hashed"))
	hash := hex.EncodeToString(sum[:])

	errText := func(err error) {
		if err != nil {
			r.add(err.Error())
		}
	}
	do := func(want string, args ...any) {
		t.Helper()
		_, err := c.Do(ctx, args...)
		errText(err)
		if want == "" {
			require.NoError(t, err, "%v", args[:2])
		} else {
			require.Error(t, err, "%v", args[:2])
			require.Contains(t, err.Error(), want)
		}
	}

	// Raw commands.
	do("", "ACL", "SETUSER", "app", "on", ">S3CRET-add", "#"+hash, "~*", "+@all")
	do("", "acl", "setuser", "app", "!"+hash)
	do("does not exist", "ACL", "SETUSER", "app", "<S3CRET-absent")
	do("Syntax error", "ACL", "SETUSER", "app", "on >S3CRET-one-arg ~*")
	do("", "CONFIG", "SET", "masterauth", "S3CRET-masterauth", "maxmemory-samples", "5")
	do("", "config", "set", "requirepass", "S3CRET-requirepass")
	do("", "CONFIG", "SET", "requirepass", "") // new connections need no password again
	_, err = c.Do(ctx, "CONFIG", "SET", "tls-key-file-pass", "S3CRET-keypass")
	errText(err)                                                                      // accepted or not, depending on the server's TLS set-up
	do("", "MIGRATE", host, port, "absent", 0, 100, "COPY", "AUTH", "S3CRET-migrate") // NOKEY
	do("", "MIGRATE", host, port, "", 0, 100, "AUTH2", "app", "S3CRET-migrate2", "KEYS", "absent")
	for _, args := range [][]any{{"AUTH", "app", "S3CRET-auth"}, {"HELLO", 3, "AUTH", "app", "S3CRET-hello"}} {
		_, err := c.Do(ctx, args...)
		var ae *respire.ArgError
		require.ErrorAs(t, err, &ae, "refused on a shared connection")
		errText(err)
	}

	// Typed methods.
	errText(c.ACLSetUser(ctx, "app", "<S3CRET-typed-absent"))
	require.NoError(t, c.ConfigSet(ctx, respire.ConfigParam{Parameter: "masterauth", Value: "S3CRET-typed"}))
	nokey, err := c.Migrate(ctx, host, mustPort(t, port), "absent", 0, 0, &respire.MigrateOptions{
		Auth2: &respire.MigrateAuth{Username: "app", Password: "S3CRET-typed-migrate"}})
	require.NoError(t, err)
	assert.Equal(t, "NOKEY", nokey)

	// A Batch and a Tx.
	b := c.NewBatch()
	fb := b.Do("ACL", "SETUSER", "app", "<S3CRET-batch-absent")
	b.ConfigSet(respire.ConfigParam{Parameter: "masterauth", Value: "S3CRET-batch"})
	require.NoError(t, b.Exec(ctx))
	_, err = fb.Result()
	require.Error(t, err)
	errText(err)
	tx := c.NewTx()
	ft := tx.Do("ACL", "SETUSER", "app", "<S3CRET-tx-absent")
	tx.Do("CONFIG", "SET", "masterauth", "S3CRET-tx")
	errText(tx.Exec(ctx))
	_, err = ft.Result()
	require.Error(t, err)
	errText(err)

	// AUTH and HELLO where they are allowed: a connection of one's own.
	err = c.WithConn(ctx, func(conn *respire.Conn) error {
		_, err := conn.Do(ctx, "AUTH", "app", "S3CRET-wrong")
		require.Error(t, err)
		errText(err)
		_, err = conn.Do(ctx, "HELLO", 3, "AUTH", "app", "S3CRET-wrong2")
		require.Error(t, err)
		errText(err)
		_, err = conn.Do(ctx, "ACL", "SETUSER", "app", "<S3CRET-conn-absent")
		require.Error(t, err)
		errText(err)
		return nil
	})
	require.NoError(t, err)

	all := r.text()
	for _, line := range strings.Split(all, "\n") {
		if strings.Contains(line, "S3CRET") || strings.Contains(line, hash) {
			t.Errorf("a credential is rendered: %s", line)
		}
	}
	for _, want := range []string{
		"ACL SETUSER app on >xxxxx #xxxxx ~* +@all", "acl setuser app !xxxxx", "modifier '<xxxxx'",
		"CONFIG SET masterauth xxxxx maxmemory-samples 5", "config set requirepass xxxxx",
		"COPY AUTH xxxxx", "AUTH2 app xxxxx KEYS absent", "respire.CommandArgs(", "respire: connected",
	} {
		assert.True(t, strings.Contains(all, want), "nothing rendered as %q", want)
	}
	// The server got the real words: app authenticates with its password.
	err = c.WithConn(ctx, func(conn *respire.Conn) error {
		_, err := conn.Do(ctx, "AUTH", "app", "S3CRET-add")
		return err
	})
	require.NoError(t, err)
}

func mustPort(t *testing.T, s string) int64 {
	t.Helper()
	var p int64
	_, err := fmt.Sscan(s, &p)
	require.NoError(t, err)
	return p
}
