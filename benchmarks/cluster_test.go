package benchmarks

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
)

// BenchmarkCluster: the conc64 shapes on a cluster of three masters (no
// replicas), each goroutine on its own key so that the load spreads over
// the shards, for Respire, go-redis's ClusterClient and rueidis (which
// detects the cluster itself); and Respire on one node of the same build
// as the baseline. Values are checked on every GET.
//
//	go test -run=NONE -bench=Cluster -benchmem -count=6 . | tee cluster.txt
//	benchstat -col /client cluster.txt
func BenchmarkCluster(b *testing.B) {
	hc := harness.StartCluster(b, harness.ClusterConfig{Flavor: harness.Redis80, Replicas: -1})
	ctx := context.Background()
	single := benchServer(b)
	const keys = conc
	getKeys, incrKeys := make([]string, keys), make([]string, keys)
	for i := range keys {
		getKeys[i], incrKeys[i] = fmt.Sprintf("bench:get1k:%d", i), fmt.Sprintf("bench:incr:%d", i)
	}

	type cl struct {
		get  func(ctx context.Context, k string) (string, error)
		incr func(ctx context.Context, k string) (int64, error)
		set  func(ctx context.Context, k, v string) error
		done func()
	}
	open := map[string]func() (cl, error){
		"respire-cluster": func() (cl, error) {
			c, err := respire.Connect(ctx, respire.Options{Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
			if err != nil {
				return cl{}, err
			}
			return cl{c.Get, c.Incr, func(ctx context.Context, k, v string) error { return c.Set(ctx, k, v, nil) }, func() { c.Close() }}, nil
		},
		"respire-one-node": func() (cl, error) {
			c, err := respire.Connect(ctx, respire.Options{Addr: single.Addr})
			if err != nil {
				return cl{}, err
			}
			return cl{c.Get, c.Incr, func(ctx context.Context, k, v string) error { return c.Set(ctx, k, v, nil) }, func() { c.Close() }}, nil
		},
		"goredis-cluster": func() (cl, error) {
			c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: hc.Seeds(), PoolSize: 64})
			return cl{
				func(ctx context.Context, k string) (string, error) { return c.Get(ctx, k).Result() },
				func(ctx context.Context, k string) (int64, error) { return c.Incr(ctx, k).Result() },
				func(ctx context.Context, k, v string) error { return c.Set(ctx, k, v, 0).Err() },
				func() { c.Close() }}, nil
		},
		"rueidis-cluster": func() (cl, error) {
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: hc.Seeds()})
			if err != nil {
				return cl{}, err
			}
			return cl{
				func(ctx context.Context, k string) (string, error) {
					return c.Do(ctx, c.B().Get().Key(k).Build()).ToString()
				},
				func(ctx context.Context, k string) (int64, error) {
					return c.Do(ctx, c.B().Incr().Key(k).Build()).AsInt64()
				},
				func(ctx context.Context, k, v string) error {
					return c.Do(ctx, c.B().Set().Key(k).Value(v).Build()).Error()
				},
				c.Close}, nil
		},
	}
	order := []string{"respire-cluster", "respire-one-node", "goredis-cluster", "rueidis-cluster"}
	for _, shape := range []string{"get-1k-conc64", "incr-conc64"} {
		for _, name := range order {
			b.Run(fmt.Sprintf("shape=%s/client=%s", shape, name), func(b *testing.B) {
				c, err := open[name]()
				if err != nil {
					b.Fatal(err)
				}
				defer c.done()
				for i := range keys {
					if err := c.set(ctx, getKeys[i], fixture.Value1K); err != nil {
						b.Fatal(err)
					}
				}
				var next atomic.Int64
				b.ReportAllocs()
				procs := runtime.GOMAXPROCS(0)
				b.SetParallelism((conc + procs - 1) / procs)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					i := int(next.Add(1)) % keys
					getKey, incrKey := getKeys[i], incrKeys[i]
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					for pb.Next() {
						if shape == "get-1k-conc64" {
							v, err := c.get(ctx, getKey)
							if err != nil || v != fixture.Value1K {
								b.Errorf("GET %s: %v (%d bytes)", getKey, err, len(v))
								return
							}
						} else if _, err := c.incr(ctx, incrKey); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
