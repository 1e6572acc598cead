package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
	"github.com/respire-go/respire/tests/harness"
)

// SeedSweep writes what the load tool's sweeps read on one server: a
// value of every fixture.SweepSizes size, the batch keyset and the
// cluster keyset (for a one-server reference of the cluster shape).
func SeedSweep(addr string) error {
	c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("seeding %s: %w", addr, err)
	}
	defer c.Close()
	for _, n := range fixture.SweepSizes {
		if _, err := c.Do("SET", fixture.SizeKeyGet(n), fixture.SizeValue(n)); err != nil {
			return fmt.Errorf("seeding %s: %w", addr, err)
		}
	}
	for _, ks := range []*fixture.Keyset{fixture.Batch10K, fixture.Cluster1K} {
		if err := SeedKeyset(c, ks); err != nil {
			return fmt.Errorf("seeding %s: %w", addr, err)
		}
	}
	return nil
}

// Cluster is a cluster of primaries started by StartCluster.
type Cluster struct {
	Seeds   []string
	Flavor  string
	Version string
	tb      *processTB
}

// StartCluster starts a cluster of masters primaries without replicas
// through the test harness and writes the cluster keyset
// (fixture.Cluster1K) into it. Close stops it.
func StartCluster(f harness.Flavor, masters int) (*Cluster, error) {
	tb := newProcessTB()
	done := make(chan *harness.Cluster, 1)
	go func() {
		defer close(done)
		done <- harness.StartCluster(tb, harness.ClusterConfig{Flavor: f, Masters: masters, Replicas: -1})
	}()
	hc := <-done
	if hc == nil || tb.Failed() {
		tb.close()
		return nil, fmt.Errorf("starting a cluster of %d %s masters: %s", masters, f, strings.Join(tb.messages(), "; "))
	}
	c := &Cluster{Seeds: hc.Seeds(), Flavor: string(hc.Flavor), tb: tb}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ks := fixture.Cluster1K
	for i := range ks.N {
		if _, err := hc.Do(ctx, "SET", ks.Key(i), ks.Value(i)); err != nil {
			c.Close()
			return nil, fmt.Errorf("seeding the cluster: %w", err)
		}
	}
	if v, err := hc.Do(ctx, "INFO", "server"); err == nil {
		if s, ok := v.(string); ok {
			for line := range strings.Lines(s) {
				if k, val, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && (k == "redis_version" || k == "valkey_version") {
					c.Version = val
				}
			}
		}
	}
	return c, nil
}

// Close stops the cluster and removes its directories.
func (c *Cluster) Close() { c.tb.close() }
