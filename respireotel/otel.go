// Package respireotel traces and measures a Respire client with
// OpenTelemetry. It lives in its own module so that users who do not want
// OpenTelemetry never download it.
//
// A Tracer goes in respire.Options.Tracer. It makes a span per command and
// per batch or transaction, following OpenTelemetry's semantic conventions
// for database clients (Redis), records db.client.operation.duration, and
// counts reconnects, lost pub/sub messages and cache invalidations.
// Observe adds the client's connection counts, blocking-pool use and cache
// hits and misses:
//
//	t, err := respireotel.NewTracer()
//	...
//	c, err := respire.Connect(ctx, respire.Options{Addr: addr, Tracer: t.Hooks()})
//	...
//	reg, err := t.Observe(c)
//	...
//	defer reg.Unregister()
//
// For Prometheus, give NewTracer a MeterProvider whose reader is the
// OpenTelemetry Prometheus exporter; see docs/observability.md.
package respireotel

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/respire"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/respire-go/respire/respireotel"

// Option configures a Tracer.
type Option func(*config)

type config struct {
	tp        trace.TracerProvider
	mp        metric.MeterProvider
	queryText bool
	attrs     []attribute.KeyValue
}

// WithTracerProvider sets where spans go; default otel.GetTracerProvider().
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets where metrics go; default otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithQueryText records each command's words in db.query.text. It is off by
// default: arguments hold application data, and values can be large.
// Credentials (AUTH-like passwords, CONFIG SET requirepass, ACL SETUSER
// password rules, ...) show as xxxxx, as respire.CommandArgs.String renders
// them.
func WithQueryText() Option {
	return func(c *config) { c.queryText = true }
}

// WithAttributes adds attributes to every span and measurement.
func WithAttributes(kv ...attribute.KeyValue) Option {
	return func(c *config) { c.attrs = append(c.attrs, kv...) }
}

// Tracer traces and measures clients with OpenTelemetry: Hooks gives the
// respire.Tracer that goes in respire.Options.Tracer, with every event
// set. One Tracer may serve many clients; it is safe for concurrent use.
type Tracer struct {
	hooks     *respire.Tracer
	tracer    trace.Tracer
	meter     metric.Meter
	queryText bool
	attrs     []attribute.KeyValue

	duration      metric.Float64Histogram
	reconnects    metric.Int64Counter
	gaps          metric.Int64Counter
	dropped       metric.Int64Counter
	invalidations metric.Int64Counter
	connections   metric.Int64ObservableUpDownCounter
	connMax       metric.Int64ObservableUpDownCounter
	cacheHits     metric.Int64ObservableCounter
	cacheMisses   metric.Int64ObservableCounter

	servers sync.Map // *respire.Client -> *server
}

// NewTracer returns a Tracer. It fails only when the MeterProvider refuses
// an instrument.
func NewTracer(opts ...Option) (*Tracer, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	t := &Tracer{
		tracer:    cfg.tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		meter:     cfg.mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL)),
		queryText: cfg.queryText,
		attrs:     append([]attribute.KeyValue{semconv.DBSystemNameRedis}, cfg.attrs...),
	}
	if err := t.instruments(); err != nil {
		return nil, err
	}
	t.hooks = &respire.Tracer{
		CommandStart:    t.traceCommandStart,
		CommandEnd:      t.traceCommandEnd,
		BatchStart:      t.traceBatchStart,
		BatchEnd:        t.traceBatchEnd,
		ConnectStart:    t.traceConnectStart,
		ConnectEnd:      t.traceConnectEnd,
		ReconnectStart:  t.traceReconnectStart,
		ReconnectEnd:    t.traceReconnectEnd,
		PubSubGap:       t.tracePubSubGap,
		CacheInvalidate: t.traceCacheInvalidate,
	}
	return t, nil
}

