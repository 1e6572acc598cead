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
