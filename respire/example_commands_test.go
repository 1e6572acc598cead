package respire_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/respire-go/respire/respire"
)

// A missing key is an error matching respire.Nil, never an empty string
// that looks like data.
func ExampleClient_Get() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	if err := c.Set(ctx, "ex:get:name", "ada", nil); err != nil {
		fmt.Println(err)
		return
	}
	name, err := c.Get(ctx, "ex:get:name")
	fmt.Printf("%q %v\n", name, err)

	_, err = c.Get(ctx, "ex:get:nobody")
	fmt.Println(errors.Is(err, respire.Nil))
	// Output:
	// "ada" <nil>
	// true
}

// Optional arguments live in a generated options struct; its zero value
// sends nothing. A condition that is not met (NX on an existing key) is
// respire.Nil.
func ExampleClient_Set() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	ttl := time.Minute
	fmt.Println(c.Set(ctx, "ex:set:lock", "owner-1", &respire.SetOptions{EX: ttl}))
	ok, err := c.SetIf(ctx, "ex:set:lock", "owner-2", respire.SetIfCondition{NX: true}, nil)
	fmt.Println(ok, err)
	left, err := c.TTL(ctx, "ex:set:lock")
	fmt.Println(left > 0 && left <= time.Minute, err)
	// Output:
	// <nil>
	// false <nil>
	// true <nil>
}

// Integer replies are int64.
func ExampleClient_Incr() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	if _, err := c.Del(ctx, "ex:incr:visits"); err != nil {
		fmt.Println(err)
		return
	}
	c.Incr(ctx, "ex:incr:visits")
	n, err := c.IncrBy(ctx, "ex:incr:visits", 10)
	fmt.Println(n, err)
	// Output: 11 <nil>
}

// Hashes take field-value pairs and come back as maps.
func ExampleClient_HSet() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:hset:user:1")
	added, err := c.HSet(ctx, "ex:hset:user:1",
		respire.FieldValue{Field: "name", Value: "ada"},
		respire.FieldValue{Field: "lang", Value: "go"})
	fmt.Println(added, err)
	m, err := c.HGetAll(ctx, "ex:hset:user:1")
	fmt.Println(m, err)
	// Output:
	// 2 <nil>
	// map[lang:go name:ada] <nil>
}

// Sorted sets take and return ScoredMember values.
func ExampleClient_ZAdd() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:zadd:board")
	_, err = c.ZAdd(ctx, "ex:zadd:board", []respire.ScoredMember{
		{Member: "ada", Score: 31}, {Member: "linus", Score: 12}, {Member: "grace", Score: 57},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	top, err := c.ZRangeWithScores(ctx, "ex:zadd:board", 0, 1, &respire.ZRangeOptions{Rev: true})
	fmt.Println(top, err)
	// Output: [{grace 57} {ada 31}] <nil>
}

// Elements that may be null are Null values: Valid is false for a
// missing key.
func ExampleClient_MGet() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Set(ctx, "ex:mget:a", "1", nil)
	c.Del(ctx, "ex:mget:b")
	vs, err := c.MGet(ctx, "ex:mget:a", "ex:mget:b")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, v := range vs {
		fmt.Println(v.V, v.Valid)
	}
	// Output:
	// 1 true
	//  false
}

// SCAN walks the keyspace a page at a time until the cursor is 0 again.
func ExampleClient_Scan() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	for _, k := range []string{"ex:scan:1", "ex:scan:2", "ex:scan:3"} {
		c.Set(ctx, k, "x", nil)
	}
	var keys []string
	count := int64(100)
	for cursor := int64(0); ; {
		page, err := c.Scan(ctx, cursor, &respire.ScanOptions{Match: "ex:scan:*", Count: count})
		if err != nil {
			fmt.Println(err)
			return
		}
		keys = append(keys, page.Items...)
		if cursor = page.Cursor; cursor == 0 {
			break
		}
	}
	sort.Strings(keys) // SCAN has no order
	fmt.Println(keys)
	// Output: [ex:scan:1 ex:scan:2 ex:scan:3]
}

// Stream entries are StreamEntry values with their fields in order.
func ExampleClient_XAdd() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:xadd:orders")
	for _, id := range []string{"1-1", "1-2"} {
		if _, err := c.XAdd(ctx, "ex:xadd:orders", id,
			[]respire.FieldValue{{Field: "item", Value: "book " + id}}, nil); err != nil {
			fmt.Println(err)
			return
		}
	}
	entries, err := c.XRange(ctx, "ex:xadd:orders", "-", "+", nil)
	fmt.Println(entries, err)
	// Output: [{1-1 [{item book 1-1}]} {1-2 [{item book 1-2}]}] <nil>
}

// Blocking commands run on a pool of dedicated connections, so they never
// hold up the other callers; cancelling the context unblocks them.
func ExampleClient_BLPop() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	c.Del(ctx, "ex:blpop:jobs")
	c.RPush(ctx, "ex:blpop:jobs", "job-1")
	job, err := c.BLPop(ctx, time.Second, "ex:blpop:jobs")
	fmt.Println(job.Key, job.Element, err)

	// Nothing more to take: the server's timeout ends the wait with Nil.
	_, err = c.BLPop(ctx, 100*time.Millisecond, "ex:blpop:jobs")
	fmt.Println(errors.Is(err, respire.Nil))
	// Output:
	// ex:blpop:jobs job-1 <nil>
	// true
}