// Hooks returns the respire.Tracer to put in respire.Options.Tracer: every
// command, batch, connection, reconnect, pub/sub gap and cache
// invalidation of the client goes to t.
func (t *Tracer) Hooks() *respire.Tracer { return t.hooks }

func (t *Tracer) instruments() error {
	m := t.meter
	var errs [9]error
	t.duration, errs[0] = m.Float64Histogram("db.client.operation.duration",
		metric.WithUnit("s"), metric.WithDescription("Duration of database client operations."),
		metric.WithExplicitBucketBoundaries(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10))
	t.reconnects, errs[1] = m.Int64Counter("respire.client.reconnects",
		metric.WithUnit("{reconnect}"), metric.WithDescription("Established connections that broke and were replaced."))
	t.gaps, errs[2] = m.Int64Counter("respire.client.pubsub.gaps",
		metric.WithUnit("{gap}"), metric.WithDescription("Gaps in pub/sub streams: places where messages may have been lost."))
	t.dropped, errs[3] = m.Int64Counter("respire.client.pubsub.dropped",
		metric.WithUnit("{message}"), metric.WithDescription("Pub/sub messages dropped because a subscription's buffer was full."))
	t.invalidations, errs[4] = m.Int64Counter("respire.client.cache.invalidations",
		metric.WithUnit("{invalidation}"), metric.WithDescription("Invalidations of the client-side cache sent by the server."))
	t.connections, errs[5] = m.Int64ObservableUpDownCounter("db.client.connection.count",
		metric.WithUnit("{connection}"), metric.WithDescription("Established connections, by pool and state."))
	t.connMax, errs[6] = m.Int64ObservableUpDownCounter("db.client.connection.max",
		metric.WithUnit("{connection}"), metric.WithDescription("The most connections a pool may open."))
	t.cacheHits, errs[7] = m.Int64ObservableCounter("respire.client.cache.hits",
		metric.WithUnit("{read}"), metric.WithDescription("Reads served from the client-side cache."))
	t.cacheMisses, errs[8] = m.Int64ObservableCounter("respire.client.cache.misses",
		metric.WithUnit("{read}"), metric.WithDescription("Reads of the client-side cache that went to the server."))
	return errors.Join(errs[:]...)
}

// server holds the attributes naming a client's server, computed once,
// and those of each operation seen on it.
type server struct {
	attrs []attribute.KeyValue // db.system.name, the user's, db.namespace, server.*
	set   attribute.Set
	ops   sync.Map // operation name -> *opAttrs
	nops  atomic.Int32
	// gap and inval are the options of the counters, by gap reason and by
	// whether an invalidation flushed the cache.
	gap   map[respire.GapReason][]metric.AddOption
	inval [2][]metric.AddOption
	plain []metric.AddOption
}

// maxOps bounds the operations whose attributes a server keeps: Do can
// name any command, and a program that sends many distinct words must not
// grow the cache without end.
const maxOps = 1024

// opAttrs are the options of an operation's span and measurements,
// computed once so that a traced command allocates little.
type opAttrs struct {
	name  string
	attrs []attribute.KeyValue // the server's and db.operation.name
	span  []trace.SpanStartOption
	rec   []metric.RecordOption
}

// with returns the server's attributes and extra, in a new slice.
func (s *server) with(extra ...attribute.KeyValue) []attribute.KeyValue {
	return append(s.attrs[:len(s.attrs):len(s.attrs)], extra...)
}

// op returns the attributes of the operation name, extra (the batch size)
// included.
func (s *server) op(name string, extra ...attribute.KeyValue) *opAttrs {
	if len(extra) == 0 {
		if o, ok := s.ops.Load(name); ok {
			return o.(*opAttrs)
		}
	}
	attrs := s.with(semconv.DBOperationName(name))
	o := &opAttrs{
		name:  name,
		attrs: attrs,
		span:  []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(append(attrs, extra...)...)},
		rec:   []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))},
	}
	if len(extra) == 0 && s.nops.Load() < maxOps {
		if actual, loaded := s.ops.LoadOrStore(name, o); loaded {
			return actual.(*opAttrs)
		}
		s.nops.Add(1)
	}
	return o
}

