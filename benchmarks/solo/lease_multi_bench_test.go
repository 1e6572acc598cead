package solo

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/respire-go/respire/respire"
)

// The multi-element leased forms: ten elements of 16 B and 1 KiB in one
// LeaseList, released each time, every element checked byte for byte.
// They should report 0 allocs/op; BenchmarkMGet is the plain form beside
// them.

const listLen = 10

func BenchmarkMGetLease(b *testing.B) {
	benchListForm(b, "bench:mget", func(c *respire.Client, ctx context.Context, keys []string) (*respire.LeaseList, error) {
		return c.MGetLease(ctx, keys...)
	})
}

func BenchmarkHMGetLease(b *testing.B) {
	benchListForm(b, "bench:hmget", func(c *respire.Client, ctx context.Context, fields []string) (*respire.LeaseList, error) {
		return c.HMGetLease(ctx, "bench:hmget", fields...)
	})
}

func BenchmarkLRangeLease(b *testing.B) {
	benchListForm(b, "bench:lrange", func(c *respire.Client, ctx context.Context, _ []string) (*respire.LeaseList, error) {
		return c.LRangeLease(ctx, "bench:lrange", 0, listLen-1)
	})
}

func BenchmarkMGet(b *testing.B) {
	ctx := context.Background()
	for _, size := range []int{16, 1024} {
		c, keys, val := listData(b, "bench:mget", size)
		b.Run(fmt.Sprintf("%dx%dB/seq", listLen, size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(listLen * size))
			for b.Loop() {
				vs, err := c.MGet(ctx, keys...)
				if err != nil {
					b.Fatal(err)
				}
				for _, v := range vs {
					if v.V != string(val) {
						b.Fatal(errWrongValue)
					}
				}
			}
		})
	}
}

// listData stores listLen values of size bytes under prefix: as strings
// (keys prefix:0...), as the fields of hash prefix and as list prefix.
// It returns a client, the keys (or fields) and the value.
func listData(b *testing.B, prefix string, size int) (*respire.Client, []string, []byte) {
	ctx := context.Background()
	c := client(b, respire.ReadModeDefault)
	val := bytes.Repeat([]byte("v"), size)
	keys := make([]string, listLen)
	fvs := make([]respire.FieldValue, listLen)
	list := make([]string, listLen)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:%d", prefix, i)
		if err := c.Set(ctx, keys[i], string(val), nil); err != nil {
			b.Fatal(err)
		}
		fvs[i] = respire.FieldValue{Field: keys[i], Value: string(val)}
		list[i] = string(val)
	}
	if _, err := c.Del(ctx, prefix); err != nil {
		b.Fatal(err)
	}
	if prefix == "bench:hmget" {
		if _, err := c.HSet(ctx, prefix, fvs...); err != nil {
			b.Fatal(err)
		}
	}
	if prefix == "bench:lrange" {
		if _, err := c.RPush(ctx, prefix, list...); err != nil {
			b.Fatal(err)
		}
	}
	return c, keys, val
}

// benchListForm runs get sequentially and on 64 goroutines (direct read
// mode), for values of 16 B and 1 KiB.
func benchListForm(b *testing.B, prefix string, get func(c *respire.Client, ctx context.Context, keys []string) (*respire.LeaseList, error)) {
	ctx := context.Background()
	for _, size := range []int{16, 1024} {
		c, keys, val := listData(b, prefix, size)
		check := func() error {
			v, err := get(c, ctx, keys)
			if err != nil {
				return err
			}
			defer v.Release()
			if v.Len() != listLen {
				return errWrongValue
			}
			for i := range listLen {
				if !bytes.Equal(v.Bytes(i), val) {
					return errWrongValue
				}
			}
			return nil
		}
		b.Run(fmt.Sprintf("%dx%dB/seq", listLen, size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(listLen * size))
			for b.Loop() {
				if err := check(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dx%dB/par64", listLen, size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(listLen * size))
			b.SetParallelism(32) // 64 goroutines on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := check(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
