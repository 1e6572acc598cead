package scaleout

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Valkey's CLIENT CAPA redirect: a client whose Options.Addr is a replica
// runs its writes on the primary that the replica's -REDIRECT names, and
// its reads on the replica.

// startValkeyReplica starts a Valkey 8.1 replica of primary ("host port") and,
// when wait, waits until its link to the primary is up.
func startValkeyReplica(t *testing.T, ctx context.Context, primary string, wait bool) *harness.Server {
	t.Helper()
	r := harness.Start(t, harness.Config{Flavor: harness.Valkey81, Args: []string{"replicaof " + primary}})
	for wait {
		v, err := r.Do(ctx, "INFO", "replication")
		require.NoError(t, err)
		if strings.Contains(v.(string), "master_link_status:up") {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("replica %s never linked to %s", r.Addr, primary)
		case <-time.After(20 * time.Millisecond): // the link comes up after a full sync: nothing to await but a look
		}
	}
	return r
}

// replicaofArg is addr ("127.0.0.1:port") as replicaof takes it.
func replicaofArg(addr string) string { return strings.Replace(addr, ":", " ", 1) }

// redirCalls returns the calls and rejected calls of command on s (INFO
// commandstats).
func redirCalls(t *testing.T, ctx context.Context, s *harness.Server, command string) (n, rejected int64) {
	t.Helper()
	v, err := s.Do(ctx, "INFO", "commandstats")
	require.NoError(t, err)
	for line := range strings.SplitSeq(v.(string), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+command+":")
		if !ok {
			continue
		}
		for f := range strings.SplitSeq(rest, ",") {
			k, val, _ := strings.Cut(f, "=")
			switch k {
			case "calls":
				n, _ = strconv.ParseInt(val, 10, 64)
			case "rejected_calls":
				rejected, _ = strconv.ParseInt(val, 10, 64)
			}
		}
	}
	return n, rejected
}

// TestValkeyReplicaRedirect: writes sent to a replica run on its primary,
// their replies going to the caller; after the first, writes go to the
// primary at once; reads, blocking commands, batches, transactions and Do
// behave likewise.
func TestValkeyReplicaRedirect(t *testing.T) {
	ctx := ctxT(t)
	p := harness.Start(t, harness.Config{Flavor: harness.Valkey81, Args: []string{"repl-diskless-sync-delay 0"}})
	r := startValkeyReplica(t, ctx, replicaofArg(p.Addr), true)
	c := connect(t, respire.Options{Addr: r.Addr})
	direct := connect(t, respire.Options{Addr: p.Addr})

	info, err := c.Do(ctx, "CLIENT", "INFO")
	require.NoError(t, err)
	s, _ := info.Text()
	assert.Contains(t, s, "capa=r", "the handshake declares CLIENT CAPA redirect")

	const writes = 10
	for i := range writes {
		n, err := c.Incr(ctx, "redir:n")
		require.NoError(t, err)
		assert.Equal(t, int64(i+1), n, "the primary's reply goes to the caller")
	}
	got, err := direct.Get(ctx, "redir:n")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(writes), got, "the writes landed on the primary")
	pIncr, _ := redirCalls(t, ctx, p, "incr")
	_, rIncrRejected := redirCalls(t, ctx, r, "incr")
	assert.Equal(t, int64(writes), pIncr)
	assert.Equal(t, int64(1), rIncrRejected, "only the first write went to the replica; the next ones went to the primary at once")

	// Reads stay on the replica (it may lag the primary for a moment).
	pGet0, _ := redirCalls(t, ctx, p, "get")
	rGet0, _ := redirCalls(t, ctx, r, "get")
	for {
		got, err = c.Get(ctx, "redir:n")
		if !errors.Is(err, respire.Nil) {
			require.NoError(t, err)
		}
		if got == strconv.Itoa(writes) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the replica never caught up")
		case <-time.After(5 * time.Millisecond):
		}
	}
	pGet1, _ := redirCalls(t, ctx, p, "get")
	rGet1, _ := redirCalls(t, ctx, r, "get")
	assert.Equal(t, pGet0, pGet1, "no read on the primary")
	assert.Greater(t, rGet1, rGet0, "reads are served by the replica")

	// Do, a blocking command, a batch and a transaction.
	_, err = c.Do(ctx, "SET", "redir:do", "x")
	require.NoError(t, err)
	_, err = c.LPush(ctx, "redir:list", "a")
	require.NoError(t, err)
	ke, err := c.BLPop(ctx, time.Second, "redir:list")
	require.NoError(t, err)
	assert.Equal(t, "a", ke.Element)
	b := c.NewBatch()
	f1 := b.Incr("redir:b")
	f2 := b.Incr("redir:b")
	require.NoError(t, b.Exec(ctx))
	v1, err1 := f1.Result()
	v2, err2 := f2.Result()
	require.NoError(t, errors.Join(err1, err2))
	assert.Equal(t, []int64{1, 2}, []int64{v1, v2})
	tx := c.NewTx()
	t1 := tx.Incr("redir:tx")
	require.NoError(t, tx.Exec(ctx))
	tv, err := t1.Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), tv)
	for _, k := range []string{"redir:do", "redir:b", "redir:tx"} {
		n, err := direct.Exists(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, int64(1), n, k)
	}
}