func (t *Tracer) server(c *respire.Client) *server {
	if s, ok := t.servers.Load(c); ok {
		return s.(*server)
	}
	// The database index is the one Options.DB set on every connection:
	// no traced command can change it.
	attrs := append(append([]attribute.KeyValue(nil), t.attrs...), semconv.DBNamespace(strconv.Itoa(c.DB())))
	addr := c.Addr()
	if host, port, err := net.SplitHostPort(addr); err == nil {
		attrs = append(attrs, semconv.ServerAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.ServerPort(p))
		}
	} else {
		attrs = append(attrs, semconv.ServerAddress(addr))
	}
	s := &server{attrs: attrs, set: attribute.NewSet(attrs...)}
	add := func(extra ...attribute.KeyValue) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(s.with(extra...)...))}
	}
	s.plain = add()
	s.gap = map[respire.GapReason][]metric.AddOption{}
	for _, r := range []respire.GapReason{respire.GapOverflow, respire.GapDisconnect} {
		s.gap[r] = add(attribute.String("respire.gap.reason", r.String()))
	}
	s.inval = [2][]metric.AddOption{add(attribute.Bool("respire.cache.flush", false)), add(attribute.Bool("respire.cache.flush", true))}
	actual, _ := t.servers.LoadOrStore(c, s)
	return actual.(*server)
}

// opCtx is the context a Start returns: the span's context, with what End
// needs, in one allocation.
type opCtx struct {
	context.Context
	span  trace.Span
	start time.Time
	op    *opAttrs
}

type opKey struct{}

func (o *opCtx) Value(key any) any {
	if key == (opKey{}) {
		return o
	}
	return o.Context.Value(key)
}

func (t *Tracer) start(ctx context.Context, c *respire.Client, op *opAttrs, extra ...trace.SpanStartOption) context.Context {
	opts := op.span
	if len(extra) > 0 {
		opts = append(opts[:len(opts):len(opts)], extra...)
	}
	ctx, span := t.tracer.Start(ctx, op.name, opts...)
	return &opCtx{Context: ctx, span: span, start: time.Now(), op: op}
}

func (t *Tracer) end(ctx context.Context, err error) {
	o, _ := ctx.Value(opKey{}).(*opCtx)
	if o == nil {
		return
	}
	elapsed := time.Since(o.start).Seconds()
	rec := o.op.rec
	if err != nil && !errors.Is(err, respire.Nil) {
		kind, status := errorType(err)
		attrs := append(o.op.attrs[:len(o.op.attrs):len(o.op.attrs)], semconv.ErrorTypeKey.String(kind))
		if status != "" {
			attrs = append(attrs, semconv.DBResponseStatusCode(status))
		}
		rec = []metric.RecordOption{metric.WithAttributes(attrs...)}
		if o.span.IsRecording() {
			o.span.SetAttributes(attrs[len(o.op.attrs):]...)
			o.span.RecordError(err)
			o.span.SetStatus(codes.Error, err.Error())
		}
	}
	o.span.End()
	t.duration.Record(o.Context, elapsed, rec...)
}

// errorType names an error for error.type, with few distinct values: the
// prefix of a server's error reply (also its db.response.status_code), or
// a class of client-side failure.
func errorType(err error) (kind, status string) {
	var se *respire.Error
	var ae *respire.ArgError
	var he *respire.HandshakeError
	var ce *respire.ConnError
	switch {
	case errors.As(err, &se):
		return se.Prefix, se.Prefix
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout", ""
	case errors.Is(err, context.Canceled):
		return "canceled", ""
	case errors.As(err, &ae):
		return "invalid_argument", ""
	case errors.As(err, &he):
		return "handshake", ""
	case errors.Is(err, respire.ErrClosed):
		return "closed", ""
	case errors.Is(err, respire.ErrUnavailable):
		return "unavailable", ""
	case errors.As(err, &ce):
		return "connection", ""
	}
	return semconv.ErrorType(err).Value.AsString(), ""
}

