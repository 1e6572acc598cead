package respireotel_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/respireotel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Spans and metrics go to the global providers that the program set up
// with otel.SetTracerProvider and otel.SetMeterProvider.
func ExampleNewTracer() {
	ctx := context.Background()
	t, err := respireotel.NewTracer()
	if err != nil {
		log.Fatal(err)
	}
	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379", Tracer: t.Hooks()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	// Connection counts and cache hits are read at each collection.
	reg, err := t.Observe(c)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Unregister()

	// A span named GET, child of any span in ctx.
	v, err := c.Get(ctx, "greeting")
	fmt.Println(v, err)
}

// Prometheus scrapes the metrics through OpenTelemetry's Prometheus
// exporter: db_client_operation_duration_seconds, db_client_connection_count,
// respire_client_cache_hits_total, respire_client_pubsub_dropped_total, ...
func Example_prometheus() {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		log.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(context.Background())

	t, err := respireotel.NewTracer(respireotel.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379", Tracer: t.Hooks()})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	reg, err := t.Observe(c)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Unregister()

	http.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	// go http.ListenAndServe(":9090", nil)
}
