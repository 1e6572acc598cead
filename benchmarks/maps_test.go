package benchmarks

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/respire-go/respire/respire"
)

// mapFields is the hash the map-form benchmarks write: the mix of value
// types a caller of HSetMap passes.
var mapFields = map[string]any{"name": "ada", "email": "ada@example.com", "visits": 42, "score": 2.5, "admin": true}

// BenchmarkHSetMap: HSET of a five-field map, sequentially, with Respire's
// HSetMap, its FieldValue form (the caller formats the values), go-redis's
// HSet with the map, and rueidis's builder (the caller formats the values).
func BenchmarkHSetMap(b *testing.B) {
	s := benchServer(b)
	ctx := context.Background()
	pairs := []respire.FieldValue{{Field: "admin", Value: "1"}, {Field: "email", Value: "ada@example.com"},
		{Field: "name", Value: "ada"}, {Field: "score", Value: "2.5"}, {Field: "visits", Value: "42"}}
	c, err := respire.Connect(ctx, respire.Options{Addr: s.Addr})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.Run("client=respire-map", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := c.HSetMap(ctx, "bench:hsetmap", mapFields); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client=respire-pairs", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := c.HSet(ctx, "bench:hsetmap", pairs...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client=goredis-map", func(b *testing.B) {
		c := redis.NewClient(&redis.Options{Addr: s.Addr})
		defer c.Close()
		b.ReportAllocs()
		for range b.N {
			if err := c.HSet(ctx, "bench:hsetmap", mapFields).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client=rueidis-pairs", func(b *testing.B) {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr}})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.ReportAllocs()
		for range b.N {
			fv := c.B().Hset().Key("bench:hsetmap").FieldValue()
			for _, p := range pairs {
				fv = fv.FieldValue(p.Field, p.Value)
			}
			if err := c.Do(ctx, fv.Build()).Error(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
