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

func ExampleBatch_GetLease() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	b := c.NewBatch()
	keys := []string{"page:1", "page:2", "page:3"}
	futs := make([]*respire.Future[*respire.Lease], len(keys))
	for i, k := range keys {
		futs[i] = b.GetLease(k)
	}
	if err := b.Exec(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for i, f := range futs {
		l, err := f.Result()
		if err != nil { // respire.Nil for a missing key, or the command's own error
			continue
		}
		// The bytes are valid until Release: consume them, then give them back.
		_, _ = os.Stdout.Write(l.Bytes())
		fmt.Println(" <-", keys[i])
		l.Release()
	}
}
