package respire_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/respire-go/respire/respire"
)

func ExampleConnect() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println("connect:", err)
		return
	}
	defer c.Close()

	ttl := 10 * time.Minute
	if err := c.Set(ctx, "session:42", "alice", &respire.SetOptions{EX: ttl}); err != nil {
		fmt.Println(err)
		return
	}
	name, err := c.Get(ctx, "session:42")
	switch {
	case errors.Is(err, respire.Nil):
		fmt.Println("no session")
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println("hello,", name)
	}
}

func ExampleParseURL() {
	opts, err := respire.ParseURL("rediss://app:secret@cache.internal:6380/2?client_name=api")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(opts.Addr, opts.Username, opts.DB, opts.ClientName, opts.TLSConfig.ServerName)
	// Output: cache.internal:6380 app 2 api cache.internal
}

func ExampleClient_Do() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	r, err := c.Do(ctx, "OBJECT", "ENCODING", "mykey")
	if err != nil {
		fmt.Println(err)
		return
	}
	enc, _ := r.Text()
	fmt.Println(enc)
}

func ExampleBatch() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	b := c.NewBatch()
	hits := b.Incr("page:hits")
	title := b.Get("page:title")
	if err := b.Exec(ctx); err != nil {
		fmt.Println("batch failed:", err)
		return
	}
	n, _ := hits.Result()
	t, err := title.Result()
	if errors.Is(err, respire.Nil) {
		t = "(untitled)"
	}
	fmt.Println(n, t)
}

func ExampleClient_Subscribe() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, "events")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sub.Close()
	for {
		msg, err := sub.Next(ctx)
		if err != nil {
			return
		}
		if msg.Gap != nil {
			fmt.Println("messages may have been lost:", msg.Gap)
			continue
		}
		fmt.Println(msg.Channel, msg.Payload)
	}
}

func ExampleClient_Cached() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{
		Addr:        "localhost:6379",
		ClientCache: &respire.CacheOptions{MaxBytes: 32 << 20},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	flags, err := c.Cached(time.Minute).Get(ctx, "config:flags") // a hit costs no round trip
	fmt.Println(flags, err)
}
