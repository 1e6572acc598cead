package integration

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a tracer implementing every tracer interface; it records
// what it is told and checks that each End gets its Start's context.
type recorder struct {
	mu       sync.Mutex
	events   []traceEvent
	notify   chan struct{}
	badCtx   int
	inflight map[string]int
}

type traceEvent struct {
	kind string // "command", "batch", "connect", "reconnect", "gap", "invalidate"
	name string
	args []string
	n    int
	tx   bool
	err  error
	hs   bool
	gap  respire.TracePubSubGapData
	key  string
}

type spanKey struct{}

func newRecorder() *recorder {
	return &recorder{notify: make(chan struct{}, 1), inflight: map[string]int{}}
}

func (r *recorder) add(e traceEvent) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *recorder) start(ctx context.Context, kind string) context.Context {
	return context.WithValue(ctx, spanKey{}, kind)
}

func (r *recorder) end(ctx context.Context, kind string) {
	if ctx.Value(spanKey{}) != kind {
		r.mu.Lock()
		r.badCtx++
		r.mu.Unlock()
	}
}

func (r *recorder) TraceCommandStart(ctx context.Context, _ *respire.Client, d respire.TraceCommandStartData) context.Context {
	r.mu.Lock()
	r.inflight[d.Name]++
	r.mu.Unlock()
	return r.start(context.WithValue(ctx, cmdKey{}, traceEvent{kind: "command", name: d.Name, args: d.Args.Strings()}), "command")
}

type cmdKey struct{}

func (r *recorder) TraceCommandEnd(ctx context.Context, _ *respire.Client, d respire.TraceCommandEndData) {
	r.end(ctx, "command")
	e, _ := ctx.Value(cmdKey{}).(traceEvent)
	e.err = d.Err
	r.mu.Lock()
	r.inflight[e.name]--
	r.mu.Unlock()
	r.add(e)
}

type batchKey struct{}

func (r *recorder) TraceBatchStart(ctx context.Context, _ *respire.Client, d respire.TraceBatchStartData) context.Context {
	return r.start(context.WithValue(ctx, batchKey{}, d), "batch")
}

func (r *recorder) TraceBatchEnd(ctx context.Context, _ *respire.Client, d respire.TraceBatchEndData) {
	r.end(ctx, "batch")
	s, _ := ctx.Value(batchKey{}).(respire.TraceBatchStartData)
	r.add(traceEvent{kind: "batch", n: s.Len, tx: s.Tx, err: d.Err})
}

func (r *recorder) TraceConnectStart(ctx context.Context, _ *respire.Client, _ respire.TraceConnectStartData) context.Context {
	return r.start(ctx, "connect")
}

func (r *recorder) TraceConnectEnd(ctx context.Context, _ *respire.Client, d respire.TraceConnectEndData) {
	r.end(ctx, "connect")
	r.add(traceEvent{kind: "connect", name: d.Addr, err: d.Err, hs: d.Handshake, n: d.Protocol})
}

func (r *recorder) TraceReconnectStart(ctx context.Context, _ *respire.Client, d respire.TraceReconnectStartData) context.Context {
	r.add(traceEvent{kind: "lost", name: d.Addr, err: d.Cause})
	return r.start(ctx, "reconnect")
}

func (r *recorder) TraceReconnectEnd(ctx context.Context, _ *respire.Client, d respire.TraceReconnectEndData) {
	r.end(ctx, "reconnect")
	r.add(traceEvent{kind: "reconnect", name: d.Addr, n: d.Attempts, err: d.Err})
}

func (r *recorder) TracePubSubGap(_ context.Context, _ *respire.Client, d respire.TracePubSubGapData) {
	r.add(traceEvent{kind: "gap", gap: d})
}

func (r *recorder) TraceCacheInvalidate(_ context.Context, _ *respire.Client, d respire.TraceCacheInvalidateData) {
	r.add(traceEvent{kind: "invalidate", key: string(d.Key), tx: d.Flush})
}

