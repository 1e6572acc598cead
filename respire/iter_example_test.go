package respire_test

import (
	"context"
	"fmt"

	"github.com/respire-go/respire/respire"
)

func ExampleClient_ScanAll() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// Every key under session:, a page of about 100 at a time. On a
	// cluster client the same loop scans every primary.
	count := int64(100)
	for key, err := range c.ScanAll(ctx, &respire.ScanOptions{Match: "session:*", Count: count}) {
		if err != nil {
			fmt.Println("scan:", err)
			return
		}
		fmt.Println(key)
	}
}

func ExampleClient_HScanAll() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// The first ten fields of a large hash: breaking out asks for no more
	// pages.
	n := 0
	for fv, err := range c.HScanAll(ctx, "user:42:prefs", nil) {
		if err != nil {
			fmt.Println("hscan:", err)
			return
		}
		fmt.Println(fv.Field, "=", fv.Value)
		if n++; n == 10 {
			break
		}
	}
}

func ExampleClient_SScanAll() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	// Members may come twice (SCAN's guarantee): collect them in a set.
	tags := make(map[string]bool)
	for m, err := range c.SScanAll(ctx, "article:7:tags", &respire.SScanOptions{Match: "go*"}) {
		if err != nil {
			fmt.Println("sscan:", err)
			return
		}
		tags[m] = true
	}
	fmt.Println(len(tags), "tags")
}

func ExampleClient_ZScanAll() {
	ctx := context.Background()
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	var total float64
	for m, err := range c.ZScanAll(ctx, "leaderboard", nil) {
		if err != nil {
			fmt.Println("zscan:", err)
			return
		}
		total += m.Score
	}
	fmt.Println("total score", total)
}
