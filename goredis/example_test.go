package goredis_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/goredis"
	"github.com/respire-go/respire/respire"
)

// A library written for go-redis takes the adapter wherever it takes a
// redis.UniversalClient, redis.Cmdable or redis.Scripter: for instance
// redislock.New(rdb), redis_rate.NewLimiter(rdb),
// cache.New(&cache.Options{Redis: rdb}) or redsync's
// goredis.NewPool(rdb).
func ExampleNew() {
	ctx := context.Background()
	rc, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rc.Close()
	rdb := goredis.New(rc)
	defer rdb.Close() // the go-redis side only

	if err := rdb.Set(ctx, "greeting", "hello", 0).Err(); err != nil {
		fmt.Println(err)
		return
	}
	v, err := rdb.Get(ctx, "greeting").Result()
	fmt.Println(v, err)

	// A missing key is redis.Nil, as go-redis code expects.
	_, err = rdb.Get(ctx, "no-such-key").Result()
	fmt.Println(err == redis.Nil)
}

// go-redis scripts run through Respire's EVALSHA, and fall back to EVAL
// when the server lacks the script, because the adapter's error replies
// are go-redis errors.
func ExampleClient_scripts() {
	ctx := context.Background()
	rc, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rc.Close()
	rdb := goredis.New(rc)
	defer rdb.Close()

	incr := redis.NewScript(`return redis.call("INCRBY", KEYS[1], ARGV[1])`)
	n, err := incr.Run(ctx, rdb, []string{"counter"}, 2).Int64()
	fmt.Println(n, err)
}

// What the adapter cannot do fails before anything is sent, with an error
// that wraps ErrNotSupported: an argument go-redis could not encode either.
func ExampleErrNotSupported() {
	ctx := context.Background()
	rc, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rc.Close()
	rdb := goredis.New(rc)
	defer rdb.Close()
	err = rdb.Set(ctx, "k", struct{ A int }{1}, 0).Err()
	if errors.Is(err, goredis.ErrNotSupported) {
		fmt.Println("encode the value first")
	}
}
