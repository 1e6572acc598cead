package respireotel_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/respireotel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// TestPrometheusNames: the metric names docs/observability.md gives are the
// ones a Prometheus registry fed by the OpenTelemetry exporter holds.
func TestPrometheusNames(t *testing.T) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	require.NoError(t, err)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(context.Background())
	tr, err := respireotel.NewTracer(respireotel.WithMeterProvider(mp))
	require.NoError(t, err)
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: startServer(t), Tracer: tr.Hooks()})
	require.NoError(t, err)
	defer c.Close()
	reg, err := tr.Observe(c)
	require.NoError(t, err)
	defer reg.Unregister()
	require.NoError(t, c.Set(ctx, "prom:k", "v", nil))

	families, err := registry.Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, want := range []string{
		"db_client_operation_duration_seconds",
		"db_client_connection_count",
		"db_client_connection_max",
		"respire_client_cache_hits_total",
		"respire_client_cache_misses_total",
	} {
		assert.True(t, names[want], "%s missing from %v", want, names)
	}
}
