package respire_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/respire-go/respire/codec"
	"github.com/respire-go/respire/codec/typed"
	"github.com/respire-go/respire/respire"
)

// Reads through Cached are served from local memory after the first one;
// the server invalidates them when the key changes, and a write through
// the same client drops the key before it returns.
func ExampleClient_CacheStats() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{
		Addr:        addr,
		ClientCache: &respire.CacheOptions{MaxBytes: 8 << 20},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Set(ctx, "ex:cache:flags", "dark-mode", nil)
	cached := c.Cached(time.Minute) // at most a minute old, whatever the server says
	for range 3 {
		cached.Get(ctx, "ex:cache:flags")
	}
	s := c.CacheStats()
	fmt.Println("hits:", s.Hits, "misses:", s.Misses)

	c.Set(ctx, "ex:cache:flags", "light-mode", nil)
	v, err := cached.Get(ctx, "ex:cache:flags")
	fmt.Println(v, err)
	// Output:
	// hits: 2 misses: 1
	// light-mode <nil>
}

// Without Options.ClientCache, Cached reads fail with ErrCacheDisabled
// rather than silently going to the server.
func ExampleErrCacheDisabled() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	_, err = c.Cached(time.Minute).Get(ctx, "ex:cache:flags")
	fmt.Println(errors.Is(err, respire.ErrCacheDisabled))
	// Output: true
}

// A Lease holds the value in pooled memory: no allocation per read. Its
// bytes are valid until Release, which is called exactly once.
func ExampleClient_GetLease() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Set(ctx, "ex:lease:blob", "a large value", nil)
	l, err := c.GetLease(ctx, "ex:lease:blob")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(l.Len(), string(l.Bytes()[:7]))
	l.Release() // the bytes may be reused from here on
	// Output: 13 a large
}

// The Append forms read into a buffer of the caller's, reused across
// calls.
func ExampleClient_GetAppend() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Set(ctx, "ex:append:1", "first", nil)
	c.Set(ctx, "ex:append:2", "second", nil)
	buf := make([]byte, 0, 64)
	for _, k := range []string{"ex:append:1", "ex:append:2"} {
		buf, err = c.GetAppend(ctx, buf[:0], k)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s ", buf)
	}
	fmt.Println()
	// Output: first second
}

// A typed store serializes a Go value (JSON by default), frames it with a
// checksum, compresses it above the codec's threshold and stores it, in
// one call; Get reverses it.
func Example_typedStore() {
	type Profile struct {
		Name  string   `json:"name"`
		Langs []string `json:"langs"`
	}
	profiles := typed.New[Profile](codec.MustNew(codec.Options{Algorithm: codec.Zstd(3)}), nil)

	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	if err := profiles.Set(ctx, c, "ex:typed:ada", Profile{Name: "Ada", Langs: []string{"go", "lua"}}); err != nil {
		fmt.Println(err)
		return
	}
	p, err := profiles.Get(ctx, c, "ex:typed:ada")
	fmt.Printf("%+v %v\n", p, err)

	// A value that is not a frame (written by something else) is refused.
	c.Set(ctx, "ex:typed:raw", "plain text", nil)
	_, err = profiles.Get(ctx, c, "ex:typed:raw")
	fmt.Println(errors.Is(err, codec.ErrInvalidFrame))
	// Output:
	// {Name:Ada Langs:[go lua]} <nil>
	// true
}