// of returns the events of a kind.
func (r *recorder) of(kind string) []traceEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []traceEvent
	for _, e := range r.events {
		if e.kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// await waits until cond holds over the events.
func (r *recorder) await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx := ctxT(t)
	for !cond() {
		select {
		case <-r.notify:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
	}
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.events = nil
	r.mu.Unlock()
}

// TestTracerCommands: every kind of command call reaches the tracer once,
// with its name, its words and its outcome, and End sees Start's context.
func TestTracerCommands(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	rec := newRecorder()
	c := connect(t, respire.Options{Addr: srv.Addr, Tracer: hooks(rec)})
	ctx := ctxT(t)

	conns := rec.of("connect")
	require.NotEmpty(t, conns)
	assert.NoError(t, conns[0].err)
	assert.Equal(t, srv.Addr, conns[0].name)
	assert.Equal(t, 3, conns[0].n, "protocol")

	rec.reset()
	require.NoError(t, c.Set(ctx, "tr:k", "v1", nil))
	v, err := c.Get(ctx, "tr:k")
	require.NoError(t, err)
	require.Equal(t, "v1", v)
	_, err = c.Get(ctx, "tr:missing")
	require.ErrorIs(t, err, respire.Nil)
	_, err = c.HGetAll(ctx, "tr:k")
	var se *respire.Error
	require.ErrorAs(t, err, &se)
	_, err = c.Do(ctx, "object", "encoding", "tr:k")
	require.NoError(t, err)
	_, err = c.Do(ctx, "x-no-such-command", 7, 2.5)
	require.Error(t, err)
	_, err = c.Do(ctx, "SUBSCRIBE", "ch")
	var ae *respire.ArgError
	require.ErrorAs(t, err, &ae)

	cmds := rec.of("command")
	require.Len(t, cmds, 7)
	want := []struct {
		name string
		args []string
	}{
		{"SET", []string{"SET", "tr:k", "v1"}},
		{"GET", []string{"GET", "tr:k"}},
		{"GET", []string{"GET", "tr:missing"}},
		{"HGETALL", []string{"HGETALL", "tr:k"}},
		{"OBJECT ENCODING", []string{"object", "encoding", "tr:k"}},
		{"X-NO-SUCH-COMMAND", []string{"x-no-such-command", "7", "2.5"}},
		{"SUBSCRIBE", nil},
	}
	for i, w := range want {
		assert.Equal(t, w.name, cmds[i].name, "command %d", i)
		if w.args != nil {
			assert.Equal(t, w.args, cmds[i].args, "command %d", i)
		}
	}
	assert.NoError(t, cmds[0].err)
	assert.NoError(t, cmds[1].err)
	assert.ErrorIs(t, cmds[2].err, respire.Nil)
	assert.ErrorAs(t, cmds[3].err, &se)
	assert.Equal(t, "WRONGTYPE", se.Prefix)
	assert.NoError(t, cmds[4].err)
	assert.ErrorAs(t, cmds[5].err, &se)
	assert.ErrorAs(t, cmds[6].err, &ae)

	// Batches and transactions: one event each, not one per command.
	b := c.NewBatch()
	b.Set("tr:b1", "1", nil)
	b.Get("tr:b1")
	b.Incr("tr:b2")
	require.NoError(t, b.Exec(ctx))
	tx := c.NewTx()
	tx.Set("tr:t1", "1", nil)
	tx.Incr("tr:t1")
	require.NoError(t, tx.Exec(ctx))
	require.ErrorIs(t, b.Exec(ctx), respire.ErrBatchDone)
	batches := rec.of("batch")
	require.Len(t, batches, 2)
	assert.Equal(t, traceEvent{kind: "batch", n: 3}, batches[0])
	assert.Equal(t, traceEvent{kind: "batch", n: 2, tx: true}, batches[1])
	assert.Len(t, rec.of("command"), 7)

	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Zero(t, rec.badCtx, "an End got another context than its Start returned")
	for name, n := range rec.inflight {
		assert.Zero(t, n, "%s started and ended a different number of times", name)
	}
}

// hooks makes a respire.Tracer of the Trace* methods that v has.
func hooks(v any) *respire.Tracer {
	tr := &respire.Tracer{}
	if h, ok := v.(interface {
		TraceCommandStart(context.Context, *respire.Client, respire.TraceCommandStartData) context.Context
		TraceCommandEnd(context.Context, *respire.Client, respire.TraceCommandEndData)
	}); ok {
		tr.CommandStart, tr.CommandEnd = h.TraceCommandStart, h.TraceCommandEnd
	}
	if h, ok := v.(interface {
		TraceBatchStart(context.Context, *respire.Client, respire.TraceBatchStartData) context.Context
		TraceBatchEnd(context.Context, *respire.Client, respire.TraceBatchEndData)
	}); ok {
		tr.BatchStart, tr.BatchEnd = h.TraceBatchStart, h.TraceBatchEnd
	}
	if h, ok := v.(interface {
		TraceConnectStart(context.Context, *respire.Client, respire.TraceConnectStartData) context.Context
		TraceConnectEnd(context.Context, *respire.Client, respire.TraceConnectEndData)
	}); ok {
		tr.ConnectStart, tr.ConnectEnd = h.TraceConnectStart, h.TraceConnectEnd
	}
	if h, ok := v.(interface {
		TraceReconnectStart(context.Context, *respire.Client, respire.TraceReconnectStartData) context.Context
		TraceReconnectEnd(context.Context, *respire.Client, respire.TraceReconnectEndData)
	}); ok {
		tr.ReconnectStart, tr.ReconnectEnd = h.TraceReconnectStart, h.TraceReconnectEnd
	}
	if h, ok := v.(interface {
		TracePubSubGap(context.Context, *respire.Client, respire.TracePubSubGapData)
	}); ok {
		tr.PubSubGap = h.TracePubSubGap
	}
	if h, ok := v.(interface {
		TraceCacheInvalidate(context.Context, *respire.Client, respire.TraceCacheInvalidateData)
	}); ok {
		tr.CacheInvalidate = h.TraceCacheInvalidate
	}
	return tr
}

// TestTracerEmpty: a Tracer with no function set costs and does nothing.
func TestTracerEmpty(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr, Tracer: &respire.Tracer{}})
	require.NoError(t, c.Set(ctxT(t), "trace:empty", "v", nil))
}

