package respireotel_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/respireotel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// fixture is a client traced into in-memory exporters.
type fixture struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tracer *respireotel.Tracer
	tp     *sdktrace.TracerProvider
	c      *respire.Client
	addr   string
}

func newFixture(t *testing.T, opts respire.Options, topts ...respireotel.Option) *fixture {
	t.Helper()
	f := &fixture{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	f.tp = tp
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	var err error
	f.tracer, err = respireotel.NewTracer(append([]respireotel.Option{
		respireotel.WithTracerProvider(tp), respireotel.WithMeterProvider(mp)}, topts...)...)
	require.NoError(t, err)
	if opts.Addr == "" {
		opts.Addr = startServer(t)
	}
	f.addr = opts.Addr
	opts.Tracer = f.tracer.Hooks()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.c, err = respire.Connect(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { f.c.Close() })
	return f
}

// ended returns the ended spans with a name, in order.
func (f *fixture) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range f.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func attrsOf(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

func (f *fixture) collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, f.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// TestSpansFollowSemanticConventions: each command is a client span named
// after the command, with the database conventions' attributes; errors of
// the server set error.type and the status, a null reply does not.
func TestSpansFollowSemanticConventions(t *testing.T) {
	f := newFixture(t, respire.Options{}, respireotel.WithQueryText())
	ctx := context.Background()
	parentCtx, parent := f.tp.Tracer("test").Start(ctx, "request")
	require.NoError(t, f.c.Set(parentCtx, "otel:k", "v", nil))
	_, err := f.c.Get(parentCtx, "otel:missing")
	require.ErrorIs(t, err, respire.Nil)
	_, err = f.c.HGetAll(parentCtx, "otel:k")
	require.Error(t, err)
	parent.End()

	host, port := splitAddr(t, f.addr)
	set := f.ended("SET")
	require.Len(t, set, 1)
	s := set[0]
	assert.Equal(t, trace.SpanKindClient, s.SpanKind())
	assert.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID(), "the caller's span is the parent")
	a := attrsOf(s.Attributes())
	assert.Equal(t, "redis", a["db.system.name"])
	assert.Equal(t, "0", a["db.namespace"], "the database index, as a string")
	assert.Equal(t, "SET", a["db.operation.name"])
	assert.Equal(t, host, a["server.address"])
	assert.Equal(t, port, a["server.port"])
	assert.Equal(t, "SET otel:k v", a["db.query.text"])
	assert.Equal(t, codes.Unset, s.Status().Code)

	get := f.ended("GET")
	require.Len(t, get, 1)
	assert.Equal(t, codes.Unset, get[0].Status().Code, "a null reply is no error")
	assert.NotContains(t, attrsOf(get[0].Attributes()), "error.type")

	hg := f.ended("HGETALL")
	require.Len(t, hg, 1)
	assert.Equal(t, codes.Error, hg[0].Status().Code)
	a = attrsOf(hg[0].Attributes())
	assert.Equal(t, "WRONGTYPE", a["error.type"])
	assert.Equal(t, "WRONGTYPE", a["db.response.status_code"])

	// Connections are set up under spans of their own.
	conn := f.ended("connect")
	require.NotEmpty(t, conn)
	assert.Equal(t, "3", attrsOf(conn[0].Attributes())["respire.protocol"])
}

func splitAddr(t *testing.T, addr string) (string, string) {
	i := strings.LastIndexByte(addr, ':')
	require.Positive(t, i)
	return addr[:i], addr[i+1:]
}

// TestQueryTextOffByDefault: arguments are not recorded unless asked.
func TestQueryTextOffByDefault(t *testing.T) {
	f := newFixture(t, respire.Options{})
	require.NoError(t, f.c.Set(context.Background(), "otel:secret", "hunter2", nil))
	set := f.ended("SET")
	require.Len(t, set, 1)
	assert.NotContains(t, attrsOf(set[0].Attributes()), "db.query.text")
}

// TestBatchSpans: a batch is one PIPELINE span and a transaction one
// MULTI span, with the batch size.
func TestBatchSpans(t *testing.T) {
	f := newFixture(t, respire.Options{})
	ctx := context.Background()
	b := f.c.NewBatch()
	b.Set("otel:b", "1", nil)
	b.Incr("otel:b")
	b.Get("otel:b")
	require.NoError(t, b.Exec(ctx))
	tx := f.c.NewTx()
	tx.Incr("otel:t")
	tx.Incr("otel:t")
	require.NoError(t, tx.Exec(ctx))
	b = f.c.NewBatch()
	b.Set("otel:b1", "1", nil)
	b.Set("otel:b2", "2", nil)
	require.NoError(t, b.Exec(ctx))
	tx = f.c.NewTx()
	tx.Incr("otel:t")
	tx.Get("otel:t")
	require.NoError(t, tx.Exec(ctx))

	p := f.ended("PIPELINE")
	require.Len(t, p, 1)
	a := attrsOf(p[0].Attributes())
	assert.Equal(t, "3", a["db.operation.batch.size"])
	assert.Equal(t, "PIPELINE", a["db.operation.name"])
	m := f.ended("MULTI")
	require.Len(t, m, 1)
	assert.Equal(t, "2", attrsOf(m[0].Attributes())["db.operation.batch.size"])
	// A batch of one command is named after it, as the conventions for
	// Redis ask.
	p = f.ended("PIPELINE SET")
	require.Len(t, p, 1)
	assert.Equal(t, "PIPELINE SET", attrsOf(p[0].Attributes())["db.operation.name"])
	m = f.ended("MULTI INCR")
	require.Len(t, m, 1)
	assert.Equal(t, "2", attrsOf(m[0].Attributes())["db.operation.batch.size"])
	assert.Empty(t, f.ended("INCR"), "commands of a batch are not traced one by one")
}

// TestNamespace: db.namespace is the database index of Options.DB, on
// spans and on the operation duration.
func TestNamespace(t *testing.T) {
	f := newFixture(t, respire.Options{DB: 3})
	require.NoError(t, f.c.Set(context.Background(), "otel:db", "v", nil))
	set := f.ended("SET")
	require.Len(t, set, 1)
	assert.Equal(t, "3", attrsOf(set[0].Attributes())["db.namespace"])
	dur, ok := f.collect(t)["db.client.operation.duration"].Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	require.NotEmpty(t, dur.DataPoints)
	for _, dp := range dur.DataPoints {
		ns, _ := dp.Attributes.Value("db.namespace")
		assert.Equal(t, "3", ns.AsString())
	}
}

// TestCachedReadSpans: a read of Client.Cached that misses the client-side
// cache goes to the server under a span of its command, marked
// respire.cache.miss, and is measured; a hit makes no span. For MGET and
// HMGET, the span's query text holds the keys and fields that were sent.
func TestCachedReadSpans(t *testing.T) {
	f := newFixture(t, respire.Options{ClientCache: &respire.CacheOptions{}}, respireotel.WithQueryText())
	ctx := context.Background()
	require.NoError(t, f.c.Set(ctx, "otel:c1", "v1", nil))
	require.NoError(t, f.c.Set(ctx, "otel:c2", "v2", nil))
	_, err := f.c.HSet(ctx, "otel:h", respire.FieldValue{Field: "f1", Value: "a"}, respire.FieldValue{Field: "f2", Value: "b"})
	require.NoError(t, err)
	cached := f.c.Cached(time.Minute)
	for range 2 {
		v, err := cached.Get(ctx, "otel:c1")
		require.NoError(t, err)
		require.Equal(t, "v1", v)
		_, err = cached.Get(ctx, "otel:nothing")
		require.ErrorIs(t, err, respire.Nil)
		v, err = cached.HGet(ctx, "otel:h", "f1")
		require.NoError(t, err)
		require.Equal(t, "a", v)
	}
	got, err := cached.MGet(ctx, "otel:c1", "otel:c2")
	require.NoError(t, err)
	require.Equal(t, "v2", got[1].V)
	hm, err := cached.HMGet(ctx, "otel:h", "f1", "f2")
	require.NoError(t, err)
	require.Equal(t, "b", hm[1].V)

	get := f.ended("GET")
	require.Len(t, get, 2, "one miss per key; the hits make no span")
	for _, s := range get {
		a := attrsOf(s.Attributes())
		assert.Equal(t, "true", a["respire.cache.miss"])
		assert.Equal(t, "GET", a["db.operation.name"])
		assert.Equal(t, "0", a["db.namespace"])
		assert.Equal(t, codes.Unset, s.Status().Code, "a missing key is no error")
	}
	assert.Equal(t, "GET otel:c1", attrsOf(get[0].Attributes())["db.query.text"])
	hget := f.ended("HGET")
	require.Len(t, hget, 1)
	assert.Equal(t, "true", attrsOf(hget[0].Attributes())["respire.cache.miss"])
	mget := f.ended("MGET")
	require.Len(t, mget, 1)
	assert.Equal(t, "MGET otel:c2", attrsOf(mget[0].Attributes())["db.query.text"], "only the key the cache lacked")
	hmget := f.ended("HMGET")
	require.Len(t, hmget, 1)
	assert.Equal(t, "HMGET otel:h f2", attrsOf(hmget[0].Attributes())["db.query.text"])
	set := f.ended("SET")
	require.NotEmpty(t, set)
	assert.NotContains(t, attrsOf(set[0].Attributes()), "respire.cache.miss")

	dur, ok := f.collect(t)["db.client.operation.duration"].Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	counts := map[string]uint64{}
	for _, dp := range dur.DataPoints {
		op, _ := dp.Attributes.Value("db.operation.name")
		counts[op.AsString()] += dp.Count
	}
	assert.Equal(t, uint64(2), counts["GET"])
	assert.Equal(t, uint64(1), counts["HGET"])
	assert.Equal(t, uint64(1), counts["MGET"])
	assert.Equal(t, uint64(1), counts["HMGET"])
}

// TestMetrics: operation durations by command, the connections of each
// pool, the blocking pool's use, cache hits and misses and pub/sub gaps.
func TestMetrics(t *testing.T) {
	f := newFixture(t, respire.Options{ClientCache: &respire.CacheOptions{}, BlockingPoolSize: 3})
	reg, err := f.tracer.Observe(f.c)
	require.NoError(t, err)
	defer reg.Unregister()
	ctx := context.Background()
	for i := range 5 {
		require.NoError(t, f.c.Set(ctx, "otel:m"+strconv.Itoa(i), "v", nil))
	}
	_, err = f.c.BLPop(ctx, 10*time.Millisecond, "otel:empty")
	require.ErrorIs(t, err, respire.Nil)
	for range 3 {
		_, err := f.c.Cached(time.Minute).Get(ctx, "otel:m0")
		require.NoError(t, err)
	}
	// A write of a cached key makes the server invalidate it.
	require.NoError(t, f.c.Set(ctx, "otel:m0", "w", nil))
	require.Eventually(t, func() bool {
		return sumInt(f.collect(t)["respire.client.cache.invalidations"]) >= 1
	}, 10*time.Second, 5*time.Millisecond)
	sub := f.c.NewSubscription(&respire.SubscriptionOptions{Buffer: 1})
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "otel:ch"))
	for range 4 {
		_, err := f.c.Publish(ctx, "otel:ch", "m")
		require.NoError(t, err)
	}
	// Messages reach the subscription on the hub's connection, perhaps
	// after PUBLISH returned: wait for the count of dropped ones.
	require.Eventually(t, func() bool {
		return sumInt(f.collect(t)["respire.client.pubsub.dropped"]) == 3
	}, 10*time.Second, 5*time.Millisecond)

	ms := f.collect(t)
	dur, ok := ms["db.client.operation.duration"].Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	counts := map[string]uint64{}
	for _, dp := range dur.DataPoints {
		op, _ := dp.Attributes.Value("db.operation.name")
		sys, _ := dp.Attributes.Value("db.system.name")
		assert.Equal(t, "redis", sys.AsString())
		counts[op.AsString()] += dp.Count
	}
	assert.Equal(t, uint64(6), counts["SET"])
	assert.Equal(t, uint64(1), counts["BLPOP"])
	assert.Equal(t, "s", ms["db.client.operation.duration"].Unit)

	conns := gauge(t, ms["db.client.connection.count"])
	assert.Equal(t, int64(1), conns[f.addr+"/multiplexed used"])
	assert.Equal(t, int64(1), conns[f.addr+"/blocking idle"], "the BLPOP's connection is kept")
	assert.Equal(t, int64(0), conns[f.addr+"/blocking used"])
	assert.Equal(t, int64(1), conns[f.addr+"/pubsub used"])
	assert.Equal(t, int64(1), conns[f.addr+"/cache used"])
	assert.Equal(t, int64(3), sumInt(ms["db.client.connection.max"]))

	assert.Equal(t, int64(2), sumInt(ms["respire.client.cache.hits"]))
	assert.Equal(t, int64(1), sumInt(ms["respire.client.cache.misses"]))
	assert.Equal(t, int64(1), sumInt(ms["respire.client.pubsub.gaps"]))
}