// cacheMiss marks the span of a read of respire.Client.Cached that went to
// the server.
var cacheMiss = trace.WithAttributes(attribute.Bool("respire.cache.miss", true))

// traceCommandStart is the respire.Tracer's CommandStart.
func (t *Tracer) traceCommandStart(ctx context.Context, c *respire.Client, d respire.TraceCommandStartData) context.Context {
	op := t.server(c).op(d.Name)
	switch {
	case t.queryText && d.CacheMiss:
		return t.start(ctx, c, op, trace.WithAttributes(semconv.DBQueryText(d.Args.String())), cacheMiss)
	case t.queryText:
		return t.start(ctx, c, op, trace.WithAttributes(semconv.DBQueryText(d.Args.String())))
	case d.CacheMiss:
		return t.start(ctx, c, op, cacheMiss)
	}
	return t.start(ctx, c, op)
}

// traceCommandEnd is the respire.Tracer's CommandEnd.
func (t *Tracer) traceCommandEnd(ctx context.Context, _ *respire.Client, d respire.TraceCommandEndData) {
	t.end(ctx, d.Err)
}

// traceBatchStart is the respire.Tracer's BatchStart: the operation is
// PIPELINE for a Batch, MULTI for a Tx, followed by the command's name
// when all the batch's commands are the same ("PIPELINE SET"), as the
// conventions for Redis say.
func (t *Tracer) traceBatchStart(ctx context.Context, c *respire.Client, d respire.TraceBatchStartData) context.Context {
	name := "PIPELINE"
	if d.Tx {
		name = "MULTI"
	}
	if d.Command != "" {
		name += " " + d.Command
	}
	return t.start(ctx, c, t.server(c).op(name, semconv.DBOperationBatchSize(d.Len)))
}

// traceBatchEnd is the respire.Tracer's BatchEnd.
func (t *Tracer) traceBatchEnd(ctx context.Context, _ *respire.Client, d respire.TraceBatchEndData) {
	t.end(ctx, d.Err)
}

// traceConnectStart is the respire.Tracer's ConnectStart with a span named
// "connect" per connection set up.
func (t *Tracer) traceConnectStart(ctx context.Context, c *respire.Client, d respire.TraceConnectStartData) context.Context {
	ctx, _ = t.tracer.Start(ctx, "connect", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(t.server(c).attrs...), trace.WithAttributes(attribute.String("respire.addr", d.Addr)))
	return ctx
}

// traceConnectEnd is the respire.Tracer's ConnectEnd.
func (t *Tracer) traceConnectEnd(ctx context.Context, _ *respire.Client, d respire.TraceConnectEndData) {
	span := trace.SpanFromContext(ctx)
	if d.Err != nil {
		kind, _ := errorType(d.Err)
		span.SetAttributes(semconv.ErrorTypeKey.String(kind), attribute.Bool("respire.handshake", d.Handshake))
		span.RecordError(d.Err)
		span.SetStatus(codes.Error, d.Err.Error())
	} else {
		span.SetAttributes(attribute.Int("respire.protocol", d.Protocol),
			attribute.String("respire.server", d.Server), attribute.String("respire.server.version", d.Version))
	}
	span.End()
}

// traceReconnectStart is the respire.Tracer's ReconnectStart with a span named
// "reconnect" that lasts as long as the outage.
func (t *Tracer) traceReconnectStart(ctx context.Context, c *respire.Client, d respire.TraceReconnectStartData) context.Context {
	ctx, span := t.tracer.Start(ctx, "reconnect", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(t.server(c).attrs...), trace.WithAttributes(attribute.String("respire.addr", d.Addr)))
	if d.Cause != nil {
		span.AddEvent("connection lost", trace.WithAttributes(attribute.String("respire.cause", d.Cause.Error())))
	}
	return ctx
}