// logBuffer is a slog handler's output that tests can read while the
// client writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestTracerReconnect: a connection cut under the client is reported as
// lost with its cause, then as restored; the logger says both; open
// connections are counted.
func TestTracerReconnect(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	defer p.Close()
	rec := newRecorder()
	var logs logBuffer
	c := connect(t, respire.Options{Addr: p.Addr(), Tracer: hooks(rec), Logger: logs.logger()})
	ctx := ctxT(t)
	require.NoError(t, c.Set(ctx, "rc:k", "v", nil))
	assert.Equal(t, 1, c.PoolStats().Multiplexed)

	p.Cut()
	// An idle connection learns of the cut at its next use.
	_, _ = c.Get(ctx, "rc:k")
	rec.await(t, "the reconnect", func() bool { return len(rec.of("reconnect")) > 0 })
	lost := rec.of("lost")
	require.Len(t, lost, 1)
	assert.Equal(t, p.Addr(), lost[0].name)
	var ce *respire.ConnError
	assert.ErrorAs(t, lost[0].err, &ce)
	rc := rec.of("reconnect")[0]
	assert.NoError(t, rc.err)
	assert.GreaterOrEqual(t, rc.n, 1)
	v, err := c.Get(ctx, "rc:k")
	require.NoError(t, err)
	assert.Equal(t, "v", v)
	assert.Equal(t, 1, c.PoolStats().Multiplexed)

	// The log line follows the ReconnectEnd hook on the same goroutine,
	// which may not have reached it yet.
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "respire: reconnected") }, 10*time.Second, time.Millisecond,
		"the log says reconnected: %s", logs.String())
	out := logs.String()
	assert.Contains(t, out, "respire: connection lost")
	assert.Contains(t, out, "addr="+p.Addr())
	rec.mu.Lock()
	assert.Zero(t, rec.badCtx)
	rec.mu.Unlock()
}