// gauge maps "pool state" to the value of each data point.
func gauge(t *testing.T, m metricdata.Metrics) map[string]int64 {
	t.Helper()
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is %T", m.Name, m.Data)
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		pool, _ := dp.Attributes.Value("db.client.connection.pool.name")
		state, _ := dp.Attributes.Value("db.client.connection.state")
		out[pool.AsString()+" "+state.AsString()] = dp.Value
	}
	return out
}

func sumInt(m metricdata.Metrics) int64 {
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		return -1
	}
	var n int64
	for _, dp := range sum.DataPoints {
		n += dp.Value
	}
	return n
}

// TestReconnectSpan: a connection killed by the server is an outage span
// from the break to the new connection, and a reconnect counted.
func TestReconnectSpan(t *testing.T) {
	f := newFixture(t, respire.Options{ClientName: "otel-victim"})
	reg, err := f.tracer.Observe(f.c)
	require.NoError(t, err)
	defer reg.Unregister()
	ctx := context.Background()
	killer, err := respire.Connect(ctx, respire.Options{Addr: f.addr})
	require.NoError(t, err)
	defer killer.Close()
	_, err = killer.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	require.NoError(t, err)
	// The idle connection learns of it at its next use.
	_, _ = f.c.Get(ctx, "otel:after")
	require.Eventually(t, func() bool { return len(f.ended("reconnect")) == 1 }, 10*time.Second, 5*time.Millisecond)
	r := f.ended("reconnect")[0]
	assert.Equal(t, "1", attrsOf(r.Attributes())["respire.attempts"])
	require.NotEmpty(t, r.Events())
	assert.Equal(t, "connection lost", r.Events()[0].Name)
	assert.Equal(t, int64(1), sumInt(f.collect(t)["respire.client.reconnects"]))
}
