package respireotel_test

import (
	"context"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/respireotel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkGetTracing measures what tracing costs a GET of 16 bytes, one
// caller at a time and 64 at once, against one server:
//
//	cd respireotel && go test -run=NONE -bench=GetTracing -benchmem -count=6
//
// none: no Tracer. otel-noop: the Tracer with OpenTelemetry's no-op
// providers (instrumented but not exported, as before a program sets
// providers up). otel-sdk: the SDK's providers, every span sampled and
// handed to a processor that drops it, metrics aggregated for a reader.
func BenchmarkGetTracing(b *testing.B) {
	addr := startServer(b)
	ctx := context.Background()
	sdkTP := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(dropSpans{}))
	sdkMP := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = sdkTP.Shutdown(ctx)
		_ = sdkMP.Shutdown(ctx)
	})
	for _, v := range []struct {
		name string
		opts []respireotel.Option
	}{
		{"none", nil},
		{"otel-noop", []respireotel.Option{respireotel.WithTracerProvider(tracenoop.NewTracerProvider()), respireotel.WithMeterProvider(metricnoop.NewMeterProvider())}},
		{"otel-sdk", []respireotel.Option{respireotel.WithTracerProvider(sdkTP), respireotel.WithMeterProvider(sdkMP)}},
	} {
		opts := respire.Options{Addr: addr}
		if v.opts != nil {
			t, err := respireotel.NewTracer(v.opts...)
			if err != nil {
				b.Fatal(err)
			}
			opts.Tracer = t.Hooks()
		}
		c, err := respire.Connect(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Set(ctx, "bench:get", "0123456789abcdef", nil); err != nil {
			b.Fatal(err)
		}
		b.Run("seq/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if s, err := c.Get(ctx, "bench:get"); err != nil || len(s) != 16 {
					b.Fatal(err, s)
				}
			}
		})
		b.Run("par64/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(32) // 64 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if s, err := c.Get(ctx, "bench:get"); err != nil || len(s) != 16 {
						b.Error(err, s)
						return
					}
				}
			})
		})
		c.Close()
	}
}

// dropSpans is a span processor that keeps nothing: the cost measured is
// the instrumentation's, not an exporter's.
type dropSpans struct{}

func (dropSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (dropSpans) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (dropSpans) Shutdown(context.Context) error                  { return nil }
func (dropSpans) ForceFlush(context.Context) error                { return nil }
