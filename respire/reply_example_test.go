package respire_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/respire-go/respire/respire"
)

func ExampleReply_Any() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// A command without a typed method, its reply as plain Go values:
	// here a map[string]any on RESP3 (a []any of keys and values on RESP2).
	r, err := c.Do(ctx, "MEMORY", "STATS")
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := json.Marshal(r.Any())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
}

func ExampleReply_String() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// Reply is a fmt.Stringer: a string prints as it is, an aggregate on
	// one line, its strings quoted, as ["a" "b" 3].
	r, err := c.Do(ctx, "LRANGE", "queue", 0, -1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("queue:", r)
}

func ExampleBatch_Do_anyCommand() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// Commands with and without a typed method in one round trip.
	b := c.NewBatch()
	n := b.Incr("visits")
	enc := b.Do("OBJECT", "ENCODING", "visits")
	if err := b.Exec(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(n.Val(), enc.Val())
}

func ExampleTx_Do_anyCommand() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// Do inside MULTI/EXEC: refused before sending, as by Client.Do, are
	// the commands that would change the connection's state (SELECT, ...).
	tx := c.NewTx()
	tx.Do("HSET", "user:42", "name", "alice")
	ttl := tx.Do("EXPIRE", "user:42", 3600, "NX")
	if err := tx.Exec(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("expire set:", ttl.Val())
}

func ExampleReply_Index() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// Walk a reply of any shape by its type, without converting it first:
	// Len and Index read an aggregate in place.
	r, err := c.Do(ctx, "CLIENT", "TRACKINGINFO")
	if err != nil {
		fmt.Println(err)
		return
	}
	var walk func(r respire.Reply, depth int)
	walk = func(r respire.Reply, depth int) {
		if !r.Type().IsAggregate() {
			fmt.Printf("%*s%s: %s\n", 2*depth, "", r.Type(), r)
			return
		}
		fmt.Printf("%*s%s of %d\n", 2*depth, "", r.Type(), r.Len())
		for i := 0; i < r.Len(); i++ {
			walk(r.Index(i), depth+1)
		}
	}
	walk(r, 0)
}