// TestLoggerHidesPassword: neither a refused password nor the right one
// shows in the logs, through failed handshakes, reconnects and dials to a
// server that is gone.
func TestLoggerHidesPassword(t *testing.T) {
	const right, wrong = "right-Pa55word-x", "wrong-Pa55word-y"
	srv := harness.Start(t, harness.Config{Password: right})
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	defer p.Close()
	var logs logBuffer
	rec := newRecorder()
	ctx := ctxT(t)

	_, err = respire.Connect(ctx, respire.Options{Addr: p.Addr(), Password: wrong, Logger: logs.logger(), Tracer: hooks(rec)})
	var he *respire.HandshakeError
	require.ErrorAs(t, err, &he)
	conns := rec.of("connect")
	require.NotEmpty(t, conns)
	assert.True(t, conns[0].hs, "a refused password is a handshake error")

	c := connect(t, respire.Options{Addr: p.Addr(), Username: "default", Password: right, Logger: logs.logger(),
		MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 5 * time.Millisecond, DialTimeout: 200 * time.Millisecond})
	require.NoError(t, c.Set(ctx, "pw:k", "v", nil))
	p.Blackhole(true)
	p.Cut()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, _ = c.Get(short, "pw:k") // the idle connection learns of the cut
	cancel()
	// Dials now reach the proxy but no handshake completes; wait for a
	// failure to be logged, then let the client back in.
	failed := func() int { return strings.Count(logs.String(), " failed\"") }
	before := failed()
	require.Eventually(t, func() bool { return failed() > before }, 30*time.Second, 5*time.Millisecond)
	p.Blackhole(false)
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "respire: reconnected") }, 30*time.Second, 5*time.Millisecond)

	out := logs.String()
	assert.Contains(t, out, "respire: handshake failed")
	assert.Contains(t, out, "WRONGPASS")
	assert.NotContains(t, out, right)
	assert.NotContains(t, out, wrong)
	assert.NotContains(t, out, "Pa55word")
}

// TestTracerPubSubGap: messages a full subscription drops are reported as
// they are dropped: one opened gap, then one event per further message.
func TestTracerPubSubGap(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	rec := newRecorder()
	var logs logBuffer
	c := connect(t, respire.Options{Addr: srv.Addr, Tracer: hooks(rec), Logger: logs.logger()})
	ctx := ctxT(t)
	const buffer, total = 4, 50
	sub := c.NewSubscription(&respire.SubscriptionOptions{Buffer: buffer})
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "gap"))
	assert.Equal(t, 1, c.PoolStats().PubSub)
	publishSeq(t, c, "PUBLISH", "gap", 1, total)
	rec.await(t, "the dropped messages", func() bool { return len(rec.of("gap")) >= total-buffer })
	gaps := rec.of("gap")
	require.Len(t, gaps, total-buffer)
	opened := 0
	for _, g := range gaps {
		assert.Equal(t, respire.GapOverflow, g.gap.Reason)
		assert.Equal(t, 1, g.gap.Dropped)
		if g.gap.Opened {
			opened++
		}
	}
	assert.Equal(t, 1, opened)
	assert.True(t, gaps[0].gap.Opened)
	assert.Equal(t, 1, strings.Count(logs.String(), "respire: pub/sub messages lost"))
}

// TestTracerCacheInvalidate: the server's invalidation of a cached key
// reaches the tracer with the key.
func TestTracerCacheInvalidate(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	rec := newRecorder()
	c := connect(t, respire.Options{Addr: srv.Addr, Tracer: hooks(rec), ClientCache: &respire.CacheOptions{}})
	other := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	require.NoError(t, other.Set(ctx, "inv:k", "1", nil))
	v, err := c.Cached(time.Minute).Get(ctx, "inv:k")
	require.NoError(t, err)
	require.Equal(t, "1", v)
	require.NoError(t, other.Set(ctx, "inv:k", "2", nil))
	rec.await(t, "the invalidation", func() bool {
		for _, e := range rec.of("invalidate") {
			if e.key == "inv:k" {
				return true
			}
		}
		return false
	})
	assert.Equal(t, 1, c.PoolStats().Cache)
}

// TestTracerUnsetIsSilent: without a tracer nothing is recorded anywhere,
// and a tracer's errors do not leak into a client that has none (guards
// against a global hook).
func TestTracerUnsetIsSilent(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	rec := newRecorder()
	traced := connect(t, respire.Options{Addr: srv.Addr, Tracer: hooks(rec)})
	plain := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	rec.reset()
	require.NoError(t, plain.Set(ctx, "silent", "1", nil))
	assert.Empty(t, rec.of("command"))
	require.NoError(t, traced.Set(ctx, "silent", "1", nil))
	assert.Len(t, rec.of("command"), 1)
	assert.False(t, errors.Is(rec.of("command")[0].err, respire.Nil))
}

// nopTracer traces commands and batches and does nothing.
type nopTracer struct{}