// traceReconnectEnd is the respire.Tracer's ReconnectEnd.
func (t *Tracer) traceReconnectEnd(ctx context.Context, c *respire.Client, d respire.TraceReconnectEndData) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.Int("respire.attempts", d.Attempts))
	if d.Err == nil {
		t.reconnects.Add(ctx, 1, t.server(c).plain...)
	} else {
		span.SetAttributes(attribute.String("respire.outcome", d.Err.Error()))
	}
	span.End()
}

// tracePubSubGap is the respire.Tracer's PubSubGap.
func (t *Tracer) tracePubSubGap(ctx context.Context, c *respire.Client, d respire.TracePubSubGapData) {
	s := t.server(c)
	opts, ok := s.gap[d.Reason]
	if !ok {
		opts = []metric.AddOption{metric.WithAttributes(s.with(attribute.String("respire.gap.reason", d.Reason.String()))...)}
	}
	if d.Opened {
		t.gaps.Add(ctx, 1, opts...)
	}
	if d.Dropped > 0 {
		t.dropped.Add(ctx, int64(d.Dropped), opts...)
	}
}

// traceCacheInvalidate is the respire.Tracer's CacheInvalidate.
func (t *Tracer) traceCacheInvalidate(ctx context.Context, c *respire.Client, d respire.TraceCacheInvalidateData) {
	flush := 0
	if d.Flush {
		flush = 1
	}
	t.invalidations.Add(ctx, 1, t.server(c).inval[flush]...)
}

// Observe reports c's connections (db.client.connection.count by pool and
// state, db.client.connection.max of the blocking pool) and its
// client-side cache's hits and misses at each collection, until the
// registration is unregistered; unregister it when closing c.
func (t *Tracer) Observe(c *respire.Client) (metric.Registration, error) {
	s := t.server(c)
	pool := func(kind string, state attribute.KeyValue) metric.ObserveOption {
		return metric.WithAttributes(s.with(semconv.DBClientConnectionPoolName(c.Addr()+"/"+kind), state)...)
	}
	var (
		muxUsed   = pool("multiplexed", semconv.DBClientConnectionStateUsed)
		batchUsed = pool("batch", semconv.DBClientConnectionStateUsed)
		blockIdle = pool("blocking", semconv.DBClientConnectionStateIdle)
		blockUsed = pool("blocking", semconv.DBClientConnectionStateUsed)
		blockMax  = metric.WithAttributes(s.with(semconv.DBClientConnectionPoolName(c.Addr() + "/blocking"))...)
		psUsed    = pool("pubsub", semconv.DBClientConnectionStateUsed)
		cacheUsed = pool("cache", semconv.DBClientConnectionStateUsed)
		plain     = metric.WithAttributeSet(s.set)
	)
	return t.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := c.PoolStats()
		o.ObserveInt64(t.connections, int64(st.Multiplexed), muxUsed)
		o.ObserveInt64(t.connections, int64(st.Batch), batchUsed)
		o.ObserveInt64(t.connections, int64(st.BlockingIdle), blockIdle)
		o.ObserveInt64(t.connections, int64(st.BlockingBusy), blockUsed)
		o.ObserveInt64(t.connections, int64(st.PubSub), psUsed)
		o.ObserveInt64(t.connections, int64(st.Cache), cacheUsed)
		o.ObserveInt64(t.connMax, int64(st.BlockingSize), blockMax)
		cs := c.CacheStats()
		o.ObserveInt64(t.cacheHits, cs.Hits, plain)
		o.ObserveInt64(t.cacheMisses, cs.Misses, plain)
		return nil
	}, t.connections, t.connMax, t.cacheHits, t.cacheMisses)
}

// Forget drops what the Tracer keeps about c (its server's attributes),
// for a program that opens and closes many clients.
func (t *Tracer) Forget(c *respire.Client) { t.servers.Delete(c) }
