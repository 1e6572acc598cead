package ecosystem

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoRedisAdapterRefusesConnState: the adapter's commands run on
// Respire's shared connections, so what would change one (CLIENT SETNAME,
// NO-EVICT, NO-TOUCH, SETINFO) is refused there as by Respire's Do, with an
// *respire.ArgError naming the option to use, and no shared connection of
// the server changes. go-redis's Conn has a connection of its own, whose
// state is its own.
func TestGoRedisAdapterRefusesConnState(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	rdb, rc := adapter(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)

	conn := rdb.Conn()
	require.NoError(t, conn.ClientSetName(ctx, "mine").Err())
	list, err := rc.ClientList(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(list, "name=mine "), "the Conn's own connection only")
	require.NoError(t, conn.Close())

	err = rdb.Do(ctx, "client", "setname", "renamed").Err()
	var ae *respire.ArgError
	require.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, respire.ErrNotSent)
	assert.Contains(t, err.Error(), "Options.ClientName")
	for _, args := range [][]any{{"client", "no-evict", "on"}, {"CLIENT", "NO-TOUCH", "ON"}, {"client", "setinfo", "lib-name", "x"}} {
		err := rdb.Do(ctx, args...).Err()
		require.ErrorAs(t, err, &ae, "%v", args)
		assert.Contains(t, err.Error(), "Options.OnConnect", "%v", args)
	}
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "client", "setname", "renamed")
		return nil
	})
	require.ErrorAs(t, err, &ae)

	for {
		// The server sees the Conn's connection close in its own time.
		list, err = rc.ClientList(ctx, nil)
		require.NoError(t, err)
		if !strings.Contains(list, "name=mine") {
			break
		}
		require.NoError(t, ctx.Err(), "the Conn's connection closes with it")
	}
	assert.NotContains(t, list, "name=renamed")
	assert.NotRegexp(t, ` flags=[A-Za-z]*[eT]`, list, "no connection set NO-EVICT or NO-TOUCH")
}

// TestGoRedisAdapterHidesCredentials: commands the adapter sends render
// with their credentials as xxxxx in Respire's tracer, and the adapter's
// errors (the server quotes ACL SETUSER's rules) hide them too. go-redis's
// own Cmd.String is go-redis's rendering and shows the arguments as given.
func TestGoRedisAdapterHidesCredentials(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	var mu sync.Mutex
	var seen []string
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, s)
	}
	rdb, _ := adapter(t, respire.Options{Addr: srv.Addr, Tracer: &respire.Tracer{
		CommandStart: func(ctx context.Context, _ *respire.Client, d respire.TraceCommandStartData) context.Context {
			record(d.Args.String())
			return ctx
		},
	}})
	ctx := ctxT(t)

	require.NoError(t, rdb.ACLSetUser(ctx, "app", "on", ">S3CRET-add", "~*", "+@all").Err())
	err := rdb.ACLSetUser(ctx, "app", "<S3CRET-absent").Err()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "S3CRET")
	assert.Contains(t, err.Error(), "'<xxxxx'")
	require.NoError(t, rdb.ConfigSet(ctx, "masterauth", "S3CRET-masterauth").Err())
	require.NoError(t, rdb.Do(ctx, "migrate", "127.0.0.1", "1", "absent", 0, 100, "auth2", "app", "S3CRET-migrate").Err())

	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(seen, "\n")
	assert.NotContains(t, all, "S3CRET")
	for _, want := range []string{"acl setuser app on >xxxxx ~* +@all", "config set masterauth xxxxx", "auth2 app xxxxx"} {
		assert.Contains(t, strings.ToLower(all), want)
	}
}