func (nopTracer) TraceCommandStart(ctx context.Context, _ *respire.Client, _ respire.TraceCommandStartData) context.Context {
	return ctx
}
func (nopTracer) TraceCommandEnd(context.Context, *respire.Client, respire.TraceCommandEndData) {}
func (nopTracer) TraceBatchStart(ctx context.Context, _ *respire.Client, _ respire.TraceBatchStartData) context.Context {
	return ctx
}
func (nopTracer) TraceBatchEnd(context.Context, *respire.Client, respire.TraceBatchEndData) {}

// TestTracedHotPathAllocations: the client allocates nothing to call a
// tracer; what a traced command allocates is the tracer's own.
func TestTracedHotPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr, Tracer: hooks(nopTracer{})})
	hotPathAllocs(t, c, context.Background())
}

// TestTracerCluster: on a cluster, commands are traced as on one server,
// every node's connection is set up under the tracer, and the logger
// names each node once as new.
func TestTracerCluster(t *testing.T) {
	hc := sharedMasters(t, harness.Redis80)
	rec := newRecorder()
	var logs logBuffer
	c := connect(t, respire.Options{Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}, Tracer: hooks(rec), Logger: logs.logger()})
	ctx := ctxT(t)
	prefix := "{" + t.Name() + "}"
	for i := range 20 {
		require.NoError(t, c.Set(ctx, prefix+strconv.Itoa(i), "v", nil))
		require.NoError(t, c.Set(ctx, strconv.Itoa(i)+t.Name(), "v", nil))
	}
	sets := 0
	for _, e := range rec.of("command") {
		if e.name == "SET" {
			require.NoError(t, e.err)
			sets++
		}
	}
	assert.Equal(t, 40, sets)
	addrs := map[string]bool{}
	for _, e := range rec.of("connect") {
		if e.err == nil {
			addrs[e.name] = true
		}
	}
	assert.GreaterOrEqual(t, len(addrs), len(hc.Masters()), "a connection to every primary: %v", addrs)
	for a := range addrs {
		assert.Equal(t, 1, strings.Count(logs.String(), `msg="respire: connected to a new node" addr=`+a+" "), a)
	}
}

// TestTracerReconnectEndsAtClose: an outage still going on when the client
// closes ends with ErrClosed, by the time Close returns.
func TestTracerReconnectEndsAtClose(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	rec := newRecorder()
	c, err := respire.Connect(ctxT(t), respire.Options{Addr: srv.Addr, Tracer: hooks(rec)})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Set(ctxT(t), "close:k", "v", nil))
	srv.Kill()
	short, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
	_, err = c.Get(short, "close:k")
	cancel()
	require.Error(t, err)
	rec.await(t, "the lost connection", func() bool { return len(rec.of("lost")) == 1 })
	require.NoError(t, c.Close())
	rc := rec.of("reconnect")
	require.Len(t, rc, 1)
	assert.ErrorIs(t, rc[0].err, respire.ErrClosed)
	assert.GreaterOrEqual(t, rc[0].n, 1)
	failed := 0
	for _, e := range rec.of("connect") {
		if e.err != nil {
			failed++
		}
	}
	assert.Positive(t, failed, "the dials to the dead server are traced")
}

// TestTracerCacheInvalidateCluster: on a cluster, the invalidations every
// node sends for the client-side cache reach the Tracer too.
func TestTracerCacheInvalidateCluster(t *testing.T) {
	hc := harness.SharedCluster(t, "")
	ctx := ctxT(t)
	seen := make(chan string, 16)
	tr := &respire.Tracer{CacheInvalidate: func(_ context.Context, _ *respire.Client, d respire.TraceCacheInvalidateData) {
		if !d.Flush {
			select {
			case seen <- string(d.Key):
			default:
			}
		}
	}}
	c := clusterClient(t, hc, respire.Options{Tracer: tr, ClientCache: &respire.CacheOptions{}})
	w := clusterClient(t, hc, respire.Options{})
	key := "{" + t.Name() + "}:k"
	require.NoError(t, w.Set(ctx, key, "1", nil))
	v, err := c.Cached(time.Minute).Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, "1", v)
	require.NoError(t, w.Set(ctx, key, "2", nil))
	for {
		select {
		case k := <-seen:
			if k == key {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no invalidation of %s reached the tracer: %v", key, ctx.Err())
		}
	}
}