// TestValkeyReplicaRedirectBatchFirst: a batch of writes that is the
// client's first goes to the replica, which redirects each; they run on
// the primary, in order.
func TestValkeyReplicaRedirectBatchFirst(t *testing.T) {
	ctx := ctxT(t)
	p := harness.Start(t, harness.Config{Flavor: harness.Valkey81})
	r := startValkeyReplica(t, ctx, replicaofArg(p.Addr), false)
	c := connect(t, respire.Options{Addr: r.Addr})
	b := c.NewBatch()
	var fs []*respire.Future[int64]
	for range 5 {
		fs = append(fs, b.Incr("redir:first"))
	}
	require.NoError(t, b.Exec(ctx))
	for i, f := range fs {
		v, err := f.Result()
		require.NoError(t, err)
		assert.Equal(t, int64(i+1), v)
	}
	_, rejected := redirCalls(t, ctx, r, "incr")
	assert.Equal(t, int64(5), rejected)
}

// TestValkeyReplicaRedirectChain: a replica of a replica redirects to its
// own primary, itself a replica, which redirects again: the client follows
// both.
func TestValkeyReplicaRedirectChain(t *testing.T) {
	ctx := ctxT(t)
	p := harness.Start(t, harness.Config{Flavor: harness.Valkey91})
	r1 := startValkeyReplica(t, ctx, replicaofArg(p.Addr), false)
	r2 := startValkeyReplica(t, ctx, replicaofArg(r1.Addr), false)
	c := connect(t, respire.Options{Addr: r2.Addr})
	require.NoError(t, c.Set(ctx, "redir:chain", "v", nil))
	n, _ := redirCalls(t, ctx, p, "set")
	assert.Equal(t, int64(1), n)
}

// TestValkeyReplicaRedirectUnreachable: a replica whose primary cannot be
// reached: the write fails at once with an error that names the redirect,
// was never sent, and leaves reads working.
func TestValkeyReplicaRedirectUnreachable(t *testing.T) {
	ctx := ctxT(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gone := l.Addr().String()
	require.NoError(t, l.Close())
	r := startValkeyReplica(t, ctx, replicaofArg(gone), false)
	c := connect(t, respire.Options{Addr: r.Addr})

	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	err = c.Set(wctx, "redir:lost", "v", nil)
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second, "no waiting for the context: %v", err)
	var re *respire.RedirectError
	require.ErrorAs(t, err, &re, err.Error())
	assert.Equal(t, r.Addr, re.From)
	assert.Equal(t, gone, re.To)
	assert.ErrorIs(t, err, respire.ErrNotSent)
	assert.Contains(t, err.Error(), "REDIRECT from "+r.Addr+" to "+gone)
	assert.True(t, strings.HasPrefix(err.Error(), "respire: SET: "), err.Error())

	_, err = c.Get(ctx, "redir:lost")
	assert.ErrorIs(t, err, respire.Nil, "reads still go to the replica")
}

// TestValkeyReplicaNoFollowRedirect: with NoFollowRedirect a write to a Valkey
// replica fails with READONLY; a Redis server never sees CLIENT CAPA (its
// handshake and commands work as before).
func TestValkeyReplicaNoFollowRedirect(t *testing.T) {
	ctx := ctxT(t)
	p := harness.Start(t, harness.Config{Flavor: harness.Valkey81})
	r := startValkeyReplica(t, ctx, replicaofArg(p.Addr), false)
	c := connect(t, respire.Options{Addr: r.Addr, NoFollowRedirect: true})
	err := c.Set(ctx, "redir:no", "v", nil)
	var se *respire.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "READONLY", se.Prefix)

	rs := harness.Start(t, harness.Config{Flavor: harness.Redis70})
	rc := connect(t, respire.Options{Addr: rs.Addr, NoClientInfo: true}) // Redis 7.0 refuses CLIENT SETINFO
	require.NoError(t, rc.Set(ctx, "redir:redis", "v", nil))
	v, err := rs.Do(ctx, "INFO", "errorstats")
	require.NoError(t, err)
	assert.NotContains(t, v.(string), "errorstat_", "the handshake sent Redis nothing it refuses (CLIENT CAPA, READONLY)")
}
