package respire_test

import (
	"context"
	"fmt"
	"os"

	"github.com/respire-go/respire/respire"
)

func ExampleClient_MGetLease() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	vals, err := c.MGetLease(ctx, "user:1:name", "user:2:name", "user:3:name")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer vals.Release() // after the last use of the elements
	for i := range vals.Len() {
		if vals.Null(i) {
			continue // no such key
		}
		// Bytes are valid until Release: write them out, do not keep them.
		os.Stdout.Write(vals.Bytes(i))
		os.Stdout.WriteString("\n")
	}
}

func ExampleSetLeasePoolLimit() {
	// Many callers reading values of a few hundred kilobytes: let the pool
	// keep more of them than the default 64 MiB.
	previous := respire.SetLeasePoolLimit(256 << 20)
	fmt.Println(previous == respire.DefaultLeasePoolLimit)
	respire.SetLeasePoolLimit(previous)
	// Output: true
}
